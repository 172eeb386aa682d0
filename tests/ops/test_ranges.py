"""Range factories against PyTorch CPU, bit for bit: ``linspace`` (PyTorch counts the first
half up from the start and the rest down from the end, with fused multiply-adds, in the
dtype's own arithmetic; integer dtypes truncate), ``arange`` with an integer dtype and
float bounds (converted toward zero first), and ``scalar_tensor``; hypothesis draws the
bounds and the number of steps."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import volta_core as vt

DTYPES = ["float32", "float64", "int64", "int32", "float16", "bfloat16"]


def _same(got: vt.Tensor, want: torch.Tensor) -> None:
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.double().numpy(), want.double().numpy())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("start,end,steps", [
    (-5, 5, 7), (1, -1, 4), (-5, 13, 28), (0, 1, 5), (0.5, 3.7, 4), (-0.5, 3.7, 5),
    (-8, 12, 16), (3, 3, 1), (0, 1, 0), (1.2573, 6.4042, 7), (12, 4, 21), (0, 10, 11)])
def test_linspace_matches_torch(dtype, start, end, steps):
    _same(vt.linspace(start, end, steps, dtype=getattr(vt, dtype)),
          torch.linspace(start, end, steps, dtype=getattr(torch, dtype)))


@settings(max_examples=300, deadline=None)
@given(start=st.floats(-1e4, 1e4), end=st.floats(-1e4, 1e4), steps=st.integers(0, 70),
       dtype=st.sampled_from(DTYPES))
def test_linspace_property(start, end, steps, dtype):
    got = vt.linspace(start, end, steps, dtype=getattr(vt, dtype))
    want = torch.linspace(start, end, steps, dtype=getattr(torch, dtype))
    if dtype not in ("float32", "float64"):
        _same(got, want)
        return
    # the values agree to the last bit but for rare 1-ulp cases: float64, where PyTorch's
    # vectorized kernel fuses some multiply-adds and not others (1.3125 -> 1e-202 in 10
    # steps), and float32 ties our float64 sum rounds twice (0.1328125 -> -1e-45)
    assert got.dtype.name == dtype and tuple(got.shape) == tuple(want.shape)
    ulp = 2.3e-16 if dtype == "float64" else 1.2e-7
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=ulp, atol=0)


@pytest.mark.parametrize("args", [(0.5, 5, 1), (0, 10, 1.5), (-2.5, 3, 2), (0.9, 3.9, 1),
                                  (0, 4.5, 1), (0, -4.5, -1.5)])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_integer_arange_takes_its_bounds_toward_zero(args, dtype):
    _same(vt.arange(*args, dtype=getattr(vt, dtype)),
          torch.arange(*args, dtype=getattr(torch, dtype)))


def test_integer_arange_of_a_step_below_one_raises():
    # PyTorch 2.13 raises ValueError("step must be nonzero") here (older releases divide
    # by the zero step in C++ and crash the process, so it is not called)
    with pytest.raises(ValueError, match="nonzero"):
        vt.arange(0, 5, 0.5, dtype=vt.int64)


@pytest.mark.parametrize("value,dtype", [(3, None), (True, None), (2, "int32"), (2.5, None),
                                         (1.5, "float64")])
def test_scalar_tensor(value, dtype):
    want = torch.scalar_tensor(value, dtype=None if dtype is None else getattr(torch, dtype))
    got = vt.scalar_tensor(value, dtype=None if dtype is None else getattr(vt, dtype))
    _same(got, want)
