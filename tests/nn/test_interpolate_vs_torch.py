"""``interpolate`` against PyTorch CPU on every device: every mode, sizes or scale factors
(with and without ``recompute_scale_factor``), ``align_corners`` and ``antialias``; values
and gradients, with hypothesis drawing the shapes and factors.

Two rules of PyTorch's CPU kernels are easy to miss: a dim whose size does not change is
copied whatever the scale factor (linear modes, 2-D nearest; 2-D nearest also halves the
index at exactly twice the size), and nearest source indices are computed in float32.
Volta gave other values for both (a scale factor of 1.3 on a dim of 3 moved its columns).
Gradients are compared with the transpose of PyTorch's forward (the forward of every unit
input): PyTorch's own backward disagrees with its forward where a scale factor leaves a
size unchanged (antialias, 1-D and 3-D nearest; its gradcheck fails there). An
antialiased output of width 1 is left out: PyTorch repeats its first row there.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vt_helpers import available_devices

import volta_core as vt

torch = pytest.importorskip("torch")

DEVICES = available_devices()
MODES = {1: ["nearest", "nearest-exact", "linear", "area"],
         2: ["nearest", "nearest-exact", "bilinear", "bicubic", "area"],
         3: ["nearest", "nearest-exact", "trilinear", "area"]}
FACTORS = [0.34, 0.5, 0.7, 1.0, 1.2, 1.3, 1.5, 2.0, 2.1, 2.5, 3.0]


@st.composite
def cases(draw, antialias=False):
    nd = 2 if antialias else draw(st.integers(1, 3))
    mode = draw(st.sampled_from(["bilinear", "bicubic"] if antialias else MODES[nd]))
    spatial = tuple(draw(st.lists(st.integers(1, 7), min_size=nd, max_size=nd)))
    kw = {"mode": mode}
    if antialias:
        kw["antialias"] = True
    if draw(st.booleans()):
        kw["size"] = tuple(draw(st.lists(st.integers(1, 9), min_size=nd, max_size=nd)))
    else:
        kw["scale_factor"] = tuple(draw(st.lists(st.sampled_from(FACTORS), min_size=nd,
                                                 max_size=nd)))
        kw["recompute_scale_factor"] = draw(st.sampled_from([None, True, False]))
    if mode in ("linear", "bilinear", "bicubic", "trilinear"):
        kw["align_corners"] = draw(st.sampled_from([None, False, True]))
    return spatial, kw


def _run(m, x0, kw, device):
    x = (vt.tensor(x0, device=device) if m is vt else torch.tensor(x0)).requires_grad_(True)
    y = m.nn.functional.interpolate(x, **kw)
    if m is torch:
        return y.detach().numpy(), None
    g = _upstream(tuple(y.shape))
    y.backward(vt.tensor(g, device=device))
    return y.detach().cpu().numpy(), x.grad.cpu().numpy()


def _upstream(shape: tuple) -> np.ndarray:
    return np.random.default_rng(1).standard_normal(shape).astype(np.float32)


def _reference_grad(x0: np.ndarray, kw: dict) -> np.ndarray:
    """The gradient of PyTorch's forward: interpolate is linear, so its matrix is the
    forward of every unit input, and the gradient is that matrix's transpose times the
    upstream gradient. (PyTorch's own backward disagrees with its forward in places.)"""
    n, c, *spatial = x0.shape
    size = int(np.prod(spatial))
    basis = torch.eye(size, dtype=torch.float64).reshape(size, 1, *spatial)
    matrix = torch.nn.functional.interpolate(basis, **kw).reshape(size, -1).numpy()
    out = torch.nn.functional.interpolate(torch.tensor(x0), **kw).shape
    g = _upstream(tuple(out)).reshape(n * c, -1).astype(np.float64)
    return (g @ matrix.T).reshape(x0.shape)


def _compare(spatial, kw, device):
    x0 = np.random.default_rng(0).standard_normal((2, 3) + spatial).astype(np.float32)
    try:
        want = _run(torch, x0, kw, "cpu")[0]
    except RuntimeError:  # an empty output: PyTorch refuses, and so does Volta
        with pytest.raises((vt.VoltaError, ValueError)):
            _run(vt, x0, kw, device)
        return
    got, grad = _run(vt, x0, kw, device)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(grad, _reference_grad(x0, kw), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=120, deadline=None)
@given(case=cases())
def test_interpolate_as_pytorch(device, case):
    _compare(*case, device)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=60, deadline=None)
@given(case=cases(antialias=True))
def test_antialiased_interpolate_as_pytorch(device, case):
    spatial, kw = case
    size = kw.get("size") or [int(s * f) for s, f in zip(spatial, kw["scale_factor"])]
    if size[-1] == 1:  # PyTorch's bug: every row repeats the first
        return
    _compare(spatial, kw, device)


def test_the_cases_pytorchs_rules_decide():
    """Fixed cases of the two rules above, each of which Volta once answered otherwise."""
    for kw in ({"mode": "nearest", "scale_factor": (2.5, 1.3)},
               {"mode": "nearest", "scale_factor": (1.0, 1.3)},
               {"mode": "nearest", "scale_factor": (0.5, 2.1)},
               {"mode": "bilinear", "scale_factor": (1.3, 1.3),
                "recompute_scale_factor": False}):
        _compare((6, 3), kw, "cpu")


def test_antialias_only_for_bilinear_and_bicubic():
    with pytest.raises(ValueError, match="antialias"):
        vt.nn.functional.interpolate(vt.zeros(1, 1, 4, 4), size=2, antialias=True)
