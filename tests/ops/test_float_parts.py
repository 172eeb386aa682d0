"""``frexp``, ``ldexp``, ``nextafter`` and ``heaviside`` against PyTorch on every device:
zeros of both signs, infinities, NaN, the largest and (on the CPU) subnormal floats,
neighbours of powers of two, random magnitudes; dtypes as PyTorch gives them; gradients
(``frexp``'s mantissa, ``ldexp``) and refused inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vt_helpers import assert_matches_torch as _same
from vt_helpers import available_devices, device_has

import volta_core as vt

torch = pytest.importorskip("torch")

DEVICES = available_devices()


def _values(dtype, device: str, seed: int) -> np.ndarray:
    f = np.dtype(dtype).type
    big = np.finfo(dtype).max
    vals = [0.0, -0.0, 1.0, -1.0, 0.75, 3.0, big, -big, np.inf, -np.inf, np.nan,
            np.finfo(dtype).tiny, np.nextafter(f(1), f(0)), np.nextafter(f(2), f(0))]
    if device == "cpu":  # GPUs may flush subnormals to zero (lavapipe does)
        vals += [np.finfo(dtype).tiny / 1024, -np.finfo(dtype).smallest_subnormal]
    rng = np.random.default_rng(seed)
    top = 30 if dtype == np.float32 else 300
    rand = rng.standard_normal(24) * 10.0 ** rng.integers(-top, top, 24)
    return np.concatenate([np.array(vals), rand]).astype(dtype)


def _float_dtypes(device: str) -> list:
    return [np.float32] + ([np.float64] if device_has(device, "float64") else [])


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_frexp_and_ldexp_match_pytorch_bit_for_bit(device, seed):
    for dtype in _float_dtypes(device):
        x = _values(dtype, device, seed)
        m, e = torch.frexp(torch.tensor(x))
        vm, ve = vt.frexp(vt.tensor(x, device=device))
        _same(m, vm)
        _same(e, ve)
        k = np.random.default_rng(seed).integers(-40, 41, x.shape)
        want = torch.ldexp(torch.tensor(x), torch.tensor(k))
        got = vt.ldexp(vt.tensor(x, device=device), vt.tensor(k, device=device))
        if device != "cpu":  # GPUs may flush subnormal results to zero (NVIDIA's Vulkan does)
            w = want.numpy()
            keep = torch.tensor(~((w != 0) & (np.abs(w) < np.finfo(dtype).tiny)))
            want, got = want[keep], got[vt.tensor(keep.numpy(), device=device)]
        _same(want, got)
        # the parts put back together exactly give the number (NumPy's exact ldexp: PyTorch's
        # and Volta's ldexp compute 2**e first, which overflows for the largest floats)
        np.testing.assert_array_equal(np.ldexp(vm.cpu().numpy(), ve.cpu().numpy()), x)


@pytest.mark.parametrize("device", DEVICES)
def test_frexp_gradient_and_float16(device):
    x = torch.tensor([3.0, 5.0, 0.0, -0.7], dtype=torch.float32, requires_grad=True)
    vx = vt.tensor([3.0, 5.0, 0.0, -0.7], device=device, requires_grad=True)
    torch.frexp(x)[0].sum().backward()
    vt.frexp(vx)[0].sum().backward()
    np.testing.assert_array_equal(vx.grad.cpu().numpy(), x.grad.numpy())
    if device_has(device, "float16"):
        h = np.array([0.1, 6e4, -3.0, 6e-5], dtype=np.float16)
        m, e = torch.frexp(torch.tensor(h))
        vm, ve = vt.frexp(vt.tensor(h, device=device))
        _same(m, vm)
        _same(e, ve)
    with pytest.raises(vt.VoltaError, match="floating"):
        vt.frexp(vt.tensor([1, 2], device=device))


def test_frexp_and_ldexp_gradchecks():
    a = vt.tensor([3.0, 5.0, -0.7, 1e-3], dtype=vt.float64, requires_grad=True)
    assert vt.autograd.gradcheck(lambda t: vt.frexp(t)[0], (a,))
    b = vt.tensor([1.0, -2.0, 0.5, 3.0], dtype=vt.float64, requires_grad=True)
    assert vt.autograd.gradcheck(vt.ldexp, (a, b))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("a,b", [("int64", "int64"), ("float16", "int64"), ("float64", "int32"),
                                 ("float32", "float32"), ("float16", "float32"),
                                 ("int64", "float32")])
def test_ldexp_dtypes_match_pytorch(device, a, b):
    for dtype in {a, b} & {"float16", "float64"}:
        if not device_has(device, dtype):
            pytest.skip(f"no {dtype} on this {device} adapter")
    x, k = np.array([1, 2, -3]).astype(a), np.array([3, -1, 2]).astype(b)
    _same(torch.ldexp(torch.tensor(x), torch.tensor(k)),
          vt.ldexp(vt.tensor(x, device=device), vt.tensor(k, device=device)), rtol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_nextafter_matches_pytorch(device):
    for dtype in _float_dtypes(device):
        x = _values(dtype, device, 0)
        y = np.roll(x, 5)
        if device == "cuda" and dtype == np.float32:  # CuPy's kernels flush float32
            y[x == 0] = x[x == 0]  # subnormals: nextafter(0, 1) is its smallest normal
        _same(torch.nextafter(torch.tensor(x), torch.tensor(y)),
              vt.nextafter(vt.tensor(x, device=device), vt.tensor(y, device=device)))
    if device_has(device, "float64"):
        _same(torch.nextafter(torch.tensor([1.0]), torch.tensor([2.0], dtype=torch.float64)),
              vt.nextafter(vt.tensor([1.0], device=device),
                           vt.tensor([2.0], dtype=vt.float64, device=device)))
    with pytest.raises(vt.VoltaError, match="floating"):
        vt.nextafter(vt.tensor([1], device=device), vt.tensor([2], device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_heaviside_matches_pytorch(device):
    x = np.array([-1.5, 0.0, -0.0, 2.0, np.nan, np.inf, -np.inf], dtype=np.float32)
    for values in (np.array([0.5], np.float32), np.linspace(-1, 1, 7).astype(np.float32)):
        _same(torch.heaviside(torch.tensor(x), torch.tensor(values)),
              vt.heaviside(vt.tensor(x, device=device), vt.tensor(values, device=device)))
    _same(torch.heaviside(torch.tensor([[-1], [0], [3]]), torch.tensor([7, 8])),
          vt.heaviside(vt.tensor([[-1], [0], [3]], device=device),
                       vt.tensor([7, 8], device=device)))
    with pytest.raises(vt.VoltaError, match="different dtypes"):
        vt.heaviside(vt.tensor(x, device=device), vt.tensor([1], device=device))
    out = vt.heaviside(vt.tensor(x, device=device, requires_grad=True),
                       vt.tensor([0.5], device=device))
    assert not out.requires_grad  # not differentiable, as in PyTorch
