"""Rounded division: ``floor_divide``, ``a // b`` and ``div(..., rounding_mode=...)``.

Rounded quotients are piecewise constant, so their gradient is zero (PyTorch's ``div``
with a rounding mode does the same); ``floor_divide`` and ``//`` have no derivative in
PyTorch, and their backward raises here too. Integer inputs keep their dtype, and dividing an
integer by zero raises, as in PyTorch.
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.function import Function, no_derivative
from ..errors import DivisionByZeroError, DTypeError
from ..tensor import Tensor, tensor_method
from ._util import broadcast_shapes, promote_pair
from .elementwise import _arrays, in_float32, number_in_float32, operand_shapes
from .inplace import inplace

_MODES = ("trunc", "floor")


class RoundedDiv(Function):
    def forward(ctx, a, b, mode="floor"):
        xp = ctx.xp
        ctx.shapes = operand_shapes(a, b)
        a, b = _arrays(xp, a, b)
        vdt = ctx.device.volta_dtype(a.dtype)
        integer = not vdt.is_floating_point
        # nothing to divide (an empty operand): no error, as in PyTorch
        if integer and 0 not in a.shape and 0 not in b.shape and bool(xp.any(b == 0)):
            raise DivisionByZeroError(f"{'floor_divide' if mode == 'floor' else 'div'}: "
                                      "integer division by zero")
        if not integer:
            if vdt.itemsize == 2:  # PyTorch's CPU loops with one divisor round once
                per_step = ctx.device.type == "cpu" and math.prod(b.shape) != 1
                return _two_byte(xp, a, b, mode, per_step)
            return xp.floor_divide(a, b) if mode == "floor" else xp.trunc(a / b)
        q = xp.floor_divide(a, b)
        if mode == "floor":
            return q
        # C-style division: the floor quotient plus one where it rounded a negative down
        inexact = (a - q * b) != 0
        return xp.where(inexact & ((a < 0) != (b < 0)), q + 1, q)

    def backward(ctx, g):
        na, nb = ctx.needs_input_grad
        sa, sb = ctx.shapes
        return (g.new_zeros(sa) if na else None), (g.new_zeros(sb) if nb else None)


def _two_byte(xp: Any, a: Any, b: Any, mode: str, per_step: bool) -> Any:
    """Rounded quotients of float16/bfloat16 arrays, computed in float32 as PyTorch's
    kernels do: its CPU kernels round every step to the dtype (the truncated quotient is
    that of the rounded quotient; the floor goes through ``fmod`` as below, each
    intermediate rounded), its CUDA kernels, and its CPU kernels with a divisor of one
    element (a number, a 0-d tensor), round only the result (``per_step`` False).
    Checked against PyTorch CPU on 400,000 random pairs with zeros, infinities and NaN."""
    dt, f32 = a.dtype, xp.float32
    a, b = xp.astype(a, f32), xp.astype(b, f32)
    if not per_step:
        q = xp.floor_divide(a, b) if mode == "floor" else xp.trunc(a / b)
        return xp.astype(q, dt)

    def r(x: Any) -> Any:  # rounded to the dtype, kept in float32
        return xp.astype(xp.astype(x, dt), f32)

    q = r(a / b)
    if mode == "trunc":
        return xp.astype(xp.trunc(q), dt)
    mod = xp.copysign(xp.remainder(xp.abs(a), xp.abs(b)), a)  # fmod: exact
    div = r(r(a - mod) / b)
    div = xp.where((mod != 0) & ((b < 0) != (mod < 0)), r(div - 1), div)
    floor = xp.floor(div)
    floor = xp.where(r(div - floor) > 0.5, r(floor + 1), floor)
    floor = xp.where(div == 0, xp.copysign(xp.zeros_like(div), q), floor)
    return xp.astype(xp.where(b == 0, q, floor), dt)


class FloorDivide(RoundedDiv):
    """``floor_divide``: PyTorch's forward, and its backward, which refuses."""

    def backward(ctx, g):
        raise no_derivative("floor_divide", "use vt.div(a, b, rounding_mode='floor'), the "
                            "same quotient with a zero gradient, or .detach() the operands")


def rounded_div(op: str, input: Any, other: Any, rounding_mode: str) -> Tensor:
    """``input / other`` rounded by ``rounding_mode`` (``"trunc"`` or ``"floor"``)."""
    if rounding_mode not in _MODES:
        raise ValueError(f"{op}: expected rounding_mode to be one of None, 'trunc', or "
                         f"'floor' but found {rounding_mode!r}")
    if type(input) is not Tensor and type(other) is not Tensor:
        raise TypeError(f"{op}: expected a Tensor argument, got {type(input).__name__} and "
                        f"{type(other).__name__}")
    cls = FloorDivide if op == "floor_divide" else RoundedDiv
    b32 = number_in_float32(input, other)
    if b32 is not None:  # one divisor, read in float32: the float32 quotient rounded once
        return in_float32(lambda x: cls.apply(x, b32, mode=rounding_mode), input)
    a, b = promote_pair(input, other)
    dt = (a if type(a) is Tensor else b).dtype
    if dt.name == "bool":
        raise DTypeError(f"{op}: rounded division is not defined for bool tensors; convert "
                         "them with .int() or .float() first")
    if type(a) is Tensor and type(b) is Tensor:
        broadcast_shapes(op, a.shape, b.shape)
    elif type(a) is not Tensor:  # a Python scalar dividend: a 0-d tensor of the dtype
        a = b.new_full((), a)
    return cls.apply(a, b, mode=rounding_mode)


@tensor_method("floor_divide", "__floordiv__")
def floor_divide(input: Any, other: Any) -> Tensor:
    """``input // other``: the quotient rounded down (``div(..., rounding_mode='floor')``).

    Args:
        input: the dividend, a tensor or number.
        other: the divisor, a tensor or number (broadcast against ``input``).
    """
    return rounded_div("floor_divide", input, other, "floor")


def floor_divide_(self: Tensor, other: Any) -> Tensor:
    """``self //= other`` in place."""
    return inplace(self, "floor_divide_", lambda s: floor_divide(s, other), other)


Tensor.__rfloordiv__ = lambda self, other: floor_divide(other, self)
Tensor.floor_divide_ = floor_divide_
Tensor.__ifloordiv__ = floor_divide_

__all__ = ["floor_divide"]
