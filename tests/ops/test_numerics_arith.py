"""Arithmetic edge cases checked against PyTorch CPU: fmod, integer division by zero."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import volta_core as vt


def same(got: vt.Tensor, want: torch.Tensor, rtol: float = 1e-7, atol: float = 0.0) -> None:
    """Assert values, shape and dtype match a PyTorch result."""
    assert got.dtype.name == str(want.dtype).removeprefix("torch."), (got.dtype, want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    w = want.detach().float().numpy() if want.dtype == torch.bfloat16 else want.detach().numpy()
    np.testing.assert_allclose(got.detach().float().numpy() if got.dtype.name == "bfloat16"
                               else got.detach().numpy(), w, rtol=rtol, atol=atol,
                               equal_nan=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "int8"])
def test_fmod_takes_the_sign_of_the_dividend(dtype):
    a, b = [-5, 5, -7, 7, 0], [3, -3, 2, -2, 4]
    want = torch.fmod(torch.tensor(a, dtype=getattr(torch, dtype)),
                      torch.tensor(b, dtype=getattr(torch, dtype)))
    same(vt.fmod(vt.tensor(a, dtype=dtype), vt.tensor(b, dtype=dtype)), want)
    same(vt.tensor(a, dtype=dtype).fmod(3), torch.tensor(a, dtype=getattr(torch, dtype)).fmod(3))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=8),
       st.floats(-50, 50).filter(lambda v: abs(v) > 1e-3))  # PyTorch's remainder: NaN
                                                             # for a tiny divisor
def test_fmod_matches_torch_on_floats(a, b):
    x = np.array(a)
    same(vt.fmod(vt.tensor(x), b), torch.fmod(torch.tensor(x), b))
    same(vt.remainder(vt.tensor(x), b), torch.remainder(torch.tensor(x), b), rtol=1e-12,
         atol=1e-9)


def test_fmod_in_place_and_gradient():
    x = vt.tensor([-5.0, 5.0, -7.0])
    x.fmod_(3)
    same(x, torch.tensor([-2.0, 2.0, -1.0]))
    a = np.array([-5.0, 5.0, -7.0, 7.5])
    b = np.array([3.0, -3.0, 2.0, 2.0])
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    va, vb = (vt.tensor(v, requires_grad=True) for v in (a, b))
    torch.fmod(ta, tb).sum().backward()
    vt.fmod(va, vb).sum().backward()
    same(va.grad, ta.grad)
    same(vb.grad, tb.grad)
    assert vt.autograd.gradcheck(vt.fmod, [vt.tensor(a, requires_grad=True),
                                           vt.tensor(b, requires_grad=True)])


@pytest.mark.parametrize("op", ["remainder", "fmod"])
def test_integer_division_by_zero_raises(op):
    with pytest.raises(ZeroDivisionError):
        getattr(vt, op)(vt.tensor([5, 1]), vt.tensor([1, 0]))
    with pytest.raises(vt.VoltaError, match="division by zero"):
        getattr(vt, op)(vt.tensor([5]), 0)
    # floats give NaN, as in PyTorch
    same(getattr(vt, op)(vt.tensor([5.0]), 0.0), getattr(torch, op)(torch.tensor([5.0]), 0.0))


def test_integer_modulo_operator_by_zero_raises():
    with pytest.raises(ZeroDivisionError):
        vt.tensor([5]) % 0


def _nonzero(m, b):
    return m.where(b == 0, m.ones_like(b), b)


def _no_wide_lowest(m, a):
    """``a`` without the 32/64-bit lowest value: PyTorch's gcd can reach its ``% -1``,
    which traps (SIGFPE) and kills the process (8/16-bit values are computed in int)."""
    info = m.iinfo(a.dtype)
    return a if info.bits < 32 else m.where(a == info.min, a + 1, a)


# integer ops where the dtype's edges matter: wrapping, C's remainder, the lowest value
# whose absolute value is itself, and the dtypes PyTorch gives counts and sums
INTEGER_OPS = {
    "add": lambda m, a, b: a + b,
    "mul": lambda m, a, b: a * b,
    "neg_abs": lambda m, a, b: (-a).abs(),
    "floor_divide": lambda m, a, b: a // _nonzero(m, b),
    "trunc_divide": lambda m, a, b: m.div(a, _nonzero(m, b), rounding_mode="trunc"),
    "true_divide": lambda m, a, b: a / _nonzero(m, b),
    "remainder": lambda m, a, b: a % _nonzero(m, b),
    "fmod": lambda m, a, b: m.fmod(a, _nonzero(m, b)),
    "pow": lambda m, a, b: a ** (b.abs() % 5),
    "shifts": lambda m, a, b: (a << (b.abs() % 7)) ^ (a >> (b.abs() % 7)),
    "gcd": lambda m, a, b: m.gcd(_no_wide_lowest(m, a), _no_wide_lowest(m, b)),
    "lcm": lambda m, a, b: m.lcm(_no_wide_lowest(m, a), _no_wide_lowest(m, b)),
    "bincount": lambda m, a, b: m.bincount(a.abs() % 10),
    "bincount_weights": lambda m, a, b: m.bincount(a.abs() % 10, b % 1000),  # exact sums
    "sum": lambda m, a, b: a.sum(),
    "cumsum": lambda m, a, b: a.cumsum(0),
    "prod": lambda m, a, b: a[:6].prod(),
    "number": lambda m, a, b: (a + 300) * 3 // 7 - 1.5,
}


@settings(max_examples=150, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(["int8", "uint8", "int16", "int32", "int64"]),
       op=st.sampled_from(sorted(INTEGER_OPS)))
def test_integer_ops_at_the_dtypes_edges_like_torch(data, dtype, op):
    info = np.iinfo(dtype)
    value = st.one_of(st.sampled_from([info.min, info.max, 0, 1, info.max // 2]),
                      st.integers(int(info.min), int(info.max)))
    n = data.draw(st.integers(6, 40))
    a = np.array(data.draw(st.lists(value, min_size=n, max_size=n)), dtype=dtype)
    b = np.array(data.draw(st.lists(value, min_size=n, max_size=n)), dtype=dtype)
    want = INTEGER_OPS[op](torch, torch.tensor(a), torch.tensor(b))
    got = INTEGER_OPS[op](vt, vt.tensor(a), vt.tensor(b))
    assert got.dtype.name == str(want.dtype).removeprefix("torch."), (got.dtype, want.dtype)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("mode", ["trunc", "floor"])
@pytest.mark.parametrize("dtype", ["int64", "int8", "float32", "bfloat16"])
def test_div_in_place_with_a_rounding_mode_like_torch(mode, dtype):
    x = np.array([7, -7, 9, -1, 0, 100], dtype=np.float32)
    outs = []
    for m in (vt, torch):
        t = m.tensor(x).to(getattr(m, dtype))
        view = t[::2]
        assert view.div_(m.tensor(2).to(getattr(m, dtype)), rounding_mode=mode) is view
        t.divide_(3, rounding_mode=mode)
        outs.append(t)
    same(*outs)
