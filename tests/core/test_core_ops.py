"""Forward (against NumPy) and float64 gradcheck of every op of the core issue."""

import numpy as np
import pytest
from vt_helpers import assert_close, check_grad, leaves, rand

import volta_core as vt
from volta_core.errors import DTypeError, ShapeError

# name -> (volta function, numpy reference, input domain (low, high))
UNARY = {
    "neg": (vt.neg, np.negative, (-2, 2)),
    "reciprocal": (vt.reciprocal, np.reciprocal, (0.5, 2)),
    "sqrt": (vt.sqrt, np.sqrt, (0.1, 2)),
    "exp": (vt.exp, np.exp, (-2, 2)),
    "exp2": (vt.exp2, np.exp2, (-2, 2)),
    "log": (vt.log, np.log, (0.1, 2)),
    "log2": (vt.log2, np.log2, (0.1, 2)),
    "sin": (vt.sin, np.sin, (-3, 3)),
    "cos": (vt.cos, np.cos, (-3, 3)),
    "tanh": (vt.tanh, np.tanh, (-2, 2)),
    "sigmoid": (vt.sigmoid, lambda a: 1 / (1 + np.exp(-a)), (-4, 4)),
    "relu": (vt.relu, lambda a: np.maximum(a, 0), (-2, 2)),
    "abs": (vt.abs, np.abs, (-2, 2)),
}

BINARY = {
    "add": (vt.add, np.add, (-2, 2), (-2, 2)),
    "sub": (vt.sub, np.subtract, (-2, 2), (-2, 2)),
    "mul": (vt.mul, np.multiply, (-2, 2), (-2, 2)),
    "div": (vt.div, np.divide, (-2, 2), (0.5, 2)),
    "pow": (vt.pow, np.power, (0.5, 2), (-2, 2)),
    "maximum": (vt.maximum, np.maximum, (-2, 2), (-2, 2)),
    "minimum": (vt.minimum, np.minimum, (-2, 2), (-2, 2)),
    "remainder": (vt.remainder, np.mod, (-3, 3), (0.7, 1.3)),
}

