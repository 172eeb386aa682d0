"""Set functions and searchsorted on the device: unique_* through a sort, searchsorted as a
binary search, isin through both; NaN, signed zeros and int64 beyond the int32 range."""

from __future__ import annotations

import numpy as np
import pytest


def _data(dt: str) -> np.ndarray:
    x = np.random.default_rng(0).integers(-5, 5, (4, 6)).astype(dt)
    if dt == "float32":
        x[0, 0] = x[1, 1] = np.nan  # each NaN is distinct
        x[2, 2], x[3, 3] = -0.0, 0.0
    if dt == "int64":
        x[0, 0] = 2 ** 40
    return x


@pytest.mark.parametrize("dt", ["float32", "int64", "int32"])
def test_unique_all_matches_numpy(xp, dt):
    x = _data(dt)
    r, e = xp.unique_all(xp.asarray(x)), np.unique_all(x)
    order = np.argsort(e.values, kind="stable")  # NumPy may leave integers unsorted
    np.testing.assert_array_equal(xp.to_numpy(r.values), e.values[order])
    np.testing.assert_array_equal(xp.to_numpy(r.indices), e.indices[order])
    np.testing.assert_array_equal(xp.to_numpy(r.counts), e.counts[order])
    inv = xp.to_numpy(r.inverse_indices)
    assert inv.shape == x.shape
    np.testing.assert_array_equal(xp.to_numpy(r.values)[inv], x)
    assert xp.unique_values(xp.asarray(x)).dtype.name == dt


def test_unique_of_empty_and_0d(xp):
    assert xp.unique_values(xp.asarray(np.zeros(0, np.float32))).shape == (0,)
    np.testing.assert_array_equal(xp.to_numpy(xp.unique_counts(xp.asarray(3.0)).counts), [1])


@pytest.mark.parametrize("dt", ["float32", "int64", "int32"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_and_isin(xp, dt, side):
    x = _data(dt)
    s = np.sort(np.random.default_rng(1).integers(-6, 6, 9).astype(dt))
    if dt == "float32":
        s = np.append(s, np.float32(np.nan))
    got = xp.searchsorted(xp.asarray(s), xp.asarray(x), side=side)
    np.testing.assert_array_equal(xp.to_numpy(got), np.searchsorted(s, x, side=side))
    assert got.dtype == xp.int64
    np.testing.assert_array_equal(xp.to_numpy(xp.isin(xp.asarray(x), xp.asarray(s))),
                                  np.isin(x, s))
    np.testing.assert_array_equal(
        xp.to_numpy(xp.isin(xp.asarray(x), xp.asarray(s), invert=True)),
        np.isin(x, s, invert=True))


def test_searchsorted_sorter_and_isin_scalars(xp):
    a = np.array([3.0, 1.0, 2.0], np.float32)
    perm = np.argsort(a)
    got = xp.searchsorted(xp.asarray(a), xp.asarray([2.5, 0.0]), sorter=xp.asarray(perm))
    np.testing.assert_array_equal(xp.to_numpy(got), np.searchsorted(a, [2.5, 0.0], sorter=perm))
    np.testing.assert_array_equal(xp.to_numpy(xp.isin(xp.asarray([1, 2]), 2)), [False, True])
    np.testing.assert_array_equal(
        xp.to_numpy(xp.isin(xp.asarray([True, False]), xp.asarray([True]))), [True, False])
