"""``optim.LBFGS`` against PyTorch: losses, parameters and evaluation counts step by step,
with and without the strong-Wolfe line search, and its errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import volta_core as vt

X0 = np.array([-1.5, 2.0, 0.5, -0.3])


def _rosenbrock(x):
    return ((1 - x[:-1]) ** 2).sum() + 100 * ((x[1:] - x[:-1] ** 2) ** 2).sum()


def _run(m, line_search, steps=6, **kw):
    x = m.tensor(X0.copy(), requires_grad=True)
    opt = m.optim.LBFGS([x], line_search_fn=line_search, **kw)

    def closure():
        opt.zero_grad()
        loss = _rosenbrock(x)
        loss.backward()
        return loss

    out = []
    for _ in range(steps):
        loss = opt.step(closure)
        state = opt.state[x]
        out.append((float(loss.detach()), x.detach().numpy().copy(), state["func_evals"],
                    state["n_iter"]))
    return out


@pytest.mark.parametrize("line_search,kw", [
    (None, {"lr": 0.1}),
    (None, {"lr": 0.05, "max_iter": 7, "history_size": 3}),
    ("strong_wolfe", {}),
    ("strong_wolfe", {"max_iter": 4, "history_size": 2, "tolerance_change": 1e-6}),
])
def test_lbfgs_matches_torch_float64(line_search, kw) -> None:
    got, want = _run(vt, line_search, **kw), _run(torch, line_search, **kw)
    for (gl, gx, ge, gi), (wl, wx, we, wi) in zip(got, want):
        assert (ge, gi) == (we, wi)
        np.testing.assert_allclose(gl, wl, rtol=1e-10)
        np.testing.assert_allclose(gx, wx, rtol=1e-9, atol=1e-12)


def test_lbfgs_trains_a_float32_model_like_torch() -> None:
    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal((32, 3)).astype("float32"), rng.standard_normal((32, 1))
    t_model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    v_model = vt.nn.Sequential(vt.nn.Linear(3, 8), vt.nn.Tanh(), vt.nn.Linear(8, 1))
    v_model.load_state_dict({k: vt.tensor(a.detach().numpy()) for k, a in
                             t_model.state_dict().items()})

    def fit(m, model):
        opt = m.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe", max_iter=5)
        x, y = m.tensor(xs), m.tensor(ys.astype("float32"))

        def closure():
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            return loss

        return [float(opt.step(closure).detach()) for _ in range(3)]

    losses = {torch: fit(torch, t_model), vt: fit(vt, v_model)}
    np.testing.assert_allclose(losses[vt], losses[torch], rtol=1e-3)
    assert losses[vt][-1] < losses[vt][0]


def test_lbfgs_errors_like_torch() -> None:
    def check(m):
        a, b = m.ones(2, requires_grad=True), m.ones(2, requires_grad=True)
        with pytest.raises(ValueError, match="parameter groups"):
            m.optim.LBFGS([{"params": [a]}, {"params": [b]}])
        opt = m.optim.LBFGS([a], line_search_fn="armijo")

        def closure():
            loss = (a * a).sum()
            loss.backward()
            return loss

        with pytest.raises(RuntimeError, match="strong_wolfe"):
            opt.step(closure)

    check(torch)
    check(vt)
    with pytest.raises(RuntimeError, match="closure"):
        vt.optim.LBFGS([vt.zeros(1, requires_grad=True)]).step()


def test_lbfgs_stops_at_an_optimum() -> None:
    x = vt.zeros(3, requires_grad=True)
    opt = vt.optim.LBFGS([x])
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = (x * x).sum()
        loss.backward()
        return loss

    opt.step(closure)
    assert len(calls) == 1  # the gradient is already 0: no iteration
