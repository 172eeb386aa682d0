"""ASGD and Rprop against PyTorch's own optimizers: the parameters (and ASGD's average) over
a non-convex problem step by step, every option, float32 and float64, every device;
state_dict round trips and argument checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from vt_helpers import available_devices

import volta_core as vt

DEVICES = available_devices()
ASGD_CASES = [dict(), dict(lr=0.05), dict(lr=0.05, t0=3, lambd=0.01, alpha=0.5),
              dict(lr=0.02, t0=0, weight_decay=0.1), dict(lr=0.02, t0=2, maximize=True)]
RPROP_CASES = [dict(), dict(lr=0.05), dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-4, 0.05)),
               dict(lr=0.02, maximize=True)]


def _problem(m, dtype, device=None):
    rng = np.random.default_rng(0)
    kw = {} if m is torch else {"device": device}
    dt = getattr(m, dtype)
    w = m.tensor(rng.standard_normal((5, 3)), dtype=dt, requires_grad=True, **kw)
    b = m.tensor(rng.standard_normal(3), dtype=dt, requires_grad=True, **kw)
    a = m.tensor(rng.standard_normal((4, 5)), dtype=dt, **kw)
    return [w, b], lambda: ((a @ w + b).tanh() ** 2).sum() + (w ** 4).sum() * 0.01


def _trajectory(m, name, cfg, dtype, device=None, steps=15):
    params, loss_fn = _problem(m, dtype, device)
    opt = getattr(m.optim, name)(params, **cfg)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
        row = [p.detach().cpu().numpy().ravel() for p in params]
        if name == "ASGD":
            row += [opt.state[p]["ax"].detach().cpu().numpy().ravel() for p in params]
        out.append(np.concatenate(row))
    return np.array(out)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,cfg", [("ASGD", c) for c in ASGD_CASES]
                         + [("Rprop", c) for c in RPROP_CASES])
def test_trajectory_matches_torch(device, dtype, name, cfg):
    from vt_helpers import device_has

    if not device_has(device, dtype):
        pytest.skip(f"{device} has no {dtype}")
    want = _trajectory(torch, name, cfg, dtype)
    got = _trajectory(vt, name, cfg, dtype, device)
    tol = 1e-12 if dtype == "float64" and device == "cpu" else 2e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("name,cfg", [("ASGD", dict(lr=0.05, t0=2)), ("Rprop", dict(lr=0.05))])
def test_state_dict_round_trip_continues_the_same(name, cfg):
    params, _ = _problem(vt, "float64", "cpu")

    def steps(ps, opt, n):
        for _ in range(n):
            opt.zero_grad()
            ((ps[0] ** 3).sum() + (ps[1] ** 2).sum()).backward()
            opt.step()

    opt = getattr(vt.optim, name)(params, **cfg)
    steps(params, opt, 4)
    copies = [p.detach().clone().requires_grad_() for p in params]
    twin = getattr(vt.optim, name)(copies, **cfg)
    twin.load_state_dict(opt.state_dict())
    steps(params, opt, 3)
    steps(copies, twin, 3)
    for a, b in zip(params, copies):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_argument_checks_like_torch():
    p = [vt.zeros(2, requires_grad=True)]
    with pytest.raises(ValueError, match="learning rate"):
        vt.optim.ASGD(p, lr=-1)
    with pytest.raises(ValueError, match="eta"):
        vt.optim.Rprop(p, etas=(1.5, 1.2))
    with pytest.raises(ValueError, match="learning rate"):
        vt.optim.Rprop(p, lr=-0.1)
