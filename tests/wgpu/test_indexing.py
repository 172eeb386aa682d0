"""__getitem__/__setitem__, take, take_along_axis, nonzero, sort/argsort."""

from __future__ import annotations

import numpy as np
import pytest

A = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
KEYS = [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 2), (slice(None, None, -1),),
        (slice(1, None, 2), slice(None, None, -2), 3), (None, 1, Ellipsis, None),
        (slice(5, 1),), (2, 3, 4), (Ellipsis,), (slice(-2, None), None, slice(0, 5, 3))]


@pytest.mark.parametrize("key", KEYS, ids=[str(k) for k in KEYS])
def test_basic_getitem_is_view(xp, check, key):
    x = xp.asarray(A)
    v = x[key]
    check(v, A[key])
    assert v._st is x._st


def test_advanced_getitem(xp, check):
    x = xp.asarray(A)
    idx = np.array([2, 0, -1], np.int32)
    check(x[xp.asarray(idx)], A[idx])
    check(x[:, xp.asarray(idx)], A[:, idx])
    check(x[1][:, [4, 0]], A[1][:, [4, 0]])
    check(x[xp.asarray(np.array([[0, 1], [2, 2]], np.int32))], A[np.array([[0, 1], [2, 2]])])
    i, j = np.array([0, 2], np.int32), np.array([1, 3], np.int32)
    check(x[xp.asarray(i), xp.asarray(j)], A[i, j])
    check(x[:, xp.asarray(j), xp.asarray(np.array([0, 4], np.int32))], A[:, j, [0, 4]])
    check(x[xp.asarray(i), :, xp.asarray(j)], A[i, :, j])
    m = A > 30
    check(x[xp.asarray(m)], A[m])
    check(x[xp.asarray(A[:, 0, 0] > 10)], A[A[:, 0, 0] > 10])
    check(xp.permute_dims(x, (2, 0, 1))[xp.asarray(idx)], A.transpose(2, 0, 1)[idx])
    with pytest.raises(IndexError):
        x[3]
    with pytest.raises(IndexError):
        x[0, 0, 0, 0]


def test_setitem(xp, check):
    x = xp.asarray(A)
    ref = A.copy()
    x[0] = 1.0
    ref[0] = 1.0
    x[:, 1:3, ::2] = xp.asarray(np.full((3, 2, 3), 7.0, np.float32))
    ref[:, 1:3, ::2] = 7.0
    x[..., -1] = xp.asarray(np.arange(4, dtype=np.float32))
    ref[..., -1] = np.arange(4)
    x[2, 3, 4] = -5
    ref[2, 3, 4] = -5
    x[xp.asarray(np.array([1, 2], np.int32))] = 0.5
    ref[[1, 2]] = 0.5
    x[:, xp.asarray(np.array([0, 3], np.int32)), 1] = xp.asarray(np.array([9.0, 8.0],
                                                                          np.float32))
    ref[:, [0, 3], 1] = [9.0, 8.0]
    mask = ref > 20
    x[xp.asarray(mask)] = 0.0
    ref[mask] = 0.0
    check(x, ref)
    y = xp.asarray(np.arange(6, dtype=np.int32))
    y[1:] = y[:-1]            # overlapping source and destination
    check(y, np.array([0, 0, 1, 2, 3, 4], np.int32))


def test_take(xp, check):
    x = xp.asarray(A)
    idx = np.array([3, 0, 0], np.int32)
    check(xp.take(x, xp.asarray(idx), axis=1), np.take(A, idx, axis=1))
    check(xp.take(x, xp.asarray(idx), axis=-1), np.take(A, idx, axis=-1))
    check(xp.take(x[0, 0], xp.asarray(idx)), np.take(A[0, 0], idx))
    ti = np.argsort(A, axis=2)[:, :, :2].astype(np.int32)
    check(xp.take_along_axis(x, xp.asarray(ti), axis=2), np.take_along_axis(A, ti, axis=2))
    nz = np.nonzero(A[0] > 10)
    for g, r in zip(xp.nonzero(x[0] > 10), nz):
        check(g, r.astype(g.dtype.np))


@pytest.mark.parametrize("n", [1, 5, 16, 37])
def test_sort_argsort(xp, check, n):
    rng = np.random.default_rng(n)
    a = rng.integers(0, 6, (3, n)).astype(np.float32)
    a[0, 0] = np.nan
    x = xp.asarray(a)
    it = xp.argsort(x).dtype.np
    check(xp.sort(x), np.sort(a))
    check(xp.argsort(x), np.argsort(a, kind="stable").astype(it))
    check(xp.sort(x, axis=0), np.sort(a, axis=0))
    check(xp.sort(x.T, axis=0), np.sort(a.T, axis=0))
    b = a[1:]
    check(xp.sort(xp.asarray(b), descending=True), -np.sort(-b))
    check(xp.argsort(xp.asarray(b), descending=True),
          np.argsort(-b, kind="stable").astype(it))
    i = rng.integers(-50, 50, n).astype(np.int32)
    check(xp.sort(xp.asarray(i)), np.sort(i))
