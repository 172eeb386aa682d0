"""Logical ops, float classification (``isnan``, ...) and ``nan_to_num``.

Logical ops and the tests are not differentiable; ``nan_to_num`` passes the gradient
where its input is finite.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from ..autograd.function import Function
from ..dtypes import bool_
from ..tensor import Tensor, tensor_method
from ._util import broadcast_shapes


def _const(ctx: Function, value: Any, dtype: Any) -> Any:
    return ctx.xp.asarray(value, dtype=dtype, device=ctx.device.native)


class _Logical(Function):
    differentiable = False
    fn = "logical_and"

    def forward(ctx, *arrays):
        return getattr(ctx.xp, ctx.fn)(*arrays)


class LogicalAnd(_Logical):
    fn = "logical_and"


class LogicalOr(_Logical):
    fn = "logical_or"


class LogicalXor(_Logical):
    fn = "logical_xor"


class LogicalNot(_Logical):
    fn = "logical_not"


class IsNan(_Logical):
    fn = "isnan"


class IsInf(_Logical):
    fn = "isinf"


class IsFinite(_Logical):
    fn = "isfinite"


def _as_bool(x: Any) -> Tensor:
    if type(x) is not Tensor:
        raise TypeError(f"expected a Tensor, got {type(x).__name__}")
    return x if x.dtype is bool_ else x != 0


def _logical(cls: type, name: str):
    def op(input: Tensor, other: Tensor) -> Tensor:
        a, b = _as_bool(input), _as_bool(other)
        broadcast_shapes(name, a.shape, b.shape)
        return cls.apply(a, b)

    op.__name__ = name
    op.__doc__ = (f"Elementwise ``{name}``: nonzero values count as True; returns a bool "
                  "tensor.\n\n    Args:\n        input: a tensor.\n        other: a tensor "
                  "broadcast against ``input``.\n    ")
    return tensor_method()(op)


logical_and = _logical(LogicalAnd, "logical_and")
logical_or = _logical(LogicalOr, "logical_or")
logical_xor = _logical(LogicalXor, "logical_xor")


class _Bitwise(Function):
    differentiable = False
    fn = "bitwise_and"

    def forward(ctx, a, b):
        return getattr(ctx.xp, ctx.fn)(a, b)


def _bitwise_operator(logical: Any, fn: str):
    cls = type(fn, (_Bitwise,), {"fn": fn})

    def op(self: Tensor, other: Any) -> Tensor:
        """Logical op on bool tensors, bitwise on integer tensors (``&``, ``|``, ``^``)."""
        if type(other) is not Tensor:
            is_bool = isinstance(other, bool) or type(other).__name__ == "bool_"
            if not is_bool and not isinstance(other, numbers.Integral):
                return NotImplemented
            if is_bool or self.dtype is not bool_:
                from ._util import wrap_int

                # an int out of the dtype's range wraps (300 ^ int8), as in PyTorch
                other = self.new_full((), bool(other) if is_bool
                                      else wrap_int(self.dtype, int(other)))
            else:  # bool tensor with an int: the int's category wins, as in PyTorch
                other = self.new_full((), int(other), dtype="int64")
        if self.dtype is bool_ and other.dtype is bool_:
            return logical(self, other)
        if self.dtype.is_floating_point or other.dtype.is_floating_point:
            raise TypeError(f"{fn} is only defined for bool and integer tensors, got "
                            f"{self.dtype.name} and {other.dtype.name}")
        from ._util import promote_pair

        a, b = promote_pair(self, other)
        broadcast_shapes(fn, a.shape, b.shape)
        return cls.apply(a, b)

    return op


Tensor.__and__ = Tensor.__rand__ = _bitwise_operator(logical_and, "bitwise_and")
Tensor.__or__ = Tensor.__ror__ = _bitwise_operator(logical_or, "bitwise_or")
Tensor.__xor__ = Tensor.__rxor__ = _bitwise_operator(logical_xor, "bitwise_xor")


class _Shift(Function):
    """``a << b`` or ``a >> b`` with PyTorch's result for a count outside ``[0, bits)``
    (negative, or the dtype's width or more): 0 for a left shift, the sign (0 or -1) for a
    right shift. Backends need not define such counts (C and WGSL don't), so they never
    see one."""

    differentiable = False
    fn = "bitwise_left_shift"

    def forward(ctx, a, b, bits=64):
        xp = ctx.xp
        ok = (b >= 0) & (b < bits)
        shifted = getattr(xp, ctx.fn)(a, xp.where(ok, b, xp.zeros_like(b)))
        fill = xp.zeros_like(shifted)
        if ctx.fn == "bitwise_right_shift":  # an arithmetic shift fills with the sign
            fill = xp.where(a < 0, fill - 1, fill)
        return xp.where(ok, shifted, fill)


class LeftShift(_Shift):
    fn = "bitwise_left_shift"


class RightShift(_Shift):
    fn = "bitwise_right_shift"


def _shift_operator(cls: type, symbol: str, reflected: bool = False):
    def op(self: Tensor, other: Any) -> Tensor:
        if type(other) is not Tensor:
            if isinstance(other, bool) or not isinstance(other, numbers.Integral):
                if isinstance(other, numbers.Number):
                    raise TypeError(f"{cls.fn}: shifts are defined for integer tensors and "
                                    f"integers, got {type(other).__name__} {other!r}")
                return NotImplemented
            from ._util import wrap_int

            # an int wraps into the tensor's dtype (256 >> int8 tensor is 0 >> ...), as in
            # PyTorch; a bool tensor with an int shifts in int64
            dt = "int64" if self.dtype is bool_ else self.dtype
            other = self.new_full((), wrap_int(self.dtype, int(other)) if dt != "int64"
                                  else int(other), dtype=dt)
        a, b = (other, self) if reflected else (self, other)
        if a.dtype.is_floating_point or b.dtype.is_floating_point or (
                a.dtype is bool_ and b.dtype is bool_):
            raise TypeError(f"{cls.fn} ({symbol}) is only defined for integer tensors, got "
                            f"{a.dtype.name} and {b.dtype.name}")
        from ._util import promote_pair

        a, b = promote_pair(a, b)
        broadcast_shapes(cls.fn, a.shape, b.shape)
        return cls.apply(a, b, bits=8 * a.dtype.itemsize)

    return op


Tensor.__lshift__ = _shift_operator(LeftShift, "<<")
Tensor.__rshift__ = _shift_operator(RightShift, ">>")
Tensor.__rlshift__ = _shift_operator(LeftShift, "<<", reflected=True)
Tensor.__rrshift__ = _shift_operator(RightShift, ">>", reflected=True)


@tensor_method()
def logical_not(input: Tensor) -> Tensor:
    """Elementwise logical NOT (zero becomes True); returns a bool tensor."""
    return LogicalNot.apply(_as_bool(input))


class BitwiseInvert(Function):
    differentiable = False

    def forward(ctx, x):
        return ctx.xp.bitwise_invert(x)


def _invert(self: Tensor) -> Tensor:
    """``~t``: logical NOT of a bool tensor, bitwise NOT of an integer tensor."""
    if self.dtype is bool_:
        return logical_not(self)
    if self.dtype.is_floating_point:
        raise TypeError(f"~ is only defined for bool and integer tensors, got {self.dtype.name}")
    return BitwiseInvert.apply(self)


Tensor.__invert__ = _invert


def _classify(cls: type, name: str, integer_value: bool):
    def op(input: Tensor) -> Tensor:
        if not input.dtype.is_floating_point:
            return input.new_full(input.shape, integer_value, dtype=bool_)
        return cls.apply(input)

    op.__name__ = name
    op.__doc__ = f"Elementwise ``{name}`` test; returns a bool tensor."
    return tensor_method()(op)


isnan = _classify(IsNan, "isnan", False)
isinf = _classify(IsInf, "isinf", False)
isfinite = _classify(IsFinite, "isfinite", True)


class NanToNum(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x, nan=0.0, posinf=0.0, neginf=0.0):
        xp = ctx.xp
        # PyTorch's gradient is g * isfinite(x): a NaN g stays NaN even where x was not finite
        ctx.save_for_backward(xp.astype(xp.isfinite(x), x.dtype))
        y = xp.where(x == math.inf, _const(ctx, posinf, x.dtype), x)
        y = xp.where(x == -math.inf, _const(ctx, neginf, x.dtype), y)
        return xp.where(xp.isnan(x), _const(ctx, nan, x.dtype), y)

    def backward(ctx, g):
        (finite,) = ctx.saved_tensors
        return g * finite


@tensor_method()
def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """Replace NaN, +inf and -inf with finite numbers.

    Args:
        input: the tensor.
        nan: the value for NaN.
        posinf: the value for +inf (the dtype's largest finite value when None).
        neginf: the value for -inf (the dtype's lowest finite value when None).
    """
    dt = input.dtype
    if not dt.is_floating_point:
        return input.clone()
    big = _FLOAT_MAX[dt.name]
    return NanToNum.apply(input, nan=nan, posinf=big if posinf is None else posinf,
                          neginf=-big if neginf is None else neginf)


_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
              "float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}


__all__ = ["logical_and", "logical_or", "logical_xor", "logical_not", "isnan", "isinf",
           "isfinite", "nan_to_num"]
