"""``vt.autograd.functional`` against ``torch.autograd.functional``: vjp, jvp, jacobian,
hessian, vhp and hvp with one or several inputs and outputs, ``create_graph`` and
``strict``, in float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import volta_core as vt

X = np.array([0.3, -1.1, 0.8])
Y = np.array([[0.5, 2.0], [-0.4, 1.3]])
V3 = np.array([1.0, -0.5, 2.0])


def _f1(m):
    return lambda x: x.sin() * x.exp() + x ** 3


def _f2(m):
    return lambda x, y: (x.sum() * y.tanh(), (x * x).sum() + y.sum())


def _scalar(m):
    return lambda x: (x ** 3).sum() + x.prod() + (x.sin() * x).sum()


def _tensors(m, *arrays):
    return tuple(m.tensor(a, dtype=m.float64) for a in arrays)


def _close(got, want):
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
        return
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12,
                               atol=1e-14)


@pytest.mark.parametrize("fn", ["vjp", "jvp"])
def test_vjp_and_jvp(fn):
    for case in ("one", "two"):
        res = []
        for m in (torch, vt):
            F = m.autograd.functional
            if case == "one":
                (x,) = _tensors(m, X)
                v = _tensors(m, V3)[0]
                res.append(getattr(F, fn)(_f1(m), x, v))
            else:
                x, y = _tensors(m, X, Y)
                if fn == "vjp":
                    v = _tensors(m, np.ones((2, 2)), np.array(1.5))
                else:
                    v = _tensors(m, V3, np.ones((2, 2)))
                res.append(getattr(F, fn)(_f2(m), (x, y), v))
        _close(res[1], res[0])


def test_jacobian_shapes_and_values():
    for make, arrays in ((_f1, (X,)), (_f2, (X, Y))):
        res = []
        for m in (torch, vt):
            ins = _tensors(m, *arrays)
            res.append(m.autograd.functional.jacobian(make(m), ins if len(ins) > 1
                                                      else ins[0]))
        _close(res[1], res[0])


def test_hessian_vhp_hvp():
    res = []
    for m in (torch, vt):
        F = m.autograd.functional
        (x,) = _tensors(m, X)
        (v,) = _tensors(m, V3)
        res.append((F.hessian(_scalar(m), x), F.vhp(_scalar(m), x, v), F.hvp(_scalar(m), x, v)))
    _close(res[1], res[0])
    res = []
    for m in (torch, vt):  # two inputs: a tuple of tuples
        x, y = _tensors(m, X, Y)
        res.append(m.autograd.functional.hessian(lambda a, b: (a.sum() * b).sum() + (a ** 4).sum(),
                                                 (x, y)))
    _close(res[1], res[0])


def test_create_graph_keeps_the_result_differentiable():
    res = []
    for m in (torch, vt):
        (x,) = _tensors(m, X)
        x.requires_grad_()
        jac = m.autograd.functional.jacobian(_f1(m), x, create_graph=True)
        (g,) = m.autograd.grad(jac.sum(), x)
        res.append(g)
    _close(res[1], res[0])


def test_strict_refuses_an_independent_input():
    for m in (torch, vt):
        x, y = _tensors(m, X, Y)
        with pytest.raises(RuntimeError):
            m.autograd.functional.jacobian(lambda a, b: a * 2, (x, y), strict=True)
        jac = m.autograd.functional.jacobian(lambda a, b: a * 2, (x, y))
        assert float(jac[1].abs().sum()) == 0.0


def test_grad_materialize_grads():
    for m in (torch, vt):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        z = m.tensor([1.0], requires_grad=True)
        gx, gz = m.autograd.grad((x * x).sum(), [x, z], materialize_grads=True)
        assert gx.tolist() == [2.0, 4.0] and gz.tolist() == [0.0]
