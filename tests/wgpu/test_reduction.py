"""Reductions and scans over axes, keepdims, views, empty and 0-d inputs."""

from __future__ import annotations

import numpy as np
import pytest
from vt_helpers import wgpu_float16_missing

RNG = np.random.default_rng(1)
A = RNG.standard_normal((3, 4, 5)).astype(np.float32)
AXES = [None, 0, 1, 2, -1, (0, 2), (1, 2), ()]


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean"])
def test_float_reductions(xp, check, name):
    fn = getattr(np, name)
    x = xp.asarray(A)
    xt = xp.permute_dims(xp.asarray(np.ascontiguousarray(A.transpose(2, 0, 1))), (1, 2, 0))
    for axis in AXES:
        for keep in (False, True):
            check(getattr(xp, name)(x, axis=axis, keepdims=keep),
                  fn(A, axis=axis, keepdims=keep), rtol=1e-5, atol=1e-5)
        check(getattr(xp, name)(xt, axis=axis), fn(A, axis=axis), rtol=1e-5, atol=1e-5)
    check(getattr(xp, name)(xp.asarray(np.float32(2.0))), fn(np.float32(2.0)))


def test_long_rows_use_workgroup_path(xp, check):
    a = RNG.standard_normal((3, 3000)).astype(np.float32)
    x = xp.asarray(a)
    check(xp.sum(x, axis=1), a.sum(axis=1), rtol=1e-4, atol=1e-4)
    check(xp.max(x, axis=1), a.max(axis=1))
    check(xp.argmax(x, axis=1), a.argmax(axis=1).astype(xp.argmax(x).dtype.np))
    check(xp.argmin(x.T, axis=0), a.argmin(axis=1).astype(xp.argmax(x).dtype.np))
    check(xp.mean(x), a.mean(), rtol=1e-4, atol=1e-5)


def test_int_bool_reductions(xp, check):
    i = RNG.integers(-5, 5, (4, 6)).astype(np.int32)
    x = xp.asarray(i)
    it = xp.sum(x).dtype.np
    check(xp.sum(x, axis=0), i.sum(axis=0).astype(it))
    check(xp.prod(x[:, :3], axis=1), i[:, :3].prod(axis=1).astype(it))
    check(xp.max(x, axis=1), i.max(axis=1))
    check(xp.min(x), i.min())
    b = i > 0
    check(xp.any(xp.asarray(b), axis=1), b.any(axis=1))
    check(xp.all(xp.asarray(b), axis=0), b.all(axis=0))
    check(xp.any(x), i.any())
    check(xp.sum(xp.asarray(b), axis=1), b.sum(axis=1).astype(it))
    check(xp.count_nonzero(x, axis=1), np.count_nonzero(i, axis=1).astype(it))


def test_arg_and_nan(xp, check):
    a = np.array([[1.0, 3.0, 3.0, np.nan, 0.0], [2.0, 2.0, -1.0, -1.0, 5.0]], np.float32)
    x = xp.asarray(a)
    it = xp.argmax(x).dtype.np
    check(xp.argmax(x, axis=1), np.argmax(a, axis=1).astype(it))
    check(xp.argmin(x, axis=1), np.argmin(a, axis=1).astype(it))
    check(xp.argmax(x[1]), np.argmax(a[1]).astype(it))
    check(xp.argmax(x, axis=0, keepdims=True), np.argmax(a, axis=0, keepdims=True).astype(it))
    check(xp.max(x, axis=1), np.max(a, axis=1))
    check(xp.sum(x[1:]), np.sum(a[1:]))


def test_empty_reductions(xp, check):
    e = np.zeros((0, 3), np.float32)
    x = xp.asarray(e)
    check(xp.sum(x, axis=0), e.sum(axis=0))
    check(xp.prod(x, axis=0), e.prod(axis=0))
    check(xp.sum(x, axis=1), e.sum(axis=1))
    check(xp.all(x), np.all(e))
    with pytest.raises(ValueError):
        xp.max(x, axis=0)


def test_scans_var_std(xp, check):
    x = xp.asarray(A)
    for axis in (0, 1, 2):
        check(xp.cumulative_sum(x, axis=axis), np.cumsum(A, axis=axis), rtol=1e-5, atol=1e-5)
    check(xp.cumulative_prod(x[0, 0], include_initial=True),
          np.concatenate([[1], np.cumprod(A[0, 0])]).astype(np.float32), rtol=1e-5)
    check(xp.cumulative_sum(xp.permute_dims(x, (2, 1, 0)), axis=1),
          np.cumsum(A.transpose(2, 1, 0), axis=1), rtol=1e-5, atol=1e-5)
    i = np.arange(5, dtype=np.int32)
    check(xp.cumulative_sum(xp.asarray(i), include_initial=True),
          np.concatenate([[0], np.cumsum(i)]).astype(xp.sum(xp.asarray(i)).dtype.np))
    check(xp.var(x, axis=1), A.var(axis=1), rtol=1e-5, atol=1e-5)
    check(xp.std(x, axis=(0, 2), correction=1), A.std(axis=(0, 2), ddof=1), rtol=1e-5)


