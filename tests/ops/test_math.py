"""Elementwise math and activations against NumPy/SciPy references, with gradchecks.

The last section runs the numerics ops on an array-api-strict device, registered here as
a throwaway backend, to catch any reliance on NumPy-only behaviour.
"""

import math

import numpy as np
import pytest
import vt_helpers as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from vt_helpers import assert_close, check_grad, rand, strict_backend, to_np

import volta_core as vt

T = vt.tensor

# name, volta function, NumPy reference, input range (low, high)
UNARY = [
    ("log1p", vt.log1p, np.log1p, (-0.9, 2.0)),
    ("expm1", vt.expm1, np.expm1, (-2.0, 2.0)),
    ("sinh", vt.sinh, np.sinh, (-2.0, 2.0)),
    ("cosh", vt.cosh, np.cosh, (-2.0, 2.0)),
    ("tan", vt.tan, np.tan, (-1.2, 1.2)),
    ("asin", vt.asin, np.arcsin, (-0.9, 0.9)),
    ("acos", vt.acos, np.arccos, (-0.9, 0.9)),
    ("atan", vt.atan, np.arctan, (-3.0, 3.0)),
    ("square", vt.square, np.square, (-2.0, 2.0)),
    ("rsqrt", vt.rsqrt, lambda x: 1 / np.sqrt(x), (0.2, 3.0)),
    ("erf", vt.erf, sp.erf, (-3.0, 3.0)),
    ("silu", vt.silu, lambda x: x * sp.expit(x), (-4.0, 4.0)),
    ("softplus", vt.softplus, lambda x: np.log1p(np.exp(x)), (-4.0, 4.0)),
    ("gelu", vt.gelu, lambda x: 0.5 * x * (1 + sp.erf(x / math.sqrt(2))), (-3.0, 3.0)),
    ("leaky_relu", vt.leaky_relu, lambda x: np.where(x > 0, x, 0.01 * x), (-2.0, 2.0)),
    ("elu", vt.elu, lambda x: np.where(x > 0, x, np.expm1(x)), (-2.0, 2.0)),
    ("hardtanh", vt.hardtanh, lambda x: np.clip(x, -1, 1), (-2.0, 2.0)),
]


@pytest.mark.parametrize("shape", [(), (0,), (1,), (2, 3)])
@pytest.mark.parametrize("name,fn,ref,dom", UNARY, ids=[u[0] for u in UNARY])
def test_unary_forward(name, fn, ref, dom, shape):
    x = rand(*shape, seed=1, low=dom[0], high=dom[1])
    assert_close(fn(T(x)), ref(x), rtol=1e-7, atol=1e-9, dtype="float64")
    assert_close(fn(T(x, dtype=vt.float32)), ref(x), rtol=1e-5, atol=1e-6, dtype="float32")


@pytest.mark.parametrize("name,fn,ref,dom", UNARY, ids=[u[0] for u in UNARY])
def test_unary_gradcheck(name, fn, ref, dom):
    # keep away from the kinks of the piecewise activations
    x = rand(2, 3, seed=2, low=dom[0], high=dom[1])
    x = np.where(np.abs(x) < 0.05, 0.3, x)
    x = np.where(np.abs(np.abs(x) - 1) < 0.05, 0.5, x)
    check_grad(fn, x)


@pytest.mark.parametrize("fn", [vt.floor, vt.ceil, vt.trunc, vt.round, vt.sign])
def test_piecewise_constant_ops_have_zero_gradient(fn):
    x = T([-1.7, -0.5, 0.2, 2.5, 3.5], dtype=vt.float64, requires_grad=True)
    fn(x).sum().backward()
    assert_close(x.grad, np.zeros(5))


def test_rounding_matches_numpy():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.7, -2.7, 0.0])
    for fn, ref in [(vt.floor, np.floor), (vt.ceil, np.ceil), (vt.trunc, np.trunc),
                    (vt.round, np.round), (vt.sign, np.sign)]:
        assert_close(fn(T(x)), ref(x))
    assert_close(T(x).round(decimals=1), np.round(x, 1))
    assert_close(vt.round(T([1.2345, -5.678]), decimals=2), [1.23, -5.68], rtol=1e-6)
    ints = T([-3, 0, 4])
    assert_close(vt.floor(ints), [-3, 0, 4], dtype="int64")
    assert_close(vt.sign(ints), [-1, 0, 1], dtype="int64")
    assert_close(ints.square(), [9, 0, 16], dtype="int64")
    with pytest.raises(vt.DTypeError, match="round"):
        vt.round(ints, decimals=1)


