"""Elementwise math beyond the basics: rounding, clamp, trig, erf, lerp and addcmul.

Rounding and sign ops have a zero gradient. ``erf`` is an extension kernel whose generic
fallback is accurate to about 2e-15 relative in float64 (a series and a continued
fraction) and 1e-10 in narrower floats (a series near 0, a fitted form of erfc elsewhere).
"""

from __future__ import annotations

import math
from typing import Any

from ..amp.dispatch import autocast_op
from ..autograd.function import RESULT, Function, saved_by_pytorch
from ..backend.kernels import fallback, get_kernel
from ..dtypes import bfloat16, checked_scalar
from ..errors import DTypeError
from ..tensor import Tensor, tensor_method
from ._util import Scalar, broadcast_shapes, promote_pair, python_scalar
from .elementwise import (
    Div,
    _binary,
    _unary,
    cast,
    in_float32,
    refusing_backward,
    shape_of_raw,
    where,
)
from .movement import sum_to

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


class _ZeroGrad(Function):
    """Base of piecewise-constant ops: the gradient is zero everywhere."""

    def backward(ctx, g):
        return g.new_zeros(*g.shape)


class Sign(_ZeroGrad):
    def forward(ctx, x):
        return sign_kernel(ctx.xp, x)


def sign_kernel(xp: Any, x: Any) -> Any:
    """``sign`` as PyTorch defines it: 0 at NaN, and a bool stays itself."""
    if x.dtype == xp.bool:
        return xp.asarray(x, copy=True)
    s = xp.sign(x)
    return xp.where(x != x, xp.zeros_like(s), s)


class Floor(_ZeroGrad):
    def forward(ctx, x):
        return ctx.xp.floor(x)


class Ceil(_ZeroGrad):
    def forward(ctx, x):
        return ctx.xp.ceil(x)


class Trunc(_ZeroGrad):
    def forward(ctx, x):
        return ctx.xp.trunc(x)


class Round(_ZeroGrad):
    def forward(ctx, x, decimals=0):
        xp = ctx.xp
        if decimals == 0:
            return xp.round(x)
        scale = 10.0 ** decimals
        return xp.round(x * scale) / scale