SHAPES = [(), (1,), (3, 4), (2, 1, 3)]
BROADCAST = [((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((), (2, 3)), ((3, 1), (1, 5)), ((1,), ())]


def _data(shape, dom, seed=0):
    return rand(*shape, seed=seed, low=dom[0], high=dom[1])


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_forward_and_grad(name, shape):
    fn, ref, dom = UNARY[name]
    a = _data(shape, dom)
    assert_close(fn(vt.tensor(a)), ref(a), rtol=1e-12, atol=1e-12, dtype="float64")
    a32 = a.astype(np.float32)
    assert_close(fn(vt.tensor(a32)), ref(a32), rtol=1e-6, atol=1e-6, dtype="float32")
    if name not in ("relu", "abs") or shape:  # kinks at 0 are not hit with random data
        check_grad(fn, a)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_empty(name):
    fn, ref, _ = UNARY[name]
    a = np.zeros((0, 3))
    out = fn(vt.tensor(a, requires_grad=True))
    assert out.shape == (0, 3)
    out.sum().backward()


@pytest.mark.parametrize("shapes", [((), ()), ((3, 4), (3, 4))] + BROADCAST)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_forward_and_grad(name, shapes):
    fn, ref, da, db = BINARY[name]
    a, b = _data(shapes[0], da, 1), _data(shapes[1], db, 2)
    assert_close(fn(vt.tensor(a), vt.tensor(b)), ref(a, b), rtol=1e-12, atol=1e-12)
    check_grad(fn, a, b)


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_with_python_scalars(name):
    fn, ref, da, db = BINARY[name]
    a = _data((2, 3), da, 3).astype(np.float32)
    s = 1.25
    if name in ("maximum", "minimum"):  # PyTorch takes tensors only (clamp takes numbers)
        with pytest.raises(TypeError):
            fn(vt.tensor(a), s)
        return
    assert_close(fn(vt.tensor(a), s), ref(a, np.float32(s)), rtol=1e-6, dtype="float32")
    if name != "pow":
        assert_close(fn(s, vt.tensor(a + 3)), ref(np.float32(s), a + 3), rtol=1e-6,
                     dtype="float32")
    check_grad(lambda x: fn(x, s), _data((2, 3), da, 4))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_empty(name):
    fn, _, _, _ = BINARY[name]
    a, b = vt.zeros(0, 3, requires_grad=True), vt.ones(3, requires_grad=True)
    out = fn(a, b)
    assert out.shape == (0, 3)
    out.sum().backward()
    assert_close(b.grad, np.zeros(3, dtype=np.float32))


def test_python_operators_match_functions():
    a, b = rand(2, 3, seed=1) + 3, rand(2, 3, seed=2) + 2
    x, y = vt.tensor(a), vt.tensor(b)
    assert_close(x + y, a + b)
    assert_close(x - y, a - b)
    assert_close(x * y, a * b)
    assert_close(x / y, a / b)
    assert_close(x ** y, a ** b)
    assert_close(x % y, np.mod(a, b))
    assert_close(-x, -a)
    assert_close(2 + x, 2 + a)
    assert_close(2 - x, 2 - a)
    assert_close(2 * x, 2 * a)
    assert_close(2 / x, 2 / a)
    assert_close(2 ** x, 2 ** a)
    assert_close(x @ y.T, a @ b.T)
    assert_close(abs(-x), a)


@pytest.mark.parametrize("op", ["lt", "le", "gt", "ge", "eq", "ne"])
def test_comparisons(op):
    a = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    b = np.array([2.0, 2.0, 2.0])
    ref = getattr(np, {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                       "eq": "equal", "ne": "not_equal"}[op])
    x = vt.tensor(a, requires_grad=True)
    out = getattr(vt, op)(x, vt.tensor(b))
    assert_close(out, ref(a, b), dtype="bool")
    assert not out.requires_grad
    assert_close(getattr(vt, op)(x, 2.0), ref(a, 2.0), dtype="bool")


def test_comparison_operators():
    x = vt.tensor([1, 2, 3])
    assert (x < 2).tolist() == [True, False, False]
    assert (x >= 2).tolist() == [False, True, True]
    assert (x == 2).tolist() == [False, True, False]
    assert (x != 2).tolist() == [True, False, True]
    assert (2 < x).tolist() == [False, False, True]


def test_where_forward_and_grad():
    cond = rand(3, 4, seed=5) > 0
    a, b = rand(3, 4, seed=6), rand(4, seed=7)
    assert_close(vt.where(vt.tensor(cond), vt.tensor(a), vt.tensor(b)), np.where(cond, a, b))
    assert_close(vt.where(vt.tensor(cond), vt.tensor(a), 0.0), np.where(cond, a, 0.0))
    check_grad(lambda x, y: vt.where(vt.tensor(cond), x, y), a, b)
    with pytest.raises(DTypeError, match="condition must be a bool"):
        vt.where(vt.tensor(a), vt.tensor(a), vt.tensor(a))


REDUCE_DIMS = [None, 0, 1, -1, (0, 2), (0, 1, 2)]


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", REDUCE_DIMS)
@pytest.mark.parametrize("name", ["sum", "mean"])
def test_sum_mean(name, dim, keepdim):
    a = rand(2, 3, 4, seed=8)
    fn = getattr(vt, name)
    ref = getattr(np, name)(a, axis=dim, keepdims=keepdim)
    assert_close(fn(vt.tensor(a), dim=dim, keepdim=keepdim), ref, rtol=1e-12)
    check_grad(lambda x: fn(x, dim=dim, keepdim=keepdim), a)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min(name, dim, keepdim):
    a = rand(3, 4, seed=9)
    fn = getattr(vt, name)
    ref = getattr(np, name)(a, axis=dim, keepdims=keepdim)
    if dim is None:
        assert_close(fn(vt.tensor(a)), getattr(np, name)(a))
        check_grad(fn, a)
        return
    values, indices = fn(vt.tensor(a), dim=dim, keepdim=keepdim)
    assert_close(values, ref)
    arg = getattr(np, "arg" + name)(a, axis=dim)
    assert_close(indices, np.expand_dims(arg, dim) if keepdim else arg, dtype="int64")
    check_grad(lambda x: fn(x, dim=dim, keepdim=keepdim).values, a)


def test_max_splits_gradient_between_ties():
    x = vt.tensor([1.0, 3.0, 3.0], requires_grad=True)
    x.max().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5]


def test_reductions_of_0d_and_empty():
    s = vt.tensor(2.5, requires_grad=True)
    assert s.sum().item() == 2.5 and s.mean().item() == 2.5 and s.max().item() == 2.5
    e = vt.zeros(0, 3)
    assert_close(e.sum(dim=0), np.zeros(3, dtype=np.float32))
    assert e.sum().item() == 0.0
    with pytest.raises(ShapeError, match="max: cannot reduce an empty tensor"):
        e.max()


def test_integer_sum_is_int64_and_mean_requires_float():
    x = vt.tensor([1, 2, 3], dtype="int32")
    assert x.sum().dtype is vt.int64 and x.sum().item() == 6
    with pytest.raises(DTypeError, match="mean: input dtype must be floating"):
        x.mean()


@pytest.mark.parametrize("sa,sb", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                   ((5, 2, 3), (3, 4)), ((2, 1, 2, 3), (4, 3, 2)),
                                   ((2, 3), (4, 3, 2))])
