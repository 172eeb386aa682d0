"""Reductions, softmax and norms against NumPy, with float64 gradchecks and error tests."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from vt_helpers import assert_close, check_grad, rand, to_np

import volta_core as vt

T = vt.tensor


# -- sum / mean with dtype ------------------------------------------------------------------

def test_sum_mean_dtype():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert_close(vt.sum(T(x)), 15, dtype="int64")
    assert_close(T(x).sum(1, dtype=vt.float64), x.sum(1).astype(np.float64), dtype="float64")
    assert_close(T(x).mean(dtype=vt.float32), 2.5, dtype="float32")
    assert_close(T(x).mean((0, 1), keepdim=True, dtype="float64"), [[2.5]])
    assert_close(T([True, True, False]).sum(), 2, dtype="int64")
    with pytest.raises(vt.DTypeError, match="mean.*int32"):
        T(x).mean()


# -- prod ----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dim", [((), None), ((0,), None), ((1,), 0), ((2, 3), None),
                                       ((2, 3), 1), ((2, 0), 0), ((3, 4), -2)])
def test_prod_forward(shape, dim):
    x = rand(*shape, seed=1, low=0.5, high=1.5)
    ref = np.prod(x) if dim is None else np.prod(x, axis=dim)
    assert_close(vt.prod(T(x), dim), ref, rtol=1e-12)
    if dim is not None:
        assert_close(T(x).prod(dim, keepdim=True), np.prod(x, axis=dim, keepdims=True))


def test_prod_gradients_with_zeros():
    x = rand(3, 4, seed=2, low=0.5, high=1.5)
    check_grad(lambda t: vt.prod(t, 1), x)
    check_grad(vt.prod, x[:2])
    x[0, 1] = 0.0  # one zero in row 0
    x[1, 0] = x[1, 2] = 0.0  # two zeros in row 1
    check_grad(lambda t: vt.prod(t, 1), x)
    t = vt.tensor(x, requires_grad=True)
    vt.prod(t, 1).sum().backward()
    g = to_np(t.grad)
    expected_row0 = np.zeros(4)
    expected_row0[1] = np.prod(np.delete(x[0], 1))
    np.testing.assert_allclose(g[0], expected_row0)
    np.testing.assert_array_equal(g[1], np.zeros(4))
    assert vt.autograd.gradgradcheck(lambda a: vt.prod(a, 1), [vt.tensor(
        rand(2, 3, seed=3, low=0.5, high=1.5), requires_grad=True)])


def test_prod_integer_dtype():
    assert_close(vt.prod(T([2, 3, 4], dtype=vt.int32)), 24, dtype="int64")
    assert_close(vt.prod(T([2, 3]), dtype=vt.float64), 6.0, dtype="float64")


# -- amax / amin / all / any ------------------------------------------------------------------

@pytest.mark.parametrize("dim", [(), 0, 1, (0, 2), (-1, 0), (0, 1, 2)])
def test_amax_amin(dim):
    x = rand(2, 3, 4, seed=4)
    axis = None if dim == () else dim
    assert_close(vt.amax(T(x), dim), np.max(x, axis=axis))
    assert_close(T(x).amin(dim, keepdim=True), np.min(x, axis=axis, keepdims=True))
    check_grad(lambda t: vt.amax(t, dim), x)
    check_grad(lambda t: vt.amin(t, dim), x)


def test_amax_ties_split_gradient():
    x = vt.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], requires_grad=True)
    vt.amax(x, 1).sum().backward()
    assert_close(x.grad, [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])


def test_amax_errors():
    with pytest.raises(vt.IndexOutOfRangeError, match="amax.*empty"):  # IndexError, as torch
        vt.amax(T(np.zeros((2, 0))), 1)
    with pytest.raises(vt.IndexOutOfRangeError, match="amin"):
        vt.amin(T(rand(2, 3)), 2)
    with pytest.raises(vt.ShapeError, match="repeats"):
        vt.amax(T(rand(2, 3)), (1, -1))
    assert_close(vt.amax(T(np.zeros((0, 3))), 1), np.zeros(0))


def test_all_any():
    x = np.array([[1, 0, 2], [3, 4, 5]])
    assert_close(vt.all(T(x)), False, dtype="bool")
    assert_close(T(x).all(1), [False, True])
    assert_close(T(x).any(0, keepdim=True), [[True, True, True]])
    assert_close(vt.any(T(np.zeros(0))), False)
    assert_close(vt.all(T(np.zeros(0))), True)
    assert_close(vt.all(T([1.0, math.nan])), True)
    assert_close(vt.any(T(np.array(0.0))), False)


# -- var / std ------------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("correction", [0, 1, 2])
def test_var_std(dim, correction):
    x = rand(4, 5, seed=5)
    assert_close(vt.var(T(x), dim, correction=correction),
                 np.var(x, axis=dim, ddof=correction), rtol=1e-12)
    assert_close(T(x).std(dim, keepdim=True, correction=correction),
                 np.std(x, axis=dim, ddof=correction, keepdims=True), rtol=1e-12)
    check_grad(lambda t: vt.var(t, dim, correction=correction), x[:3, :3])
    check_grad(lambda t: vt.std(t, dim, correction=correction), x[:3, :3])


def test_var_unbiased_keyword_and_positional():
    x = rand(3, 4, seed=6)
    assert_close(vt.var(T(x), unbiased=False), np.var(x))
    assert_close(vt.var(T(x), 1, False), np.var(x, axis=1))
    assert_close(vt.std(T(x), 1, True, True), np.std(x, axis=1, ddof=1, keepdims=True))
    assert_close(vt.var(T(x), True), np.var(x, ddof=1))
    assert_close(vt.std(T(x), False), np.std(x))
    v, m = vt.var_mean(T(x), 0)
    assert_close(v, np.var(x, 0, ddof=1))
    assert_close(m, np.mean(x, 0))
    s, m = vt.std_mean(T(x), 1, correction=0, keepdim=True)
    assert_close(s, np.std(x, 1, keepdims=True))


def test_var_errors_and_degenerate():
    with pytest.raises(ValueError, match="either"):
        vt.var(T(rand(3)), unbiased=True, correction=1)
    with pytest.raises(vt.DTypeError, match="var.*int64"):
        vt.var(T([1, 2, 3]))
    with pytest.warns(RuntimeWarning):
        out = vt.var(T([1.0]))
    assert math.isnan(out.item()) or math.isinf(out.item())


# -- logsumexp / softmax / log_softmax -------------------------------------------------------

def _np_logsumexp(x, axis, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


@pytest.mark.parametrize("dim", [0, 1, (0, 1), -1])
def test_logsumexp(dim):
    x = rand(3, 4, seed=7, low=-3, high=3)
    assert_close(vt.logsumexp(T(x), dim), _np_logsumexp(x, dim), rtol=1e-12)
    assert_close(T(x).logsumexp(dim, keepdim=True), _np_logsumexp(x, dim, True), rtol=1e-12)
    check_grad(lambda t: vt.logsumexp(t, dim), x)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's log(0) for the -inf rows
def test_logsumexp_stable_and_edge_cases():
    x = np.array([[1e4, 1e4 - 1, -1e4], [-1e4, -1e4, -1e4 + 2]])
    assert_close(vt.logsumexp(T(x), 1), _np_logsumexp(x, 1), rtol=1e-14)
    assert_close(vt.logsumexp(T([-math.inf, -math.inf]), 0), -math.inf)
    assert_close(vt.logsumexp(T([math.inf, 1.0]), 0), math.inf)
    assert_close(vt.logsumexp(T(np.zeros((2, 0))), 1), [-math.inf, -math.inf])
    assert_close(vt.logsumexp(T(1e4), 0), 1e4)
    assert vt.logsumexp(T([1, 2]), 0).dtype == vt.float32


def _np_softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("shape,dim", [((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -2),
                                       ((1, 1), 1), ((2, 1), 1)])
def test_softmax_log_softmax(shape, dim):
    x = rand(*shape, seed=8, low=-3, high=3)
    assert_close(vt.softmax(T(x), dim), _np_softmax(x, dim), rtol=1e-12)
    assert_close(T(x).log_softmax(dim), np.log(_np_softmax(x, dim)), rtol=1e-12, atol=1e-12)
    check_grad(lambda t: vt.softmax(t, dim), x)
    check_grad(lambda t: vt.log_softmax(t, dim), x)


@pytest.mark.parametrize("dtype", [vt.float32, vt.float64])
def test_softmax_stable_for_large_magnitudes(dtype):
    x = np.array([[1e4, -1e4, 0.0, 1e4 - 3], [-1e4, -1e4 + 1, -1e4 + 2, -1e4]])
    ref = _np_softmax(x, 1)
    out = vt.softmax(T(x, dtype=dtype), 1)
    assert np.all(np.isfinite(to_np(out)))
    assert_close(out, ref, rtol=1e-5, atol=1e-7)
    logs = vt.log_softmax(T(x, dtype=dtype), 1)
    m = x.max(1, keepdims=True)
    ref_log = x - m - np.log(np.exp(x - m).sum(1, keepdims=True))
    assert_close(logs, ref_log, rtol=1e-6, atol=1e-3)
    t = vt.tensor(x, dtype=dtype, requires_grad=True)
    (vt.log_softmax(t, 1) * T(rand(2, 4, seed=9), dtype=dtype)).sum().backward()
    assert np.all(np.isfinite(to_np(t.grad)))


def test_softmax_edge_cases_and_dtype():
    assert_close(vt.softmax(T(3.0), 0), 1.0)
    assert_close(vt.log_softmax(T(3.0), -1), 0.0)
    assert_close(vt.softmax(T(np.zeros((2, 0))), 1), np.zeros((2, 0)))
    assert_close(vt.softmax(T(np.zeros((0, 3))), 1), np.zeros((0, 3)))
    assert_close(vt.softmax(T([1, 2]), 0, dtype=vt.float64), _np_softmax(np.array([1., 2]), 0),
                 dtype="float64")
    masked = vt.softmax(T([0.0, -math.inf, 1.0]), 0)
    assert_close(masked, [1 / (1 + math.e), 0.0, math.e / (1 + math.e)])
    assert_close(vt.softmax(T([0.5, 0.25], dtype=vt.float16), 0),
                 _np_softmax(np.array([0.5, 0.25]), 0), rtol=1e-3, dtype="float16")


def test_softmax_errors():
    with pytest.raises(vt.DTypeError, match="softmax.*int64"):
        vt.softmax(T([1, 2]), 0)
    with pytest.raises(vt.IndexOutOfRangeError, match="log_softmax"):
        vt.log_softmax(T(rand(2, 3)), 2)
    with pytest.raises(TypeError, match="dim"):
        vt.softmax(T(rand(3)), None)


def test_softmax_second_order():
    x = vt.tensor(rand(2, 3, seed=10), requires_grad=True)
    assert vt.autograd.gradgradcheck(lambda t: vt.softmax(t, 1), [x])
    assert vt.autograd.gradgradcheck(lambda t: vt.log_softmax(t, 0), [x])
    assert vt.autograd.gradgradcheck(lambda t: vt.logsumexp(t, 1), [x])


def test_softmax_kernels_are_declared():
    from volta_core.backend.kernels import kernel_names

    assert {"softmax", "log_softmax"} <= set(kernel_names())


# -- norms ----------------------------------------------------------------------------------

ORDS = [2, 1, math.inf, -math.inf, 3, 0.5, 0]


@pytest.mark.parametrize("ord", ORDS)
@pytest.mark.parametrize("dim", [None, 1, (0, 1)])
def test_vector_norm(ord, dim):
    x = rand(3, 4, seed=11)
    flat = x.reshape(-1) if dim in (None, (0, 1)) else x
    axis = None if dim in (None, (0, 1)) else dim
    ref = np.linalg.norm(flat, ord=ord, axis=axis)
    assert_close(vt.linalg.vector_norm(T(x), ord, dim), ref, rtol=1e-12)
    assert_close(vt.norm(T(x), ord, dim, keepdim=True),
                 np.linalg.norm(x, ord=ord, axis=dim, keepdims=True) if dim == 1 else
                 np.reshape(ref, (1, 1)), rtol=1e-12)
    if ord != 0:
        check_grad(lambda t: vt.linalg.vector_norm(t, ord, dim), x[:2, :3])


def test_norm_fro_and_defaults():
    x = rand(3, 4, seed=12)
    assert_close(vt.norm(T(x)), np.linalg.norm(x), rtol=1e-12)
    assert_close(T(x).norm("fro", dim=(0, 1)), np.linalg.norm(x, "fro"), rtol=1e-12)
    assert_close(vt.linalg.norm(T(x)), np.linalg.norm(x), rtol=1e-12)
    assert_close(vt.linalg.norm(T(x), 1, dim=0), np.linalg.norm(x, 1, axis=0), rtol=1e-12)
    assert_close(vt.norm(T([3, 4]), dtype=vt.float64), 5.0, dtype="float64")


def test_norm_gradient_at_zero_is_zero():
    x = vt.zeros(3, dtype=vt.float64, requires_grad=True)
    vt.norm(x).backward()
    assert_close(x.grad, np.zeros(3))


def test_norm_errors():
    with pytest.raises(ValueError, match="'spectral'"):
        vt.norm(T(rand(2, 2)), "spectral")
    with pytest.raises(vt.ShapeError, match="two dims"):
        vt.norm(T(rand(2, 2, 2)), "nuc")
    with pytest.raises(vt.DTypeError, match="vector_norm.*int64"):
        vt.linalg.vector_norm(T([1, 2]))
    with pytest.raises(vt.ShapeError, match="empty"):
        vt.linalg.vector_norm(T(np.zeros((0,))), math.inf)
    assert_close(vt.norm(T(np.zeros((0,)))), 0.0)


def test_nuclear_norm_matches_pytorch():
    torch = pytest.importorskip("torch")
    a, b = rand(3, 4), rand(2, 3, 3, seed=1)
    assert_close(vt.norm(T(a), "nuc"), torch.norm(torch.tensor(a), "nuc").numpy())
    assert_close(vt.norm(T(b), "nuc", dim=(2, 0), keepdim=True),
                 torch.norm(torch.tensor(b), "nuc", dim=(2, 0), keepdim=True).numpy())


# -- properties -----------------------------------------------------------------------------

small_arrays = hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4),
                          elements=st.floats(-100, 100))


@settings(max_examples=25, deadline=None)
@given(small_arrays, st.integers(0, 2))
def test_softmax_property_sums_to_one_and_matches_log(x, d):
    dim = d % x.ndim
    s = to_np(vt.softmax(T(x), dim))
    np.testing.assert_allclose(s.sum(axis=dim), 1.0, rtol=1e-12)
    assert np.all(s >= 0)
    ls = to_np(vt.log_softmax(T(x), dim))
    np.testing.assert_allclose(ls, np.log(_np_softmax(x, dim)), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(to_np(vt.logsumexp(T(x), dim)), _np_logsumexp(x, dim),
                               rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(small_arrays)
@example(np.array([9.96894001e-279]))
@example(np.array([1.25713567e-279, 1.25713567e-279]))
def test_var_norm_property(x):
    np.testing.assert_allclose(to_np(vt.var(T(x), correction=0)), np.var(x), rtol=1e-9,
                               atol=1e-9)
    # PyTorch's own answer: squares of tiny values (1e-279) underflow to 0 there too, but
    # a single element's norm is its magnitude
    torch = pytest.importorskip("torch")
    np.testing.assert_allclose(to_np(vt.norm(T(x))),
                               torch.linalg.vector_norm(torch.from_numpy(x)).numpy(),
                               rtol=1e-12)
    np.testing.assert_allclose(to_np(vt.prod(T(x / 50), 0)), np.prod(x / 50, 0), rtol=1e-12)


def test_zero_dim_reductions():
    x = np.array(-3.0)
    for fn, ref in [(vt.amax, x), (vt.amin, x), (vt.prod, x), (vt.norm, 3.0),
                    (lambda t: vt.logsumexp(t, 0), x), (lambda t: vt.var(t, correction=0), 0.0),
                    (lambda t: vt.softmax(t, 0), 1.0), (vt.sum, x), (vt.mean, x)]:
        assert_close(fn(T(x, dtype=vt.float64)), ref)
    for fn in (vt.amax, vt.prod, vt.norm, lambda t: vt.logsumexp(t, 0)):
        check_grad(fn, x)
    assert_close(vt.all(T(0.0)), False)