class Log1p(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.log1p(x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / (x + 1.0)


class Expm1(Function):
    pytorch_saves = ((RESULT,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        y = ctx.xp.expm1(x)
        ctx.save_for_backward(y)
        return y

    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (y + 1.0)


class Sinh(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.sinh(x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * cosh(x)


class Cosh(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.cosh(x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * sinh(x)


class Tan(Function):
    pytorch_saves = ((RESULT,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        y = ctx.xp.tan(x)
        ctx.save_for_backward(y)
        return y

    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (1.0 + y * y)


class Asin(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.asin(x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (1.0 - x * x).rsqrt()


class Acos(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.acos(x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return -g * (1.0 - x * x).rsqrt()


class Atan(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return ctx.xp.atan(x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g / (1.0 + x * x)


class Square(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (2.0 * x)


class Rsqrt(Function):
    pytorch_saves = ((RESULT,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        y = 1.0 / ctx.xp.sqrt(x)
        ctx.save_for_backward(y)
        return y

    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * (-0.5 * y * y * y)


# erfc(x) = t * exp(-x^2 + P(t)), t = 1 / (1 + x / 2), for x >= 0. P is a degree-14
# least-squares fit on Chebyshev nodes of [0, 1] (max error of erf about 1.3e-10).
_ERFC_FIT = (
    -1.265512123805702, 1.000000146532663, 0.37498876599829506, 0.0836735602190333,
    -0.09132440789555862, -0.09260236658748788, -0.4062760051256299, 1.3373662749641335,
    -3.6210219027949226, 7.5530485789671244, -9.903602933157616, 8.023615774684231,
    -3.9608723700278223, 1.1016422516214555, -0.1331232434581486,
)


# erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1)): used for |x| < 0.5, where
# nine terms are exact to ~1e-13 and keep erf odd, monotone and exactly 0 at 0.
_ERF_SERIES = tuple(_TWO_OVER_SQRT_PI * (-1) ** n / (math.factorial(n) * (2 * n + 1))
                    for n in range(9))


_SQRT_PI = math.sqrt(math.pi)


def _exp_minus_square(xp: Any, a: Any) -> Any:
    """``exp(-a^2)`` without the rounding of ``a^2`` (which exp magnifies by ``a^2``):
    ``a = hi + lo`` with a short ``hi``, so ``hi^2`` is exact."""
    a = xp.minimum(a, xp.full_like(a, 40.0))  # exp(-1600) is 0 already; no inf - inf
    hi = xp.floor(a * 65536.0) * (1.0 / 65536.0)
    return xp.exp(-hi * hi) * xp.exp(-(a - hi) * (a + hi))


def _erf_erfc64(xp: Any, a: Any) -> tuple[Any, Any]:
    """``(erf(a), erfc(a))`` in float64 for ``a >= 0``, each to about 2e-15 relative.

    ``erf`` below 2.5: ``2/sqrt(pi) exp(-a^2) sum_n (2a^2)^n a / (2n+1)!!``, a series of
    positive terms (no cancellation; 40 terms reach 1e-17 at 2.5). ``erfc`` from 1:
    ``exp(-a^2) / (sqrt(pi) (a + (1/2) / (a + 1 / (a + (3/2) / (a + ...)))))``, the
    continued fraction summed from its 200th level back (1e-15 at 1). Each function
    takes the other's form as ``1 - other`` where that loses under 3 bits.
    """
    s = xp.minimum(a, xp.full_like(a, 2.5))
    z = 2.0 * s * s
    term = total = s
    for n in range(1, 40):
        term = term * z * (1.0 / (2 * n + 1))
        total = total + term
    erf_s = (_TWO_OVER_SQRT_PI * total) * _exp_minus_square(xp, s)
    c = xp.maximum(a, xp.full_like(a, 1.0))
    k = c
    for j in range(200, 0, -1):
        k = c + (0.5 * j) / k
    erfc_c = _exp_minus_square(xp, c) / (_SQRT_PI * k)
    return (xp.where(a < 2.5, erf_s, 1.0 - erfc_c), xp.where(a < 1.0, 1.0 - erf_s, erfc_c))


def _erf64(xp: Any, x: Any) -> Any:
    """float64 ``erf`` to about 2e-15 relative (odd; ``erf(-0.0)`` is -0.0)."""
    return xp.copysign(_erf_erfc64(xp, xp.abs(x))[0], x)


def erfc64(xp: Any, x: Any) -> Any:
    """float64 ``erfc`` to about 2e-15 relative, also in its tail (no ``1 - erf``)."""
    erf_a, erfc_a = _erf_erfc64(xp, xp.abs(x))
    return xp.where(x < 0, 1.0 + erf_a, erfc_a)


@fallback("erf")
def erf_kernel(xp: Any, x: Any) -> Any:
    """Generic ``erf`` of a floating array: float64 to about 1e-15 relative; narrower
    floats by a series near 0 and a fit of erfc elsewhere (about 1e-10)."""
    if x.dtype == xp.float64:
        return _erf64(xp, x)
    a = xp.abs(x)
    t = 1.0 / (1.0 + 0.5 * a)
    p = _ERFC_FIT[-1]
    for c in _ERFC_FIT[-2::-1]:
        p = p * t + c
    erfc = t * xp.exp(p - a * a)
    x2 = x * x
    s = _ERF_SERIES[-1]
    for c in _ERF_SERIES[-2::-1]:
        s = s * x2 + c
    return xp.where(a < 0.5, x * s, xp.where(x < 0, erfc - 1.0, 1.0 - erfc))


class Erf(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True
    low_backward = True

    def forward(ctx, x, low=None):
        ctx.low = low
        ctx.save_for_backward(x)
        return get_kernel(ctx.device.backend, "erf")(ctx.xp, x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        low = ctx.low
        if low is None:
            return g * ((x * x).neg().exp() * _TWO_OVER_SQRT_PI)
        # PyTorch's 2/sqrt(pi) * exp(-x^2) * grad in bfloat16, step by step: exp(-100)
        # is 0 there (so an infinite grad gives NaN), a float32 subnormal here
        e = (x * x).to(low).neg().exp().to(low)
        return (g * (e * _TWO_OVER_SQRT_PI).to(low)).to(low).float()


sign = _unary(Sign, "sign", floating=False)
floor = _unary(Floor, "floor", floating=False, bool_ok=False)
ceil = _unary(Ceil, "ceil", floating=False, bool_ok=False)
trunc = _unary(Trunc, "trunc", floating=False, bool_ok=False)
fix = trunc
log1p = _unary(Log1p, "log1p")
expm1 = _unary(Expm1, "expm1")
sinh = _unary(Sinh, "sinh")
cosh = _unary(Cosh, "cosh")
tan = _unary(Tan, "tan")
asin = arcsin = _unary(Asin, "asin")
acos = arccos = _unary(Acos, "acos")
atan = arctan = _unary(Atan, "atan")
_square = _unary(Square, "square", floating=False)


@tensor_method()
def square(x: Tensor) -> Tensor:
    """Elementwise ``x * x`` (a bool tensor gives int64, as ``x ** 2`` does)."""
    return _square(cast(x, "int64") if x.dtype.kind == "b" else x)
rsqrt = _unary(Rsqrt, "rsqrt")
erf = _unary(Erf, "erf")
Tensor.arcsin, Tensor.arccos, Tensor.arctan, Tensor.fix = asin, acos, atan, trunc


@tensor_method()
def round(x: Tensor, decimals: int = 0) -> Tensor:  # noqa: A001 - the name users expect
    """Round to ``decimals`` decimal places, halves to even (zero gradient).

    Args:
        x: the tensor.
        decimals: number of decimal places (may be negative).
    """
    if x.dtype.kind == "b":
        raise DTypeError("round: not implemented for bool tensors (as in PyTorch); convert "
                         "with .int() or .float() first")
    if decimals != 0 and not x.dtype.is_floating_point:
        raise DTypeError(f"round: decimals={decimals} needs a floating tensor, got "
                         f"{x.dtype.name}; call .float() first")
    if x.dtype is bfloat16:
        return in_float32(Round.apply, x, decimals=int(decimals))
    return Round.apply(x, decimals=int(decimals))


class Atan2(Function):
    pytorch_saves = ((0, 1), (0, 1))
    saves_as_pytorch = True

    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return ctx.xp.atan2(a, b)

    def backward(ctx, g):
        a, b = ctx.saved_tensors
        na, nb = ctx.needs_input_grad
        r2 = a * a + b * b
        # PyTorch's g * (b / r2), the factor 0 at the origin (a NaN or inf g still shows)
        zero = r2 == 0
        r2 = where(zero, 1.0, r2)
        return (sum_to(g * where(zero, 0.0, b / r2), a.shape) if na else None,
                sum_to(g * where(zero, 0.0, -a / r2), b.shape) if nb else None)


_atan2 = _binary(Atan2, "atan2", true_div=True)
_atan2_bool_y = _binary(refusing_backward(Atan2, "atan2", "-input"), "atan2", true_div=True)


@tensor_method("atan2", "arctan2")
@autocast_op("atan2")
def atan2(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise angle of the point ``(other, input)``, i.e. ``atan(input / other)``.

    Args:
        input: the y coordinates.
        other: the x coordinates (broadcast against ``input``).
    """
    if type(input) is not Tensor or type(other) is not Tensor:
        raise TypeError("atan2: both arguments must be tensors")
    if input.dtype.kind == "b" and other.requires_grad:
        return _atan2_bool_y(input, other)
    return _atan2(input, other)


arctan2 = atan2


# -- clamp --------------------------------------------------------------------------------

class Clamp(Function):
    pytorch_saves = ((0, 1, 2), (0, 1, 2), (0, 1, 2))

    def forward(ctx, x, lo, hi):
        xp = ctx.xp
        ctx.shape = shape_of_raw(x)
        ctx.save_for_backward(x, lo, hi)
        # PyTorch keeps x on a tie with a bound (clamp(-0.0, min=0) is -0.0); a NaN x or
        # NaN tensor bound gives NaN
        y = x
        if lo is not None:
            if hasattr(lo, "shape"):
                y = xp.where((y < lo) | (lo != lo), lo, y)
            else:  # a NaN bound (lo != lo) gives NaN everywhere, as in PyTorch
                y = xp.where((y < lo) | (lo != lo), _const(ctx, lo, x.dtype), y)
        if hi is not None:
            if hasattr(hi, "shape"):
                y = xp.where((y > hi) | (hi != hi), hi, y)
            else:
                y = xp.where((y > hi) | (hi != hi), _const(ctx, hi, x.dtype), y)
        return y

    def backward(ctx, g):
        x, lo, hi = ctx.saved_tensors
        nx, nlo, nhi = ctx.needs_input_grad
        zero = g.new_zeros(())
        glo = ghi = gx = None
        if nx:
            # passes only where lo <= x <= hi: not at NaN, as in PyTorch
            gx = g if lo is None else where(x >= lo, g, zero)
            gx = gx if hi is None else where(x <= hi, gx, zero)
            gx = sum_to(gx, ctx.shape)
        if nlo:  # lo is the result where x < lo, unless lo > hi (then hi is)
            pick = x < lo if hi is None else (x < lo).logical_and(lo <= hi)
            glo = sum_to(where(pick, g, zero), lo.shape)
        if nhi:
            above = x > hi if lo is None else (x > hi).logical_or(lo > hi)
            ghi = sum_to(where(above, g, zero), hi.shape)
        return gx, glo, ghi


def _const(ctx: Function, value: Any, dtype: Any) -> Any:
    return ctx.xp.asarray(value, dtype=dtype, device=ctx.device.native)


@tensor_method("clamp", "clip")
def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """Limit every element of ``input`` to ``[min, max]``.

    Args:
        input: the tensor.
        min: lower bound, a number or a tensor broadcast against ``input`` (None: none).
        max: upper bound, a number or a tensor (None: none). Where ``min > max`` the
            result is ``max``.
    """
    if min is None and max is None:
        raise ValueError("clamp: at least one of 'min' or 'max' must not be None")
    x = input
    min, max = python_scalar(min), python_scalar(max)  # NumPy scalars count as numbers
    if min is not None and max is not None and _dimmed(min) != _dimmed(max):
        raise TypeError(f"clamp: min and max must both be numbers (or 0-d tensors) or both "
                        f"be tensors, as in PyTorch (got {type(min).__name__} and "
                        f"{type(max).__name__})")
    if min is not None and max is not None and (type(min) is Tensor) != (type(max) is Tensor):
        # a number with a 0-d tensor: PyTorch's clamp(Number, Number) overload takes the
        # tensor's value, which then promotes as a number (bool.clamp(-1.5, f64) is float32)
        min, max = (b.item() if type(b) is Tensor else b for b in (min, max))
    for b in (min, max):
        if b is not None:
            if not isinstance(b, (Tensor, *Scalar)):
                raise TypeError(f"clamp: bounds must be numbers or tensors, got "
                                f"{type(b).__name__}")
            x, _ = promote_pair(x, b)
    bounds = []
    for b in (min, max):
        if b is not None and type(b) is not Tensor:
            # 300 can't bound a uint8 (-1 wraps), 1e10 can't bound a float16
            b = checked_scalar("clamp", x.dtype, b, floats=True)
        if type(b) is Tensor:
            b = cast(b, x.dtype)
            broadcast_shapes("clamp", x.shape, b.shape)
        bounds.append(b)
    out = Clamp.apply(x, *bounds)
    if out.grad_fn is not None and (bounds[0] is not min or bounds[1] is not max):
        saved_by_pytorch(out, input, min, max)  # cast bounds: PyTorch keeps the originals
    return out


clip = clamp


def _dimmed(bound: Any) -> bool:
    """A bound PyTorch's argument parser takes only as a Tensor (a 0-d tensor is a number,
    unless it requires grad)."""
    return type(bound) is Tensor and (bound.ndim > 0 or bound.requires_grad)


@tensor_method()
def clamp_min(input: Tensor, min: Any) -> Tensor:  # noqa: A002
    """``clamp(input, min=min)``."""
    return clamp(input, min, None)


@tensor_method()
def clamp_max(input: Tensor, max: Any) -> Tensor:  # noqa: A002
    """``clamp(input, max=max)``."""
    return clamp(input, None, max)


# -- composites ---------------------------------------------------------------------------

@tensor_method()
def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """Linear interpolation ``input + weight * (end - input)``.

    Args:
        input: the start points.
        end: the end points (broadcast against ``input``).
        weight: a number or tensor of weights.
    """
    if (not input.dtype.is_floating_point and type(weight) is Tensor and not weight.ndim
            and weight.dtype.is_floating_point and type(end) is Tensor
            and end.dtype is input.dtype):
        # a 0-d floating weight promotes integer ends to its dtype, as in PyTorch
        input, end = cast(input, weight.dtype), cast(end, weight.dtype)
    elif (type(weight) is Tensor and type(end) is Tensor and not (weight.ndim or input.ndim
                                                                  or end.ndim)
            and weight.dtype.is_floating_point and weight.dtype is not input.dtype
            and end.dtype is input.dtype):
        # all 0-d, ends of one dtype: the weight promotes them (float32 ends, float64 weight)
        from ..dtypes import promote_types

        dt = promote_types(promote_types(input.dtype, end.dtype), weight.dtype)
        input, end = cast(input, dt), cast(end, dt)
    if not input.dtype.is_floating_point:
        raise DTypeError(f"lerp: expected floating tensors, got {input.dtype.name} (as in "
                         "PyTorch); call .float() first")
    for name, t in (("end", end), ("weight", weight)):
        # PyTorch does not promote; a 0-d weight counts as a number
        if type(t) is Tensor and t.dtype is not input.dtype and (name == "end" or t.ndim):
            raise DTypeError(f"lerp: {name} dtype {t.dtype.name} must equal the input's "
                             f"dtype {input.dtype.name}; convert it with .to()")
    if type(end) is not Tensor:
        raise TypeError(f"lerp: end must be a Tensor, got {type(end).__name__}")
    broadcast_shapes("lerp", input.shape, end.shape)
    bool_weight = type(weight) is Tensor and weight.dtype.kind == "b"
    if input.dtype.itemsize == 2:  # in float32 (PyTorch's opmath), rounded back once
        w = cast(weight, "float32") if type(weight) is Tensor and not bool_weight else weight
        return cast(lerp(cast(input, "float32"), cast(end, "float32"), w), input.dtype)
    if type(weight) is not Tensor:
        return Lerp.apply(input, end, None, scalar=python_scalar(weight))
    if weight.dtype is not input.dtype:
        weight = cast(weight, input.dtype)
    broadcast_shapes("lerp", input.shape, end.shape, weight.shape)
    return (_LerpBoolWeight if bool_weight else Lerp).apply(input, end, weight)


class Lerp(Function):
    """``lerp`` with PyTorch's gradients: ``g * (1 - w)``, ``g * w`` and ``g * (end -
    start)``, each one product (a composite's ``g - g * w`` is NaN where ``g`` is inf)."""

    pytorch_saves = ((2,), (2,), (0, 1, 2))

    def forward(ctx, x, end, w, scalar=None):
        ctx.shapes = (shape_of_raw(x), shape_of_raw(end), None if w is None else shape_of_raw(w))
        ctx.scalar = scalar
        nw = ctx.needs_input_grad[2]  # the ends only for the weight's gradient, as PyTorch
        ctx.save_for_backward(x if nw else None, end if nw else None, w)
        diff = end - x
        xp = ctx.xp
        if x.dtype == xp.float32 and ctx.device.type == "cpu":
            return _lerp_fma(xp, x, end, diff, scalar if w is None else w)
        # PyTorch's two-sided form: from the nearer end, so lerp(-inf, x, 0.5) is -inf
        if w is None:
            return x + scalar * diff if abs(scalar) < 0.5 else end - diff * (1 - scalar)
        return xp.where(xp.abs(w) < 0.5, x + w * diff, end - diff * (1 - w))

    def backward(ctx, g):
        x, end, w = ctx.saved_tensors
        nx, nend, nw = ctx.needs_input_grad
        sx, send, sw = ctx.shapes
        weight = ctx.scalar if w is None else w
        return (sum_to(g * (1 - weight), sx) if nx else None,
                sum_to(g * weight, send) if nend else None,
                sum_to(g * (end - x), sw) if nw else None)


def _lerp_fma(xp: Any, x: Any, end: Any, diff: Any, w: Any) -> Any:
    """float32 ``lerp`` as PyTorch's vectorised CPU loop computes it: one fused
    multiply-add from the nearer end, ``fma(w, diff, x)`` or ``fma(w - 1, diff, end)``,
    done in float64 (where the float32 product is exact) and rounded to float32."""
    f32, f64 = xp.float32, xp.float64
    if not hasattr(w, "dtype"):  # a number: PyTorch reads it in float32 (a tensor weight
        w = xp.asarray(w, dtype=f32)  # is float32 already, the input's dtype)
    small = xp.abs(w) < 0.5
    coeff = xp.where(small, w, w - xp.asarray(1, dtype=f32))
    base = xp.where(small, x, end)
    out = xp.astype(coeff, f64) * xp.astype(diff, f64) + xp.astype(base, f64)
    return xp.astype(out, f32)


class _LerpBoolWeight(Lerp):
    """``lerp`` with a bool weight tensor: PyTorch's backward computes ``1 - weight`` for
    the start's gradient, which it refuses for bool."""

    def backward(ctx, g):
        if ctx.needs_input_grad[0]:
            raise DTypeError("lerp: the start's gradient needs 1 - weight of a bool weight, "
                             "which PyTorch refuses; convert the weight with .float() first")
        return super().backward(g)


@tensor_method()
@autocast_op("addcmul")
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2`` (broadcasting).

    Args:
        input: the tensor added to.
        tensor1: first factor.
        tensor2: second factor.
        value: a number multiplying the product (truncated to an int for integer
            tensors, as in PyTorch).
    """
    _tensor_args("addcmul", input, tensor1, tensor2)
    # the three promote together (float16 input, int64 factors: float16), as in PyTorch
    dt = _result_type3(input, tensor1, tensor2)
    if dt.kind == "b":
        raise DTypeError("addcmul: not implemented for bool tensors, as in PyTorch; convert "
                         "them with .int() or .float() first")
    input, tensor1, tensor2 = (cast(t, dt) for t in (input, tensor1, tensor2))
    if dt.kind == "f" and dt.itemsize == 2:
        return _two_byte_addc(input, tensor1, tensor2, value, divide=False)
    prod = tensor1 * tensor2
    if value == 1:
        return input + prod
    if isinstance(value, float) and not (input.dtype.is_floating_point
                                         or prod.dtype.is_floating_point):
        value = checked_scalar("addcmul", prod.dtype, int(value))
    return input + value * prod


def _two_byte_addc(input: Tensor, t1: Tensor, t2: Tensor, value: Any, divide: bool,
                   int_divisor: bool = False) -> Tensor:
    """addcmul/addcdiv of float16/bfloat16 tensors as PyTorch computes them: in float32
    from ``value * t1``, rounded once; on the CPU addcmul's last step is its vectorised
    loop's fused multiply-add, done here in float64 (the float32 product is exact there).
    ``int_divisor``: addcdiv's ``t2`` was an integer tensor (the backward refuses)."""
    x, p, q = (cast(t, "float32") for t in (input, t1, t2))
    p = p * value
    if divide:
        out = x + (_div_int_divisor(p, q) if int_divisor else p / q)
    elif input.device.type == "cpu":
        out = cast(cast(p, "float64") * cast(q, "float64") + cast(x, "float64"), "float32")
    else:
        out = x + p * q
    return cast(out, input.dtype)


def _result_type3(*tensors: Tensor) -> Any:
    """PyTorch's promotion of several tensors: 0-d ones only raise the category."""
    from functools import reduce

    from ..dtypes import promote_types

    dimmed = [t.dtype for t in tensors if t.ndim]
    zero = [t.dtype for t in tensors if not t.ndim]
    if not dimmed or not zero:
        return reduce(promote_types, dimmed or zero)
    d, z = reduce(promote_types, dimmed), reduce(promote_types, zero)
    order = {"b": 0, "u": 1, "i": 1, "f": 2}
    return d if order[z.kind] <= order[d.kind] else z


def _tensor_args(op: str, *args: Any) -> None:
    if not all(type(a) is Tensor for a in args):
        raise TypeError(f"{op}(): input, tensor1 and tensor2 must be Tensors, as in PyTorch "
                        f"(got {', '.join(type(a).__name__ for a in args)})")


class _AddcdivIntDivisor(Div):
    """``tensor1 / tensor2`` in addcdiv with an integer (or bool) ``tensor2``: PyTorch's
    backward computes tensor1's gradient in tensor2's dtype, which it refuses."""

    def backward(ctx, g):
        raise DTypeError("addcdiv: the gradient of tensor1 is computed in tensor2's dtype, "
                         "which is not floating here; PyTorch's backward refuses too ('result "
                         "type Float can't be cast to the desired output type'); convert "
                         "tensor2 with .float() first")


_div_int_divisor = _binary(_AddcdivIntDivisor, "div", true_div=True, opmath=True)


@tensor_method()
@autocast_op("addcdiv")
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 / tensor2`` (broadcasting).

    Args:
        input: the tensor added to.
        tensor1: the numerator.
        tensor2: the denominator.
        value: a number multiplying the quotient.
    """
    _tensor_args("addcdiv", input, tensor1, tensor2)
    if not (tensor1.dtype.is_floating_point or tensor2.dtype.is_floating_point):
        raise DTypeError(f"addcdiv: integer division ({tensor1.dtype.name} / "
                         f"{tensor2.dtype.name}) is not supported, as in PyTorch; use "
                         "floating tensors or addcmul with a reciprocal")
    int_divisor = not tensor2.dtype.is_floating_point
    # the three promote together first, as in addcmul (and PyTorch)
    dt = _result_type3(input, tensor1, tensor2)
    input, tensor1, tensor2 = (cast(t, dt) for t in (input, tensor1, tensor2))
    if dt.kind == "f" and dt.itemsize == 2:
        return _two_byte_addc(input, tensor1, tensor2, value, divide=True,
                              int_divisor=int_divisor)
    quot = _div_int_divisor(tensor1, tensor2) if int_divisor else tensor1 / tensor2
    return input + (quot if value == 1 else value * quot)


from .activation import *  # noqa: E402,F401,F403 - re-exported through this module
from .activation import __all__ as _activations  # noqa: E402
from .logic import *  # noqa: E402,F401,F403
from .logic import __all__ as _logic  # noqa: E402

__all__ = _activations + _logic + [
    "sign", "floor", "ceil", "trunc", "fix", "round", "log1p", "expm1", "sinh", "cosh", "tan",
    "asin", "acos", "atan", "arcsin", "arccos", "arctan", "atan2", "arctan2", "square",
    "rsqrt", "erf", "clamp", "clip", "clamp_min", "clamp_max", "lerp", "addcmul", "addcdiv",
]
