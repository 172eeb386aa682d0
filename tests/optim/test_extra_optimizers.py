"""Adadelta, Adamax, NAdam, RAdam and Lion against updates written by hand in NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from vt_helpers import assert_close, quadratic_problem, run_quadratic, to_np

import volta_core as vt
from volta_core.backend import kernels as kernel_registry
from volta_core.optim import Adadelta, Adamax, Lion, NAdam, RAdam

STEPS = 8  # RAdam's rectified branch starts at step 6 with the default betas
P0, C, B = quadratic_problem(np.random.default_rng(1))


def grad_np(i: int, p: np.ndarray) -> np.ndarray:
    """Gradient of the test loss sum(c p^2 / 2 + b p) w.r.t. parameter i."""
    return C[i] * p + B[i]


def run_volta(make_opt, steps=STEPS, dtype="float64"):
    return run_quadratic(make_opt, P0, C, B, steps, dtype)


def _grad(i, p, maximize, weight_decay, lr, decoupled=False):
    """(p, g) after maximize and weight decay, as every reference below applies them."""
    g = grad_np(i, p) * (-1 if maximize else 1)
    if decoupled:
        return p * (1 - lr * weight_decay), g
    return p, g + weight_decay * p


def ref_adadelta(steps, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    out = []
    for i, p in enumerate(P0):
        p, v, u = p.copy(), np.zeros_like(p), np.zeros_like(p)
        for _ in range(steps):
            p, g = _grad(i, p, maximize, weight_decay, lr)
            v = rho * v + (1 - rho) * g * g
            delta = np.sqrt(u + eps) / np.sqrt(v + eps) * g
            u = rho * u + (1 - rho) * delta * delta
            p = p - lr * delta
        out.append(p)
    return out


def ref_adamax(steps, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
               maximize=False):
    b1, b2 = betas
    out = []
    for i, p in enumerate(P0):
        p, m, u = p.copy(), np.zeros_like(p), np.zeros_like(p)
        for t in range(1, steps + 1):
            p, g = _grad(i, p, maximize, weight_decay, lr)
            m = b1 * m + (1 - b1) * g
            u = np.maximum(b2 * u, np.abs(g) + eps)
            p = p - lr / (1 - b1 ** t) * m / u
        out.append(p)
    return out


def ref_nadam(steps, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
              momentum_decay=4e-3, decoupled_weight_decay=False, maximize=False):
    b1, b2 = betas
    out = []
    for i, p in enumerate(P0):
        p, m, v, prod = p.copy(), np.zeros_like(p), np.zeros_like(p), 1.0
        for t in range(1, steps + 1):
            p, g = _grad(i, p, maximize, weight_decay, lr, decoupled_weight_decay)
            mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
            mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
            prod *= mu
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            denom = np.sqrt(v / (1 - b2 ** t)) + eps
            p = p - lr * (1 - mu) / (1 - prod) * g / denom \
                - lr * mu_next / (1 - prod * mu_next) * m / denom
        out.append(p)
    return out


def ref_radam(steps, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
              decoupled_weight_decay=False, maximize=False):
    b1, b2 = betas
    rho_inf = 2 / (1 - b2) - 1
    out = []
    for i, p in enumerate(P0):
        p, m, v = p.copy(), np.zeros_like(p), np.zeros_like(p)
        for t in range(1, steps + 1):
            p, g = _grad(i, p, maximize, weight_decay, lr, decoupled_weight_decay)
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            mhat = m / (1 - b1 ** t)
            rho = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
            if rho > 5:
                r = math.sqrt((rho - 4) * (rho - 2) * rho_inf
                              / ((rho_inf - 4) * (rho_inf - 2) * rho))
                p = p - lr * mhat * r * math.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
            else:
                p = p - lr * mhat
        out.append(p)
    return out


def ref_lion(steps, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0, maximize=False):
    b1, b2 = betas
    out = []
    for i, p in enumerate(P0):
        p, m = p.copy(), np.zeros_like(p)
        for _ in range(steps):
            p, g = _grad(i, p, maximize, weight_decay, lr, decoupled=True)
            p = p - lr * np.sign(b1 * m + (1 - b1) * g)
            m = b2 * m + (1 - b2) * g
        out.append(p)
    return out


CASES = [
    (Adadelta, dict(), ref_adadelta),
    (Adadelta, dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True), ref_adadelta),
    (Adamax, dict(lr=0.01), ref_adamax),
    (Adamax, dict(lr=0.02, betas=(0.8, 0.9), weight_decay=0.1, maximize=True), ref_adamax),
    (NAdam, dict(lr=0.01), ref_nadam),
    (NAdam, dict(lr=0.02, betas=(0.8, 0.99), weight_decay=0.1, momentum_decay=0.01),
     ref_nadam),
    (NAdam, dict(lr=0.02, weight_decay=0.1, decoupled_weight_decay=True, maximize=True),
     ref_nadam),
    (RAdam, dict(lr=0.01), ref_radam),
    (RAdam, dict(lr=0.02, betas=(0.8, 0.9), weight_decay=0.1), ref_radam),
    (RAdam, dict(lr=0.02, weight_decay=0.1, decoupled_weight_decay=True, maximize=True),
     ref_radam),
    (Lion, dict(lr=0.01), ref_lion),
    (Lion, dict(lr=0.02, betas=(0.8, 0.95), weight_decay=0.5, maximize=True), ref_lion),
]


@pytest.mark.parametrize("cls,kwargs,ref", CASES,
                         ids=[f"{c.__name__}-{i}" for i, (c, _, _) in enumerate(CASES)])
def test_step_matches_numpy(cls, kwargs, ref):
    params, _ = run_volta(lambda ps: cls(ps, **kwargs))
    for p, e in zip(params, ref(STEPS, **kwargs)):
        assert_close(p, e, rtol=1e-10, atol=1e-12, dtype="float64")


@pytest.mark.parametrize("cls,kwargs,ref", CASES[::2],
                         ids=[c.__name__ for c, _, _ in CASES[::2]])
def test_float32_and_state_dict_resume(cls, kwargs, ref):
    params, _ = run_volta(lambda ps: cls(ps, **kwargs), dtype="float32")
    for p, e in zip(params, ref(STEPS, **kwargs)):
        assert_close(p, e, rtol=1e-4, atol=1e-5, dtype="float32")
    # 3 steps, save, 5 more in a fresh optimizer == 8 straight
    params, opt = run_volta(lambda ps: cls(ps, **kwargs), steps=3)
    saved = opt.state_dict()
    fresh = cls(params, **kwargs)
    fresh.load_state_dict(saved)
    for _ in range(STEPS - 3):
        fresh.zero_grad()
        for i, p in enumerate(params):
            p.grad = vt.tensor(grad_np(i, to_np(p)))
        fresh.step()
    for p, e in zip(params, ref(STEPS, **kwargs)):
        assert_close(p, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("make,match", [
    (lambda p: Adadelta(p, rho=1.5), "rho"),
    (lambda p: Adadelta(p, lr=-1.0), "learning rate"),
    (lambda p: Adamax(p, betas=(1.0, 0.9)), "beta"),
    (lambda p: NAdam(p, momentum_decay=-0.1), "momentum_decay"),
    (lambda p: RAdam(p, eps=-1.0), "epsilon"),
    (lambda p: Lion(p, weight_decay=-1.0), "weight_decay"),
])
def test_invalid_hyper_parameters(make, match):
    with pytest.raises(ValueError, match=match):
        make([vt.zeros(2, requires_grad=True)])


def test_defaults_and_kernels_are_declared():
    p = [vt.zeros(2, requires_grad=True)]
    assert Adadelta(p).defaults["lr"] == 1.0 and Adamax(p).defaults["lr"] == 2e-3
    assert NAdam(p).defaults["momentum_decay"] == 4e-3 and RAdam(p).defaults["lr"] == 1e-3
    assert Lion(p).defaults["betas"] == (0.9, 0.99)
    for name in ("adadelta_step", "adamax_step", "nadam_step", "radam_step", "lion_step"):
        assert name in kernel_registry.kernel_names()


def test_backend_can_replace_an_extra_kernel(monkeypatch):
    backend = vt.device("cpu").backend
    calls = []

    def fused_lion(xp, param, grad, exp_avg, **kw):
        calls.append(kw["lr"])
        return param - kw["lr"] * xp.sign(grad), exp_avg

    monkeypatch.setitem(kernel_registry._cache, (backend.name, "lion_step"), fused_lion)
    p = vt.tensor([1.0, -2.0], requires_grad=True)
    (p * p).sum().backward()
    Lion([p], lr=0.25).step()
    assert calls == [0.25]
    assert_close(p, [0.75, -1.75])
