"""Optimizer state dicts: PyTorch's layout, exact continuation after loading, errors."""

from __future__ import annotations

import numpy as np
import pytest
from vt_helpers import to_np

import volta_core as vt
from volta_core.optim import SGD, Adagrad, Adam, AdamW, Muon, RMSprop

rng = np.random.default_rng(1)
INIT = [rng.normal(size=(3, 4)), rng.normal(size=(4,)), rng.normal(size=(2, 3))]
TARGET = [rng.normal(size=a.shape) for a in INIT]


def make_params():
    return [vt.tensor(a, requires_grad=True) for a in INIT]


def train(params, opt, steps):
    for _ in range(steps):
        opt.zero_grad()
        loss = sum(((p - vt.tensor(t)) * (p - vt.tensor(t))).sum()
                   for p, t in zip(params, TARGET))
        loss.backward()
        opt.step()


FACTORIES = {
    "sgd": lambda ps: SGD(ps, lr=0.1, momentum=0.9, nesterov=True),
    "adam": lambda ps: Adam([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.05}], lr=0.01,
                            amsgrad=True),
    "adamw": lambda ps: AdamW(ps, lr=0.01),
    "rmsprop": lambda ps: RMSprop(ps, lr=0.01, momentum=0.5, centered=True),
    "adagrad": lambda ps: Adagrad(ps, lr=0.1, lr_decay=0.01),
    "muon": lambda ps: Muon([ps[0], ps[2]], lr=0.02),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_load_into_fresh_optimizer_continues_exactly(name):
    make = FACTORIES[name]
    straight = make_params()
    opt = make(straight)
    train(straight, opt, 6)

    first = make_params()
    opt1 = make(first)
    train(first, opt1, 3)
    sd = opt1.state_dict()
    resumed = [vt.tensor(to_np(p), requires_grad=True) for p in first]
    opt2 = make(resumed)
    opt2.load_state_dict(sd)
    train(resumed, opt2, 3)
    for a, b in zip(straight, resumed):
        np.testing.assert_array_equal(to_np(a), to_np(b))
    # the loaded state is a copy: stepping opt2 did not touch opt1's tensors
    assert all(opt2.state[p] is not opt1.state.get(p) for p in resumed)


def test_layout_is_pytorchs():
    ps = make_params()
    opt = Adam([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.05}], lr=0.01)
    train(ps, opt, 2)
    sd = opt.state_dict()
    assert sorted(sd) == ["param_groups", "state"]
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert [g["lr"] for g in sd["param_groups"]] == [0.01, 0.05]
    assert sd["param_groups"][0]["betas"] == (0.9, 0.999)
    assert sorted(sd["state"]) == [0, 1, 2]
    assert sorted(sd["state"][0]) == ["exp_avg", "exp_avg_sq", "step"]
    assert sd["state"][0]["step"] == 2
    assert isinstance(sd["state"][0]["exp_avg"], vt.Tensor)


def test_load_accepts_json_roundtrip_types():
    """Lists for tuples and str keys for indices (what a JSON round trip gives) load too."""
    ps = make_params()
    opt = Adam(ps, lr=0.01)
    train(ps, opt, 1)
    sd = opt.state_dict()
    sd = {"state": {str(k): {**v, "step": vt.tensor(v["step"])} for k, v in sd["state"].items()},
          "param_groups": [{**g, "betas": list(g["betas"])} for g in sd["param_groups"]]}
    opt2 = Adam(make_params(), lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["betas"] == (0.9, 0.999)
    assert opt2.param_groups[0]["lr"] == 0.01
    p0 = opt2.param_groups[0]["params"][0]
    assert opt2.state[p0]["step"] == 1 and isinstance(opt2.state[p0]["step"], int)


def test_load_casts_state_to_param_dtype():
    ps = make_params()
    opt = Adam(ps, lr=0.01)
    train(ps, opt, 1)
    sd = opt.state_dict()
    p32 = [vt.tensor(a, dtype="float32", requires_grad=True) for a in INIT]
    opt32 = Adam(p32, lr=0.01)
    opt32.load_state_dict(sd)
    assert opt32.state[p32[0]]["exp_avg"].dtype.name == "float32"


def test_load_mismatch_errors():
    ps = make_params()
    opt = SGD(ps, lr=0.1, momentum=0.9)
    train(ps, opt, 1)
    sd = opt.state_dict()
    with pytest.raises(ValueError, match="1 parameter group.*optimizer 2"):
        SGD([{"params": ps[:1]}, {"params": ps[1:]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="group 0: 3 saved vs 2"):
        SGD(ps[:2], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="'state' and 'param_groups'"):
        SGD(ps, lr=0.1).load_state_dict({"state": {}})


def test_repr_lists_groups():
    text = repr(SGD(make_params(), lr=0.1))
    assert text.startswith("SGD (") and "Parameter Group 0" in text and "lr: 0.1" in text
