"""In-place ops: values, version counters, views, autograd rules and saved-tensor checks."""

import numpy as np
import pytest
from vt_helpers import assert_close, check_grad, rand, t64, to_np

import volta_core as vt

T = vt.tensor


def test_arithmetic_inplace_values_and_identity():
    a, b = rand(2, 3), rand(3, seed=1)
    x = t64(a)
    assert x.add_(t64(b)) is x
    assert_close(x, a + b)
    x.sub_(t64(b), alpha=2)
    assert_close(x, a - b)
    x.mul_(3).div_(t64(b))
    assert_close(x, (a - b) * 3 / b)
    x.pow_(2)
    assert_close(x, ((a - b) * 3 / b) ** 2)
    assert x._version[0] == 5
    y = t64(a)
    y.add_(1.0, alpha=0.5)
    assert_close(y, a + 0.5)


def test_python_inplace_operators_keep_the_object():
    x = t64(rand(3))
    ref = to_np(x).copy()
    ident = id(x)
    x += 1
    x -= T(0.5, dtype=vt.float64)
    x *= 2
    x /= 4
    assert id(x) == ident
    assert_close(x, (ref + 0.5) * 2 / 4)
    i = T([1, 2])
    i += 1
    i *= 3
    assert i.dtype == vt.int64 and i.tolist() == [6, 9]


def test_dtype_and_shape_rules():
    i = T([1, 2])
    with pytest.raises(vt.DTypeError, match="can't be cast"):
        i.div_(2)
    with pytest.raises(vt.DTypeError, match="can't be cast"):
        i.add_(0.5)
    f = T([1.0, 2.0])  # float32
    f.add_(T([1.0, 1.0], dtype=vt.float64))
    assert f.dtype == vt.float32 and f.tolist() == [2.0, 3.0]
    with pytest.raises(vt.ShapeError, match="doesn't match the shape"):
        T([1.0, 2.0]).add_(T([[1.0], [2.0]]))


def test_unary_inplace():
    a = rand(4, low=0.1, high=2.0)
    for name, ref in [("exp_", np.exp), ("neg_", np.negative), ("sqrt_", np.sqrt),
                      ("abs_", np.abs), ("sigmoid_", lambda v: 1 / (1 + np.exp(-v))),
                      ("tanh_", np.tanh), ("log_", np.log), ("reciprocal_", np.reciprocal)]:
        x = t64(a)
        assert getattr(x, name)() is x
        assert_close(x, ref(a))


def test_fill_zero_copy_clamp_masked_fill():
    x = t64(rand(2, 3))
    x.fill_(2.5)
    assert_close(x, np.full((2, 3), 2.5))
    x.zero_()
    assert_close(x, np.zeros((2, 3)))
    x.fill_(T(4.0))
    assert_close(x, np.full((2, 3), 4.0))
    x.copy_(T([1, 2, 3]))  # broadcast and cast
    assert x.dtype == vt.float64 and x.tolist() == [[1, 2, 3], [1, 2, 3]]
    x.clamp_(1.5, 2.5)
    assert x.tolist() == [[1.5, 2, 2.5], [1.5, 2, 2.5]]
    x.clamp_(max=2.0)
    assert x.tolist()[0] == [1.5, 2.0, 2.0]
    x.masked_fill_(T([True, False, True]), -1.0)
    assert x.tolist()[1] == [-1.0, 2.0, -1.0]
    i = T([1, 2, 3])
    i.fill_(7.9)
    assert i.tolist() == [7, 7, 7]
    with pytest.raises(vt.ShapeError, match="cannot be broadcast"):
        x.copy_(T([1.0, 2.0]))
    with pytest.raises(vt.ShapeError, match="0-d"):
        x.fill_(T([1.0]))