def test_erf_accuracy_and_tails():
    x = np.concatenate([np.linspace(-7, 7, 20001), [0.0, 1e-12, -1e-9, 30.0, -30.0]])
    got = to_np(vt.erf(T(x)))
    assert np.max(np.abs(got - sp.erf(x))) < 1e-9
    small = np.geomspace(1e-300, 0.49, 200)
    np.testing.assert_allclose(to_np(vt.erf(T(small))), sp.erf(small), rtol=1e-12)
    assert vt.erf(T(0.0)).item() == 0.0
    assert_close(vt.erf(T([math.inf, -math.inf, math.nan])), [1.0, -1.0, math.nan])
    assert vt.erf(T([1, 2])).dtype == vt.float32  # integers become the default float


def test_erf_is_an_extension_kernel():
    from volta_core.backend.kernels import kernel_names

    assert "erf" in kernel_names()


@pytest.mark.parametrize("beta,threshold", [(1.0, 20.0), (2.0, 5.0), (0.5, 1.0)])
def test_softplus_beta_threshold(beta, threshold):
    x = np.array([-30.0, -2.0, 0.0, 1.9, 2.1, 3.0, 50.0, 800.0])
    ref = np.where(beta * x > threshold, x, np.logaddexp(0, beta * x) / beta)
    assert_close(vt.softplus(T(x), beta, threshold), ref, rtol=1e-12)
    check_grad(lambda t: vt.softplus(t, beta, threshold), np.array([-1.3, 0.4, 1.7, 4.0]))


def test_gelu_tanh_approximation():
    x = rand(3, 4, seed=3, low=-4, high=4)
    k = math.sqrt(2 / math.pi)
    ref = 0.5 * x * (1 + np.tanh(k * (x + 0.044715 * x ** 3)))
    assert_close(vt.gelu(T(x), approximate="tanh"), ref, rtol=1e-12)
    check_grad(lambda t: vt.gelu(t, approximate="tanh"), x[:2])
    with pytest.raises(ValueError, match="approximate"):
        vt.gelu(T(x), approximate="fast")


def test_activation_parameters():
    x = rand(2, 5, seed=4, low=-3, high=3)
    assert_close(vt.leaky_relu(T(x), 0.2), np.where(x > 0, x, 0.2 * x))
    assert_close(vt.elu(T(x), alpha=1.5), np.where(x > 0, x, 1.5 * np.expm1(x)))
    assert_close(vt.hardtanh(T(x), -0.5, 2.0), np.clip(x, -0.5, 2.0))
    check_grad(lambda t: vt.elu(t, alpha=1.5), x)
    check_grad(lambda t: vt.leaky_relu(t, 0.2), x)
    with pytest.raises(ValueError, match="hardtanh"):
        vt.hardtanh(T(x), 1.0, -1.0)
    with pytest.raises(vt.DTypeError, match="gelu.*int64"):
        vt.gelu(T([1, 2]))


def test_activations_are_stable_for_large_inputs():
    x = T([-1e4, -800.0, 0.0, 800.0, 1e4], dtype=vt.float64)
    for fn in (vt.silu, vt.softplus, vt.elu, vt.gelu):
        assert np.all(np.isfinite(to_np(fn(x)))), fn.__name__
    assert_close(vt.silu(x), [-0.0, -0.0, 0.0, 800.0, 1e4])


def test_second_order_gradients():
    x = vt.tensor([0.3, -0.7, 0.6], dtype=vt.float64, requires_grad=True)
    for fn in (vt.gelu, vt.erf, vt.silu, vt.softplus, vt.tan, vt.asin):
        assert vt.autograd.gradgradcheck(fn, [x]), fn.__name__


def test_atan2():
    y, x = rand(2, 3, seed=5), rand(3, seed=6)
    assert_close(vt.atan2(T(y), T(x)), np.arctan2(y, x))
    assert_close(T(y).arctan2(T(x)), np.arctan2(y, x))
    check_grad(vt.atan2, y, x + 2.0)
    assert vt.atan2(T([1, 2]), T([3, 4])).dtype == vt.float32
    with pytest.raises(vt.ShapeError, match="atan2"):
        vt.atan2(T(rand(2, 3)), T(rand(4)))


