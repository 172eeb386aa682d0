"""Elementwise functions against NumPy: values, shapes, dtypes, views, 0-d and empty."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import has

RNG = np.random.default_rng(0)

# name -> (numpy function, input domain (low, high))
UNARY_FLOAT = {
    "exp": (np.exp, (-3, 3)), "log": (np.log, (0.1, 5)), "log2": (np.log2, (0.1, 5)),
    "log10": (np.log10, (0.1, 5)), "exp2": (np.exp2, (-3, 3)), "sqrt": (np.sqrt, (0, 4)),
    "sin": (np.sin, (-4, 4)), "cos": (np.cos, (-4, 4)), "tan": (np.tan, (-1.2, 1.2)),
    "tanh": (np.tanh, (-4, 4)), "sinh": (np.sinh, (-3, 3)), "cosh": (np.cosh, (-3, 3)),
    "asin": (np.arcsin, (-0.99, 0.99)), "acos": (np.arccos, (-0.99, 0.99)),
    "atan": (np.arctan, (-4, 4)), "asinh": (np.arcsinh, (-4, 4)),
    "acosh": (np.arccosh, (1.01, 5)), "atanh": (np.arctanh, (-0.9, 0.9)),
    "log1p": (np.log1p, (-0.5, 3)), "expm1": (np.expm1, (-2, 2)),
}
UNARY_SAME = {
    "abs": np.abs, "negative": np.negative, "square": np.square, "sign": np.sign,
    "floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
    "positive": np.positive,
}


@pytest.mark.parametrize("name", sorted(UNARY_FLOAT))
def test_unary_float(xp, check, variants, name):
    fn, (lo, hi) = UNARY_FLOAT[name]
    a = RNG.uniform(lo, hi, (3, 5)).astype(np.float32)
    for _, x, ref in variants(a, xp):
        check(getattr(xp, name)(x), fn(ref), rtol=3e-4, atol=3e-6)
    check(getattr(xp, name)(xp.asarray(a[0, 0])), fn(a[0, 0]), rtol=3e-4, atol=3e-6)
    check(getattr(xp, name)(xp.asarray(a[:0])), fn(a[:0]))                    # empty


@pytest.mark.parametrize("name", ["sinh", "cosh"])
def test_sinh_cosh_stay_finite_up_to_float32_max(xp, check, name):
    # e^|x| overflows from 88.7, sinh/cosh only from 89.4 (PyTorch: 2.28e38 at 89.017)
    a = np.array([89.017, -89.017, 88.0, 89.5, -90.0, 85.0, 10.0], dtype=np.float32)
    check(getattr(xp, name)(xp.asarray(a)), getattr(np, name)(a.astype(np.float64)
                                                            ).astype(np.float32), rtol=3e-5)


@pytest.mark.parametrize("name", sorted(UNARY_SAME))
def test_unary_same_dtype(xp, check, variants, name):
    fn = UNARY_SAME[name]
    a = (RNG.uniform(-5, 5, (4, 3)).astype(np.float32))
    a[0, 0], a[0, 1] = 2.5, -0.5   # round half to even
    for _, x, ref in variants(a, xp):
        check(getattr(xp, name)(x), fn(ref))
    i = RNG.integers(-9, 9, (2, 3)).astype(np.int32)
    check(getattr(xp, name)(xp.asarray(i)), fn(i))


def test_int_input_promotes_to_float32(xp, check):
    i = np.arange(1, 5, dtype=np.int32)
    check(xp.exp(xp.asarray(i)), np.exp(i).astype(np.float32), rtol=1e-5)


def test_predicates(xp, check):
    a = np.array([1.0, np.nan, np.inf, -np.inf, 0.0, -2.5], dtype=np.float32)
    x = xp.asarray(a)
    check(xp.isnan(x), np.isnan(a))
    check(xp.isinf(x), np.isinf(a))
    check(xp.isfinite(x), np.isfinite(a))
    check(xp.isnan(xp.asarray(np.arange(3, dtype=np.int32))), np.zeros(3, bool))
    b = np.array([True, False, True])
    check(xp.logical_not(xp.asarray(b)), ~b)
    check(xp.bitwise_invert(xp.asarray(b)), ~b)
    check(~xp.asarray(np.array([1, -3], np.int32)), ~np.array([1, -3], np.int32))


BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "remainder": np.remainder,
    "atan2": np.arctan2, "pow": np.power, "floor_divide": np.floor_divide,
    "hypot": np.hypot, "copysign": np.copysign,
}
COMPARE = {
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less,
    "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_float(xp, check, name):
    fn = BINARY[name]
    a = RNG.uniform(-3, 3, (4, 1, 3)).astype(np.float32)
    b = RNG.uniform(0.5, 2, (5, 3)).astype(np.float32)
    if name == "pow":
        a = np.abs(a) + 0.1
    check(getattr(xp, name)(xp.asarray(a), xp.asarray(b)), fn(a, b), rtol=3e-5, atol=1e-5)
    # strided second operand, scalar on either side
    bt = np.ascontiguousarray(b.T)
    check(getattr(xp, name)(xp.asarray(a), xp.asarray(bt).T), fn(a, b), rtol=3e-5, atol=1e-5)
    check(getattr(xp, name)(xp.asarray(a), 1.5), fn(a, np.float32(1.5)), rtol=3e-5,
          atol=1e-5)
    check(getattr(xp, name)(2.0, xp.asarray(b)), fn(np.float32(2.0), b), rtol=3e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum",
                                  "remainder", "floor_divide", "pow"])
def test_binary_int(xp, check, name):
    fn = BINARY[name]
    a = RNG.integers(-20, 20, (3, 4)).astype(np.int32)
    b = RNG.integers(1, 6, (4,)).astype(np.int32)
    b[1] = -3
    if name == "pow":
        b = np.abs(b)
    check(getattr(xp, name)(xp.asarray(a), xp.asarray(b)), fn(a, b))
    check(getattr(xp, name)(xp.asarray(a), 3), fn(a, np.int32(3)))


def test_float_special_values(xp, check):
    a = np.array([np.nan, 1.0, -2.0, 0.0, -8.0, 0.0], dtype=np.float32)
    b = np.array([1.0, np.nan, 3.0, -1.0, 1 / 3, 0.0], dtype=np.float32)
    x, y = xp.asarray(a), xp.asarray(b)
    check(xp.maximum(x, y), np.maximum(a, b))
    check(xp.minimum(x, y), np.minimum(a, b))
    with np.errstate(all="ignore"):
        check(xp.pow(x, y), np.power(a, b))
        check(xp.pow(x, 2.0), np.power(a, np.float32(2)))


@pytest.mark.parametrize("name", sorted(COMPARE))
def test_compare(xp, check, name):
    fn = COMPARE[name]
    a = RNG.integers(0, 3, (3, 4)).astype(np.float32)
    b = RNG.integers(0, 3, (4,)).astype(np.int32)
    check(getattr(xp, name)(xp.asarray(a), xp.asarray(b)), fn(a, b))
    check(getattr(xp, name)(xp.asarray(a), 1), fn(a, 1))


def test_logical_and_bitwise(xp, check):
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    x, y = xp.asarray(a), xp.asarray(b)
    check(xp.logical_and(x, y), a & b)
    check(xp.logical_or(x, y), a | b)
    check(xp.logical_xor(x, y), a ^ b)
    check(x & y, a & b)
    check(x ^ y, a ^ b)
    i = np.array([5, 12, -7], np.int32)
    j = np.array([3, 10, 2], np.int32)
    check(xp.asarray(i) | xp.asarray(j), i | j)
    check(xp.asarray(i) << xp.asarray(j), i << j)
    check(xp.asarray(i) >> xp.asarray(j), i >> j)


def test_type_promotion(xp):
    f, i, u, b = (xp.asarray(np.ones(2, t)) for t in (np.float32, np.int32, np.uint32, bool))
    assert (f + i).dtype == xp.float32
    assert (i + 1.5).dtype == xp.float32
    assert (i + 2).dtype == xp.int32
    assert (b + 1).dtype == xp.result_type(xp.bool, 1)
    assert (u * 2).dtype == xp.uint32
    assert (i / 2).dtype == xp.float32
    assert xp.result_type(xp.float32, xp.int32) == xp.float32


def test_operators_and_inplace(xp, check):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = xp.asarray(a)
    check(-x + 1 - 2 * x / 4 ** x % 3, -a + 1 - 2 * a / 4 ** a % 3, rtol=1e-5)
    check(1 / (x + 1), 1 / (a + 1))
    check((x > 2) | (x < 1), (a > 2) | (a < 1))
    y = x
    x += 1
    x *= xp.asarray(np.array([1, 2, 3], np.float32))
    x -= 0.5
    x /= 2
    assert y is x
    check(x, (((a + 1) * np.array([1, 2, 3]) - 0.5) / 2).astype(np.float32))
    v = xp.asarray(a)[:, ::2]   # in-place on a strided view writes through
    base = xp.asarray(a)
    view = base[:, ::2]
    view += 10
    exp = a.copy()
    exp[:, ::2] += 10
    check(base, exp)
    assert v.shape == (2, 2)


def test_where_clip_astype(xp, check):
    a = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    x = xp.asarray(a)
    check(xp.where(x > 0, x, 0.0), np.where(a > 0, a, np.float32(0)))
    check(xp.where(x > 0, 1.0, -1.0), np.where(a > 0, 1.0, -1.0).astype(np.float32))
    check(xp.clip(x, -1, 1.5), np.clip(a, -1, 1.5))
    check(xp.clip(x, max=0.5), np.clip(a, None, 0.5))
    check(xp.astype(x, xp.int32), a.astype(np.int32))
    check(xp.astype(x, xp.bool), a.astype(bool))
    check(xp.astype(xp.asarray(a > 0), xp.float32), (a > 0).astype(np.float32))
    check(xp.astype(x.T, xp.uint32)[1:], np.abs(a).T.astype(np.uint32)[1:] * 0 +
          a.T.clip(0).astype(np.uint32)[1:])


@pytest.mark.parametrize("dtype", ["float16", "float64", "int64"])
def test_optional_dtypes(xp, check, dtype):
    if not has(dtype):
        pytest.skip(f"adapter lacks {dtype}")
    a = np.linspace(0.1, 3, 8).astype(dtype).reshape(2, 4)
    b = np.linspace(-1, 1, 4).astype(dtype)
    x, y = xp.asarray(a), xp.asarray(b)
    tol = dict(rtol=2e-3, atol=1e-3) if dtype == "float16" else dict(rtol=1e-12, atol=1e-12)
    check(x + y, a + b, **tol)
    check(x * 2, a * 2, **tol)
    check(xp.sum(x, axis=1), np.sum(a, axis=1), **tol)
    if dtype != "int64":
        for name in ("exp", "log", "sin", "cos", "tanh", "sqrt", "expm1", "log1p", "atan"):
            check(getattr(xp, name)(x), getattr(np, name if name != "atan" else "arctan")(a),
                  **(tol if dtype == "float16" else dict(rtol=1e-13, atol=1e-15)))
        check(xp.pow(x, y), np.power(a, b), **(tol if dtype == "float16" else
                                              dict(rtol=1e-13)))
        check(xp.atan2(y, x), np.arctan2(b, a), **(tol if dtype == "float16" else
                                                  dict(rtol=1e-13)))