def test_scatter_index_add_and_random_fills():
    x = T(np.zeros((2, 3)))
    x.index_add_(1, T([0, 0]), T(np.ones((2, 2))))
    assert x.tolist() == [[2, 0, 0], [2, 0, 0]]
    x.scatter_(0, T([[1, 0, 1]]), 5.0)
    assert x.tolist() == [[2, 5, 0], [5, 0, 5]]
    x.scatter_add_(1, T([[2], [2]]), T(np.ones((2, 1))))
    assert x.tolist() == [[2, 5, 1], [5, 0, 6]]
    u = T(np.zeros(1000)).uniform_(-2.0, 3.0)
    assert -2.0 <= to_np(u).min() and to_np(u).max() < 3.0 and u.dtype == vt.float64
    n = T(np.zeros(2000), dtype=vt.float32).normal_(1.0, 0.5)
    assert abs(to_np(n).mean() - 1.0) < 0.1 and n.dtype == vt.float32


def test_writes_are_seen_by_views_without_autograd():
    x = T(np.zeros((2, 3)))
    row = x[1]
    flat = x.view(6)
    x.add_(1)
    assert row.tolist() == [1.0, 1.0, 1.0]
    flat.mul_(3)
    assert x.tolist() == [[3.0] * 3] * 2
    row.zero_()
    assert x.tolist()[1] == [0.0] * 3
    assert x._version[0] == 3 and row._version is x._version
    e = T([1.0]).expand(3)  # its elements overlap: PyTorch refuses to write to it
    with pytest.raises(vt.ShapeError, match="single memory location"):
        e.add_(1)


def test_leaf_requiring_grad_rules():
    w = t64(rand(3)).requires_grad_()
    for op in (lambda: w.add_(1), lambda: w.zero_(), lambda: w.copy_(T(np.ones(3))),
               lambda: w.mul_(2), lambda: w.exp_()):
        with pytest.raises(vt.AutogradError, match="a leaf Variable that requires grad is "
                                                   "being used in an in-place operation"):
            op()
    with pytest.raises(vt.AutogradError, match="leaf Variable"):
        w += 1
    before = to_np(w).copy()
    with vt.no_grad():
        w.sub_(0.1 * T(np.ones(3)))
        w.mul_(2)
    assert_close(w, (before - 0.1) * 2)
    assert w.is_leaf and w.requires_grad and w.grad_fn is None


def test_gradients_through_inplace_on_non_leaf():
    a = rand(3)
    x = t64(a).requires_grad_()
    y = x * 2
    y.add_(1)
    y.mul_(3)
    y.sum().backward()
    assert_close(x.grad, np.full(3, 6.0))

    def f(x, v):
        y = x.clone()
        y.mul_(v)
        y.sin_()  # (exp_ saves its result, which += changes: PyTorch and Volta refuse)
        y += v
        y.masked_fill_(T([False, True, False]), 0.0)
        y.clamp_(max=2.0)
        return y

    check_grad(f, a, rand(3, seed=1))
    check_grad(lambda x: x.clone().copy_(x[0] * 3), a)
    check_grad(lambda x: x.clone().fill_(x[1]), a)

    buf = T(np.zeros(3))  # a constant that becomes part of the graph
    w = t64(a).requires_grad_()
    buf.add_(w * w)
    assert not buf.is_leaf
    buf.sum().backward()
    assert_close(w.grad, 2 * a)


def test_inplace_change_of_a_saved_tensor_raises():
    x = t64(rand(3)).requires_grad_()
    y = x.exp()
    y.add_(1)
    with pytest.raises(vt.AutogradError, match="modified by an in-place operation"):
        y.sum().backward()

    s = (x * 1).sigmoid()
    s.mul_(2)
    with pytest.raises(vt.AutogradError, match="needed by Sigmoid"):
        s.sum().backward()

    h = x * 1
    z = h * x  # Mul saves h
    h.add_(1)
    with pytest.raises(vt.AutogradError, match="modified by an in-place operation"):
        z.sum().backward()

    y = x.exp()
    y.view(3)[0] = 5.0  # through a view: the version counter is shared
    with pytest.raises(vt.AutogradError, match="modified"):
        y.sum().backward()

    y = x.exp()
    with vt.no_grad():
        y.zero_()  # even without recording, backward must not use the new values
    with pytest.raises(vt.AutogradError, match="modified"):
        y.sum().backward()