def test_long_scans_run_in_blocks(xp, check):
    """Rows past ``SCAN_SERIAL_MAX`` scan in blocks (each block's own scan, the scan of the
    block totals, then the prefixes added): every element right past 65535 (where llvmpipe
    used to stop one thread's serial scan), along a strided axis, with include_initial,
    in int64 and for products; float16 partial results stay float32."""
    from volta_wgpu.kernels import reduce

    n = 70_001
    assert n > reduce.SCAN_SERIAL_MAX
    ones = np.ones((3, n), np.float32)
    check(xp.cumulative_sum(xp.asarray(ones), axis=1), np.cumsum(ones, axis=1), rtol=0,
          atol=0)
    a = RNG.standard_normal((3, n)).astype(np.float32)
    want = np.cumsum(a.astype(np.float64), axis=1).astype(np.float32)
    check(xp.cumulative_sum(xp.matrix_transpose(xp.asarray(np.ascontiguousarray(a.T))),
                            axis=1), want, rtol=1e-4, atol=1e-3)
    got = xp.cumulative_sum(xp.asarray(a), axis=1, include_initial=True)
    check(got, np.concatenate([np.zeros((3, 1), np.float32), want], axis=1), rtol=1e-4,
          atol=1e-3)
    i = RNG.integers(-9, 9, (2, n)).astype(np.int64)
    check(xp.cumulative_sum(xp.asarray(i), axis=1), np.cumsum(i, axis=1))
    p = (1 + RNG.standard_normal(9000) * 1e-3).astype(np.float32)
    check(xp.cumulative_prod(xp.asarray(p)), np.cumprod(p.astype(np.float64)).astype(
        np.float32), rtol=1e-4)
    if wgpu_float16_missing() is None:
        h = (RNG.standard_normal(n) * 0.01).astype(np.float16)
        got = xp.cumulative_sum(xp.asarray(h))
        assert got.dtype == xp.float16
        check(got, np.cumsum(h.astype(np.float64)).astype(np.float16), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean"])
@pytest.mark.parametrize("shape,axis", [((1024, 2048), 0), ((3, 20000), 1),
                                        ((5, 4000, 9), (0, 1)), ((40000,), None)])
def test_reductions_cut_into_pieces(xp, check, name, shape, axis):
    """Few outputs over long rows take the two-pass reduction (``_splits`` > 1 for every
    case here): the same values as one pass, also with a pending lazy input."""
    from volta_wgpu.kernels import reduce

    a = (1 + RNG.standard_normal(shape) * (1e-3 if name == "prod" else 1)).astype(np.float32)
    axes = tuple(range(a.ndim)) if axis is None else axis if isinstance(axis, tuple) else (axis,)
    kept = int(np.prod([n for d, n in enumerate(shape) if d not in axes]))
    count = int(np.prod([shape[d] for d in axes]))
    assert reduce._splits(name, kept, count, count > 64 and kept < 2048) > 1
    fn = getattr(np, name)
    want = fn(a.astype(np.float64), axis=axis)
    x = xp.asarray(a)
    check(getattr(xp, name)(x, axis=axis), want.astype(np.float32), rtol=2e-4, atol=1e-3)
    check(getattr(xp, name)(x * 1.0, axis=axis), want.astype(np.float32), rtol=2e-4,
          atol=1e-3)  # x * 1.0 is pending in lazy mode: fused into the first pass
    if name == "sum":
        i = RNG.integers(-9, 9, shape).astype(np.int32)
        check(xp.sum(xp.asarray(i), axis=axis), i.sum(axis=axis).astype(
            xp.sum(xp.asarray(i)).dtype.np))
    if wgpu_float16_missing() is None:  # partial results in float32, the answer float16
        h = a.astype(np.float16)
        want = fn(h.astype(np.float64), axis=axis).astype(np.float16)
        for x in (xp.asarray(h), xp.asarray(h) * 1.0):
            got = getattr(xp, name)(x, axis=axis)
            assert got.dtype == xp.float16
            check(got, want, rtol=2e-3, atol=2e-2 if name in ("sum", "mean") else 1e-3)


@pytest.mark.parametrize("shape,axis", [((9, 70), 0), ((3000, 96), 0), ((40, 3, 33), (0, 1)),
                                        ((300, 2, 64), (0, 1))])
def test_column_sums_take_the_column_kernel(xp, check, shape, axis):
    """Sums and means whose outputs lie next to each other (a bias gradient's column sums)
    run 32 outputs per workgroup (``reduce._cols_main``), cut into pieces when the
    columns are long; output counts that are not a multiple of 32, two reduced dims, a
    pending lazy input, keepdims, integers and float16 give NumPy's values."""
    a = RNG.standard_normal(shape).astype(np.float32)
    x = xp.asarray(a)
    want = a.astype(np.float64)
    for name in ("sum", "mean"):
        exp = getattr(np, name)(want, axis=axis).astype(np.float32)
        check(getattr(xp, name)(x, axis=axis), exp, rtol=1e-4, atol=1e-4)
        check(getattr(xp, name)(x * 1.0, axis=axis, keepdims=True),
              getattr(np, name)(want, axis=axis, keepdims=True).astype(np.float32),
              rtol=1e-4, atol=1e-4)
    i = RNG.integers(-9, 9, shape).astype(np.int32)
    check(xp.sum(xp.asarray(i), axis=axis), i.sum(axis=axis).astype(
        xp.sum(xp.asarray(i)).dtype.np))
    if wgpu_float16_missing() is None:
        h = a.astype(np.float16)
        got = xp.sum(xp.asarray(h), axis=axis)
        assert got.dtype == xp.float16
        check(got, np.sum(h.astype(np.float64), axis=axis).astype(np.float16), rtol=2e-3,
              atol=2e-2)
