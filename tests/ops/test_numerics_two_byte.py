"""float16 and bfloat16 against PyTorch CPU where their rounding is easy to get wrong:
rounded division (PyTorch's CPU kernels round every step of the quotient to the dtype:
``div(-22, 2.203125, rounding_mode='trunc')`` is -10 in bfloat16, not trunc(-9.986) = -9)
and double -> half conversion (PyTorch goes through float32, so float32 ties decide), with
hypothesis drawing the operands from the dtype's own values, zeros, infinities and NaN."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import volta_core as vt

DTYPES = ["bfloat16", "float16"]
SPECIAL = [0.0, -0.0, float("inf"), float("-inf"), float("nan")]


def _same(got: vt.Tensor, want: torch.Tensor) -> None:
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    g, w = got.float().numpy(), want.float().numpy()
    assert g.shape == w.shape
    nan = np.isnan(w)
    np.testing.assert_array_equal(np.isnan(g), nan)
    np.testing.assert_array_equal(g[~nan], w[~nan])
    np.testing.assert_array_equal(np.signbit(g[~nan]), np.signbit(w[~nan]))  # -0.0 too


def _pair(values: np.ndarray, dtype: str) -> tuple[vt.Tensor, torch.Tensor]:
    t = torch.tensor(values).to(getattr(torch, dtype))
    return vt.tensor(t.float().numpy()).to(getattr(vt, dtype)), t


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_rounded_division_matches_torch_on_random_pairs(dtype, mode):
    rng = np.random.default_rng(0)
    n = 50_000
    a = rng.standard_normal(n) * 10
    b = rng.standard_normal(n) * 3
    b[:20] = 0.0
    a[20:40] = 0.0
    b[40:60] = np.inf
    a[60:80] = -np.inf
    a[80:90] = np.nan
    b[90:100] = -0.0
    (va, ta), (vb, tb) = _pair(a, dtype), _pair(b, dtype)
    _same(vt.div(va, vb, rounding_mode=mode), torch.div(ta, tb, rounding_mode=mode))
    if mode == "floor":
        _same(va // vb, ta // tb)
        _same(va // 2.5, ta // 2.5)
        _same(vt.floor_divide(va, vb), torch.floor_divide(ta, tb))


@pytest.mark.parametrize("dtype", DTYPES)
def test_integer_dividend_promotes_then_rounds_like_torch(dtype):
    rng = np.random.default_rng(1)
    ints = rng.integers(-120, 120, 20_000)
    (vb, tb) = _pair(rng.standard_normal(20_000) * 3, dtype)
    vi, ti = vt.tensor(ints).to(vt.int8), torch.tensor(ints).to(torch.int8)
    for mode in ("trunc", "floor"):
        _same(vt.div(vi, vb, rounding_mode=mode), torch.div(ti, tb, rounding_mode=mode))


def test_trunc_rounds_the_quotient_first_in_bfloat16():
    a = vt.tensor([-22.0] * 8, dtype=vt.bfloat16)
    b = vt.tensor([2.203125] * 8, dtype=vt.bfloat16)
    assert vt.div(a, b, rounding_mode="trunc")[0].item() == -10.0  # -9.986 rounds to -10
    # with one divisor PyTorch's CPU loop rounds only the result, as here
    assert vt.div(a, b[0], rounding_mode="trunc")[0].item() == -9.0


def _two_byte(dtype: str):
    width = 16
    return st.floats(width=width, allow_nan=True) if dtype == "float16" else st.one_of(
        st.sampled_from(SPECIAL), st.floats(-1e4, 1e4, width=32))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(DTYPES), mode=st.sampled_from(["trunc", "floor"]))
def test_rounded_division_property(data, dtype, mode):
    n = data.draw(st.integers(0, 6))
    xs = np.array([data.draw(_two_byte(dtype)) for _ in range(n)], dtype=np.float64)
    ys = np.array([data.draw(_two_byte(dtype)) for _ in range(n)], dtype=np.float64)
    (va, ta), (vb, tb) = _pair(xs, dtype), _pair(ys, dtype)
    _same(vt.div(va, vb, rounding_mode=mode), torch.div(ta, tb, rounding_mode=mode))
    if n:  # a divisor of one element (0-d, and a number) broadcast against the vector
        _same(vt.div(va, vb[0], rounding_mode=mode), torch.div(ta, tb[0], rounding_mode=mode))


def test_rounded_division_with_one_divisor_rounds_once_as_torch():
    """PyTorch's CPU loops round a 2-byte quotient before truncating it, except with a
    divisor of one element: bfloat16 440 // 0.75 truncated is 588 against a vector of
    divisors, 584 against one (the quotient 586.67 rounded once)."""
    a = [440.0] * 8
    for b in ([0.75] * 8, [0.75]):
        va, vb = vt.tensor(a, dtype=vt.bfloat16), vt.tensor(b, dtype=vt.bfloat16)
        ta, tb = torch.tensor(a, dtype=torch.bfloat16), torch.tensor(b, dtype=torch.bfloat16)
        for mode in ("trunc", "floor"):
            _same(vt.div(va, vb, rounding_mode=mode), torch.div(ta, tb, rounding_mode=mode))
            _same(vt.div(va[:1], vb[:1], rounding_mode=mode),
                  torch.div(ta[:1], tb[:1], rounding_mode=mode))


def test_double_to_half_goes_through_float32_like_torch():
    # 2.51660163 lies just above the float16 midpoint 2.5166015625, but its float32
    # rounding is that midpoint, a tie, which rounds to even: 2.515625 (PyTorch's)
    v = 2.51660163
    want = torch.tensor([v], dtype=torch.float16)
    _same(vt.tensor([v], dtype=vt.float16), want)
    _same(vt.tensor(np.array([v]), dtype=vt.float16), want)
    _same(vt.tensor(np.array([v])).to(vt.float16), want)
    _same(vt.tensor([v], dtype=vt.float64).half(), want)
    rng = np.random.default_rng(2)
    a = rng.standard_normal(100_000) * 10
    _same(vt.tensor(a).to(vt.float16), torch.tensor(a).to(torch.float16))
    _same(vt.tensor(a, dtype=vt.float16), torch.tensor(a, dtype=torch.float16))


@pytest.mark.parametrize("dtype", DTYPES)
def test_rounded_division_gradient_is_zero(dtype):
    a = vt.tensor([3.5, -7.25], dtype=getattr(vt, dtype), requires_grad=True)
    vt.div(a, 2.0, rounding_mode="floor").sum().backward()
    assert a.grad.dtype == a.dtype and a.grad.float().tolist() == [0.0, 0.0]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_quantile_refuses_two_byte_floats_like_torch(dtype, fn):
    x = torch.tensor([1.0, 2.0, 3.0]).to(getattr(torch, dtype))
    with pytest.raises(RuntimeError, match="float or double"):
        getattr(torch, fn)(x, 0.5)
    with pytest.raises(vt.DTypeError, match="float or double"):
        getattr(vt, fn)(vt.tensor([1.0, 2.0, 3.0]).to(getattr(vt, dtype)), 0.5)
