"""diff, diagonal, trace, cross and Tensor.maximum_ against NumPy, with float64 gradchecks."""

from __future__ import annotations

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
