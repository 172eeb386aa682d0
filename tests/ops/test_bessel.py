"""``i0``, ``special.i0e``/``i1``/``i1e`` and ``kaiser_window`` against PyTorch on every
device: values across the series/asymptotic switch at 25 and up to overflow, float32
(computed in float64) and the 2-byte floats, gradients (gradcheck and double backward in
float64, and against PyTorch's), and the deliberate difference at the infinities."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from vt_helpers import assert_matches_torch, available_devices, check_grad, device_has

import volta_core as vt

FUNCS = ["i0", "i0e", "i1", "i1e"]
X = np.concatenate([np.linspace(-60, 60, 1201), [0.0, -0.0, 1e-300, 1e-8, 24.999, 25.0,
                                                 25.001, 100.0, 700.0, 713.0, 750.0, -750.0,
                                                 np.nan]])


@pytest.mark.parametrize("device", available_devices())
@pytest.mark.parametrize("fn", FUNCS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_match_torch(device, fn, dtype):
    if not device_has(device, dtype):
        pytest.skip(f"{device} has no {dtype}")
    want = getattr(torch.special, fn)(torch.tensor(X, dtype=getattr(torch, dtype)))
    got = getattr(vt.special, fn)(vt.tensor(X, dtype=getattr(vt, dtype), device=device))
    # PyTorch's float32 Chebyshev fits are a few ulps off (its i0(0) is 0.99999994); a
    # device without float64 (OpenGL) sums the series in float32 itself
    if dtype == "float64":
        tol = 5e-15 if device == "cpu" else 2e-6
    else:
        tol = 2e-6 if device_has(device, "float64") else 2e-5
    assert_matches_torch(want, got, rtol=tol, atol=1e-300)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("fn", FUNCS)
def test_two_byte_floats_round_once(dtype, fn):
    x = np.linspace(-8, 8, 65)
    want = getattr(torch.special, fn)(torch.tensor(x).to(getattr(torch, dtype)))
    got = getattr(vt.special, fn)(vt.tensor(x).to(getattr(vt, dtype)))
    assert got.dtype.name == dtype
    assert_matches_torch(want.float(), got.float(), rtol=1e-2, atol=1e-3)


def test_integers_compute_in_the_default_float():
    want = torch.special.i0(torch.tensor([0, 1, 2]))
    assert_matches_torch(want, vt.i0(vt.tensor([0, 1, 2])), rtol=1e-6)
    assert vt.tensor([1.0, 2.0]).i0().tolist() == vt.i0(vt.tensor([1.0, 2.0])).tolist()


def test_infinities_are_the_limits():
    """Deliberate difference: PyTorch's i0(inf) and i1(inf) are NaN (its fit multiplies
    exp(inf) by 0); the functions grow without bound, so Volta gives inf (and -inf for
    i1(-inf)); the scaled forms are 0 there, as PyTorch's."""
    inf = float("inf")
    x = vt.tensor([inf, -inf], dtype=vt.float64)
    assert vt.i0(x).tolist() == [inf, inf]
    assert vt.special.i1(x).tolist() == [inf, -inf]
    assert vt.special.i0e(x).tolist() == [0.0, 0.0]
    assert vt.special.i1e(x).tolist() == [0.0, 0.0]


@pytest.mark.parametrize("fn", FUNCS)
def test_gradients(fn):
    f = getattr(vt.special, fn)
    x = np.array([-30.0, -3.1, -0.4, 0.0, 0.7, 2.5, 24.0, 26.0, 40.0])
    check_grad(lambda t: f(t), x, atol=1e-8, rtol=1e-6)
    t = torch.tensor(x, requires_grad=True)
    (g_t,) = torch.autograd.grad(getattr(torch.special, fn)(t).sum(), t)
    v = vt.tensor(x, requires_grad=True)
    (g_v,) = vt.autograd.grad(f(v).sum(), v)
    assert_matches_torch(g_t, g_v, rtol=1e-13, atol=1e-15)
    # double backward, against PyTorch's
    t = torch.tensor(x, requires_grad=True)
    (g1,) = torch.autograd.grad(getattr(torch.special, fn)(t).sum(), t, create_graph=True)
    (h_t,) = torch.autograd.grad((g1 * torch.cos(t)).sum(), t)
    v = vt.tensor(x, requires_grad=True)
    (g1v,) = vt.autograd.grad(f(v).sum(), v, create_graph=True)
    (h_v,) = vt.autograd.grad((g1v * vt.cos(v)).sum(), v)
    assert_matches_torch(h_t, h_v, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("length", [0, 1, 2, 5, 10, 64])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("beta", [12.0, 0.5, 40.0])
def test_kaiser_window_matches_torch(length, periodic, beta):
    want = torch.kaiser_window(length, periodic, beta, dtype=torch.float64)
    got = vt.kaiser_window(length, periodic, beta, dtype=vt.float64)
    assert_matches_torch(want, got, rtol=1e-13, atol=1e-16)
    want = torch.kaiser_window(length, periodic, beta)
    assert_matches_torch(want, vt.kaiser_window(length, periodic, beta), rtol=2e-6,
                         atol=1e-7)


def test_kaiser_window_argument_checks():
    with pytest.raises(ValueError, match="non-negative"):
        vt.kaiser_window(-1)
    with pytest.raises(TypeError, match="floating"):
        vt.kaiser_window(4, dtype=vt.int64)