def test_matmul(sa, sb):
    a, b = rand(*sa, seed=10), rand(*sb, seed=11)
    assert_close(vt.matmul(vt.tensor(a), vt.tensor(b)), np.matmul(a, b), rtol=1e-12)
    check_grad(vt.matmul, a, b)


def test_matmul_shape_error_names_both_shapes():
    with pytest.raises(ShapeError, match=r"matmul: shapes \(2, 3\) and \(4, 5\)"):
        vt.ones(2, 3) @ vt.ones(4, 5)


def test_transpose_T_mT_reshape():
    a = rand(2, 3, 4, seed=12)
    x = vt.tensor(a)
    assert_close(x.transpose(0, 2), a.transpose(2, 1, 0))
    assert_close(x.mT, np.swapaxes(a, -1, -2))
    assert_close(x.T, a.T)
    assert_close(x.reshape(4, -1), a.reshape(4, -1))
    assert_close(x.reshape((6, 4)), a.reshape(6, 4))
    check_grad(lambda t: t.transpose(0, 1).reshape(3, 8), a)
    check_grad(lambda t: t.mT, a)
    with pytest.raises(ShapeError, match=r"reshape: shape \(5, -1\) is invalid for input of "
                                         r"size 24"):
        x.reshape(5, -1)


def test_composite_expression_grad():
    a, b = rand(3, 4, seed=13), rand(4, 2, seed=14)

    def f(x, w):
        h = (x @ w).tanh() * 2 + (x.exp() - 1).sum(dim=1, keepdim=True) / 3
        return (h.sigmoid() ** 2).mean()

    check_grad(f, a, b)


def test_mixed_dtype_promotion_in_binary_ops():
    f32, f64 = vt.ones(2), vt.ones(2, dtype="float64")
    i64 = vt.tensor([1, 2])
    assert (f32 + f64).dtype is vt.float64
    assert (i64 + f32).dtype is vt.float32
    assert (i64 + 1.5).dtype is vt.float32
    assert (i64 * 2).dtype is vt.int64
    assert (i64 / 2).dtype is vt.float32
    assert (f32 + vt.tensor(1.0, dtype="float64")).dtype is vt.float32  # 0-d doesn't widen
    x = leaves(np.ones(2))[0]
    (x * vt.ones(2)).sum().backward()  # float64 leaf times float32: grad stays float64
    assert x.grad.dtype is vt.float64
