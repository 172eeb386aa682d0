"""NaN and edge semantics checked against PyTorch CPU: clamp/hardtanh/relu6 gradients at
NaN and at the bounds, integer hardtanh/relu6, creation and multinomial argument checks,
float64 erf/gelu accuracy, and no NumPy RuntimeWarnings from correct computations."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import volta_core as vt
import volta_core.nn.functional as F

NAN = float("nan")


def close(got, want, rtol=1e-6, atol=1e-7):
    assert got.dtype.name == str(want.dtype).removeprefix("torch."), (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol,
                               atol=atol, equal_nan=True)


@pytest.mark.parametrize("name", ["clamp", "clamp_min", "clamp_max", "clamp_tensors", "clip",
                                  "hardtanh", "hardtanh_wide", "relu6"])
def test_clamp_family_gradients_at_nan_and_bounds(name):
    def fn(m, x):
        f = F if m is vt else TF
        return {
            "clamp": lambda: x.clamp(-1, 1), "clamp_min": lambda: x.clamp(min=0),
            "clamp_max": lambda: x.clamp(max=1),
            "clamp_tensors": lambda: x.clamp(m.tensor(-1.0), m.tensor(1.0)),
            "clip": lambda: m.clip(x, -1, 1), "hardtanh": lambda: f.hardtanh(x),
            "hardtanh_wide": lambda: f.hardtanh(x, -2.0, 0.5), "relu6": lambda: f.relu6(x),
        }[name]()
    data = [NAN, -2.0, -1.0, 0.0, 0.5, 1.0, 2.0, 6.0, 7.0]
    v = vt.tensor(data, requires_grad=True)
    t = torch.tensor(data, requires_grad=True)
    rv, rt = fn(vt, v), fn(torch, t)
    close(rv, rt)
    rv.sum().backward()
    rt.sum().backward()
    close(v.grad, t.grad)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8"])
def test_hardtanh_and_relu6_take_integers(dtype):
    a = np.array([-9, -1, 0, 1, 5, 9], dtype=dtype)
    close(F.hardtanh(vt.tensor(a)), TF.hardtanh(torch.tensor(a)))
    close(F.hardtanh(vt.tensor(a), -3.0, 4.0), TF.hardtanh(torch.tensor(a), -3.0, 4.0))
    close(F.relu6(vt.tensor(a)), TF.relu6(torch.tensor(a)))


def test_hardtanh_unsigned_with_negative_limit_raises():
    with pytest.raises(RuntimeError):
        TF.hardtanh(torch.tensor([1], dtype=torch.uint8))
    with pytest.raises(vt.DTypeError, match="unsigned"):
        F.hardtanh(vt.tensor([1], dtype=vt.uint8))
    close(F.relu6(vt.tensor([3, 9], dtype=vt.uint8)),
          TF.relu6(torch.tensor([3, 9], dtype=torch.uint8)))


# -- creation ----------------------------------------------------------------------------

@pytest.mark.parametrize("expr", [
    "m.arange(0, 10, -1)", "m.arange(10, 0, 1)", "m.arange(0.0, 1.0, -0.5)",
    "m.full((2,), float('nan'), dtype=m.int64)", "m.full((2,), float('inf'), dtype=m.int32)",
    "m.full((2,), 300, dtype=m.uint8)", "m.full((2,), -256, dtype=m.uint8)",
    "m.full((2,), 2 ** 63, dtype=m.int64)", "m.linspace(0, 1, -1)",
])
def test_creation_raises_like_torch(expr):
    with pytest.raises(RuntimeError):
        eval(expr, {"m": torch})
    with pytest.raises(vt.VoltaError if "full" in expr else ValueError):
        eval(expr, {"m": vt})


@pytest.mark.parametrize("expr", [
    "m.arange(10, 0, -1)", "m.arange(0, 0, -1)", "m.arange(0.0, 1.0, 0.25)",
    "m.full((2,), 2.5, dtype=m.int64)", "m.full((2,), 255, dtype=m.uint8)",
    "m.full((2,), np.float64(1.5))", "m.full((2,), np.int64(3))", "m.linspace(0, 1, 0)",
    "m.full((2,), float('nan'))", "m.full((2,), -128, dtype=m.int8)",
    "m.full((2,), -1, dtype=m.uint8)", "m.full((2,), -255, dtype=m.uint8)",
])
def test_creation_allowed_like_torch(expr):
    close(eval(expr, {"m": vt, "np": np}), eval(expr, {"m": torch, "np": np}))


@pytest.mark.parametrize("weights", [
    [0.5, -0.1], [0.0, 0.0], [NAN, 1.0], [float("inf"), 1.0], [[1.0, 1.0], [0.0, 0.0]],
])
def test_multinomial_rejects_invalid_weights(weights):
    with pytest.raises(RuntimeError):
        torch.multinomial(torch.tensor(weights), 1)
    with pytest.raises(ValueError, match="multinomial"):
        vt.multinomial(vt.tensor(weights), 1)


# -- float64 erf and gelu ----------------------------------------------------------------

def _grid() -> np.ndarray:
    tiny = np.geomspace(1e-300, 1e-2, 200)
    return np.concatenate([np.linspace(-7, 7, 14001), tiny, -tiny, [0.0, 2.5, 6.0, 30.0]])


def test_erf_float64_matches_math_erf():
    x = _grid()
    want = np.array([math.erf(v) for v in x])
    got = vt.tensor(x).erf().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
    assert math.copysign(1.0, float(vt.tensor([-0.0], dtype=vt.float64).erf()[0])) == -1.0
    special = vt.tensor([math.inf, -math.inf, math.nan], dtype=vt.float64).erf().tolist()
    assert special[:2] == [1.0, -1.0] and math.isnan(special[2])


def test_gelu_float64_matches_its_formula():
    x = _grid()
    # x * Phi(x) = x/2 * erfc(-x / sqrt(2)): math.erfc keeps the negative tail exact,
    # where x/2 * (1 + erf(x / sqrt(2))) cancels
    want = np.array([0.5 * v * math.erfc(-v / math.sqrt(2.0)) for v in x])
    got = F.gelu(vt.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=0)
    close(F.gelu(vt.tensor(x)), TF.gelu(torch.tensor(x)), rtol=1e-10, atol=1e-15)


def test_gelu_float64_gradcheck():
    x = vt.tensor(np.linspace(-4, 4, 17), requires_grad=True)
    assert vt.autograd.gradcheck(F.gelu, [x])


# -- NumPy warnings ----------------------------------------------------------------------

def test_no_numpy_runtime_warnings_from_correct_computations():
    from volta_numpy.backend import quiet_numpy_warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet_numpy_warnings()  # as at import (pytest resets filters around each test)
        vt.tril(vt.ones(3, 3)).log()
        vt.tensor([0.0, 1.0]) / vt.tensor([0.0, 0.0])
        vt.tensor([math.inf]) - math.inf
        vt.maximum(vt.tensor([NAN]), vt.tensor([1.0]))
        F.cross_entropy(vt.zeros(2, 3), vt.tensor([-100, -100]))
        both = vt.tensor([math.inf, -math.inf])  # reductions report from NumPy's own files
        both.sum(), both.mean(), both.std(), both.var(), both.cumsum(0), both.nansum()
        vt.full((3,), 3e38).sum()  # overflow: inf
        assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
        np.log(np.zeros(1))  # the user's own NumPy code still warns
        assert [w for w in caught if issubclass(w.category, RuntimeWarning)]


# -- unary ops and reductions at NaN, inf and zeros; bool inputs ----------------------------

SPECIAL = [[-2.5, 0.0, 1.0], [NAN, math.inf, 3.25]]


@pytest.mark.parametrize("name", ["sign", "abs", "max_all", "min_all", "prod_all", "prod_dim",
                                  "prod_zeros_dim", "prod_two_zeros", "norm1", "prod_no_zero"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_special_values_match_torch_with_gradients(name, dtype):
    data = {"prod_zeros_dim": [[-2.5, 0.0, 1.0], [2.0, 0.0, 0.0]],
            "prod_two_zeros": [[0.0, 1.5, 0.0], [2.0, -1.0, 3.0]],
            "prod_no_zero": [[-2.5, 0.5, 1.0], [NAN, 2.0, 3.25]]}.get(name, SPECIAL)
    fn = {
        "sign": lambda x: x.sign() * 1.0, "abs": lambda x: x.abs(), "max_all": lambda x: x.max(),
        "min_all": lambda x: x.min(), "prod_all": lambda x: x.prod(),
        "prod_dim": lambda x: x.prod(1), "prod_zeros_dim": lambda x: x.prod(1),
        "prod_two_zeros": lambda x: x.prod(), "norm1": lambda x: x.norm(1, dim=1),
        "prod_no_zero": lambda x: x.prod(0),
    }[name]
    a = np.asarray(data, dtype=np.float64)
    v = vt.tensor(a).to(dtype).requires_grad_()
    t = torch.tensor(a).to(getattr(torch, dtype)).requires_grad_()
    rv, rt = fn(v), fn(t)
    np.testing.assert_allclose(rv.detach().float().numpy(), rt.detach().float().numpy(),
                               rtol=1e-2, equal_nan=True)
    g = np.linspace(0.5, 1.5, rt.numel()).reshape(tuple(rt.shape))
    rv.backward(vt.tensor(g).to(dtype))
    rt.backward(torch.tensor(g).to(getattr(torch, dtype)))
    np.testing.assert_allclose(v.grad.float().numpy(), t.grad.float().numpy(), rtol=1e-2,
                               equal_nan=True)


def test_prod_gradcheck_with_zeros():
    for data, dim in (([[1.5, 0.0, 2.0], [0.5, -1.0, 3.0]], 1), ([[1.5, 0.0, 2.0]], None)):
        x = vt.tensor(np.array(data), requires_grad=True)
        assert vt.autograd.gradcheck(lambda a, d=dim: a.prod(d) if d is not None else a.prod(),
                                     [x])


@pytest.mark.parametrize("expr", ["m.floor(b)", "m.ceil(b)", "m.round(b)", "m.trunc(b)",
                                  "m.relu(b)", "m.abs(b)", "b.argmax()", "b.argmin(0)",
                                  "b.topk(1)"])
def test_bool_inputs_torch_refuses(expr):
    with pytest.raises((RuntimeError, NotImplementedError)):
        eval(expr, {"m": torch, "b": torch.tensor([True, False])})
    with pytest.raises(vt.DTypeError, match="bool"):
        eval(expr, {"m": vt, "b": vt.tensor([True, False])})


@pytest.mark.parametrize("expr", ["m.sign(b)", "m.square(b)", "m.all(u)", "m.any(u)",
                                  "u.all(0)", "u.any(1)"])
def test_bool_and_uint8_results_like_torch(expr):
    def env(m):
        return {"m": m, "b": m.tensor([True, False]),
                "u": m.tensor([[0, 2], [1, 1]], dtype=m.uint8)}
    close(eval(expr, env(vt)), eval(expr, env(torch)))


@pytest.mark.parametrize("name", ["elu", "selu", "celu", "hardsigmoid", "hardswish",
                                  "softshrink", "hardshrink", "leaky_relu", "softplus", "silu",
                                  "mish", "logsigmoid", "softsign", "tanhshrink"])
def test_activations_at_nan_inf_and_kinks(name):
    # float32, as PyTorch's vectorised CPU kernels (its float64 kernels differ at NaN)
    data = [math.nan, math.inf, -math.inf, -3.0, 3.0, -0.5, 0.5, 0.0, -2.5, 1.0, 25.0, -30.0]
    v = vt.tensor(data, requires_grad=True)
    t = torch.tensor(data, requires_grad=True)
    rv, rt = getattr(F, name)(v), getattr(TF, name)(t)
    close(rv, rt, rtol=1e-5, atol=1e-6)
    g = np.linspace(0.5, 1.5, len(data)).astype(np.float32)
    rv.backward(vt.tensor(g))
    rt.backward(torch.tensor(g))
    close(v.grad, t.grad, rtol=1e-5, atol=1e-6)


def test_atan2_gradient_at_the_origin():
    a, b = [0.0, 1.0, 0.0, math.inf], [0.0, 0.0, 2.0, math.inf]
    va, vb = vt.tensor(a, requires_grad=True), vt.tensor(b, requires_grad=True)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    vt.atan2(va, vb).sum().backward()
    torch.atan2(ta, tb).sum().backward()
    close(va.grad, ta.grad)
    close(vb.grad, tb.grad)


@pytest.mark.parametrize("expr", ["m.lerp(t([1, 2]), t([3, 4]), 0.5)",
                                  "m.lerp(t([1.0, 2]), t([3.0, 4], dtype=m.float64), 0.5)",
                                  "m.lerp(t([1.0, 2]), t([3.0, 4]), t([0.5], dtype=m.float16))",
                                  "m.addcdiv(t([1.0]), t([3]), t([2]))",
                                  "m.tensor(1.0).index_select(0, m.tensor([0, 0]))"])
def test_more_inputs_torch_refuses(expr):
    with pytest.raises((RuntimeError, NotImplementedError)):
        eval(expr, {"m": torch, "t": torch.tensor})
    with pytest.raises(vt.VoltaError):
        eval(expr, {"m": vt, "t": vt.tensor})


@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
@pytest.mark.parametrize("interpolation", ["linear", "midpoint", "nearest", "lower", "higher"])
def test_quantiles_next_to_infinities_match_torch(fn, interpolation):
    """PyTorch interpolates with its two-sided lerp (-inf between -inf and 1 at weight 0.9,
    not NaN) and returns order statistics as they are for the other modes."""
    import torch

    rng = np.random.default_rng(3)
    for _ in range(60):
        x = rng.standard_normal((3, int(rng.integers(1, 7))))
        for _ in range(int(rng.integers(0, 4))):
            x.flat[rng.integers(0, x.size)] = rng.choice([np.inf, -np.inf, np.nan])
        for q in (0.0, 0.3, 0.5, 0.9, 1.0):
            want = getattr(torch, fn)(torch.tensor(x), q, dim=-1, interpolation=interpolation)
            got = getattr(vt, fn)(vt.tensor(x), q, dim=-1, interpolation=interpolation)
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("dim", [None, 0, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_quantile_of_a_0d_tensor(dim, keepdim):
    import torch

    for q in (0.3, [0.3, 0.5]):
        tq = torch.tensor(q, dtype=torch.float64) if isinstance(q, list) else q
        vq = vt.tensor(q, dtype=vt.float64) if isinstance(q, list) else q
        want = torch.quantile(torch.tensor(2.0, dtype=torch.float64), tq, dim=dim,
                              keepdim=keepdim)
        got = vt.quantile(vt.tensor(2.0, dtype=vt.float64), vq, dim=dim, keepdim=keepdim)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
