"""Elementwise functions of the Array API: unary, binary, ``where``, ``clip``, ``astype``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as D
from .._errors import DTypeError
from ..array import Array
from ..dtypes import DType
from ..kernels.f64_math import F64_NAMES
from ..kernels.mapkernel import launch_map

_SCALARS = (bool, int, float)


def _check(x: Any, op: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{op}: expected a volta_wgpu Array, got {type(x).__name__}; "
                        f"convert it with volta_wgpu.asarray")
    return x


# WGSL lacks log10; lavapipe's asin/acos are only accurate to ~1e-4, atan is fine
_F32_FN = {"log10": "log10_{T}", "asin": "asin_{T}", "acos": "acos_{T}"}


def _fn(name: str, t: DType) -> str:
    """The WGSL function (or helper) implementing float function ``name`` for ``t``."""
    if t is D.float64:
        return F64_NAMES.get(name, name)
    if t is D.float32 and name in ("sin", "cos", "tan"):  # exact argument reduction
        return f"f{name}_f32"
    return _F32_FN.get(name, name).replace("{T}", t.wgsl)


# -- unary ------------------------------------------------------------------------------
# float functions: integer/bool inputs are promoted to float32 (as PyTorch does)
_FLOAT_UNARY = ("exp", "log", "exp2", "log2", "sqrt", "sin", "cos", "tan", "tanh", "sinh",
                "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "log10")


# odd functions with f(0) = 0: the built-ins may lose the sign of a zero, so a zero
# input is returned as it is (-0 stays -0, as IEEE 754 and the standard require)
_KEEP_ZERO = ("sin", "tan", "tanh", "sinh", "asin", "atan", "asinh", "atanh")
# near 0 the built-ins (lavapipe's at least) lose every digit (tanh(1e-8) gave 3e-8,
# asinh(1e-8) 0): there the odd Taylor series x (1 + c1 x^2 + c2 x^4), exact to the
# dtype's precision below 2^-4 (float32) or 2^-9 (float64)
_SERIES = {"tanh": (-1 / 3, 2 / 15), "sinh": (1 / 6, 1 / 120), "asinh": (-1 / 6, 3 / 40),
           "atanh": (1 / 3, 1 / 5)}
# where x^2 overflows in the built-ins: asinh(x) = sign(x) (log|x| + log 2), acosh alike
_LARGE = ("asinh", "acosh")
# logarithms near 1, as log1p(x - 1) times the base's factor
_NEAR_ONE = {"log": 1.0, "log2": 1.4426950408889634, "log10": 0.4342944819032518}
# where the result is NaN (tested on the argument {0})
_DOMAIN = {"acosh": "{{0}} < {T}(1)", "atanh": "abs({{0}}) > {T}(1)", "log": "{{0}} < {T}(0)",
           "log2": "{{0}} < {T}(0)", "log10": "{{0}} < {T}(0)", "sqrt": "{{0}} < {T}(0)"}


def _float_unary(name: str):
    def fn(x: Array, /) -> Array:
        x = _check(x, name)
        out = x.dtype if x.dtype.kind == "f" else D.float32
        # float16 computes in float32 and rounds once, as PyTorch does (native float16
        # sin/tan on NVIDIA lose digits, and the float32 ones reduce arguments exactly)
        t = D.float32 if out is D.float16 else out
        f = _fn(name, t)
        helpers = (f.rsplit("_", 1)[0],) if f.endswith("_" + t.wgsl) else ()
        expr = f"{f}({{0}})"
        if name in ("sinh", "cosh") and t is not D.float64:
            # the built-ins go through exp(|x|), which overflows from 88.7 while sinh/cosh
            # stay finite to 89.4: there e^|x| / 2 is taken as (e^(|x|/2) / 2) * e^(|x|/2)
            half = f"exp(abs({{0}}) * {t.wgsl}(0.5))"
            big = f"({half} * {t.wgsl}(0.5)) * {half}"
            if name == "sinh":
                big = f"sign({{0}}) * {big}"
            expr = f"select({expr}, {big}, abs({{0}}) > {t.wgsl}(80))"
        w = t.wgsl
        if name in _SERIES:
            c1, c2 = _SERIES[name]
            small = "0.0625" if t is not D.float64 else "0.001953125"
            x2 = "{0} * {0}"
            series = f"({{0}} * ({w}(1) + {x2} * ({w}({c1!r}) + {x2} * {w}({c2!r}))))"
            expr = f"select({expr}, {series}, abs({{0}}) < {w}({small}))"
        if name in _LARGE:
            big = f"(log(abs({{0}})) + {w}(0.6931471805599453))"
            if t is D.float64:
                big = big.replace("log(", f"{F64_NAMES['log']}(")
            if name == "asinh":
                big = f"sign({{0}}) * {big}"
            test = "abs({0})" if name == "asinh" else "{0}"  # acosh: NaN below 1 stays
            expr = f"select({expr}, {big}, {test} > {w}(1e15))"
        if name in _NEAR_ONE and t is not D.float64:
            # lavapipe's log lost 13% of log(1 - 2^-23): near 1, log1p(x - 1) (x - 1 exact)
            scale = _NEAR_ONE[name]
            near = f"(log1p_{w}({{0}} - {w}(1)) * {w}({scale!r}))"
            expr = f"select({expr}, {near}, abs({{0}} - {w}(1)) < {w}(0.25))"
            helpers += ("log1p",)
        if name in _KEEP_ZERO:
            expr = f"select({expr}, {{0}}, {{0}} == {t.wgsl}(0))"
        if t is not D.float64:  # OpenGL's built-ins may turn NaN (or a bad domain) to a number
            # a NaN made here has its sign bit set, as x86 CPUs make one
            nan = f"{t.wgsl}(bitcast<f32>(0xffc00000u))"
            expr = f"select({expr}, {{0}}, isnan_{{T}}({{0}}))"
            helpers += ("isnan",)
            if name in _DOMAIN:
                expr = f"select({expr}, {nan}, {_DOMAIN[name].format(T=t.wgsl)})"
        if out is not t:
            expr = f"{{R}}({expr})"
        return launch_map(expr, [x], [t], out, helpers, op=name)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (integer inputs give float32)."
    return fn


exp = _float_unary("exp")
log = _float_unary("log")
exp2 = _float_unary("exp2")
log2 = _float_unary("log2")
log10 = _float_unary("log10")
sqrt = _float_unary("sqrt")
sin = _float_unary("sin")
cos = _float_unary("cos")
tan = _float_unary("tan")
tanh = _float_unary("tanh")
sinh = _float_unary("sinh")
cosh = _float_unary("cosh")
asin = _float_unary("asin")
acos = _float_unary("acos")
atan = _float_unary("atan")
asinh = _float_unary("asinh")
acosh = _float_unary("acosh")
atanh = _float_unary("atanh")


def _float_helper_unary(name: str, helper: str):
    def fn(x: Array, /) -> Array:
        x = _check(x, name)
        t = x.dtype if x.dtype.kind == "f" else D.float32
        return launch_map(f"{helper}_{{T}}({{0}})", [x], [t], t, (helper,), op=name)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (integer inputs give float32)."
    return fn


log1p = _float_helper_unary("log1p", "log1p")
expm1 = _float_helper_unary("expm1", "expm1")


def _rounding(name: str):
    def fn(x: Array, /) -> Array:
        x = _check(x, name)
        if x.dtype.kind != "f":
            return x
        expr = f"{_fn(name, x.dtype)}({{0}})"
        if name == "trunc" and x.dtype is D.float64:
            # lavapipe's f64 trunc returns +0 for -0.5 and -0: a zero takes the input's sign
            # (1 / -0.0 is -inf)
            expr = (f"select({expr}, -abs({expr}), {expr} == f64(0) && "
                    f"({{0}} < f64(0) || f64(1) / {{0}} < f64(0)))")
        return launch_map(expr, [x], [x.dtype], x.dtype, op=name)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (integers are returned unchanged)."
    return fn


floor = _rounding("floor")
ceil = _rounding("ceil")
trunc = _rounding("trunc")
round = _rounding("round")  # noqa: A001 - Array-API name


def _numeric(x: Array, op: str) -> DType:
    if x.dtype is D.bool:
        raise DTypeError(f"{op}: not defined for bool arrays; use logical_not or astype")
    return x.dtype


def negative(x: Array, /) -> Array:
    """Elementwise ``-x``."""
    t = _numeric(_check(x, "negative"), "negative")
    expr = "i64e_neg({0})" if t.emu else "(-{0})" if t.kind != "u" else "(0u - {0})"
    return launch_map(expr, [x], [t], t, op="negative")


def positive(x: Array, /) -> Array:
    """Elementwise ``+x`` (a copy)."""
    t = _numeric(_check(x, "positive"), "positive")
    return launch_map("{0}", [x], [t], t, op="positive")


def abs(x: Array, /) -> Array:  # noqa: A001 - Array-API name
    """Elementwise absolute value."""
    t = _numeric(_check(x, "abs"), "abs")
    return launch_map("i64e_abs({0})" if t.emu else "abs({0})", [x], [t], t, op="abs")


def square(x: Array, /) -> Array:
    """Elementwise ``x * x``."""
    t = _numeric(_check(x, "square"), "square")
    expr = "i64e_mul({0}, {0})" if t.emu else "({0} * {0})"
    return launch_map(expr, [x], [t], t, op="square")


def sign(x: Array, /) -> Array:
    """Elementwise sign (-1, 0, 1; NaN stays NaN)."""
    t = _numeric(_check(x, "sign"), "sign")
    h = "fsign" if t.kind == "f" else "isign"
    if t.emu:
        return launch_map("i64e_sign({0})", [x], [t], t, op="sign")
    return launch_map(f"{h}_{{T}}({{0}})", [x], [t], t, (h,), op="sign")


def _predicate(name: str, int_value: bool):
    def fn(x: Array, /) -> Array:
        x = _check(x, name)
        if x.dtype.kind != "f":
            return launch_map("true" if int_value else "false", [x], [x.dtype], D.bool, op=name)
        return launch_map(f"{name}_{{T}}({{0}})", [x], [x.dtype], D.bool, (name,), op=name)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (a bool array)."
    return fn


isnan = _predicate("isnan", False)
isinf = _predicate("isinf", False)
isfinite = _predicate("isfinite", True)


def logical_not(x: Array, /) -> Array:
    """Elementwise ``not`` (of ``x != 0``)."""
    x = _check(x, "logical_not")
    return launch_map("(!{0})", [x], [D.bool], D.bool, op="logical_not")


def bitwise_invert(x: Array, /) -> Array:
    """Elementwise ``~x`` for bool and integer arrays."""
    x = _check(x, "bitwise_invert")
    if x.dtype.kind == "f":
        raise DTypeError("bitwise_invert: not defined for floating arrays")
    expr = "(!{0})" if x.dtype is D.bool else "(~{0})"
    return launch_map(expr, [x], [x.dtype], x.dtype, op="bitwise_invert")


# -- binary -----------------------------------------------------------------------------
def _binary_types(x1: Any, x2: Any, op: str) -> DType:
    a1, a2 = isinstance(x1, Array), isinstance(x2, Array)
    if a1 and a2:
        return D.promote(x1.dtype, x2.dtype)
    if a1 and isinstance(x2, _SCALARS):
        return D.scalar_promote(x1.dtype, x2)
    if a2 and isinstance(x1, _SCALARS):
        return D.scalar_promote(x2.dtype, x1)
    bad = x2 if a1 else x1
    if not (a1 or a2):
        raise TypeError(f"{op}: expected at least one volta_wgpu Array, got "
                        f"{type(x1).__name__} and {type(x2).__name__}")
    raise TypeError(f"{op}: cannot combine a volta_wgpu Array with {type(bad).__name__}; "
                    f"convert it with volta_wgpu.asarray")


def _arith(name: str, fexpr: str, iexpr: str | None = None, fh: tuple = (), ih: tuple = (),
           bool_ok: bool = False, to_float: bool = False, bexpr: str | None = None,
           f16expr: str | None = None):
    def fn(x1: Any, x2: Any, /) -> Array:
        t = _binary_types(x1, x2, name)
        if to_float and t.kind != "f":
            t = D.float32
        if t is D.bool and not bool_ok:
            raise DTypeError(f"{name}: not defined for bool arrays; cast with astype first")
        if t.kind == "f":
            expr, h = (f16expr or fexpr) if t is D.float16 else fexpr, fh
        elif t is D.bool:
            expr, h = bexpr or fexpr, ()
        elif t.emu:  # int64 as a (lo, hi) pair: the int64_emu functions
            expr, h = _EMU[name], ()
        else:
            expr, h = (iexpr or fexpr), ih
            if ih:  # mixed integer widths: convert first (an inline i32 -> i64 cast
                # feeding these helpers is miscompiled on some Vulkan drivers)
                x1, x2 = (astype(v, t) if isinstance(v, Array) and v.dtype is not t else v
                          for v in (x1, x2))
        return launch_map(expr, [x1, x2], [t, t], t, h, op=name)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` with broadcasting and Array-API type promotion."
    return fn


_EMU = {"add": "i64e_add({0}, {1})", "subtract": "i64e_sub({0}, {1})",
        "multiply": "i64e_mul({0}, {1})", "pow": "i64e_pow({0}, {1})",
        "maximum": "i64e_max({0}, {1})", "minimum": "i64e_min({0}, {1})",
        "remainder": "i64e_rem({0}, {1})", "floor_divide": "i64e_floordiv({0}, {1})",
        "==": "i64e_eq({0}, {1})", "!=": "(!i64e_eq({0}, {1}))", "<": "i64e_lt({0}, {1})",
        "<=": "(!i64e_lt({1}, {0}))", ">": "i64e_lt({1}, {0})", ">=": "(!i64e_lt({0}, {1}))",
        "<<": "i64e_shl({0}, {1})", ">>": "i64e_shr({0}, {1})"}

add = _arith("add", "({0} + {1})", bool_ok=False)
subtract = _arith("subtract", "({0} - {1})")
multiply = _arith("multiply", "({0} * {1})", bool_ok=True, bexpr="({0} && {1})")
divide = _arith("divide", "({0} / {1})", to_float=True, f16expr="f16(f32({0}) / f32({1}))")
pow = _arith("pow", "fpow_{T}({0}, {1})", "ipow_{T}({0}, {1})", ("fpow",), ("ipow",))  # noqa: A001
maximum = _arith("maximum", "fmax_{T}({0}, {1})", "max({0}, {1})", ("fmax",), bool_ok=True,
                 bexpr="({0} || {1})")
minimum = _arith("minimum", "fmin_{T}({0}, {1})", "min({0}, {1})", ("fmin",), bool_ok=True,
                 bexpr="({0} && {1})")
remainder = _arith("remainder", "frem_{T}({0}, {1})", "irem_{T}({0}, {1})", ("frem",),
                   ("irem",))
floor_divide = _arith("floor_divide", "ffloordiv_{T}({0}, {1})", "ifloordiv_{T}({0}, {1})",
                      ("ffloordiv",), ("ifloordiv",))
atan2 = _arith("atan2", "fatan2_{T}({0}, {1})", fh=("fatan2",), to_float=True)
hypot = _arith("hypot", "fhypot_{T}({0}, {1})", fh=("fhypot",), to_float=True)
copysign = _arith("copysign", "select(abs({0}), -abs({0}), signbit_{T}({1}))",
                  fh=("signbit",), to_float=True)


def _compare(name: str, sym: str):
    def fn(x1: Any, x2: Any, /) -> Array:
        t = _binary_types(x1, x2, name)
        expr, h = f"({{0}} {sym} {{1}})", ()
        if t.emu:
            expr = _EMU[sym]
        elif t is D.bool and sym not in ("==", "!="):  # WGSL orders no bools: as 0/1
            t = D.uint32
        elif t.kind == "f" and sym in ("==", "!="):
            # NaN is unequal to everything: "a != b" compiles to an ordered compare
            # (false for NaN) and a driver that assumes no NaNs folds "a == a" to true
            expr, h = "(({0} == {1}) && !isnan_{T}({0}))", ("isnan",)
            if sym == "!=":
                expr = f"(!{expr})"
        elif t.kind == "f":  # false with a NaN, whatever the driver assumes (bit tests)
            expr = f"(({{0}} {sym} {{1}}) && !isnan_{{T}}({{0}}) && !isnan_{{T}}({{1}}))"
            h = ("isnan",)
        return launch_map(expr, [x1, x2], [t, t], D.bool, h, op=name)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``x1 {sym} x2`` (a bool array)."
    return fn


equal = _compare("equal", "==")
not_equal = _compare("not_equal", "!=")
less = _compare("less", "<")
less_equal = _compare("less_equal", "<=")
greater = _compare("greater", ">")
greater_equal = _compare("greater_equal", ">=")


def _logical(name: str, expr: str):
    def fn(x1: Any, x2: Any, /) -> Array:
        _binary_types(x1, x2, name)
        return launch_map(expr, [x1, x2], [D.bool, D.bool], D.bool, op=name)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise logical ``{name[8:]}`` of ``x1 != 0`` and ``x2 != 0``."
    return fn


logical_and = _logical("logical_and", "({0} && {1})")
logical_or = _logical("logical_or", "({0} || {1})")
logical_xor = _logical("logical_xor", "({0} != {1})")


def _bitwise(name: str, expr: str, bool_ok: bool = True):
    def fn(x1: Any, x2: Any, /) -> Array:
        t = _binary_types(x1, x2, name)
        if t.kind == "f" or (t is D.bool and not bool_ok):
            raise DTypeError(f"{name}: needs integer{' or bool' if bool_ok else ''} arrays, "
                             f"got {t.name}")
        if t.wgsl == "i64":  # an inline i32 -> i64 cast here is miscompiled: convert first
            x1, x2 = (astype(v, t) if isinstance(v, Array) and v.dtype is not t else v
                      for v in (x1, x2))
        e = expr
        if t.emu:
            return launch_map(_EMU.get(expr.split()[1], e), [x1, x2], [t, t], t, op=name)
        bits = 32 if t.wgsl in ("i32", "u32") else 64  # as held on the device
        if "<<" in e:  # a count of at least the bit width shifts every bit out
            e = f"select({{0}} << u32({{1}}), {t.wgsl}(0), {{1}} >= {t.wgsl}({bits}))"
        elif ">>" in e:  # ... and leaves only copies of the sign bit
            e = f"({{0}} >> u32(min({{1}}, {t.wgsl}({bits - 1}))))"
            if t.kind == "u":
                e = f"select({e}, 0u, {{1}} >= 32u)"
        if t is D.bool and "^" in e:
            e = "({0} != {1})"
        return launch_map(e, [x1, x2], [t, t], t, op=name)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}``."
    return fn


bitwise_and = _bitwise("bitwise_and", "({0} & {1})")
bitwise_or = _bitwise("bitwise_or", "({0} | {1})")
bitwise_xor = _bitwise("bitwise_xor", "({0} ^ {1})")
bitwise_left_shift = _bitwise("bitwise_left_shift", "({0} << {1})", False)
bitwise_right_shift = _bitwise("bitwise_right_shift", "({0} >> {1})", False)


# -- ternary and casts --------------------------------------------------------------------
def where(condition: Array, x1: Any, x2: Any, /) -> Array:
    """``x1`` where ``condition`` is true, else ``x2`` (broadcast together)."""
    if isinstance(condition, bool):  # a Python bool picks one side (NumPy accepts it)
        from .creation import asarray
        ref = x1 if isinstance(x1, Array) else x2
        condition = asarray(condition, device=getattr(ref, "device", None))
    condition = _check(condition, "where")
    if isinstance(x1, Array) or isinstance(x2, Array):
        t = _binary_types(x1, x2, "where")
    elif isinstance(x1, float) or isinstance(x2, float):
        t = D.float32
    elif isinstance(x1, bool) and isinstance(x2, bool):
        t = D.bool
    else:
        t = D.default_int()
    return launch_map("select({2}, {1}, {0})", [condition, x1, x2], [D.bool, t, t], t,
                      op="where")


def clip(x: Array, /, min: Any = None, max: Any = None) -> Array:  # noqa: A002
    """Clamp ``x`` to ``[min, max]`` (either may be None; NaN propagates)."""
    x = _check(x, "clip")
    t = x.dtype
    out = x
    if min is not None:
        out = maximum(out, min)
        out = out if out.dtype is t else astype(out, t)
    if max is not None:
        out = minimum(out, max)
        out = out if out.dtype is t else astype(out, t)
    return out if out is not x else astype(x, t, copy=True)


def astype(x: Array, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Array:
    """Convert ``x`` to ``dtype`` (float to int truncates toward zero)."""
    x = _check(x, "astype")
    t = D.check_supported(D.as_dtype(dtype), "astype")
    if t is x.dtype and not copy:
        return x
    return launch_map("{0}", [x], [t], t, op="astype")


def copy_into(dst: Array, src: Any) -> Array:
    """Write ``src`` (an Array or scalar, broadcast) into ``dst`` in place (may be a view)."""
    t = dst.dtype
    return launch_map("{0}", [src], [t], t, out=dst, op="setitem")


def contiguous_copy(x: Array) -> Array:
    """A fresh row-major copy of ``x``."""
    return launch_map("{0}", [x], [x.dtype], x.dtype, op="copy")


# -- added for the Array API standard (2023.12 / 2024.12) ------------------------------------
def signbit(x: Array, /) -> Array:
    """Whether the sign bit is set (true for -0.0 and for NaNs with the sign bit)."""
    x = _check(x, "signbit")
    if x.dtype.kind != "f":
        raise DTypeError(f"signbit: needs a real floating array, got {x.dtype.name}")
    return launch_map("signbit_{T}({0})", [x], [x.dtype], D.bool, ("signbit",), op="signbit")


def logaddexp(x1: Any, x2: Any, /) -> Array:
    """``log(exp(x1) + exp(x2))`` without overflow."""
    t = _binary_types(x1, x2, "logaddexp")
    if t.kind != "f":
        raise DTypeError(f"logaddexp: needs real floating arrays, got {t.name}")
    ex = "exp_f64p" if t is D.float64 else "exp"
    w = D.float32 if t is D.float16 else t  # float16 computes in float32, rounds once
    # equal infinities: inf - inf would be NaN
    expr = (f"select(max({{0}}, {{1}}) + log1p_{{T}}({ex}(-abs({{0}} - {{1}}))), {{0}}, "
            f"{{0}} == {{1}} && isinf_{{T}}({{0}}))")
    if w is not t:
        expr = f"{{R}}({expr})"
    return launch_map(expr, [x1, x2], [w, w], t, ("log1p", "isinf"), op="logaddexp")


def reciprocal(x: Array, /) -> Array:
    """Elementwise ``1 / x``."""
    x = _check(x, "reciprocal")
    t = x.dtype if x.dtype.kind == "f" else D.float32
    if t is D.float16:  # in float32, rounded once (as divide)
        return launch_map("f16(1.0 / f32({0}))", [x], [t], t, op="reciprocal")
    return launch_map("({T}(1) / {0})", [x], [t], t, op="reciprocal")


def nextafter(x1: Any, x2: Any, /) -> Array:
    """The next representable float after ``x1`` in the direction of ``x2``."""
    t = _binary_types(x1, x2, "nextafter")
    if t.kind != "f":
        raise DTypeError(f"nextafter: needs real floating arrays, got {t.name}")
    if t is not D.float32:  # no 16/64-bit bitcasts in WGSL: step on the host
        from ..array import to_numpy
        from .creation import asarray
        a1 = to_numpy(x1) if isinstance(x1, Array) else x1
        a2 = to_numpy(x2) if isinstance(x2, Array) else x2
        dev = (x1 if isinstance(x1, Array) else x2).device
        return asarray(np.nextafter(np.asarray(a1, t.np), np.asarray(a2, t.np)), dtype=t,
                       device=dev)
    expr = ("select(select(select(bitcast<f32>(bitcast<u32>({0}) + select(0xffffffffu, 1u, "
            "({0} < {1}) == ({0} > 0.0))), bitcast<f32>(select(1u, 0x80000001u, {1} < 0.0)), "
            "{0} == 0.0), {1}, {0} == {1}), {0} + {1}, isnan_f32({0}) || isnan_f32({1}))")
    return launch_map(expr, [x1, x2], [t, t], t, ("isnan",), op="nextafter")


def conj(x: Array, /) -> Array:
    """Complex conjugate: a copy for the real dtypes this namespace has."""
    return positive(x)


def real(x: Array, /) -> Array:
    """Real part: a copy for the real dtypes this namespace has."""
    return positive(x)


def imag(x: Array, /) -> Array:
    """Imaginary part: zeros for the real dtypes this namespace has."""
    t = _numeric(_check(x, "imag"), "imag")
    return launch_map("{T}(0)", [x], [t], t, op="imag")
