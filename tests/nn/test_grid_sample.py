"""``affine_grid`` and ``grid_sample`` against PyTorch CPU on every device: 4-D and 5-D,
every mode, padding mode and ``align_corners``, points inside, outside and exactly on
pixels; values and the gradients to the image, the grid and theta."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vt_helpers import available_devices

import volta_core as vt

torch = pytest.importorskip("torch")

DEVICES = available_devices()


def _dtype(device):
    return np.float64 if device == "cpu" else np.float32


def _both(fn, arrays, device):
    """``fn(m, *tensors)`` in both libraries, then backward of a fixed upstream gradient:
    the output and every input's gradient (present in both: nearest sampling gives the
    grid zeros, not None)."""
    out = []
    for m in (torch, vt):
        ts = [(vt.tensor(a, device=device) if m is vt else torch.tensor(a)).requires_grad_(True)
              for a in arrays]
        y = fn(m, *ts)
        up = np.random.default_rng(7).standard_normal(tuple(y.shape)).astype(arrays[0].dtype)
        y.backward(vt.tensor(up, device=device) if m is vt else torch.tensor(up))
        host = (lambda t: t.detach().cpu().numpy()) if m is vt else (lambda t: t.detach().numpy())
        assert all(t.grad is not None for t in ts), f"{m.__name__}: a gradient is None"
        out.append([host(y)] + [host(t.grad) for t in ts])
    return out


@st.composite
def sample_cases(draw):
    nd = draw(st.sampled_from([2, 3]))
    mode = draw(st.sampled_from(["bilinear", "nearest"] + (["bicubic"] if nd == 2 else [])))
    spatial = tuple(draw(st.lists(st.integers(1, 5), min_size=nd, max_size=nd)))
    out = tuple(draw(st.lists(st.integers(1, 4), min_size=nd, max_size=nd)))
    return (nd, mode, draw(st.sampled_from(["zeros", "border", "reflection"])),
            draw(st.booleans()), spatial, out, draw(st.booleans()), draw(st.integers(0, 99)))


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=80, deadline=None)
@given(case=sample_cases())
def test_grid_sample_as_pytorch(device, case):
    nd, mode, padding, align, spatial, out, on_pixels, seed = case
    rng = np.random.default_rng(seed)
    dt = _dtype(device)
    x = rng.standard_normal((2, 3) + spatial).astype(dt)
    grid = rng.uniform(-1.6, 1.6, (2,) + out + (nd,)).astype(dt)
    if on_pixels:  # points on pixel centres and edges, where floor and clipping turn
        grid = (np.round(grid * 4) / 4).astype(dt)
    (want, *wgrads), (got, *ggrads) = _both(
        lambda m, a, g: m.nn.functional.grid_sample(a, g, mode=mode, padding_mode=padding,
                                                    align_corners=align), [x, grid], device)
    tol = 1e-9 if dt == np.float64 else 1e-4
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    for g, w in zip(ggrads, wgrads):
        np.testing.assert_allclose(g, w, rtol=10 * tol, atol=10 * tol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 2, 1, 3), (2, 1, 3, 4, 2)])
@pytest.mark.parametrize("align", [False, True])
def test_affine_grid_as_pytorch(device, size, align):
    nd = len(size) - 2
    theta = np.random.default_rng(0).standard_normal((size[0], nd, nd + 1))
    theta = theta.astype(_dtype(device))
    (want, wt), (got, gt) = _both(
        lambda m, t: m.nn.functional.affine_grid(t, size, align_corners=align), [theta],
        device)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gt, wt, rtol=1e-5, atol=1e-5)


def test_a_spatial_transformer_identity_and_shift():
    """The identity map with align_corners reads every pixel back; a shift of one pixel's
    width moves the image by one column (zeros coming in)."""
    x = vt.arange(12.0).reshape(1, 1, 3, 4)
    eye = vt.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    grid = vt.nn.functional.affine_grid(eye, (1, 1, 3, 4), align_corners=True)
    same = vt.nn.functional.grid_sample(x, grid, align_corners=True)
    np.testing.assert_allclose(same.numpy(), x.numpy(), atol=1e-6)
    shift = vt.tensor([[[1.0, 0.0, 2.0 / 3.0], [0.0, 1.0, 0.0]]])
    grid = vt.nn.functional.affine_grid(shift, (1, 1, 3, 4), align_corners=True)
    moved = vt.nn.functional.grid_sample(x, grid, align_corners=True).numpy()[0, 0]
    np.testing.assert_allclose(moved, np.concatenate([x.numpy()[0, 0, :, 1:],
                                                      np.zeros((3, 1))], 1), atol=1e-5)


def test_grid_sample_refusals():
    x, g = vt.zeros(1, 1, 3, 3), vt.zeros(1, 2, 2, 2)
    with pytest.raises(ValueError, match="mode"):
        vt.nn.functional.grid_sample(x, g, mode="area")
    with pytest.raises(ValueError, match="padding_mode"):
        vt.nn.functional.grid_sample(x, g, padding_mode="wrap")
    with pytest.raises(vt.ShapeError, match="grid"):
        vt.nn.functional.grid_sample(x, vt.zeros(1, 2, 2, 3))
    with pytest.raises(vt.ShapeError, match="bicubic"):
        vt.nn.functional.grid_sample(vt.zeros(1, 1, 2, 2, 2), vt.zeros(1, 1, 1, 1, 3),
                                     mode="bicubic")
    with pytest.raises(vt.DTypeError):
        vt.nn.functional.grid_sample(x, g.double())
    with pytest.raises(vt.ShapeError, match="theta"):
        vt.nn.functional.affine_grid(vt.zeros(1, 2, 3), (1, 1, 2, 2, 2))