def test_clamp_scalars():
    x = rand(3, 4, seed=7, low=-2, high=2)
    assert_close(vt.clamp(T(x), -0.5, 0.5), np.clip(x, -0.5, 0.5))
    assert_close(T(x).clamp(min=0.1), np.maximum(x, 0.1))
    assert_close(T(x).clip(max=0.1), np.minimum(x, 0.1))
    assert_close(vt.clamp_min(T(x), 0.0), np.maximum(x, 0.0))
    assert_close(T([1, 5, 9]).clamp(2, 6), [2, 5, 6], dtype="int64")
    assert_close(T([1, 5, 9]).clamp(2.5), [2.5, 5, 9], dtype="float32")
    assert_close(vt.clamp(T([math.nan, 3.0]), 0, 1), [math.nan, 1.0])
    check_grad(lambda t: vt.clamp(t, -0.5, 0.5), x)
    x = T([-1.0, 0.0, 0.5, 1.0, 2.0], dtype=vt.float64, requires_grad=True)
    x.clamp(0.0, 1.0).sum().backward()
    assert_close(x.grad, [0.0, 1.0, 1.0, 1.0, 0.0])  # the bounds themselves pass gradient


def test_clamp_tensor_bounds_broadcast():
    x, lo, hi = rand(3, 4, seed=8), rand(4, seed=9) - 0.3, rand(3, 1, seed=10) + 0.3
    ref = np.minimum(np.maximum(x, lo), hi)
    assert_close(vt.clamp(T(x), T(lo), T(hi)), ref)
    check_grad(vt.clamp, x, lo, hi)
    check_grad(lambda a, b: vt.clamp(a, min=b), x, lo)
    check_grad(lambda a, b: vt.clamp(a, max=b), x, hi)
    # min > max: the result is max, and the gradient goes to max
    a, b = vt.tensor([0.0, 5.0], requires_grad=True), vt.tensor([2.0], requires_grad=True)
    c = vt.tensor([1.0], requires_grad=True)
    out = vt.clamp(a, b, c)
    assert_close(out, [1.0, 1.0])
    out.sum().backward()
    assert_close(a.grad, [0.0, 0.0])
    assert_close(b.grad, [0.0])
    assert_close(c.grad, [2.0])


def test_clamp_errors():
    with pytest.raises(ValueError, match="at least one"):
        vt.clamp(T([1.0]))
    with pytest.raises(vt.ShapeError, match="clamp"):
        vt.clamp(T(rand(3)), T(rand(2)))
    with pytest.raises(TypeError, match="clamp"):
        vt.clamp(T([1.0]), "a")


def test_logical_ops():
    a = np.array([[True, False, True], [False, False, True]])
    b = np.array([True, True, False])
    for fn, ref in [(vt.logical_and, np.logical_and), (vt.logical_or, np.logical_or),
                    (vt.logical_xor, np.logical_xor)]:
        assert_close(fn(T(a), T(b)), ref(a, b), dtype="bool")
    assert_close(vt.logical_not(T(a)), ~a, dtype="bool")
    assert_close(T([0.0, 2.0, -1.0]).logical_and(T([1, 1, 0])), [False, True, False])
    assert_close(vt.logical_not(T([0, 3])), [True, False])
    assert_close(vt.logical_or(T(np.zeros((0, 3), bool)), T(b)), np.zeros((0, 3), bool))
    with pytest.raises(vt.ShapeError, match="logical_and"):
        vt.logical_and(T(a), T([True, False]))


def test_classification_and_nan_to_num():
    x = np.array([1.0, math.nan, math.inf, -math.inf, -0.0])
    assert_close(vt.isnan(T(x)), np.isnan(x))
    assert_close(vt.isinf(T(x)), np.isinf(x))
    assert_close(T(x).isfinite(), np.isfinite(x))
    assert_close(vt.isnan(T([1, 2])), [False, False])
    assert_close(vt.isfinite(T([1, 2])), [True, True])
    assert_close(vt.nan_to_num(T(x)), np.nan_to_num(x))
    x32 = T(x, dtype=vt.float32)
    assert_close(vt.nan_to_num(x32), np.nan_to_num(x.astype(np.float32)))
    assert_close(T(x).nan_to_num(nan=1.0, posinf=2.0, neginf=-3.0), [1, 1, 2, -3, 0])
    t = T(x, dtype=vt.float64, requires_grad=True)
    vt.nan_to_num(t).sum().backward()
    assert_close(t.grad, [1.0, 0.0, 0.0, 0.0, 1.0])
    assert_close(vt.nan_to_num(T([1, 2])), [1, 2], dtype="int64")


def test_lerp_addcmul_addcdiv():
    a, b, w = rand(2, 3, seed=11), rand(3, seed=12), rand(2, 1, seed=13)
    assert_close(vt.lerp(T(a), T(b), 0.3), a + 0.3 * (b - a))
    assert_close(T(a).lerp(T(b), T(w)), a + w * (b - a))
    check_grad(vt.lerp, a, b, w)
    c = rand(2, 3, seed=14) + 2.0
    assert_close(vt.addcmul(T(a), T(b), T(c), value=0.5), a + 0.5 * b * c)
    assert_close(T(a).addcdiv(T(b), T(c), value=-2), a - 2 * b / c)
    check_grad(lambda x, y, z: vt.addcmul(x, y, z, value=0.5), a, b, c)
    check_grad(lambda x, y, z: vt.addcdiv(x, y, z, value=2.0), a, b, c)


