"""diff, diagonal, trace, cross and Tensor.maximum_ against NumPy, with float64 gradchecks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from vt_helpers import assert_close, check_grad, rand

import volta_core as vt


@pytest.mark.parametrize("n,dim", [(1, -1), (2, 0), (3, 1), (0, 1)])
def test_diff_matches_numpy(n, dim):
    x = rand(4, 5)
    assert_close(vt.diff(vt.tensor(x), n=n, dim=dim), np.diff(x, n=n, axis=dim))
    if n:
        check_grad(lambda t: vt.diff(t, n=n, dim=dim), x)


def test_diff_prepend_append_and_bool():
    x, pre, app = rand(3, 4), rand(3, 1, seed=1), rand(3, 2, seed=2)
    want = np.diff(x, axis=1, prepend=pre, append=app)
    got = vt.diff(vt.tensor(x), dim=1, prepend=vt.tensor(pre), append=vt.tensor(app))
    assert_close(got, want)
    check_grad(lambda a, b, c: a.diff(dim=1, prepend=b, append=c), x, pre, app)
    b = np.array([True, False, False, True])
    assert_close(vt.diff(vt.tensor(b)), np.diff(b))
    with pytest.raises(vt.ShapeError, match="diff"):
        vt.diff(vt.tensor(1.0))


@pytest.mark.parametrize("offset,d1,d2", [(0, 0, 1), (1, 0, 1), (-2, 0, 1), (1, 2, 0),
                                          (0, -1, -2), (9, 0, 1)])
def test_diagonal_matches_numpy(offset, d1, d2):
    x = rand(4, 5, 3) if d1 == 2 or d2 == -2 else rand(4, 5)
    want = np.diagonal(x, offset, d1, d2)
    assert_close(vt.diagonal(vt.tensor(x), offset, d1, d2), want)
    if want.size:
        check_grad(lambda t: t.diagonal(offset, d1, d2), x)


def test_diagonal_errors():
    with pytest.raises(vt.ShapeError, match="diagonal"):
        vt.diagonal(vt.zeros(3))
    with pytest.raises(ValueError, match="dim1"):
        vt.diagonal(vt.zeros(3, 3), 0, 1, -1)


def test_trace():
    x = rand(4, 6)
    assert_close(vt.trace(vt.tensor(x)), np.trace(x))
    check_grad(vt.trace, x)
    with pytest.raises(vt.ShapeError, match="trace"):
        vt.trace(vt.zeros(2, 2, 2))


@pytest.mark.parametrize("shapes,dim", [(((4, 3), (4, 3)), 1), (((3, 2), (3, 1)), 0),
                                        (((2, 3), (3,)), -1), (((5, 3), (5, 3)), None)])
def test_cross_matches_numpy(shapes, dim):
    a, b = rand(*shapes[0]), rand(*shapes[1], seed=1)
    axis = -1 if dim is None else dim
    want = np.cross(a, b, axis=axis) if dim is not None else np.cross(a, b)
    assert_close(vt.cross(vt.tensor(a), vt.tensor(b), dim=dim), want)
    check_grad(lambda s, t: s.cross(t, dim=dim), a, b)


def test_cross_errors():
    with pytest.raises(vt.ShapeError, match="size 3"):
        vt.cross(vt.zeros(2, 4), vt.zeros(2, 4))
    with pytest.raises(vt.ShapeError, match="dimension 0"):
        vt.cross(vt.zeros(2, 3), vt.zeros(2, 3), dim=0)


def test_maximum_inplace():
    x, y = rand(3, 4), rand(4, seed=1)
    t = vt.tensor(x)
    out = t.maximum_(vt.tensor(y))
    assert out is t
    assert_close(t, np.maximum(x, y))
    assert t._version[0] == 1
    # recorded under autograd on a non-leaf: gradient flows to both operands
    a, b = vt.tensor(x, requires_grad=True), vt.tensor(y, requires_grad=True)
    z = a * 1.0
    z.maximum_(b)
    z.sum().backward()
    assert_close(a.grad, (x > y).astype(float))  # random data: no ties
    assert_close(b.grad, (y > x).astype(float).sum(0))
    with pytest.raises(vt.AutogradError, match="maximum_"):
        vt.tensor(x, requires_grad=True).maximum_(vt.tensor(y))


def _torch_spacing(spacing):
    import torch

    if isinstance(spacing, (list, tuple)) and spacing and isinstance(spacing[0], vt.Tensor):
        return tuple(torch.tensor(c.numpy()) for c in spacing)
    return spacing


@pytest.mark.parametrize("shape,kw", [
    ((5,), {}), ((5,), {"spacing": 2.0}), ((5,), {"edge_order": 2}),
    ((5,), {"spacing": (vt.tensor([0.0, 1.0, 1.5, 3.5, 4.0], dtype=vt.float64),)}),
    ((5,), {"spacing": (vt.tensor([0.0, 1.0, 1.5, 3.5, 4.0], dtype=vt.float64),),
            "edge_order": 2}),
    ((3, 4), {}), ((3, 4), {"dim": 1}), ((3, 4), {"dim": -2, "edge_order": 2}),
    ((3, 4), {"spacing": [2.0, 3.0]}), ((3, 4), {"spacing": 0.5, "dim": (1, 0)}),
    ((3, 4, 2), {"spacing": (vt.tensor([0.0, 2.0, 3.0], dtype=vt.float64),
                             vt.tensor([0.0, 1.0, 3.0, 7.0], dtype=vt.float64)),
                 "dim": (0, 1), "edge_order": 2}),
])
def test_gradient_matches_pytorch(shape, kw):
    """torch.gradient (NumPy's): central differences inside, one-sided of order 1 or 2 at
    the ends, uniform or coordinate spacing; values and the gradient through it."""
    torch = pytest.importorskip("torch")
    x = rand(*shape)
    got = vt.gradient(vt.tensor(x), **kw)
    want = torch.gradient(torch.tensor(x), **{**kw, **(
        {"spacing": _torch_spacing(kw["spacing"])} if "spacing" in kw else {})})
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype is vt.float64 and tuple(g.shape) == tuple(w.shape)
        assert_close(g, w.numpy())
    check_grad(lambda t: sum(vt.gradient(t, **kw)), x)


def test_gradient_ints_and_errors():
    torch = pytest.importorskip("torch")
    got = vt.gradient(vt.tensor([1, 4, 9, 16, 25]))[0]
    want = torch.gradient(torch.tensor([1, 4, 9, 16, 25]))[0]
    assert got.dtype is vt.float32 and got.tolist() == want.tolist()
    with pytest.raises(vt.ShapeError, match="edge_order"):
        vt.gradient(vt.tensor([1.0, 2.0]), edge_order=2)
    with pytest.raises(vt.ShapeError, match="same length"):
        vt.gradient(vt.ones(3, 4), spacing=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="edge_order"):
        vt.gradient(vt.ones(4), edge_order=3)


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dim", [0, 1])
def test_index_reduce_matches_pytorch(reduce, include_self, dim):
    """index_reduce: values and both gradients as PyTorch's (scatter_reduce underneath)."""
    torch = pytest.importorskip("torch")
    x, src = rand(3, 4), rand(*((5, 4) if dim == 0 else (3, 5)), seed=1)
    idx = [0, 2, 0, 1, 2] if dim == 0 else [3, 1, 3, 0, 1]
    vx, vs = vt.tensor(x, requires_grad=True), vt.tensor(src, requires_grad=True)
    tx, ts = torch.tensor(x, requires_grad=True), torch.tensor(src, requires_grad=True)
    got = vt.index_reduce(vx, dim, vt.tensor(idx), vs, reduce, include_self=include_self)
    with warnings.catch_warnings():  # PyTorch: index_reduce is in beta
        warnings.simplefilter("ignore", UserWarning)
        want = tx.index_reduce(dim, torch.tensor(idx), ts, reduce, include_self=include_self)
    assert_close(got, want.detach().numpy())
    g = rand(3, 4, seed=2)
    got.backward(vt.tensor(g))
    want.backward(torch.tensor(g))
    assert_close(vx.grad, tx.grad.numpy())
    assert_close(vs.grad, ts.grad.numpy())
    y = vt.tensor(x)
    assert y.index_reduce_(dim, vt.tensor(idx), vt.tensor(src), reduce,
                           include_self=include_self) is y
    assert_close(y, want.detach().numpy())
    with pytest.raises(ValueError, match="prod, mean, amax or amin"):
        vt.index_reduce(vt.tensor(x), 0, vt.tensor([0]), vt.ones(1, 4, dtype=vt.float64), "sum")
    with pytest.raises(vt.ShapeError, match="source"):
        vt.index_reduce(vt.tensor(x), 0, vt.tensor([0, 1]), vt.ones(1, 4, dtype=vt.float64),
                        reduce)
