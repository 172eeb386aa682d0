"""Batch norm of a float16/bfloat16 input with float32 parameters (PyTorch's mixed-dtype
batch norm, what autocast leaves it), against PyTorch CPU; on cuda too where it runs."""

import numpy as np
import pytest
import torch

import volta_core as vt

_rows = {b.name: b for b in vt.backends()}
DEVICES = ["cpu"] + (["cuda"] if _rows["cupy"].available else [])


def _pair(device, low, training, affine=True, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((4, 3, 5, 5)).astype(np.float32) * 3 + 1
    g = rng.standard_normal((4, 3, 5, 5)).astype(np.float32)
    tb = torch.nn.BatchNorm2d(3, affine=affine)
    vb = vt.nn.BatchNorm2d(3, affine=affine).to(device)
    if affine:
        with torch.no_grad():
            tb.weight.copy_(torch.tensor([0.5, 1.5, -1.0]))
            tb.bias.copy_(torch.tensor([0.1, -0.2, 0.3]))
        vb.weight.data = vt.tensor([0.5, 1.5, -1.0], device=device)
        vb.bias.data = vt.tensor([0.1, -0.2, 0.3], device=device)
    tb.train(training)
    vb.train(training)
    tx = torch.tensor(x).to(getattr(torch, low)).requires_grad_()
    vx = vt.tensor(x, device=device).to(getattr(vt, low)).requires_grad_()
    return tb, vb, tx, vx, g


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("low", ["bfloat16", "float16"])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_low_precision_input_with_float32_parameters(device, low, training, affine):
    tb, vb, tx, vx, g = _pair(device, low, training, affine)
    ty, vy = tb(tx), vb(vx)
    assert vy.dtype.name == str(ty.dtype).split(".")[-1] == low
    tol = 2e-2 if low == "bfloat16" else 2e-3
    np.testing.assert_allclose(vy.detach().float().cpu().numpy(), ty.float().detach().numpy(),
                               rtol=tol, atol=tol)
    for name in ("running_mean", "running_var"):
        assert getattr(vb, name).dtype.name == "float32"
        np.testing.assert_allclose(getattr(vb, name).cpu().numpy(),
                                   getattr(tb, name).numpy(), rtol=tol, atol=tol)
    (ty.float() * torch.tensor(g)).sum().backward()
    (vy.float() * vt.tensor(g, device=device)).sum().backward()
    assert vx.grad.dtype.name == low
    np.testing.assert_allclose(vx.grad.float().cpu().numpy(), tx.grad.float().numpy(),
                               rtol=5 * tol, atol=5 * tol)
    if affine:
        for name in ("weight", "bias"):
            got, want = getattr(vb, name).grad, getattr(tb, name).grad
            assert got.dtype.name == "float32"
            np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=5 * tol,
                                       atol=5 * tol)


def test_autocast_leaves_batch_norm_its_input_dtype():
    conv, bn = vt.nn.Conv2d(3, 4, 3), vt.nn.BatchNorm2d(4)
    x = vt.randn(2, 3, 8, 8)
    with vt.autocast("cpu", dtype=vt.bfloat16):
        h = conv(x)
        assert h.dtype is vt.bfloat16 and bn(h).dtype is vt.bfloat16
        assert bn(vt.randn(2, 4, 8, 8)).dtype is vt.float32


def test_float64_input_with_float32_parameters_is_refused():
    bn = vt.nn.BatchNorm2d(3)
    with pytest.raises(vt.DTypeError, match="batch_norm: input dtype float64 does not match"):
        bn(vt.randn(2, 3, 4, 4, dtype=vt.float64))
