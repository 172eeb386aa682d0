"""Learning-rate schedulers against closed-form sequences, state dicts and errors."""

from __future__ import annotations

import json
import math

import pytest

import volta_core as vt
from volta_core.optim import SGD, Adam
from volta_core.optim.lr_scheduler import (
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiStepLR,
    OneCycleLR,
    ReduceLROnPlateau,
    SequentialLR,
    StepLR,
)

BASE = [0.1, 0.5]


def make_opt(cls=SGD, **kw):
    groups = [{"params": [vt.zeros(2, requires_grad=True)], "lr": lr} for lr in BASE]
    return cls(groups, **kw)


def run(make_sched, epochs, cls=SGD, **kw):
    """The lrs of every group after construction and after each of ``epochs`` steps."""
    opt = make_opt(cls, **kw)
    sched = make_sched(opt)
    out = [sched.get_last_lr()]
    for _ in range(epochs):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr())
        assert out[-1] == [g["lr"] for g in opt.param_groups]
    return out


def assert_seq(got, expected_fn):
    for e, lrs in enumerate(got):
        want = [expected_fn(b, e) for b in BASE]
        assert lrs == pytest.approx(want, rel=1e-12, abs=1e-15), f"epoch {e}"


def _cos(lo, hi, t, T):
    return lo + (hi - lo) * (1 + math.cos(math.pi * t / T)) / 2


CLOSED = {
    "step": (lambda o: StepLR(o, step_size=3, gamma=0.5), lambda b, e: b * 0.5 ** (e // 3)),
    "multistep": (lambda o: MultiStepLR(o, milestones=[2, 5, 5], gamma=0.1),
                  lambda b, e: b * 0.1 ** sum(m <= e for m in (2, 5, 5))),
    "exponential": (lambda o: ExponentialLR(o, gamma=0.9), lambda b, e: b * 0.9 ** e),
    "cosine": (lambda o: CosineAnnealingLR(o, T_max=10, eta_min=0.01),
               lambda b, e: _cos(0.01, b, e, 10)),
    "linear": (lambda o: LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=4),
               lambda b, e: b * (0.25 + 0.75 * min(e, 4) / 4)),
    "linear_decay": (lambda o: LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=5),
                     lambda b, e: b * (1.0 - 0.9 * min(e, 5) / 5)),
    "lambda": (lambda o: LambdaLR(o, lambda e: 0.95 ** e + 0.01 * e),
               lambda b, e: b * (0.95 ** e + 0.01 * e)),
    "sequential": (lambda o: SequentialLR(o, [LinearLR(o, start_factor=0.1, total_iters=3),
                                              ExponentialLR(o, gamma=0.5)], milestones=[3]),
                   lambda b, e: b * (0.1 + 0.9 * e / 3) if e < 3 else b * 0.5 ** (e - 3)),
    "warmup_cosine": (lambda o: SequentialLR(o, [LinearLR(o, start_factor=0.2, total_iters=4),
                                                 CosineAnnealingLR(o, T_max=8)], [4]),
                      lambda b, e: b * (0.2 + 0.8 * e / 4) if e < 4 else _cos(0, b, e - 4, 8)),
}


@pytest.mark.parametrize("name", sorted(CLOSED))
def test_closed_form(name):
    make, expected = CLOSED[name]
    assert_seq(run(make, 25), expected)


@pytest.mark.parametrize("name", sorted(CLOSED))
def test_state_dict_resume(name):
    make, _ = CLOSED[name]
    straight = run(make, 12)
    opt = make_opt()
    sched = make(opt)
    for _ in range(5):
        sched.step()
    saved_opt = opt.state_dict()
    saved = json.loads(json.dumps(sched.state_dict()))  # must be JSON-able
    opt2 = make_opt()
    sched2 = make(opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved)
    assert sched2.get_last_lr() == straight[5]
    for e in range(6, 13):
        sched2.step()
        assert sched2.get_last_lr() == pytest.approx(straight[e], rel=1e-12)


