"""vt.amp.GradScaler against torch.amp.GradScaler on cpu: scale, growth tracker and
parameters over a run with injected infs and NaNs, with every optimizer."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import volta_core as vt
import volta_core.nn.functional as F

torch = pytest.importorskip("torch")

rng = np.random.default_rng(1)
W0 = rng.standard_normal((3, 5)).astype(np.float32)
XS = rng.standard_normal((12, 4, 5)).astype(np.float32)
BAD = {2: np.inf, 3: np.nan, 7: -np.inf}  # steps whose gradient gets a non-finite entry

OPTIMIZERS = {
    "SGD": dict(lr=0.1, momentum=0.9),
    "Adam": dict(lr=0.01),
    "AdamW": dict(lr=0.01),
    "RMSprop": dict(lr=0.01),
    "Adagrad": dict(lr=0.1),
    "Adadelta": dict(lr=1.0),
    "Adamax": dict(lr=0.01),
    "NAdam": dict(lr=0.01),
    "RAdam": dict(lr=0.01),
}


def _run(m, opt_name, clip=False):
    w = (torch.tensor(W0) if m is torch else vt.tensor(W0)).requires_grad_(True)
    opt = getattr(m.optim, opt_name)([w], **OPTIMIZERS[opt_name])
    scaler = (torch.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=3)
              if m is torch else vt.amp.GradScaler("cpu", init_scale=2.0**10,
                                                   growth_interval=3))
    scales, trackers = [], []
    for i, x in enumerate(XS):
        opt.zero_grad()
        x = torch.tensor(x) if m is torch else vt.tensor(x)
        loss = (x @ w.T).pow(2).mean()
        if i in BAD:
            loss = loss * BAD[i]
        scaler.scale(loss).backward()
        if clip:
            scaler.unscale_(opt)
            (torch.nn.utils if m is torch else vt.nn.utils).clip_grad_norm_([w], 0.5)
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        trackers.append(scaler._get_growth_tracker())
    return w.detach().numpy(), scales, trackers, scaler.state_dict()


@pytest.mark.parametrize("clip", [False, True], ids=["plain", "clip-after-unscale"])
@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_run_with_injected_infs_matches_torch(opt_name, clip):
    w_v, s_v, t_v, sd_v = _run(vt, opt_name, clip)
    w_t, s_t, t_t, sd_t = _run(torch, opt_name, clip)
    assert s_v == s_t and t_v == t_t
    assert sd_v == sd_t
    np.testing.assert_allclose(w_v, w_t, rtol=1e-5, atol=1e-6)


def test_skipped_step_leaves_parameters_and_unscales_grads():
    w = vt.ones(3, requires_grad=True)
    opt = vt.optim.SGD([w], lr=1.0)
    scaler = vt.amp.GradScaler("cpu", init_scale=4.0)
    scaler.scale((w * 2).sum()).backward()
    assert np.allclose(w.grad.numpy(), 8.0)
    scaler.unscale_(opt)
    assert np.allclose(w.grad.numpy(), 2.0)
    scaler.step(opt)
    scaler.update()
    assert np.allclose(w.detach().numpy(), -1.0)
    opt.zero_grad()
    scaler.scale((w * float("inf")).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert np.allclose(w.detach().numpy(), -1.0)
    assert scaler.get_scale() == 2.0


def test_api_errors_and_state_dict():
    w = vt.ones(3, requires_grad=True)
    opt = vt.optim.SGD([w], lr=1.0)
    scaler = vt.amp.GradScaler("cpu")
    assert scaler.get_scale() == 2.0**16 and scaler.is_enabled()
    assert (scaler.get_growth_factor(), scaler.get_backoff_factor(),
            scaler.get_growth_interval()) == (2.0, 0.5, 2000)
    scaler.scale(w.sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    with pytest.raises(RuntimeError, match="after step"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="Closure"):
        scaler.step(opt, closure=lambda: 0)
    scaler.update(new_scale=8.0)
    assert scaler.get_scale() == 8.0
    other = vt.amp.GradScaler("cpu")
    other.load_state_dict(scaler.state_dict())
    assert other.state_dict() == scaler.state_dict()
    again = pickle.loads(pickle.dumps(scaler))
    assert again.get_scale() == 8.0
    off = vt.amp.GradScaler("cpu", enabled=False)
    assert off.scale(w) is w and off.state_dict() == {} and off.get_scale() == 1.0
    with pytest.raises(RuntimeError, match="empty"):
        other.load_state_dict({})


def test_float16_gradients_are_refused():
    w = vt.ones(3, dtype=vt.float16, requires_grad=True)
    opt = vt.optim.SGD([w], lr=1.0)
    scaler = vt.amp.GradScaler("cpu")
    scaler.scale(w.float().sum()).backward()
    with pytest.raises(TypeError, match="float16"):
        scaler.unscale_(opt)


def test_cuda_scaler_without_cuda_disables_itself():
    if vt.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.warns(UserWarning, match="not available"):
        scaler = vt.cuda.amp.GradScaler()
    assert not scaler.is_enabled()


def test_full_amp_step_matches_torch():
    """Autocast forward + scaled backward + step: the PyTorch recipe, end to end."""
    torch.manual_seed(0)
    net_t = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    net_v = vt.nn.Sequential(vt.nn.Linear(5, 8), vt.nn.ReLU(), vt.nn.Linear(8, 3))
    net_v.load_state_dict({k: vt.tensor(v.detach().numpy())
                           for k, v in net_t.state_dict().items()})
    y = np.array([0, 1, 2, 1])
    for m, net in ((torch, net_t), (vt, net_v)):
        opt = m.optim.SGD(net.parameters(), lr=0.1)
        scaler = (torch.amp.GradScaler("cpu") if m is torch else vt.amp.GradScaler("cpu"))
        for x in XS[:4]:
            opt.zero_grad()
            with (torch.autocast("cpu") if m is torch else vt.autocast("cpu")):
                out = net(torch.tensor(x) if m is torch else vt.tensor(x))
                loss = (torch.nn.functional if m is torch else F).cross_entropy(
                    out, torch.tensor(y) if m is torch else vt.tensor(y))
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
    for (k, a), b in zip(net_v.state_dict().items(), net_t.state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-2, atol=2e-2, err_msg=k)


@pytest.mark.parametrize("opt_name", ["Lion", "Muon"])
def test_volta_only_optimizers_skip_and_step(opt_name):
    w = vt.tensor(W0, requires_grad=True)
    opt = getattr(vt.optim, opt_name)([w], lr=0.01)
    scaler = vt.amp.GradScaler("cpu", init_scale=8.0)
    before = w.detach().numpy().copy()
    scaler.scale((w * float("nan")).sum()).backward()
    scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(w.detach().numpy(), before)
    assert scaler.get_scale() == 4.0
    opt.zero_grad()
    scaler.scale((w * w).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert not np.array_equal(w.detach().numpy(), before)
