"""Every PyTorch scheduler name in ``volta_core.optim.lr_scheduler``, with its learning-rate
(and momentum) sequence compared with PyTorch's over many steps, plus its errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import volta_core as vt

TS = torch.optim.lr_scheduler
VS = vt.optim.lr_scheduler
BASE = [0.1, 0.5]


def _opt(m, cls: str = "SGD", **kw):
    params = [m.zeros(2, requires_grad=True) for _ in BASE]
    groups = [{"params": [p], "lr": lr} for p, lr in zip(params, BASE)]
    return getattr(m.optim, cls)(groups, **kw)


def _sequence(m, make, steps: int, cls: str = "SGD", epochs=None, **kw):
    """The lr (and momentum/beta1) of every group after construction and each step."""
    opt = _opt(m, cls, **kw)
    sched = make(m.optim.lr_scheduler, opt)
    key = "betas" if cls in ("Adam", "AdamW") else "momentum"

    def snap():
        lrs = [g["lr"] for g in opt.param_groups]
        moms = [g[key][0] if key == "betas" else g.get(key, 0.0) for g in opt.param_groups]
        assert list(sched.get_last_lr()) == pytest.approx(lrs, rel=1e-12)
        return lrs + moms

    out = [snap()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's deprecation warning for step(epoch)
        for i in range(steps):
            opt.step()
            if epochs is None:
                sched.step()
            else:
                sched.step(epochs[i])
            out.append(snap())
    return np.array(out)


CASES = {
    "constant": lambda S, o: S.ConstantLR(o, factor=0.25, total_iters=4),
    "polynomial": lambda S, o: S.PolynomialLR(o, total_iters=7, power=2.0),
    "multiplicative": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.95),
    "lambda": lambda S, o: S.LambdaLR(o, lambda e: 1.0 / (1 + e)),
    "warm_restarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=3, eta_min=0.01),
    "warm_restarts_mult": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2),
    "cyclic": lambda S, o: S.CyclicLR(o, 0.01, 0.2, step_size_up=3),
    "cyclic_tri2": lambda S, o: S.CyclicLR(o, [0.01, 0.02], [0.1, 0.3], step_size_up=2,
                                           step_size_down=5, mode="triangular2"),
    "cyclic_exp": lambda S, o: S.CyclicLR(o, 0.01, 0.2, step_size_up=4, mode="exp_range",
                                          gamma=0.9),
    "cyclic_fn": lambda S, o: S.CyclicLR(o, 0.01, 0.2, step_size_up=3,
                                         scale_fn=lambda x: 0.5 ** x, scale_mode="iterations"),
    "one_cycle": lambda S, o: S.OneCycleLR(o, max_lr=[0.3, 0.6], total_steps=45),
    "linear": lambda S, o: S.LinearLR(o, start_factor=0.2, total_iters=6),
    "chained": lambda S, o: S.ChainedScheduler([S.ConstantLR(o, factor=0.5, total_iters=3),
                                                S.ExponentialLR(o, gamma=0.9)]),
    "sequential": lambda S, o: S.SequentialLR(o, [S.ConstantLR(o, factor=0.1, total_iters=2),
                                                  S.PolynomialLR(o, total_iters=10)],
                                              milestones=[4]),
    "chained_cosine_step": lambda S, o: S.ChainedScheduler(
        [S.CosineAnnealingLR(o, T_max=6), S.StepLR(o, step_size=4, gamma=0.5)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lr_sequence_matches_torch(name: str) -> None:
    kw = {"momentum": 0.9} if name.startswith(("cyclic", "one_cycle")) else {}
    got = _sequence(vt, CASES[name], 40, **kw)
    want = _sequence(torch, CASES[name], 40, **kw)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)


def test_cyclic_lr_cycles_adam_beta1_like_torch() -> None:
    make = CASES["cyclic"]
    np.testing.assert_allclose(_sequence(vt, make, 20, "Adam"),
                               _sequence(torch, make, 20, "Adam"), rtol=1e-12)


def test_warm_restarts_with_fractional_epochs_like_torch() -> None:
    epochs = [i * 0.25 for i in range(1, 40)]
    make = CASES["warm_restarts_mult"]
    np.testing.assert_allclose(_sequence(vt, make, len(epochs), epochs=epochs),
                               _sequence(torch, make, len(epochs), epochs=epochs), rtol=1e-12)


def test_closed_forms_match_torch_for_step_epoch() -> None:
    epochs = [3, 9, 1, 0, 5, 12]
    for name in ("constant", "polynomial"):
        np.testing.assert_allclose(_sequence(vt, CASES[name], 6, epochs=epochs),
                                   _sequence(torch, CASES[name], 6, epochs=epochs), rtol=1e-12)


def test_every_torch_scheduler_name_exists() -> None:
    names = [n for n in dir(TS) if n[0].isupper() and isinstance(getattr(TS, n), type)
             and issubclass(getattr(TS, n), (TS.LRScheduler, TS.ReduceLROnPlateau))]
    missing = [n for n in names if not hasattr(VS, n) and n not in ("SWALR", "_LRScheduler")]
    assert not missing, missing


@pytest.mark.parametrize("make", [
    lambda S, o: S.ConstantLR(o, factor=1.5),
    lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda S, o: S.CyclicLR(o, 0.1, 1.0, mode="bogus"),
    lambda S, o: S.ChainedScheduler([]),
])
def test_errors_like_torch(make) -> None:
    with pytest.raises(ValueError):
        make(TS, _opt(torch))
    with pytest.raises(ValueError):
        make(VS, _opt(vt))


def test_cyclic_lr_needs_momentum_like_torch() -> None:
    with pytest.raises(ValueError, match="momentum"):
        TS.CyclicLR(_opt(torch, "Adagrad"), 0.1, 1.0)
    with pytest.raises(ValueError, match="momentum"):
        VS.CyclicLR(_opt(vt, "Adagrad"), 0.1, 1.0)


def test_state_dict_round_trip_resumes_the_sequence() -> None:
    opt = _opt(vt)
    sched = VS.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
    for _ in range(5):
        sched.step()
    state = sched.state_dict()
    opt2 = _opt(vt)
    opt2.load_state_dict(opt.state_dict())
    sched2 = VS.CosineAnnealingWarmRestarts(opt2, T_0=3, T_mult=2)
    sched2.load_state_dict(state)
    sched.step()
    sched2.step()
    assert sched2.get_last_lr() == pytest.approx(sched.get_last_lr(), rel=1e-15)
