"""The Array API standard's names that the namespace adds beyond Volta's own needs."""

from __future__ import annotations

import types

import numpy as np
import pytest

RNG = np.random.default_rng(1)


def test_namespace_exposes_functions_not_modules(xp):
    assert not [n for n in xp.__all__ if isinstance(getattr(xp, n), types.ModuleType)
                and n != "linalg"]
    assert xp.linalg.__name__ == "volta_wgpu.linalg"
    assert "float16" not in xp.__array_namespace_info__().dtypes()
    assert xp.broadcast_shapes((2, 1), (1, 3), ()) == (2, 3)


def test_elementwise_additions(xp, check):
    a = np.float32([0.0, -0.0, 1.5, -np.inf, np.nan, 2.0])
    b = np.float32([0.0, 3.0, -1.0, -np.inf, 1.0, np.inf])
    x, y = xp.asarray(a), xp.asarray(b)
    check(xp.signbit(x), np.signbit(a) & ~np.isnan(a))
    with np.errstate(invalid="ignore"):
        check(xp.logaddexp(x, y), np.logaddexp(a, b))
    check(xp.reciprocal(y[1:3]), 1 / b[1:3])
    check(xp.nextafter(x, y), np.nextafter(a, b))
    check(xp.conj(x), a)
    check(xp.real(x), a)
    check(xp.imag(x), np.zeros_like(a))


def test_sets_and_search(xp, check):
    a = np.array([3, 1, 2, 3, 1, 7])
    x = xp.asarray(a)
    # sorted values, as np.unique gives (NumPy's unique_values may leave ints unsorted)
    e = np.unique(a, return_index=True, return_inverse=True, return_counts=True)
    check(xp.unique_values(x), e[0])
    for got, exp in zip(xp.unique_all(x), e):
        check(got, exp)
    check(xp.unique_inverse(x).inverse_indices, e[2])
    check(xp.unique_counts(x).counts, e[3])
    s = np.float32([1, 2, 2, 5, np.nan])
    v = np.float32([2, 0, 9, np.nan])
    check(xp.searchsorted(xp.asarray(s), xp.asarray(v)), np.searchsorted(s, v))
    check(xp.searchsorted(xp.asarray(s), xp.asarray(v), side="right"),
          np.searchsorted(s, v, side="right"))
    check(xp.isin(x, xp.asarray([1, 7])), np.isin(a, [1, 7]))


def test_diff_and_dlpack(xp, check):
    a = RNG.standard_normal((3, 5)).astype(np.float32)
    x = xp.asarray(a)
    check(xp.diff(x), np.diff(a))
    check(xp.diff(x, axis=0, n=2), np.diff(a, axis=0, n=2))
    check(xp.diff(x, prepend=x[:, :1], append=x[:, -1:]),
          np.diff(a, prepend=a[:, :1], append=a[:, -1:]))
    check(xp.from_dlpack(a), a)
    np.testing.assert_array_equal(np.from_dlpack(x), a)


def test_dlpack_exports_a_host_copy(xp):
    import torch
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = xp.asarray(a)
    assert x.__dlpack_device__() == (1, 0)  # the capsule's device: kDLCPU
    np.testing.assert_array_equal(np.from_dlpack(x), a)
    np.testing.assert_array_equal(torch.from_dlpack(x).numpy(), a)
    x.__dlpack__(dl_device=(1, 0), copy=True, max_version=(1, 0))
    with pytest.raises(BufferError, match="host copy"):
        x.__dlpack__(copy=False)
    with pytest.raises(BufferError, match="kDLCPU"):
        x.__dlpack__(dl_device=(2, 0))
    # a wgpu array on its own device needs no copy; anything else is uploaded
    assert xp.from_dlpack(x, copy=False) is x and xp.from_dlpack(x) is x
    y = xp.from_dlpack(x, copy=True)
    assert y is not x and np.array_equal(xp.to_numpy(y), a)
    with pytest.raises(BufferError, match="alias host memory"):
        xp.from_dlpack(a, copy=False)
    np.testing.assert_array_equal(xp.to_numpy(xp.from_dlpack(torch.from_numpy(a))), a)


