"""``threshold``: replace every element not above a threshold by a value."""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..dtypes import checked_scalar
from ..errors import DTypeError
from ..tensor import Tensor
from .elementwise import in_float32
from .indexing import _as_python
from .inplace import inplace


class Threshold(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x, threshold=0.0, value=0.0):
        xp = ctx.xp
        dev = ctx.device.native
        below = x <= xp.asarray(threshold, dtype=x.dtype, device=dev)  # NaN stays NaN
        ctx.save_for_backward(below)
        return xp.where(below, xp.asarray(value, dtype=x.dtype, device=dev), x)

    def backward(ctx, g):
        (below,) = ctx.saved_tensors
        return g.masked_fill(below, 0.0)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``value`` where ``input <= threshold``, else ``input`` (NaN is kept).

    Args:
        input: the tensor.
        threshold: the value to compare with.
        value: what replaces the elements not above ``threshold``.
        inplace: write the result into ``input``.
    """
    if type(input) is not Tensor:
        raise TypeError(f"threshold: expected a Tensor, got {type(input).__name__}")
    if input.dtype.name == "bool":
        raise DTypeError("threshold: bool tensors are not supported; convert with .int()")
    if inplace:
        return threshold_(input, threshold, value)
    return _threshold(input, threshold, value)


def _threshold(x: Tensor, th: Any, value: Any) -> Tensor:
    # checked before the cast (-0.5 does not fit a uint8); an int -1 wraps to 255
    th, value = (_as_python(x, checked_scalar("threshold", x.dtype, v, floats=True))
                 for v in (th, value))
    if x.dtype.name == "bfloat16":
        return in_float32(Threshold.apply, x, threshold=th, value=value)
    return Threshold.apply(x, threshold=th, value=value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place :func:`threshold`."""
    return inplace(input, "threshold_", lambda s: _threshold(s, threshold, value))


__all__ = ["threshold"]