def test_inplace_that_backward_does_not_need_is_fine():
    x = t64(rand(3)).requires_grad_()
    y = x * 2  # Mul with a Python scalar: backward needs only the scalar
    z = y + 1  # Add saves nothing
    y.add_(1)
    z.sum().backward()
    assert_close(x.grad, np.full(3, 2.0))


def test_augmented_assignment_through_indexing():
    x = vt.zeros(5)
    x[1:3] += 1
    x[[0, 0]] += 2  # read once, write once: duplicates don't accumulate (as in PyTorch)
    assert x.tolist() == [2.0, 1.0, 1.0, 0.0, 0.0]

    def f(w):
        y = w * 1
        y[1:] += w[:-1] * 2
        y[[0, 2]] *= 3
        return y

    check_grad(f, rand(4))


def test_unsqueeze_and_squeeze_in_place_as_pytorch():
    """In-place view ops: a leaf that requires grad is refused, a non-leaf keeps its
    history, a view changes its layout in its base (writes reach the base), and views
    made before stay right."""
    torch = pytest.importorskip("torch")

    def run(lib):
        out = []
        x = lib.ones(2, 3, requires_grad=True)
        with pytest.raises(RuntimeError):
            x.unsqueeze_(0)
        leaf = lib.arange(6.0).reshape(2, 3).requires_grad_()
        y = leaf * 2
        y.unsqueeze_(0)
        (y * lib.arange(6.0).reshape(1, 2, 3)).sum().backward()
        out += [tuple(y.shape), leaf.grad.tolist()]
        z = lib.arange(6.0).reshape(2, 3)
        v = z[0]
        v.unsqueeze_(0)
        v.mul_(10)
        out += [tuple(v.shape), z.tolist()]
        w = lib.ones(1, 3, 1)
        before = w[0]
        w.squeeze_()
        w.add_(1)
        out += [tuple(w.shape), before.tolist()]
        s = lib.ones(1, 3, 1)
        s.squeeze_(0)
        out.append(tuple(s.shape))
        return out

    assert run(vt) == run(torch)


def test_transpose_in_place_shares_memory_as_pytorch():
    """``t_``, ``transpose_``, ``swapdims_``, ``swapaxes_``: the tensor becomes its
    transpose in the same memory, so views made before and the transposed tensor see each
    other's writes; a view transposes its layout in its base; a non-leaf keeps its
    history; a leaf that requires grad is refused; dims are checked."""
    torch = pytest.importorskip("torch")

    def run(lib):
        out = []
        x = lib.arange(6.0).reshape(2, 3)
        v = x[0]
        assert x.t_() is x
        v.fill_(7.0)
        x[2, 1] = -1.0
        out += [tuple(x.shape), x.tolist(), v.tolist(), x.is_contiguous()]
        y = lib.arange(24.0).reshape(2, 3, 4)
        w = y[:, 1]
        y.swapdims_(0, 2)
        w.add_(100)
        y.swapaxes_(1, 0)
        out += [tuple(y.shape), y.tolist()]
        base = lib.arange(6.0).reshape(2, 3)
        z = base[:, :2]
        z.transpose_(0, 1)
        z.mul_(-1)
        out += [z.tolist(), base.tolist()]
        leaf = lib.ones(2, 3, requires_grad=True)
        b = leaf * lib.arange(6.0).reshape(2, 3)
        b.t_()
        (b * lib.arange(6.0).reshape(3, 2)).sum().backward()
        out.append(leaf.grad.tolist())
        with pytest.raises(RuntimeError):
            lib.ones(2, 3, requires_grad=True).t_()
        with pytest.raises((IndexError, RuntimeError, vt.VoltaError)):
            lib.ones(2, 3).transpose_(0, 2)
        with pytest.raises((RuntimeError, vt.VoltaError)):
            lib.ones(2, 3, 4).t_()
        out += [tuple(lib.ones(3).t_().shape), tuple(lib.ones(2, 3, 4).transpose_(1, 1).shape)]
        return out

    assert run(vt) == run(torch)