def test_indexing_and_asarray_additions(xp, check):
    x = xp.asarray(5.0)
    check(x[xp.asarray(True)], np.array([5.0], np.float32))
    check(x[xp.asarray(False)], np.zeros((0,), np.float32))
    check(xp.asarray([xp.asarray(1.0), xp.asarray(2.0)]), np.float32([1, 2]))
    i = xp.asarray([xp.asarray(1, dtype=xp.int32), xp.asarray(2, dtype=xp.int32)])
    check(i, np.int32([1, 2]))


def test_vecdot_eye_and_float16_var(xp, check):
    i32 = xp.int32
    check(xp.vecdot(xp.asarray([1, 2], dtype=i32), xp.asarray([3, 4], dtype=i32)),
          np.int32(11))
    with pytest.raises(ValueError):
        xp.vecdot(xp.asarray([1.0, 2.0]), xp.asarray([3.0]))
    check(xp.eye(2, k=2 ** 32), np.zeros((2, 2), np.float32))
    check(xp.tril(xp.ones((2, 2)), k=-(2 ** 40)), np.zeros((2, 2), np.float32))
    from .conftest import has
    if has("float16"):
        h = np.float16([1, 2, 4])
        check(xp.var(xp.asarray(h)), np.var(h), rtol=1e-3)


def test_linalg_extension(xp, check):
    a = RNG.standard_normal((2, 3, 3)).astype(np.float32)
    spd = a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3, dtype=np.float32)
    x, s = xp.asarray(a), xp.asarray(spd)
    tol = dict(rtol=1e-4, atol=1e-4)
    check(xp.linalg.det(x), np.linalg.det(a), **tol)
    check(xp.linalg.inv(x), np.linalg.inv(a), **tol)
    check(xp.linalg.cholesky(s), np.linalg.cholesky(spd), **tol)
    check(xp.linalg.eigvalsh(s), np.linalg.eigvalsh(spd), **tol)
    check(xp.linalg.svdvals(x), np.linalg.svdvals(a), **tol)
    check(xp.linalg.slogdet(x).logabsdet, np.linalg.slogdet(a).logabsdet, **tol)
    check(xp.linalg.solve(x, x[0, 0]), np.linalg.solve(a, a[0, 0][:, None])[..., 0], **tol)
    check(xp.linalg.solve(x, x), np.linalg.solve(a, a), **tol)
    check(xp.linalg.pinv(x), np.linalg.pinv(a), rtol=1e-3, atol=1e-3)
    check(xp.linalg.matrix_rank(x), np.linalg.matrix_rank(a))
    q, r = xp.linalg.qr(x)
    check(xp.matmul(q, r), a, **tol)
    check(xp.linalg.diagonal(x, offset=1), np.diagonal(a, 1, -2, -1))
    check(xp.linalg.trace(x, offset=-1), np.trace(a, -1, -2, -1), **tol)
    check(xp.linalg.matrix_power(x, 3), np.linalg.matrix_power(a, 3), **tol)
    check(xp.linalg.matrix_power(x, 0), np.broadcast_to(np.eye(3, dtype=np.float32), a.shape))
    check(xp.linalg.cross(x, x[:, ::-1]), np.cross(a, a[:, ::-1]), **tol)
    for o in ("fro", 1, -np.inf, "nuc", 2):
        check(xp.linalg.matrix_norm(x, ord=o), np.linalg.matrix_norm(a, ord=o), **tol)
    v = np.float32([3e30, -4e30, 0])
    for o in (2, 1, 0, np.inf, -np.inf, 3):
        check(xp.linalg.vector_norm(xp.asarray(v), ord=o),
              np.linalg.vector_norm(v.astype(np.float64), ord=o).astype(np.float32), rtol=1e-5)