def test_chained_schedulers_multiply():
    opt = make_opt()
    a, b = ExponentialLR(opt, gamma=0.9), StepLR(opt, step_size=2, gamma=0.5)
    for e in range(1, 9):
        a.step()
        b.step()
        assert [g["lr"] for g in opt.param_groups] == pytest.approx(
            [base * 0.9 ** e * 0.5 ** (e // 2) for base in BASE], rel=1e-12)


def test_step_with_epoch_uses_closed_form():
    opt = make_opt()
    s = CosineAnnealingLR(opt, T_max=10)
    s.step(7)
    assert s.get_last_lr() == pytest.approx([_cos(0, b, 7, 10) for b in BASE])


def _one_cycle_ref(t, total, max_lr, pct, three, linear, lo_m=0.85, hi_m=0.95):
    init, low = max_lr / 25, max_lr / 25 / 1e4

    def ann(a, b, x):
        return a + (b - a) * x if linear else b + (a - b) / 2 * (math.cos(math.pi * x) + 1)

    e1 = pct * total - 1
    if three:
        e2 = 2 * pct * total - 2
        if t <= e1:
            return ann(init, max_lr, t / e1), ann(hi_m, lo_m, t / e1)
        if t <= e2:
            return ann(max_lr, init, (t - e1) / (e2 - e1)), ann(lo_m, hi_m, (t - e1) / (e2 - e1))
        x = (t - e2) / (total - 1 - e2)
        return ann(init, low, x), hi_m
    if t <= e1:
        return ann(init, max_lr, t / e1), ann(hi_m, lo_m, t / e1)
    x = (t - e1) / (total - 1 - e1)
    return ann(max_lr, low, x), ann(lo_m, hi_m, x)


@pytest.mark.parametrize("three,linear,cls", [(False, False, SGD), (True, False, SGD),
                                              (False, True, Adam)])
def test_one_cycle(three, linear, cls):
    kw = {"momentum": 0.9} if cls is SGD else {}
    opt = make_opt(cls, **kw)
    total = 20
    s = OneCycleLR(opt, max_lr=[1.0, 2.0], total_steps=total, pct_start=0.25,
                   three_phase=three, anneal_strategy="linear" if linear else "cos")
    for t in range(total):
        for g, top in zip(opt.param_groups, (1.0, 2.0)):
            lr, mom = _one_cycle_ref(t, total, top, 0.25, three, linear)
            assert g["lr"] == pytest.approx(lr, rel=1e-12), t
            got_mom = g["momentum"] if cls is SGD else g["betas"][0]
            assert got_mom == pytest.approx(mom, rel=1e-12), t
        if t < total - 1:
            s.step()
    s.step()
    with pytest.raises(ValueError, match="total_steps is 20"):
        s.step()


def test_one_cycle_errors():
    with pytest.raises(ValueError, match="total_steps, or positive epochs"):
        OneCycleLR(make_opt(), max_lr=1.0)
    with pytest.raises(ValueError, match="neither 'momentum' nor 'betas'"):
        from volta_core.optim import Adagrad

        OneCycleLR(make_opt(Adagrad), max_lr=1.0, total_steps=10)
    with pytest.raises(ValueError, match="expected 2 values of max_lr"):
        OneCycleLR(make_opt(), max_lr=[1.0], total_steps=10)
    assert OneCycleLR(make_opt(), max_lr=1.0, epochs=2, steps_per_epoch=5).total_steps == 10


def test_reduce_on_plateau():
    opt = make_opt()
    s = ReduceLROnPlateau(opt, patience=2, factor=0.5)
    lrs = []
    for loss in [1.0, 0.9, 0.9, 0.9, 0.9, 0.8, 0.8, 0.8, 0.8]:
        s.step(vt.tensor(loss))
        lrs.append(s.get_last_lr()[0] / BASE[0])
    assert lrs == [1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.25]


def test_reduce_on_plateau_max_cooldown_min_lr_and_state():
    opt = make_opt()
    s = ReduceLROnPlateau(opt, mode="max", patience=0, factor=0.1, cooldown=1,
                          min_lr=[0.005, 0.0], threshold=0.1, threshold_mode="abs")
    seen = []
    for acc in [0.5, 0.55, 0.55, 0.55, 0.55]:  # 0.55 is not > 0.5 + 0.1
        s.step(acc)
        seen.append(s.get_last_lr())
    assert seen[1] == pytest.approx([0.01, 0.05])     # reduced, then cooldown
    assert seen[2] == pytest.approx([0.01, 0.05])     # cooling down
    assert seen[3] == pytest.approx([0.005, 0.005])   # clamped by min_lr for group 0
    state = json.loads(json.dumps(s.state_dict()))
    s2 = ReduceLROnPlateau(make_opt(), mode="max")
    s2.load_state_dict(state)
    assert s2.best == 0.5 and s2.cooldown == 1 and s2.patience == 0


@pytest.mark.parametrize("make,err,match", [
    (lambda o: StepLR(o, step_size=0), ValueError, "step_size"),
    (lambda o: LinearLR(o, start_factor=0.0), ValueError, "start_factor"),
    (lambda o: LambdaLR(o, [lambda e: 1.0]), ValueError, "expected 2 lr_lambdas"),
    (lambda o: SequentialLR(o, [StepLR(o, 2), StepLR(o, 3)], milestones=[]), ValueError,
     "expected 1 milestone"),
    (lambda o: SequentialLR(o, [StepLR(make_opt(), 2)], milestones=[]), ValueError,
     "another optimizer"),
    (lambda o: ReduceLROnPlateau(o, factor=1.0), ValueError, "factor must be < 1.0"),
    (lambda o: ReduceLROnPlateau(o, mode="up"), ValueError, "mode"),
    (lambda o: StepLR(o, 2, last_epoch=3), KeyError, "initial_lr"),
    (lambda o: StepLR(object(), 2), TypeError, "expected an Optimizer"),
])
def test_errors(make, err, match):
    with pytest.raises(err, match=match):
        make(make_opt())
