"""``vt.optim.swa_utils`` against ``torch.optim.swa_utils``: AveragedModel (SWA mean, EMA,
custom avg_fn, buffers averaged or copied), SWALR's schedule (cos/linear, several groups,
anneal_epochs 0) and update_bn's BatchNorm statistics."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import volta_core as vt


def _net(m):
    return m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4), m.nn.ReLU(),
                           m.nn.Linear(4, 2)).double()


def _copy(tnet, vnet):
    for (_, a), (_, b) in zip(tnet.state_dict().items(), vnet.state_dict().items()):
        b.copy_(vt.tensor(a.detach().numpy()))


def _train(m, net, steps, x0, avg):
    opt = m.optim.SGD(net.parameters(), lr=0.1)
    for i in range(steps):
        x = m.tensor(x0[i])
        opt.zero_grad()
        net(x).pow(2).sum().backward()
        opt.step()
        avg.update_parameters(net)


@pytest.mark.parametrize("kind", ["swa", "ema", "avg_fn", "buffers"])
def test_averaged_model_matches_torch(kind):
    x0 = np.random.default_rng(0).standard_normal((6, 5, 3))
    out = {}
    torch.manual_seed(0)
    tnet = _net(torch)
    vnet = _net(vt)
    _copy(tnet, vnet)
    for m, net in ((torch, tnet), (vt, vnet)):
        su = m.optim.swa_utils
        kw = {"swa": {}, "ema": {"multi_avg_fn": su.get_ema_multi_avg_fn(0.9)},
              "avg_fn": {"avg_fn": su.get_ema_avg_fn(0.8)},
              "buffers": {"use_buffers": True}}[kind]
        avg = su.AveragedModel(net, **kw)
        _train(m, net, 6, x0, avg)
        avg.eval()
        y = avg(m.tensor(x0[0]))
        out[m.__name__] = ({k: v.detach().numpy() for k, v in avg.state_dict().items()},
                           y.detach().numpy())
    (ts, ty), (vs, vy) = out["torch"], out["volta_core"]
    assert sorted(ts) == sorted(vs)
    for k in ts:
        np.testing.assert_allclose(vs[k], ts[k], rtol=1e-10, atol=1e-12, err_msg=k)
    np.testing.assert_allclose(vy, ty, rtol=1e-10)


def test_swalr_matches_torch():
    for strategy in ("cos", "linear"):
        for epochs in (0, 3):
            res = []
            for m in (torch, vt):
                p, q = m.tensor([1.0], requires_grad=True), m.tensor([2.0], requires_grad=True)
                opt = m.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.2}], lr=0.5)
                s = m.optim.swa_utils.SWALR(opt, swa_lr=[0.05, 0.01], anneal_epochs=epochs,
                                            anneal_strategy=strategy)
                lrs = []
                for _ in range(6):
                    opt.step()
                    s.step()
                    lrs.append([g["lr"] for g in opt.param_groups])
                res.append(lrs)
            np.testing.assert_allclose(res[1], res[0], rtol=1e-12)
    with pytest.raises(ValueError, match="anneal_strategy"):
        vt.optim.swa_utils.SWALR(vt.optim.SGD([vt.zeros(1, requires_grad=True)], lr=0.1),
                                 0.01, anneal_strategy="exp")


def test_update_bn_matches_torch():
    x0 = np.random.default_rng(1).standard_normal((4, 8, 3))
    torch.manual_seed(0)
    tnet = _net(torch)
    vnet = _net(vt)
    _copy(tnet, vnet)
    torch.optim.swa_utils.update_bn([torch.tensor(b) for b in x0], tnet)
    vt.optim.swa_utils.update_bn([vt.tensor(b) for b in x0], vnet)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(vnet[1], name).numpy(),
                                   getattr(tnet[1], name).numpy(), rtol=1e-12)
    assert vnet.training and vnet[1].momentum == tnet[1].momentum
