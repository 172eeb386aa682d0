"""Parts of a number: sign bits, copysign, fractional part, infinities, NaN-ignoring max/min,
mantissa and exponent (``frexp``, ``ldexp``), neighbouring floats (``nextafter``), the step
function (``heaviside``).

``signbit`` and ``copysign`` see the sign of -0.0 and of NaN, as IEEE 754 (and PyTorch)
do. ``fmax``/``fmin`` return the other operand where one is NaN; ``maximum``/``minimum``
propagate NaN.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function, carry_saved, saved_by_pytorch
from ..errors import DTypeError
from ..tensor import Tensor, tensor_method
from ._util import broadcast_shapes, checked_pair, python_scalar
from .elementwise import _default_float, cast, where
from .math import sign, trunc
from .movement import sum_to


class _Predicate(Function):
    differentiable = False
    test = ""

    def forward(ctx, x):
        xp = ctx.xp
        if ctx.test == "signbit":  # copysign reads the sign bit, also of -0.0 and NaN
            one = xp.ones_like(x)
            return xp.copysign(one, x) < 0
        inf = xp.asarray(float("inf"), dtype=x.dtype, device=ctx.device.native)
        return x == (inf if ctx.test == "posinf" else -inf)


class SignBit(_Predicate):
    test = "signbit"


class IsPosInf(_Predicate):
    test = "posinf"


class IsNegInf(_Predicate):
    test = "neginf"


def _tensor(op: str, x: Any) -> Tensor:
    if type(x) is not Tensor:
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    return x


@tensor_method()
def signbit(input: Tensor) -> Tensor:
    """Whether the sign bit is set (True for -0.0 and negative NaN); a bool tensor."""
    x = _tensor("signbit", input)
    if x.dtype.kind in "bu":
        return x.new_zeros(x.shape, dtype="bool")
    if x.dtype.kind == "i":
        return x < 0
    return SignBit.apply(x.float() if x.dtype.name == "bfloat16" else x)


def _infinity(cls: type, name: str):
    def op(input: Tensor) -> Tensor:
        x = _tensor(name, input)
        if not x.dtype.is_floating_point:  # integers are never infinite
            return x.new_zeros(x.shape, dtype="bool")
        return cls.apply(x)

    op.__name__ = name
    op.__doc__ = f"Whether each element is {'+' if 'pos' in name else '-'}inf; a bool tensor."
    return tensor_method()(op)


isposinf = _infinity(IsPosInf, "isposinf")
isneginf = _infinity(IsNegInf, "isneginf")


@tensor_method()
def sgn(input: Tensor) -> Tensor:
    """The sign of each element (``sign`` for real tensors): -1, 0 or 1; zero gradient."""
    x = _tensor("sgn", input)
    if x.dtype.name == "bool":
        return x.clone()
    if x.dtype.is_floating_point:  # NaN has sign 0 in PyTorch
        out = where(x.isnan(), 0.0, sign(x))
        saved_by_pytorch(out, x, out, op="sgn")  # PyTorch's sgn saves both (for complex)
        return out
    return sign(x)


@tensor_method()
def positive(input: Tensor) -> Tensor:
    """``input`` itself (``+input``); bool tensors are refused, as in PyTorch."""
    x = _tensor("positive", input)
    if x.dtype.name == "bool":
        raise DTypeError("positive: the `+` operator on a bool tensor is not supported; "
                         "use logical ops, or .int() first")
    return x


@tensor_method()
def frac(input: Tensor) -> Tensor:
    """The fractional part ``x - trunc(x)`` (sign of ``x``); gradient 1."""
    x = _tensor("frac", input)
    if not x.dtype.is_floating_point:
        raise DTypeError(f"frac: expected a floating tensor, got {x.dtype.name}")
    return x - trunc(x)


# -- binary -------------------------------------------------------------------------------

class CopySign(Function):
    def forward(ctx, a, b):
        xp = ctx.xp
        out = xp.copysign(a, b)
        ctx.shapes = (tuple(a.shape), tuple(b.shape))
        ctx.save_for_backward(a, out)
        return out

    def backward(ctx, g):
        a, out = ctx.saved_tensors
        na, nb = ctx.needs_input_grad
        sa, sb = ctx.shapes
        ga = None
        if na:  # +-1 where the sign flipped or not; 0 at a == 0, as in PyTorch
            zero = a == 0
            ga = sum_to(g * where(zero, 0.0, out / where(zero, 1.0, a)), sa)
        return ga, (g.new_zeros(sb) if nb else None)


class FMax(Function):
    pytorch_saves = ((0, 1), (0, 1))

    low = False

    def forward(ctx, a, b):
        xp = ctx.xp
        ctx.shapes = (tuple(a.shape), tuple(b.shape))
        pick_a = (a <= b) if ctx.low else (a >= b)
        if ctx.device.volta_dtype(a.dtype).is_floating_point:
            pick_a = pick_a | xp.isnan(b)
            ctx.save_for_backward(pick_a)
        return xp.where(pick_a, a, b)

    def backward(ctx, g):
        (pick_a,) = ctx.saved_tensors
        sa, sb = ctx.shapes
        na, nb = ctx.needs_input_grad
        zero = g.new_zeros(())
        return (sum_to(where(pick_a, g, zero), sa) if na else None,
                sum_to(where(pick_a, zero, g), sb) if nb else None)


class FMin(FMax):
    low = True


def _pair(op: str, a: Any, b: Any, scalars: bool) -> tuple[Tensor, Tensor]:
    a, b = checked_pair(op, a, b, scalars)
    if type(a) is not Tensor:
        a = b.new_full((), a)
    elif type(b) is not Tensor:
        b = a.new_full((), b)
    broadcast_shapes(op, a.shape, b.shape)
    return a, b


@tensor_method()
def copysign(input: Tensor, other: Any) -> Tensor:
    """``|input|`` with the sign of ``other`` (its sign bit: -0.0 counts as negative).

    Args:
        input: a tensor; integers compute in the default float dtype.
        other: a tensor or number giving the signs.
    """
    a, b = _pair("copysign", _tensor("copysign", input), other, scalars=True)
    dt = a.dtype if a.dtype.is_floating_point else _default_float()
    work = "float32" if dt.name in ("bfloat16", "float16") else dt
    # each operand goes to the float dtype from its own value, not through the integer
    # common dtype (copysign(uint8, -1) is negative, as in PyTorch)
    b = other if type(other) is Tensor else a.new_full((), float(python_scalar(other)),
                                                       dtype=work)
    out = cast(CopySign.apply(cast(input, work), cast(b, work)), dt)
    # PyTorch's copysign saves its result, and input for input's gradient
    saved_by_pytorch(out, input if input.requires_grad else None, out, op="copysign")
    return out


def _fextremum(cls: type, name: str):
    def op(input: Tensor, other: Tensor) -> Tensor:
        a, b = _pair(name, input, other, scalars=False)
        out = cls.apply(a, b)
        if out.grad_fn is not None and (a is not input or b is not other):
            # an operand cast for the op: PyTorch's backward saves the original
            carry_saved(out, out, (a, input), (b, other))
        return out

    op.__name__ = name
    which = "maximum" if name == "fmax" else "minimum"
    op.__doc__ = (f"Elementwise {which} that ignores NaN: where one operand is NaN the "
                  f"other is returned (NaN only where both are). Ties go to ``input``.")
    return tensor_method()(op)


fmax = _fextremum(FMax, "fmax")
fmin = _fextremum(FMin, "fmin")



# -- mantissa and exponent ----------------------------------------------------------------

def _pow2(xp: Any, k: Any, dtype: Any) -> Any:
    """``2.0 ** k`` for integer-valued ``k`` (``|k| < 2048``) in ``dtype``, exact where it
    is a normal number: the namespace's ``ldexp``, else a product of squarings of 2 picked
    by the bits of ``|k|`` (products and reciprocals of powers of two are exact; a
    backend's ``pow`` need not be)."""
    one = xp.ones_like(k, dtype=dtype)
    if hasattr(xp, "ldexp"):
        return xp.ldexp(one, xp.astype(k, xp.int32))
    n, out, sq = xp.abs(xp.astype(k, dtype)), one, one + one
    for _ in range(11):
        out = xp.where(xp.remainder(n, 2.0) == 1, out * sq, out)
        n, sq = xp.floor(n / 2), sq * sq
    return xp.where(k < 0, one / out, out)


class FrexpExponent(Function):
    """The exponent ``e`` (int32) of ``x = m * 2**e`` with ``0.5 <= |m| < 1``; 0 for zero,
    infinities and NaN."""

    differentiable = False

    def forward(ctx, x):
        xp = ctx.xp
        if hasattr(xp, "frexp"):
            return xp.astype(xp.frexp(x)[1], xp.int32)
        a = xp.abs(x)
        real = xp.isfinite(x) & (a > 0)
        safe = xp.where(real, a, xp.ones_like(a))
        e = xp.floor(xp.log2(safe)) + 1  # log2 may round across a power of two: fixed below
        m = _scaled(xp, safe, -e)
        e = xp.where(m >= 1, e + 1, xp.where(m < 0.5, e - 1, e))
        return xp.astype(xp.where(real, e, xp.zeros_like(e)), xp.int32)


def _scaled(xp: Any, x: Any, k: Any) -> Any:
    """``x * 2**k`` in two exact steps (a float's exponent range is too small for one power
    of two to scale a subnormal up or the largest numbers down)."""
    half = xp.trunc(k / 2)
    return x * _pow2(xp, half, x.dtype) * _pow2(xp, k - half, x.dtype)


class ScaleByPow2(Function):
    """``x * 2**k`` for integer-valued ``k``, exactly; the gradient is ``g * 2**k`` (for
    frexp's mantissa ``k = -exponent``: PyTorch's ``g / 2**exponent``)."""

    def forward(ctx, x, k):
        ctx.save_for_backward(k)
        return _scaled(ctx.xp, x, k)

    def backward(ctx, g):
        (k,) = ctx.saved_tensors
        return ScaleByPow2.apply(g, k), None


@tensor_method()
def frexp(input: Tensor) -> tuple[Tensor, Tensor]:
    """Split a float into mantissa and exponent: ``input = mantissa * 2**exponent`` with
    ``0.5 <= |mantissa| < 1`` (zero, infinities and NaN keep their value with exponent 0).

    Returns:
        ``(mantissa, exponent)``: the mantissa in ``input``'s dtype (differentiable, as in
        PyTorch: gradient ``g / 2**exponent``), the exponent as int32.
    """
    x = _tensor("frexp", input)
    if not x.dtype.is_floating_point:
        raise DTypeError(f"frexp() only supports floating-point dtypes, got {x.dtype.name}")
    work = "float32" if x.dtype.name in ("bfloat16", "float16") else x.dtype
    xw = cast(x, work)
    e = FrexpExponent.apply(xw)
    return cast(ScaleByPow2.apply(xw, cast(-e, work)), x.dtype), e


@tensor_method()
def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``input * 2**other``, as PyTorch computes it (differentiable through both).

    Args:
        input: the mantissas; integers compute in the default float dtype.
        other: the exponents (a tensor, usually integer).
    """
    x = _tensor("ldexp", input)
    dt = x.dtype if x.dtype.is_floating_point else _default_float()
    y = _tensor("ldexp", other)
    if y.dtype.is_floating_point:  # a float exponent takes part in the promotion
        from ..dtypes import promote_types

        dt = promote_types(dt, y.dtype)
    from .elementwise import pow as power

    return cast(x, dt) * cast(power(2.0, y), dt)


class NextAfter(Function):
    differentiable = False

    def forward(ctx, a, b):
        xp = ctx.xp
        if not hasattr(xp, "nextafter"):
            raise DTypeError(f"nextafter: the {ctx.device.backend.name} backend has no "
                             "nextafter; move the tensors to the cpu")
        # equal operands give ``b`` (C's rule: nextafter(-0.0, 0.0) is 0.0), which NumPy's
        # float16 loop does not
        return xp.where(a == b, b, xp.nextafter(a, b))


@tensor_method()
def nextafter(input: Tensor, other: Any) -> Tensor:
    """The next float after ``input`` towards ``other`` (elementwise; not differentiable).

    Args:
        input: a floating tensor.
        other: a floating tensor (or number) giving the direction.
    """
    a, b = _pair("nextafter", _tensor("nextafter", input), other, scalars=True)
    if not a.dtype.is_floating_point:
        raise DTypeError(f"nextafter is only defined for floating tensors, got "
                         f"{a.dtype.name}")
    return NextAfter.apply(a, b)


class Heaviside(Function):
    differentiable = False

    def forward(ctx, x, values):
        xp = ctx.xp
        step = xp.astype(x > 0, x.dtype)  # NaN gives 0, as PyTorch's (x > 0)
        return xp.where(x == 0, values, step)


@tensor_method()
def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """The step function: 0 where ``input < 0``, ``values`` where ``input == 0``, 1 where
    ``input > 0`` (and 0 for NaN, as PyTorch); not differentiable.

    Args:
        input: a tensor.
        values: a tensor of ``input``'s dtype, broadcast against it.
    """
    x, v = _tensor("heaviside", input), _tensor("heaviside", values)
    if x.dtype is not v.dtype:
        raise DTypeError(f"heaviside is not yet implemented for tensors with different "
                         f"dtypes ({x.dtype.name} and {v.dtype.name}), as in PyTorch; "
                         "convert one of them")
    shape = broadcast_shapes("heaviside", x.shape, v.shape)
    return Heaviside.apply(x.expand(shape) if x.shape != shape else x,
                           v.expand(shape) if v.shape != shape else v)


__all__ = ["signbit", "isposinf", "isneginf", "sgn", "positive", "frac", "copysign", "fmax",
           "fmin", "frexp", "ldexp", "nextafter", "heaviside"]
