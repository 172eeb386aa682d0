"""Max pooling where NaN falls, against PyTorch CPU on every device: a NaN anywhere in a
window propagates and the window's last NaN is its index (PyTorch's ``val > max ||
isnan(val)``), otherwise the first maximum wins; the gradient follows the index. Volta
used to let only a NaN in a window's first tap through."""

from __future__ import annotations

import numpy as np
import pytest
from vt_helpers import available_devices

import volta_core as vt

torch = pytest.importorskip("torch")

DEVICES = available_devices()

GEOMETRIES = [  # kernel, stride, padding, dilation, ceil_mode
    ((2, 2), (2, 2), (0, 0), (1, 1), False),  # disjoint windows
    ((3, 3), (1, 1), (1, 1), (1, 1), False),  # overlapping, padded
    ((3, 2), (2, 1), (1, 0), (1, 1), True),
    ((2, 2), (1, 1), (0, 0), (2, 2), False),  # dilated
]


def _input(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.round(rng.standard_normal((2, 3, 7, 8)) * 2).astype(np.float32)  # ties
    x[rng.random(x.shape) < 0.15] = np.nan  # often two NaNs in one window
    x[0, 0, 0, 0] = np.nan  # a first tap
    x[1, 2, 3, 3] = -np.inf
    return x


def _run(m, x, geometry, device):
    k, s, p, d, ceil = geometry
    F = vt.nn.functional if m is vt else torch.nn.functional
    t = (vt.tensor(x, device=device) if m is vt else torch.tensor(x)).requires_grad_(True)
    y, idx = F.max_pool2d(t, k, s, p, d, ceil, return_indices=True)
    g = np.random.default_rng(1).uniform(-1, 1, tuple(y.shape)).astype(np.float32)
    y.backward(vt.tensor(g, device=device) if m is vt else torch.tensor(g))
    return [np.asarray(a.detach().cpu().numpy() if m is vt else a.detach().numpy())
            for a in (y, idx, t.grad)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("seed", [0, 1])
def test_max_pool2d_nan_as_pytorch(device, geometry, seed):
    x = _input(seed)
    got, want = _run(vt, x, geometry, device), _run(torch, x, geometry, "cpu")
    np.testing.assert_array_equal(got[0], want[0])  # NaN where PyTorch's is
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6, atol=1e-6)


def _neg_inf_input(seed: int) -> np.ndarray:
    """Whole rows and columns of -inf, so some padded windows hold no other value."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.standard_normal((2, 3, 7, 8)) * 2).astype(np.float32)
    x[:, :, :2] = -np.inf
    x[:, :, :, -3:] = -np.inf
    x[0, 1] = -np.inf
    return x


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("geometry", GEOMETRIES + [((3, 3), (2, 2), (1, 1), (2, 2), True)])
def test_max_pool2d_all_neg_inf_window_indexes_its_first_real_element(device, geometry):
    """PyTorch's scan starts at a window's first element inside the input: a padded window
    of -inf only indexes that element (and its gradient lands there), not the padding."""
    x = _neg_inf_input(3)
    got, want = _run(vt, x, geometry, device), _run(torch, x, geometry, "cpu")
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    # overlapping windows sum their gradients in another order on a GPU
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6, atol=1e-6)


def _same_pools(x, fns, device):
    """Each ``fn(F, t)`` (a tuple of outputs) and the input's gradient of its first output's
    sum, equal in both libraries."""
    for fn in fns:
        out = []
        for m in (vt, torch):
            F = vt.nn.functional if m is vt else torch.nn.functional
            t = (vt.tensor(x, device=device) if m is vt else torch.tensor(x))
            res = fn(F, t.requires_grad_(True))
            res[0].sum().backward()
            out.append([np.asarray(r.detach().cpu().numpy() if m is vt else r.detach().numpy())
                        for r in (*res, t.grad)])
        for a, b in zip(*out):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("device", DEVICES)
def test_max_pool_1d_3d_all_neg_inf_windows_as_pytorch(device):
    _same_pools(_neg_inf_input(4), (
        lambda F, t: F.max_pool1d(t.flatten(2), 3, 2, 1, return_indices=True),
        lambda F, t: F.max_pool3d(t.unsqueeze(0), 3, 2, 1, return_indices=True)), device)


@pytest.mark.parametrize("device", DEVICES)
def test_other_max_pools_nan_as_pytorch(device):
    _same_pools(_input(2), (
        lambda F, t: F.adaptive_max_pool2d(t, (3, 5), return_indices=True),
        lambda F, t: F.adaptive_max_pool2d(t, (1, 1), return_indices=True),
        lambda F, t: F.max_pool1d(t.flatten(2), 4, 3, return_indices=True),
        lambda F, t: (F.max_pool3d(t.unsqueeze(0), 2),)), device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", ["k2", "k3_s1_p1", "dilated", "adaptive", "adaptive_1"])
def test_3d_max_pools_return_pytorchs_indices(device, case):
    """``max_pool3d``/``adaptive_max_pool3d`` with ``return_indices``: the flat D*H*W
    index of PyTorch's winner (first maximum, last NaN), composed from the plane pass and
    the depth pass; values and indices equal, gradients to float rounding."""
    rng = np.random.default_rng(3)
    x = np.round(rng.standard_normal((2, 3, 7, 8, 9)) * 2).astype(np.float32)
    x[rng.random(x.shape) < 0.05] = np.nan
    fn = {"k2": lambda F, t: F.max_pool3d(t, 2, return_indices=True),
          "k3_s1_p1": lambda F, t: F.max_pool3d(t, 3, 1, 1, return_indices=True),
          "dilated": lambda F, t: F.max_pool3d(t, (2, 3, 2), (1, 2, 2), 0, (2, 1, 1),
                                               return_indices=True),
          "adaptive": lambda F, t: F.adaptive_max_pool3d(t, (3, 4, 5), return_indices=True),
          "adaptive_1": lambda F, t: F.adaptive_max_pool3d(t, 1, return_indices=True)}[case]
    out = []
    for m, dev in ((vt, device), (torch, "cpu")):
        F = vt.nn.functional if m is vt else torch.nn.functional
        t = (vt.tensor(x, device=dev) if m is vt else torch.tensor(x)).requires_grad_(True)
        y, idx = fn(F, t)
        g = np.linspace(-1, 1, y.numel(), dtype=np.float32).reshape(tuple(y.shape))
        y.backward(vt.tensor(g, device=dev) if m is vt else torch.tensor(g))
        out.append([np.asarray(a.detach().cpu().numpy() if m is vt else a.detach().numpy())
                    for a in (y, idx, t.grad)])
    (y, idx, gx), (ty, tidx, tgx) = out
    np.testing.assert_array_equal(y, ty)
    np.testing.assert_array_equal(idx, tidx)
    np.testing.assert_allclose(gx, tgx, rtol=1e-5, atol=1e-5)
