"""Optimizers, clipping and checkpoints on every other available backend, against the CPU.

State must stay on the parameter's device. Skipped, with the reason, for backends
that are not available here.
"""

from __future__ import annotations

import numpy as np
import pytest

import volta_core as vt
from volta_core import optim
from volta_core.nn.utils import clip_grad_norm_, clip_grad_value_

OTHERS = ["strict", "wgpu"]
rng = np.random.default_rng(7)
P0 = rng.normal(size=(4, 6)).astype(np.float32)
T = rng.normal(size=(4, 6)).astype(np.float32)

MAKERS = {
    "sgd": lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "adam": lambda ps: optim.Adam(ps, lr=0.01, amsgrad=True),
    "adamw": lambda ps: optim.AdamW(ps, lr=0.01),
    "rmsprop": lambda ps: optim.RMSprop(ps, lr=0.01, centered=True, momentum=0.5),
    "adagrad": lambda ps: optim.Adagrad(ps, lr=0.1),
    "muon": lambda ps: optim.Muon(ps, lr=0.02),
}


def other_device(name: str):
    row = next((b for b in vt.backends() if b.name == name), None)
    if row is None or not row.available:
        pytest.skip(f"backend {name!r} is not available here")
    try:
        return vt.device(row.device_type)
    except Exception as e:  # e.g. no WebGPU adapter
        pytest.skip(f"backend {name!r} has no usable device: {e}")


def trajectory(make, dev, steps=3):
    p = vt.tensor(P0, device=dev, requires_grad=True)
    t = vt.tensor(T, device=dev)
    opt = make([p])
    norms = []
    for _ in range(steps):
        opt.zero_grad()
        ((p - t) * (p - t)).sum().backward()
        norms.append(clip_grad_norm_([p], 5.0))
        clip_grad_value_([p], 1.5)
        opt.step()
    return p, opt, norms


@pytest.mark.parametrize("backend", OTHERS)
@pytest.mark.parametrize("name", sorted(MAKERS))
def test_optimizer_on_device_matches_cpu(backend, name):
    dev = other_device(backend)
    p, opt, norms = trajectory(MAKERS[name], dev)
    ref, _, ref_norms = trajectory(MAKERS[name], "cpu")
    for key, value in opt.state[p].items():
        if isinstance(value, vt.Tensor):
            assert value.device is dev, f"state {key!r} left {dev}"
    assert norms[0].device is dev
    np.testing.assert_allclose(p.detach().cpu().numpy(), ref.detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose([float(n.item()) for n in norms],
                               [float(n.item()) for n in ref_norms], rtol=1e-5)


@pytest.mark.parametrize("backend", OTHERS)
def test_checkpoint_from_device(tmp_path, backend):
    dev = other_device(backend)
    p, opt, _ = trajectory(MAKERS["adam"], dev, steps=1)
    vt.io.save({"opt": opt.state_dict(), "p": p}, tmp_path / "c.vt")
    back = vt.io.load(tmp_path / "c.vt")
    assert back["p"].device is dev and back["p"].requires_grad
    assert back["opt"]["state"][0]["exp_avg"].device is dev
    on_cpu = vt.io.load(tmp_path / "c.vt", map_location="cpu")
    assert on_cpu["p"].device is vt.device("cpu")
    np.testing.assert_array_equal(on_cpu["p"].detach().numpy(), p.detach().cpu().numpy())
