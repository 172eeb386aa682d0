"""Creation functions, dtypes, finfo/iinfo, conversions."""

from __future__ import annotations

import numpy as np
import pytest


def test_asarray_roundtrip(xp, check):
    for a in (np.arange(6, dtype=np.float32).reshape(2, 3), np.array([True, False]),
              np.array([-1, 2], np.int32), np.array([1, 2], np.uint32),
              np.float32(3.5), np.zeros((0, 3), np.float32)):
        check(xp.asarray(a), a)
    check(xp.asarray([[1.0, 2.0]]), np.array([[1.0, 2.0]], np.float32))
    check(xp.asarray(True), np.array(True))
    assert xp.asarray([1, 2]).dtype == xp.__array_namespace_info__().default_dtypes()[
        "integral"]
    check(xp.asarray(np.arange(4, dtype=np.uint8)), np.arange(4, dtype=np.uint32))
    x = xp.asarray(np.ones(3, np.float32))
    assert xp.asarray(x) is x
    assert xp.asarray(x, copy=True) is not x
    check(xp.asarray(x, dtype=xp.int32), np.ones(3, np.int32))


def test_filled(xp, check):
    check(xp.zeros((2, 3)), np.zeros((2, 3), np.float32))
    check(xp.ones(4, dtype=xp.int32), np.ones(4, np.int32))
    check(xp.full((2, 2), 7.5), np.full((2, 2), 7.5, np.float32))
    check(xp.full((2,), True), np.full((2,), True))
    check(xp.zeros(()), np.zeros((), np.float32))
    check(xp.ones((0, 2)), np.ones((0, 2), np.float32))
    x = xp.asarray(np.ones((2, 3), np.int32))
    check(xp.zeros_like(x), np.zeros((2, 3), np.int32))
    check(xp.ones_like(x, dtype=xp.float32), np.ones((2, 3), np.float32))
    check(xp.full_like(x, -4), np.full((2, 3), -4, np.int32))
    e = xp.empty_like(x)
    assert e.shape == (2, 3) and e.dtype == xp.int32
    assert xp.empty((3,)).shape == (3,)


def test_ranges(xp, check):
    check(xp.arange(5, dtype=xp.int32), np.arange(5, dtype=np.int32))
    check(xp.arange(2, 11, 3, dtype=xp.int32), np.arange(2, 11, 3, dtype=np.int32))
    check(xp.arange(5, 0, -2, dtype=xp.int32), np.arange(5, 0, -2, dtype=np.int32))
    check(xp.arange(0.0, 1.0, 0.25), np.arange(0.0, 1.0, 0.25, dtype=np.float32))
    check(xp.arange(0, dtype=xp.int32), np.arange(0, dtype=np.int32))
    check(xp.linspace(-1, 1, 7), np.linspace(-1, 1, 7, dtype=np.float32))
    check(xp.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False,
                                                           dtype=np.float32))
    check(xp.linspace(2, 3, 1), np.linspace(2, 3, 1, dtype=np.float32))
    check(xp.eye(3), np.eye(3, dtype=np.float32))
    check(xp.eye(2, 4, k=1, dtype=xp.int32), np.eye(2, 4, k=1, dtype=np.int32))
    check(xp.eye(3, k=-1, dtype=xp.bool), np.eye(3, k=-1, dtype=bool))


def test_tril_triu_meshgrid(xp, check):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    check(xp.tril(xp.asarray(a)), np.tril(a))
    check(xp.triu(xp.asarray(a), k=1), np.triu(a, k=1))
    u, v = np.arange(3, dtype=np.float32), np.arange(2, dtype=np.float32)
    for ind in ("xy", "ij"):
        for g, r in zip(xp.meshgrid(xp.asarray(u), xp.asarray(v), indexing=ind),
                        np.meshgrid(u, v, indexing=ind)):
            check(g, r)


def test_scalar_conversion(xp):
    x = xp.asarray(np.array([[2.5]], np.float32))
    assert float(x) == 2.5 and int(x) == 2 and bool(x)
    assert float(xp.asarray(3)) == 3.0
    assert xp.asarray(np.float32(1.5)).item() == 1.5
    with pytest.raises(TypeError):
        float(xp.ones(3))
    assert xp.asarray(np.array([4], np.int32))[0].__index__() == 4


def test_dtype_info(xp):
    assert xp.finfo(xp.float32).eps == np.finfo(np.float32).eps
    assert xp.finfo(xp.float32).bits == 32
    assert xp.iinfo(xp.int32).max == 2**31 - 1
    assert xp.iinfo(xp.uint32).min == 0
    assert xp.isdtype(xp.float32, "real floating")
    assert xp.isdtype(xp.int32, ("integral", "bool"))
    assert not xp.isdtype(xp.bool, "numeric")
    assert xp.can_cast(xp.int32, xp.float32)
    assert not xp.can_cast(xp.float32, xp.int32)
    with pytest.raises(ValueError):
        xp.finfo(xp.int32)
    x = xp.ones((2, 3))
    assert x.__array_namespace__() is xp
    assert x.ndim == 2 and x.size == 6 and x.device == xp.Device(0)
    assert x.T.shape == (3, 2) and xp.ones((4, 2, 3)).mT.shape == (4, 3, 2)
    assert "float32" in repr(x)


def test_bad_input_errors(xp):
    with pytest.raises(TypeError):
        xp.add(xp.ones(2), "a")
    with pytest.raises(ValueError):
        xp.add(xp.ones(2), xp.ones(3))
    with pytest.raises(TypeError):
        xp.asarray(np.array(["a"], dtype=object))
