"""int64 on every adapter: a real i64 with shader-int64, held as 32 bits without it."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import int64_is_narrow


def test_int64_is_offered_and_is_the_default_int(xp):
    assert "int64" in xp.__array_namespace_info__().dtypes()
    assert xp.asarray([1, 2]).dtype == xp.int64
    assert xp.result_type(xp.int32, xp.uint32) == xp.int64


def test_index_results_are_int64(xp, check):
    a = np.array([[3.0, 1.0, 7.0], [2.0, 9.0, -1.0]], np.float32)
    x = xp.asarray(a)
    check(xp.argmax(x, axis=1), np.argmax(a, axis=1))
    check(xp.argmin(x), np.argmin(a))
    check(xp.argsort(x, axis=1), np.argsort(a, axis=1, kind="stable"))
    check(xp.sum(xp.asarray(a > 0), axis=0), np.sum(a > 0, axis=0))


def test_round_trip_and_arithmetic_are_exact(xp, check):
    a = np.array([-(2 ** 31), -7, 0, 5, 2 ** 31 - 1], np.int64)
    x = xp.asarray(a)
    check(x, a)
    check(x // 2, a // 2)
    check(x[1:4] * 3 - 1, a[1:4] * 3 - 1)
    check(xp.astype(xp.asarray([2.9, -2.9]), xp.int64), np.array([2, -2], np.int64))
    check(xp.full((2,), -5, dtype=xp.int64), np.full((2,), -5, np.int64))
    check(xp.take(xp.asarray([10.0, 20.0, 30.0]), xp.asarray([2, 0], dtype=xp.int64)),
          np.array([30.0, 10.0], np.float32))


def test_values_beyond_int32(xp, check):
    from volta_core.errors import DTypeError
    big = np.array([2 ** 40, -(2 ** 40)], np.int64)
    if not int64_is_narrow():
        check(xp.asarray(big), big)
        check(xp.asarray(big) + 1, big + 1)
        return
    with pytest.raises(DTypeError, match="shader-int64"):
        xp.asarray(big)
    with pytest.raises(DTypeError, match="shader-int64"):
        xp.asarray([1, 2]) + 2 ** 40
    with pytest.raises(DTypeError, match="shader-int64"):
        xp.full((2,), 2 ** 33, dtype=xp.int64)
