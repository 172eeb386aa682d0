"""The inverse error function ``erfinv``, differentiable.

For ``|y| >= 0.1`` an initial guess from Winitzki's closed-form approximation is refined
by three Newton steps on ``erfc(x) = 1 - |y|`` (each step squares the error); below, the
Maclaurin series. Written in ``xp`` terms so every backend runs it; the gradient is
``sqrt(pi) / 2 * exp(erfinv(y) ** 2)``.
"""

from __future__ import annotations

import math

from ..autograd.function import Function
from ..tensor import Tensor, tensor_method
from .elementwise import in_float32
from .special import _erfc_array, _floating_input

_A = 0.147  # Winitzki's constant
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


class Erfinv(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, y):
        xp = ctx.xp
        inside = (y > -1) & (y < 1)
        ay = xp.where(inside, xp.abs(y), xp.zeros_like(y))  # odd: solve for |y|, sign last
        log_term = xp.log(1.0 - ay * ay)
        first = 2.0 / (math.pi * _A) + 0.5 * log_term
        x = xp.sqrt(xp.sqrt(first * first - log_term / _A) - first)
        wide = ctx.device.volta_dtype(y.dtype).itemsize == 8
        for _ in range(3):  # erf(x) - y as (1 - y) - erfc(x): no cancellation near 1
            residual = (1.0 - ay) - _erfc_array(xp, x, wide)
            x = x - residual / (_TWO_OVER_SQRT_PI * xp.exp(-x * x))
        z = (math.sqrt(math.pi) / 2) * ay  # small |y|: the Maclaurin series is exact enough
        z2 = z * z
        series = z * (1 + z2 * (1 / 3 + z2 * (7 / 30 + z2 * (127 / 630 + z2 * 4369 / 22680))))
        x = xp.where(ay < 0.1, series, x)
        x = xp.where(y < 0, -x, x)
        x = xp.where(y == 0, y, x)  # a zero keeps its sign, as PyTorch's (erfinv(-0.0) is -0.0)
        edge = xp.where(y == 1, xp.full_like(y, math.inf),
                        xp.where(y == -1, xp.full_like(y, -math.inf),
                                 xp.full_like(y, math.nan)))
        out = xp.where(inside, x, edge)
        ctx.save_for_backward(y)  # PyTorch's: the input, erfinv recomputed in backward
        return out

    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        x = erfinv(y)
        return g * (x * x).exp() * (math.sqrt(math.pi) / 2)


@tensor_method()
def erfinv(input: Tensor) -> Tensor:
    """The inverse of ``erf`` on (-1, 1); +-inf at +-1, NaN outside."""
    x = _floating_input("erfinv", input)
    if x.dtype.itemsize < 4:
        return in_float32(Erfinv.apply, x)
    return Erfinv.apply(x)


__all__ = ["erfinv"]
