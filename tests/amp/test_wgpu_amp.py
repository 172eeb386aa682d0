"""Autocast and GradScaler on wgpu (float16 where the adapter has ``shader-f16``);
values checked against the same program in float32 on cpu."""

from __future__ import annotations

import numpy as np
import pytest
from vt_helpers import wgpu_float16_missing

import volta_core as vt
import volta_core.nn.functional as F

_MISSING = wgpu_float16_missing()
pytestmark = pytest.mark.skipif(_MISSING is not None, reason=str(_MISSING))

rng = np.random.default_rng(3)
X = rng.standard_normal((6, 8)).astype(np.float32)
W = (rng.standard_normal((4, 8)) * 0.3).astype(np.float32)
Y = np.array([0, 1, 2, 3, 1, 0])


def test_autocast_dtypes_and_values_on_wgpu():
    x, w = vt.tensor(X, device="wgpu"), vt.tensor(W, device="wgpu", requires_grad=True)
    with vt.autocast("wgpu"):
        out = F.linear(x, w)
        sm = out.softmax(-1)
        loss = F.cross_entropy(out, vt.tensor(Y, device="wgpu"))
    assert out.dtype is vt.float16 and sm.dtype is vt.float32 and loss.dtype is vt.float32
    loss.backward()
    assert w.grad.dtype is vt.float32
    wc = vt.tensor(W, requires_grad=True)
    ref = F.cross_entropy(F.linear(vt.tensor(X), wc), vt.tensor(Y))
    ref.backward()
    np.testing.assert_allclose(loss.cpu().item(), ref.item(), rtol=5e-3, atol=5e-3)
    np.testing.assert_allclose(w.grad.cpu().numpy(), wc.grad.numpy(), rtol=2e-2, atol=2e-3)


def test_grad_scaler_on_wgpu_skips_inf_and_steps_otherwise():
    w = vt.tensor(W, device="wgpu", requires_grad=True)
    opt = vt.optim.SGD([w], lr=0.1)
    scaler = vt.amp.GradScaler("wgpu", init_scale=2.0**8)
    before = w.detach().cpu().numpy().copy()
    x = vt.tensor(X, device="wgpu")
    with vt.autocast("wgpu"):
        loss = F.linear(x, w).float().pow(2).mean() * float("inf")
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(w.detach().cpu().numpy(), before)
    assert scaler.get_scale() == 2.0**7
    opt.zero_grad()
    with vt.autocast("wgpu"):
        loss = F.linear(x, w).float().pow(2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    vt.nn.utils.clip_grad_norm_([w], 1.0)
    scaler.step(opt)
    scaler.update()
    assert not np.array_equal(w.detach().cpu().numpy(), before)
    assert scaler._get_growth_tracker() == 1