def test_integer_inputs_promote_to_default_float():
    assert vt.log1p(T([1, 2])).dtype == vt.float32
    vt.set_default_dtype(vt.float64)
    try:
        assert vt.expm1(T([1, 2])).dtype == vt.float64
    finally:
        vt.set_default_dtype(vt.float32)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-50, 50), min_size=1, max_size=20))
def test_erf_property_odd_bounded_monotone(values):
    x = np.sort(np.array(values))
    y = to_np(vt.erf(T(x)))
    assert np.all(np.abs(y) <= 1.0)
    assert np.all(np.diff(y) >= -1e-9)  # monotone up to the approximation error
    np.testing.assert_allclose(to_np(vt.erf(T(-x))), -y, atol=1e-15)
    np.testing.assert_allclose(y, sp.erf(x), atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=12),
       st.floats(-10, 10), st.floats(0, 10))
def test_clamp_property(values, lo, width):
    x = np.array(values)
    got = to_np(vt.clamp(T(x), lo, lo + width))
    np.testing.assert_array_equal(got, np.clip(x, lo, lo + width))


# -- a strict Array-API backend ------------------------------------------------------------

@pytest.fixture(scope="module")
def strict():
    """A device whose namespace is array-api-strict (no NumPy extras), owned by this test."""
    yield from strict_backend("strict_math_test", "strictmath")


STRICT_OPS = [
    ("erf", lambda t: vt.erf(t)),
    ("gelu", lambda t: vt.gelu(t)),
    ("gelu_tanh", lambda t: vt.gelu(t, approximate="tanh")),
    ("silu", lambda t: vt.silu(t)),
    ("softplus", lambda t: vt.softplus(t)),
    ("elu", lambda t: vt.elu(t)),
    ("leaky_relu", lambda t: vt.leaky_relu(t)),
    ("hardtanh", lambda t: vt.hardtanh(t)),
    ("clamp", lambda t: vt.clamp(t, -0.5, 0.5)),
    ("clamp_t", lambda t: vt.clamp(t, t * 0 - 0.2, t * 0 + 0.4)),
    ("trig", lambda t: vt.sinh(t) + vt.cosh(t) + vt.atan(t) + vt.asin(t * 0.5) + vt.tan(t)),
    ("atan2", lambda t: vt.atan2(t, t * 0.5 + 2.0)),
    ("log1p", lambda t: vt.log1p(t.abs()) + vt.expm1(t) + vt.rsqrt(t.abs() + 1)),
    ("nan_to_num", lambda t: vt.nan_to_num(t, nan=1.0)),
    ("round", lambda t: vt.round(t, decimals=1) + vt.floor(t) + vt.sign(t)),
    ("softmax", lambda t: vt.softmax(t, -1) + vt.log_softmax(t, 0)),
    ("logsumexp", lambda t: vt.logsumexp(t, 1)),
    ("prod", lambda t: vt.prod(t, 1)),
    ("var_std", lambda t: vt.var(t, 0) + vt.std(t, 0, correction=0)),
    ("norms", lambda t: vt.norm(t, dim=1) + vt.norm(t, 1, dim=1) + vt.norm(t, 3, dim=1)
     + vt.norm(t, math.inf, dim=1)),
    ("amax", lambda t: vt.amax(t, (0, 1)) + vt.amin(t)),
    ("einsum", lambda t: vt.einsum("ij,kj->ik", t, t)),
    ("einsum_diag", lambda t: vt.einsum("ii->i", t @ t.mT)),
    ("outer", lambda t: vt.outer(t.sum(0), t.sum(1))),
]


@pytest.mark.parametrize("name,fn", STRICT_OPS, ids=[c[0] for c in STRICT_OPS])
def test_strict_backend_matches_numpy(strict, name, fn):
    x = rand(3, 4, seed=20)
    ref = to_np(fn(T(x)))
    xs = vt.tensor(x, device=strict, requires_grad=True)
    out = fn(xs)
    assert out.device.type == "strictmath"
    np.testing.assert_allclose(to_np(out), ref, rtol=1e-12, atol=1e-12)
    out.sum().backward()
    xn = T(x, requires_grad=True)
    fn(xn).sum().backward()
    np.testing.assert_allclose(to_np(xs.grad), to_np(xn.grad), rtol=1e-10, atol=1e-12)
