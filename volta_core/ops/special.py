"""Special functions: erfc, logit, sinc, log10, inverse hyperbolics, xlogy, logaddexp, hypot;
and ``vt.special``'s own ``xlog1py``, ``entr``, ``ndtr``, ``spherical_bessel_j0``.

Integer and bool inputs compute in the default float dtype and bfloat16 in float32, as in
PyTorch. ``float_power`` always computes in float64.
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.function import RESULT, Function, carry_saved
from ..errors import DTypeError
from ..tensor import Tensor, tensor_method
from ._util import broadcast_shapes, checked_pair, python_scalar, shape_of
from .elementwise import (
    _default_float,
    _unary,
    cast,
    in_float32,
    refusing_backward,
    rounded_to,
    where,
)
from .movement import sum_to

_LN10 = math.log(10.0)
_LN2 = math.log(2.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# -- unary --------------------------------------------------------------------------------

class _SavesInput(Function):
    """A unary op computed by ``xp.<fn>`` whose backward needs its input."""

    pytorch_saves = ((0,),)

    fn = ""

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return getattr(ctx.xp, ctx.fn)(x)


class Log10(_SavesInput):
    fn = "log10"

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / (x * _LN10)


class Acosh(_SavesInput):
    fn = "acosh"

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x * x - 1.0).rsqrt()


class Asinh(_SavesInput):
    fn = "asinh"

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x * x + 1.0).rsqrt()


class Atanh(_SavesInput):
    fn = "atanh"

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / (1.0 - x * x)


def _erfc_array(xp: Any, x: Any, wide: bool) -> Any:
    """erfc of a floating array to about 1e-15 relative in float64, with no cancellation.

    Below a switch point ``s``, ``1 - erf`` with erf from its all-positive series
    ``2/sqrt(pi) e^(-x^2) sum 2^n x^(2n+1) / (2n+1)!!`` (erfc(s) keeps the subtraction
    accurate); from ``s`` on, Laplace's continued fraction, evaluated bottom-up with a
    fixed depth. float64 (``wide``) switches at 2 (depth 60), float32 at 1 (depth 100).
    """
    s, depth = (2.0, 60) if wide else (1.0, 100)
    a = xp.abs(x)
    small = xp.where(a < s, a, xp.zeros_like(a))
    a2 = small * small
    term = small
    total = small
    for n in range(1, 40):  # the terms' ratio 2x^2/(2n+1) < 8/(2n+1): 40 terms suffice
        term = term * (2.0 * a2 / (2 * n + 1))
        total = total + term
    erfc_small = 1.0 - _TWO_OVER_SQRT_PI * xp.exp(-a2) * total
    big = xp.where(a < s, xp.full_like(a, s), a)
    erfc_big = xp.exp(-big * big) / (math.sqrt(math.pi) * _laplace_cf(xp, big, depth))
    pos = xp.where(a < s, erfc_small, erfc_big)
    pos = xp.where(xp.isnan(x), x, pos)
    return xp.where(x < 0, 2.0 - pos, pos)


def _laplace_cf(xp: Any, x: Any, depth: int) -> Any:
    """Laplace's continued fraction ``x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))``,
    ``sqrt(pi) exp(x^2) erfc(x)`` inverted, evaluated bottom-up to ``depth`` levels (for
    ``x`` at the switch points of :func:`_erfc_array` and up)."""
    f = x
    for k in range(depth, 0, -1):
        f = x + (k / 2.0) / f
    return f


def evaluate_wide(ctx: Function, fn: Any, x: Any) -> Any:
    """``fn(xp, x, wide)`` in x's dtype, for the series and continued fractions of erfc
    and its kin: float64 as itself (``wide``); on the CPU narrower floats in float64,
    rounded once (in float32 the evaluation is a unit in the last place off now and then,
    two in the subnormal range: erfc(10)); elsewhere in float32, as GPUs' float64 to
    float32 conversions flush subnormal results to zero (Vulkan, CuPy's -ftz), where the
    float32 evaluation keeps them; 16-bit floats through float32 (the series need more
    range and precision)."""
    xp, dev = ctx.xp, ctx.device
    size = dev.volta_dtype(x.dtype).itemsize
    if size == 8:
        return fn(xp, x, True)
    if dev.type == "cpu":
        return xp.astype(fn(xp, xp.astype(x, xp.float64), True), x.dtype)
    if size < 4:
        return xp.astype(fn(xp, xp.astype(x, xp.float32), False), x.dtype)
    return fn(xp, x, False)


class Erfc(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return evaluate_wide(ctx, _erfc_array, x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ((x * x).neg().exp() * -_TWO_OVER_SQRT_PI)


class Sinc(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x):
        xp = ctx.xp
        ctx.save_for_backward(x)
        dt = x.dtype
        if ctx.device.volta_dtype(dt).name == "float16":  # pi * x overflows float16 above
            x = xp.astype(x, xp.float32)  # 20860; PyTorch's forward computes in float32
        px = math.pi * x
        safe = xp.where(x == 0, xp.ones_like(px), px)
        return xp.astype(xp.where(x == 0, xp.ones_like(px), xp.sin(safe) / safe), dt)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        # PyTorch's sinc_backward: 0 where pi x^2 is 0, which is also where it underflows
        # (a small float16 x; a GPU that flushes subnormals), even for an infinite g
        px = x * math.pi
        sq = x * x * math.pi
        out = g * (px * px.cos() - px.sin()) / sq
        return where(sq == 0, 0.0, out)


class Logit(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x, eps=None, hi=None):
        xp = ctx.xp
        if eps is not None and hi is None:
            hi = 1.0 - eps
        ctx.eps, ctx.hi = eps, hi
        ctx.save_for_backward(x)
        one = xp.asarray(1, dtype=x.dtype)  # a number would widen bfloat16 on NumPy
        if eps is not None:  # minimum/maximum keep NaN (clip lacks bfloat16)
            lo, top = xp.asarray(eps, dtype=x.dtype), xp.asarray(hi, dtype=x.dtype)
            x = xp.minimum(xp.maximum(x, lo), top)
        return xp.log(x / (one - x))

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        eps = ctx.eps
        d = g / ((x + 0.0) * (1.0 - x))  # -0.0 counts as +0.0, as in PyTorch's kernel
        if eps is None:  # outside [0, 1] the logit is undefined: NaN, as in PyTorch
            return where((x < 0).logical_or(x > 1), math.nan, d)
        return where((x < eps).logical_or(x > ctx.hi), 0.0, d)


def _floating_input(op: str, x: Any) -> Tensor:
    if type(x) is not Tensor:
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    return x if x.dtype.is_floating_point else cast(x, _default_float())


log10 = _unary(Log10, "log10")
acosh = arccosh = _unary(Acosh, "acosh")
asinh = arcsinh = _unary(Asinh, "asinh")
atanh = arctanh = _unary(Atanh, "atanh")
Tensor.arccosh, Tensor.arcsinh, Tensor.arctanh = acosh, asinh, atanh


@tensor_method()
def erfc(input: Tensor) -> Tensor:
    """Complementary error function ``1 - erf(x)``, accurate also where it is tiny."""
    return Erfc.apply(_floating_input("erfc", input))


@tensor_method()
def sinc(input: Tensor) -> Tensor:
    """Normalized sinc ``sin(pi x) / (pi x)``, 1 at 0."""
    x = _floating_input("sinc", input)
    return in_float32(Sinc.apply, x) if x.dtype.name == "bfloat16" else Sinc.apply(x)


@tensor_method()
def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``; with ``eps``, ``p`` is first clamped to ``[eps, 1 - eps]``.

    Args:
        input: probabilities.
        eps: the clamping margin; None leaves values outside (0, 1) to give NaN or inf.
    """
    x = _floating_input("logit", input)
    eps = None if eps is None else float(eps)
    if x.dtype.itemsize == 2:
        if x.device.type != "cpu":  # PyTorch's CUDA kernel: in float32, rounded once
            return in_float32(Logit.apply, x, eps=eps)
        if eps is not None:  # its CPU loop: each step in the dtype, the bounds rounded
            eps = rounded_to(x.dtype, eps)
            return Logit.apply(x, eps=eps, hi=rounded_to(x.dtype, 1.0 - eps))
    return Logit.apply(x, eps=eps)


@tensor_method()
def deg2rad(input: Tensor) -> Tensor:
    """Angles in degrees converted to radians."""
    return _floating_input("deg2rad", input) * (math.pi / 180.0)


@tensor_method()
def rad2deg(input: Tensor) -> Tensor:
    """Angles in radians converted to degrees."""
    return _floating_input("rad2deg", input) * (180.0 / math.pi)


# -- binary -------------------------------------------------------------------------------

def _float_pair(op: str, a: Any, b: Any, scalars: bool = True, integers: bool = True,
                in_dtype: bool = False, half_in_float32: bool = False
                ) -> tuple[Any, Any, Any]:
    """Promote ``a`` and ``b`` (ints to the default float); returns ``(a, b, out_dtype)``.

    bfloat16 pairs are returned in float32 (the caller casts the result back), unless
    ``in_dtype`` (the op rounds each step to the dtype); float16 pairs too with
    ``half_in_float32`` (a composite that PyTorch computes in float32, rounded once).
    """
    given = a, b
    a, b = checked_pair(op, a, b, scalars)
    dt = (a if type(a) is Tensor else b).dtype
    if not dt.is_floating_point:
        if not integers:
            raise DTypeError(f"{op}: expected floating tensors, got {dt.name}; call .float() "
                             "first")
        dt = _default_float()
        # the operands' own values, not their wrap into the common integer dtype
        # (xlogy(int8, 300) is int8 * log(300.0), as in PyTorch)
        a, b = (python_scalar(v) if type(v) is not Tensor else v for v in given)
    widen = (dt.name == "bfloat16" and not in_dtype) or (dt.name == "float16"
                                                        and half_in_float32)
    work = "float32" if widen else dt
    a = cast(a, work) if type(a) is Tensor else a
    b = cast(b, work) if type(b) is Tensor else b
    if type(a) is Tensor and type(b) is Tensor:
        broadcast_shapes(op, a.shape, b.shape)
    elif type(a) is not Tensor:
        a = b.new_full((), a)
    else:
        b = a.new_full((), b)
    return a, b, dt


def _run_binary(cls: type, op: str, a: Any, b: Any, **kw: Any) -> Tensor:
    a0, b0 = a, b
    a, b, dt = _float_pair(op, a, b, **kw)
    inner = cls.apply(a, b)
    out = inner if inner.dtype is dt else cast(inner, dt)
    carry_saved(inner, out, (a, a0), (b, b0))  # PyTorch saves the operands as given
    return out


class Xlogy(Function):
    """``x * log(y)``, 0 where ``x`` is 0 (unless ``y`` is NaN); PyTorch's gradients:
    ``xlogy(g, y)`` (0 where ``x`` is 0 and ``log(y)`` is not finite) and ``g * x / y``.
    :class:`Xlog1py` is the same with ``log1p`` (its pole at ``y = -1``)."""

    pytorch_saves = ((0, 1), (0, 1))
    log, pole = "log", 0.0

    def forward(ctx, x, y):
        xp = ctx.xp
        ctx.save_for_backward(x, y)
        out = x * getattr(xp, ctx.log)(y)
        return xp.where((x == 0) & ~xp.isnan(y), xp.zeros_like(out), out)

    def backward(ctx, g):
        x, y = ctx.saved_tensors
        nx, ny = ctx.needs_input_grad
        gx = gy = None
        if nx:
            same = xlogy if ctx.log == "log" else xlog1py
            d = where((x == 0).logical_and(y <= ctx.pole), 0.0, same(g, y))
            gx = sum_to(d, shape_of(x))
        if ny:
            gy = sum_to(g * x / (y - ctx.pole), shape_of(y))
        return gx, gy


class Xlog1py(Xlogy):
    pytorch_saves = ()  # no claim made (tests/core/test_pytorch_saves.py)
    log, pole = "log1p", -1.0


class _XlogyOfNumber(Xlogy):
    """``xlogy(tensor, number)``: PyTorch's backward of that form gives ``xlogy(g, y)``,
    taken as 0 where ``x`` is 0 and ``log(y)`` is -inf or NaN (``y <= 0`` or NaN)."""

    def backward(ctx, g):
        x, y = ctx.saved_tensors
        if not ctx.needs_input_grad[0]:
            return None, None
        d = where((x == 0).logical_and((y > 0).logical_not()), 0.0, xlogy(g, y))
        return sum_to(d, shape_of(x)), None


class LogAddExp(Function):
    pytorch_saves = ((0, 1), (0, 1))

    base2 = False

    def forward(ctx, a, b):
        xp = ctx.xp
        ctx.save_for_backward(a, b)
        hi = xp.maximum(a, b)
        # equal operands (also both -inf or both +inf) give no inf - inf
        d = xp.where(a == b, xp.zeros_like(hi), -xp.abs(a - b))
        if ctx.base2:
            return hi + xp.log1p(2.0 ** d) / _LN2
        return hi + xp.log1p(xp.exp(d))

    def backward(ctx, g):
        a, b = ctx.saved_tensors
        na, nb = ctx.needs_input_grad
        exp = (lambda t: 2.0 ** t) if ctx.base2 else (lambda t: t.exp())
        return (sum_to(g / (exp(b - a) + 1.0), a.shape) if na else None,
                sum_to(g / (exp(a - b) + 1.0), b.shape) if nb else None)


class LogAddExp2(LogAddExp):
    base2 = True


_LogAddExpOfBool = refusing_backward(LogAddExp, "logaddexp", "a subtraction")
_LogAddExp2OfBool = refusing_backward(LogAddExp2, "logaddexp2", "a subtraction")


class Hypot(Function):
    pytorch_saves = ((0, RESULT), (1, RESULT))

    def forward(ctx, a, b):
        xp = ctx.xp
        out = xp.hypot(a, b)
        na, nb = ctx.needs_input_grad[:2]  # as PyTorch, keep an operand only for its gradient
        ctx.save_for_backward(a if na else None, b if nb else None, out)
        return out

    def backward(ctx, g):
        a, b, out = ctx.saved_tensors
        na, nb = ctx.needs_input_grad
        return (sum_to(g * a / out, a.shape) if na else None,
                sum_to(g * b / out, b.shape) if nb else None)


@tensor_method()
def xlogy(input: Any, other: Any) -> Tensor:
    """``input * log(other)``, taken as 0 where ``input`` is 0 (unless ``other`` is NaN).

    Args:
        input: a tensor or number.
        other: a tensor or number (broadcast against ``input``).
    """
    number = type(input) is Tensor and type(python_scalar(other)) in (int, float)
    t = input if type(input) is Tensor else other
    # PyTorch's CPU loop rounds log(y) and the product to a 2-byte dtype, each step
    cpu = type(t) is Tensor and t.device.type == "cpu"
    return _run_binary(_XlogyOfNumber if number else Xlogy, "xlogy", input, other,
                       in_dtype=cpu)


def xlog1py(input: Any, other: Any) -> Tensor:
    """``input * log1p(other)``, taken as 0 where ``input`` is 0 (unless ``other`` is NaN)
    (``vt.special.xlog1py``).

    Args:
        input: a tensor or number.
        other: a tensor or number (broadcast against ``input``).
    """
    return _run_binary(Xlog1py, "xlog1py", input, other)


class Entr(Function):
    """``-x log(x)``: 0 at 0, -inf below; gradient ``-(1 + log(x))`` (as PyTorch)."""

    def forward(ctx, x):
        xp = ctx.xp
        ctx.save_for_backward(x)
        pos = xp.where(x > 0, x, xp.ones_like(x))
        out = xp.where(x > 0, -x * xp.log(pos), xp.where(x == 0, xp.zeros_like(x),
                                                        xp.full_like(x, -math.inf)))
        return xp.where(xp.isnan(x), x, out)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * -(1 + x.log())


def entr(input: Tensor) -> Tensor:
    """The entropy term ``-input * log(input)`` elementwise (``vt.special.entr``): 0 at 0,
    -inf for negative numbers; integers compute in the default float dtype."""
    return Entr.apply(_floating_input("entr", input))


def ndtr(input: Tensor) -> Tensor:
    """The standard normal CDF, ``0.5 * erfc(-x / sqrt(2))`` as PyTorch computes it
    (``vt.special.ndtr``)."""
    return 0.5 * erfc(_floating_input("ndtr", input) * -math.sqrt(0.5))


def spherical_bessel_j0(input: Tensor) -> Tensor:
    """``sin(x) / x``, 1 at 0 and 0 at the infinities (``vt.special.spherical_bessel_j0``)."""
    x = _floating_input("spherical_bessel_j0", input)
    safe = where(x == 0, 1.0, x)
    out = where(x == 0, 1.0, safe.sin() / safe)
    return where(x.abs() == math.inf, 0.0, out)


@tensor_method()
def logaddexp(input: Tensor, other: Tensor) -> Tensor:
    """``log(exp(input) + exp(other))`` without overflow or underflow."""
    cls = _LogAddExpOfBool if _bool_beside_grad(input, other) else LogAddExp
    return _run_binary(cls, "logaddexp", input, other, scalars=False, integers=False,
                       half_in_float32=True)


def _bool_beside_grad(a: Any, b: Any) -> bool:
    """One operand a bool tensor, the other requiring grad (PyTorch's backward refuses)."""
    return type(a) is Tensor and type(b) is Tensor and (
        a.dtype.kind == "b" and b.requires_grad or b.dtype.kind == "b" and a.requires_grad)


@tensor_method()
def logaddexp2(input: Tensor, other: Tensor) -> Tensor:
    """``log2(2**input + 2**other)`` without overflow or underflow."""
    cls = _LogAddExp2OfBool if _bool_beside_grad(input, other) else LogAddExp2
    return _run_binary(cls, "logaddexp2", input, other, scalars=False, integers=False,
                       half_in_float32=True)


@tensor_method()
def hypot(input: Tensor, other: Tensor) -> Tensor:
    """``sqrt(input**2 + other**2)`` without overflow."""
    return _run_binary(Hypot, "hypot", input, other, scalars=False, integers=False)


@tensor_method()
def float_power(input: Any, exponent: Any) -> Tensor:
    """``input ** exponent`` computed in float64 (the result is float64).

    Args:
        input: a tensor or number.
        exponent: a tensor or number.
    """
    if type(input) is not Tensor and type(exponent) is not Tensor:
        raise TypeError("float_power: expected a Tensor argument")
    a = cast(input, "float64") if type(input) is Tensor else float(input)
    b = cast(exponent, "float64") if type(exponent) is Tensor else float(exponent)
    return a ** b


__all__ = ["log10", "acosh", "asinh", "atanh", "arccosh", "arcsinh", "arctanh", "erfc",
           "sinc", "logit", "deg2rad", "rad2deg", "xlogy", "logaddexp", "logaddexp2", "hypot",
           "float_power"]
