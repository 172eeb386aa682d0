"""``vt.func`` against ``torch.func``: grad (argnums, has_aux), grad_and_value, vjp, jvp,
jacrev/jacfwd (has_aux too), hessian, their compositions, vmap (in_dims, tuples) and
functional_call."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import volta_core as vt

X = np.array([0.5, -1.0, 2.0])


def _both(fn):
    out = []
    for m in (torch, vt):
        out.append(fn(m))
    return out


def _close(got, want):
    if isinstance(want, (tuple, list)):
        for g, w in zip(got, want):
            _close(g, w)
        return
    assert not got.requires_grad  # no graph left behind, as torch.func's
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-14)


def f(x):
    return (x.sin() * x).sum()


def g2(x, y):
    return (x * y.exp()).sum() + (x ** 3).sum()


def _x(m):
    return m.tensor(X, dtype=m.float64)


@pytest.mark.parametrize("transform", [
    lambda m: m.func.grad(f)(_x(m)),
    lambda m: m.func.grad(g2, argnums=(0, 1))(_x(m), _x(m) * 0.5),
    lambda m: m.func.grad(lambda x: (f(x), x.sum()), has_aux=True)(_x(m)),
    lambda m: m.func.grad_and_value(f)(_x(m)),
    lambda m: m.func.jacrev(lambda x: x ** 2 * x.sin())(_x(m)),
    lambda m: m.func.jacfwd(lambda x: x.exp())(_x(m)),
    lambda m: m.func.hessian(f)(_x(m)),
    lambda m: m.func.jacrev(m.func.grad(f))(_x(m)),
    lambda m: m.func.jvp(lambda x: x.exp() * x, (_x(m),), (m.ones(3, dtype=m.float64),)),
    lambda m: m.func.jvp(lambda x: (x.exp() * x, x.cos()), (_x(m),),
                         (m.ones(3, dtype=m.float64),), has_aux=True),
    lambda m: m.func.jacrev(lambda x: (x ** 2 * x.sin(), x.sum()), has_aux=True)(_x(m)),
    lambda m: m.func.jacfwd(lambda x, y: (x * y.exp(), (x, y * 2)), argnums=(0, 1),
                            has_aux=True)(_x(m), _x(m) * 0.5),
    lambda m: m.func.vmap(m.func.grad(f))(m.tensor(np.outer([1, 2], X))),
    lambda m: m.func.vmap(lambda a, b: (a * b).sum(), in_dims=(0, None))(
        m.tensor(np.outer([1, 2, 3], X)), _x(m)),
    lambda m: m.func.vmap(lambda a: (a, a * 2), out_dims=(0, 1))(m.tensor(np.outer([1, 2], X))),
])
def test_transforms_match_torch(transform):
    want, got = _both(transform)
    _close(got, want)


def test_vjp_function():
    res = []
    for m in (torch, vt):
        out, fn = m.func.vjp(lambda x: x.exp() * 2, _x(m))
        res.append((out, fn(m.tensor([1.0, 0.5, -1.0], dtype=m.float64))))
    _close(res[1], res[0])


def test_functional_call_swaps_and_restores():
    res = []
    for m in (torch, vt):
        torch.manual_seed(0)
        lin = m.nn.Linear(3, 2).double()
        before = lin.weight.detach().numpy().copy()
        params = {"weight": m.ones(2, 3, dtype=m.float64), "bias": m.zeros(2, dtype=m.float64)}
        y = m.func.functional_call(lin, params, (_x(m),))
        np.testing.assert_array_equal(lin.weight.detach().numpy(), before)  # restored
        res.append(y)
    np.testing.assert_allclose(res[1].detach().numpy(), res[0].detach().numpy())
    with pytest.raises(AttributeError):
        vt.func.functional_call(vt.nn.Linear(3, 2), {"nope": vt.ones(1)}, (vt.ones(3),))


def test_grad_through_functional_call():
    """The meta-learning pattern: the gradient with respect to swapped-in parameters."""
    res = []
    for m in (torch, vt):
        lin = m.nn.Linear(3, 1).double()
        w = m.ones(1, 3, dtype=m.float64)
        b = m.zeros(1, dtype=m.float64)

        def loss(w, b, m=m, lin=lin):
            return m.func.functional_call(lin, {"weight": w, "bias": b}, (_x(m),)).pow(2).sum()

        res.append(m.func.grad(loss, argnums=(0, 1))(w, b))
    _close(res[1], res[0])
