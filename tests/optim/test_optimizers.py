"""Optimizer steps against updates computed by hand in NumPy, plus bookkeeping and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from vt_helpers import assert_close, quadratic_problem, run_quadratic, to_np

import volta_core as vt
from volta_core.backend import kernels as kernel_registry
from volta_core.optim import SGD, Adagrad, Adam, AdamW, Muon, RMSprop

STEPS = 5
rng = np.random.default_rng(0)
P0, C, B = quadratic_problem(rng)


def grad_np(i: int, p: np.ndarray) -> np.ndarray:
    """Gradient of the test loss sum(c p^2 / 2 + b p) w.r.t. parameter i."""
    return C[i] * p + B[i]


def run_volta(make_opt, steps=STEPS, p0=P0, dtype="float64"):
    return run_quadratic(make_opt, p0, C, B, steps, dtype)


# -- NumPy references: one function per algorithm, written from the papers' formulas --------

def ref_sgd(steps, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
            maximize=False):
    out = []
    for i, p in enumerate(P0):
        p, buf = p.copy(), None
        for _ in range(steps):
            g = grad_np(i, p) * (-1 if maximize else 1) + weight_decay * p
            if momentum:
                buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
                g = g + momentum * buf if nesterov else buf
            p = p - lr * g
        out.append(p)
    return out


def ref_adam(steps, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
             maximize=False, decoupled=False):
    b1, b2 = betas
    out = []
    for i, p in enumerate(P0):
        p = p.copy()
        m, v, vmax = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
        for t in range(1, steps + 1):
            g = grad_np(i, p) * (-1 if maximize else 1)
            if decoupled:
                p = p * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * p
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g ** 2
            mhat = m / (1 - b1 ** t)
            vmax = np.maximum(vmax, v)
            vhat = (vmax if amsgrad else v) / (1 - b2 ** t)
            p = p - lr * mhat / (np.sqrt(vhat) + eps)
        out.append(p)
    return out


def ref_rmsprop(steps, lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
                centered=False, maximize=False):
    out = []
    for i, p in enumerate(P0):
        p = p.copy()
        sq, ga, buf = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
        for _ in range(steps):
            g = grad_np(i, p) * (-1 if maximize else 1) + weight_decay * p
            sq = alpha * sq + (1 - alpha) * g * g
            if centered:
                ga = alpha * ga + (1 - alpha) * g
                avg = np.sqrt(sq - ga ** 2) + eps
            else:
                avg = np.sqrt(sq) + eps
            if momentum > 0:
                buf = momentum * buf + g / avg
                p = p - lr * buf
            else:
                p = p - lr * g / avg
        out.append(p)
    return out


def ref_adagrad(steps, lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0,
                eps=1e-10, maximize=False):
    out = []
    for i, p in enumerate(P0):
        p = p.copy()
        s = np.full_like(p, initial_accumulator_value)
        for t in range(1, steps + 1):
            g = grad_np(i, p) * (-1 if maximize else 1) + weight_decay * p
            s = s + g * g
            p = p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s) + eps)
        out.append(p)
    return out


CASES = [
    (SGD, dict(lr=0.1), ref_sgd),
    (SGD, dict(lr=0.1, momentum=0.9), ref_sgd),
    (SGD, dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.1), ref_sgd),
    (SGD, dict(lr=0.05, momentum=0.8, nesterov=True, maximize=True), ref_sgd),
    (Adam, dict(lr=0.01), ref_adam),
    (Adam, dict(lr=0.02, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True), ref_adam),
    (Adam, dict(lr=0.02, maximize=True, eps=1e-3), ref_adam),
    (RMSprop, dict(lr=0.01), ref_rmsprop),
    (RMSprop, dict(lr=0.01, alpha=0.9, centered=True, momentum=0.5, weight_decay=0.1),
     ref_rmsprop),
    (RMSprop, dict(lr=0.01, momentum=0.9, maximize=True), ref_rmsprop),
    (Adagrad, dict(lr=0.1), ref_adagrad),
    (Adagrad, dict(lr=0.1, lr_decay=0.1, weight_decay=0.05, initial_accumulator_value=0.2),
     ref_adagrad),
]


@pytest.mark.parametrize("cls,kwargs,ref", CASES,
                         ids=[f"{c.__name__}-{i}" for i, (c, _, _) in enumerate(CASES)])
def test_step_matches_numpy(cls, kwargs, ref):
    params, _ = run_volta(lambda ps: cls(ps, **kwargs))
    for p, e in zip(params, ref(STEPS, **kwargs)):
        assert_close(p, e, rtol=1e-10, atol=1e-12, dtype="float64")


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adamw_decoupled_weight_decay(amsgrad):
    params, _ = run_volta(lambda ps: AdamW(ps, lr=0.01, weight_decay=0.3, amsgrad=amsgrad))
    expected = ref_adam(STEPS, 0.01, weight_decay=0.3, amsgrad=amsgrad, decoupled=True)
    for p, e in zip(params, expected):
        assert_close(p, e, rtol=1e-10, atol=1e-12)
    assert AdamW([vt.zeros(1, requires_grad=True)]).defaults["weight_decay"] == 0.01


def test_float32_state_stays_float32_on_param_device():
    params, opt = run_volta(lambda ps: Adam(ps, lr=0.01, amsgrad=True), dtype="float32")
    for p, e in zip(params, ref_adam(STEPS, 0.01, amsgrad=True)):
        assert_close(p, e, rtol=1e-4, atol=1e-5, dtype="float32")
    for p in params:
        st = opt.state[p]
        assert isinstance(st["step"], int) and st["step"] == STEPS
        for k in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
            assert st[k].dtype.name == "float32" and st[k].device is p.device
            assert st[k].shape == p.shape


def test_step_bumps_version_and_keeps_leaf():
    p = vt.tensor([1.0, 2.0], requires_grad=True)
    v0 = p._version[0]
    (p * p).sum().backward()
    SGD([p], lr=0.1).step()
    assert p._version[0] == v0 + 1 and p.is_leaf and p.requires_grad
    assert_close(p, [0.8, 1.6])


def test_params_without_grad_are_skipped():
    a, b = vt.tensor([1.0], requires_grad=True), vt.tensor([1.0], requires_grad=True)
    opt = Adam([a, b], lr=0.1)
    (a * 2).sum().backward()
    opt.step()
    assert b not in opt.state and to_np(b)[0] == 1.0 and to_np(a)[0] < 1.0


# -- Muon -----------------------------------------------------------------------------------

def ns_np(g, steps=5, coeffs=(3.4445, -4.775, 2.0315), eps=1e-7):
    a, b, c = coeffs
    x = g.T if g.shape[0] > g.shape[1] else g
    x = x / max(np.linalg.norm(x), eps)
    for _ in range(steps):
        A = x @ x.T
        x = a * x + (b * A + c * A @ A) @ x
    return x.T if g.shape[0] > g.shape[1] else x


@pytest.mark.parametrize("nesterov,adjust", [(True, None), (False, "match_rms_adamw")])
def test_muon_matches_numpy(nesterov, adjust):
    lr, wd, mu = 0.02, 0.1, 0.9
    p0 = [rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (5, 2))]
    params = [vt.tensor(p, requires_grad=True, dtype="float64") for p in p0]
    opt = Muon(params, lr=lr, weight_decay=wd, momentum=mu, nesterov=nesterov,
               adjust_lr_fn=adjust)
    targets = [rng.uniform(-1, 1, p.shape) for p in p0]
    for _ in range(3):
        opt.zero_grad()
        sum(((p - vt.tensor(t)) * (p - vt.tensor(t))).sum()
            for p, t in zip(params, targets)).backward()
        opt.step()
    for p, x, t in zip(params, p0, targets):
        x, buf = x.copy(), np.zeros_like(x)
        rows, cols = x.shape
        scale = (0.2 * math.sqrt(max(rows, cols)) if adjust
                 else math.sqrt(max(1, rows / cols)))
        for _ in range(3):
            g = 2 * (x - t)
            buf = mu * buf + (1 - mu) * g
            u = g + mu * (buf - g) if nesterov else buf
            x = x * (1 - lr * wd) - lr * scale * ns_np(u)
        assert_close(p, x, rtol=1e-9, atol=1e-11)


def test_newton_schulz_orthogonalises():
    from volta_core.optim.kernels import newton_schulz

    g = rng.normal(size=(8, 16))
    o = np.asarray(newton_schulz(vt.device("cpu").xp, g, (3.4445, -4.775, 2.0315), 5, 1e-7))
    s = np.linalg.svd(o, compute_uv=False)
    assert s.min() > 0.6 and s.max() < 1.25  # the quintic lands near 1, not exactly on it


def test_muon_refuses_non_matrix_params_listing_all():
    w, b, k = (vt.zeros(3, 4, requires_grad=True), vt.zeros(4, requires_grad=True),
               vt.zeros(2, 2, 3, requires_grad=True))
    with pytest.raises(ValueError, match=r"2-D.*params\[1\] of shape \(4,\).*params\[2\].*AdamW"):
        Muon([w, b, k])
    with pytest.raises(ValueError, match="adjust_lr_fn"):
        Muon([w], adjust_lr_fn="bogus")


# -- bookkeeping --------------------------------------------------------------------------

def test_zero_grad_set_to_none_and_zeros():
    p = vt.tensor([1.0, 2.0], requires_grad=True)
    opt = SGD([p], lr=0.1)
    (p * 3).sum().backward()
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g
    assert_close(p.grad, [0.0, 0.0])
    opt.zero_grad()
    assert p.grad is None


def test_param_groups_and_add_param_group():
    a, b, c = (vt.tensor([1.0], requires_grad=True) for _ in range(3))
    opt = SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9
    opt.add_param_group({"params": c, "lr": 0.01})
    assert opt.param_groups[2]["params"][0] is c
    for p in (a, b, c):
        (p * 1.0).sum().backward()
    opt.step()
    assert [round(float(t.item()), 6) for t in (a, b, c)] == [0.9, 0.5, 0.99]
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})


def test_closure_returns_loss():
    p = vt.tensor([2.0], requires_grad=True)
    opt = SGD([p], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with vt.no_grad():
        loss = opt.step(closure)
    assert float(loss.item()) == 4.0
    assert_close(p, [1.6])


@pytest.mark.parametrize("make,match", [
    (lambda p: SGD([], lr=0.1), "empty parameter list"),
    (lambda p: SGD(p, lr=0.1), "single Tensor"),
    (lambda p: SGD([p], lr=-1), "invalid learning rate -1"),
    (lambda p: SGD([p], lr=0.1, nesterov=True), "Nesterov"),
    (lambda p: Adam([p], betas=(1.0, 0.9)), r"beta parameter at index 0"),
    (lambda p: Adam([p], eps=-1.0), "epsilon"),
    (lambda p: RMSprop([p], alpha=-0.1), "alpha"),
    (lambda p: Adagrad([p], lr_decay=-0.1), "lr_decay"),
    (lambda p: SGD([p, p], lr=0.1), "same tensor twice"),
    (lambda p: SGD([p * 2], lr=0.1), "not a leaf"),
    (lambda p: SGD([p, 3.0], lr=0.1), r"params\[1\] is a float"),
    (lambda p: SGD([vt.zeros(2, dtype="int64")], lr=0.1), "floating-point"),
    (lambda p: SGD([{"params": {p}}], lr=0.1), "not a set"),
    (lambda p: SGD([{"lr": 0.1}]), "no 'params' key"),
])
def test_invalid_arguments(make, match):
    p = vt.tensor([1.0], requires_grad=True)
    with pytest.raises((ValueError, TypeError), match=match):
        make(p)


def test_backend_can_replace_the_fused_kernel(monkeypatch):
    backend = vt.device("cpu").backend
    calls = []

    def fused_sgd(xp, param, grad, buf, **kw):
        calls.append(kw["lr"])
        return param - kw["lr"] * grad, None

    # what get_kernel resolves once from a plugin hook or Backend.kernels
    monkeypatch.setitem(kernel_registry._cache, (backend.name, "sgd_step"), fused_sgd)
    p = vt.tensor([1.0], requires_grad=True)
    (p * 1.0).sum().backward()
    SGD([p], lr=0.25, foreach=False).step()  # per parameter (not the multi-tensor kernel)
    assert calls == [0.25]
    assert_close(p, [0.75])
    assert "sgd_step" in kernel_registry.kernel_names()
    for name in ("adam_step", "rmsprop_step", "adagrad_step", "muon_step"):
        assert name in kernel_registry.kernel_names()
