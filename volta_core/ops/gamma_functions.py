"""The gamma function family: ``lgamma``, ``digamma``, ``polygamma`` (orders 0 and 1),
``mvlgamma``, as elementwise differentiable ops written with ``xp`` (so every backend
runs them).

``lgamma`` uses Lanczos' approximation (g = 7, 9 terms); ``digamma`` and the trigamma
function shift the argument above 6 with the recurrence and finish with the asymptotic
series. Arguments below 0.5 use the reflection formulas. Accuracy is a few float32 ulp
(about 1e-13 relative in float64), not correctly rounded.
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.function import Function
from ..tensor import Tensor, tensor_method
from .special import _floating_input

_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028,
            771.32342877765313, -176.61502916214059, 12.507343278686905,
            -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _lgamma_array(xp: Any, x: Any) -> Any:
    reflect = x < 0.5
    z = xp.where(reflect, 1.0 - x, x) - 1.0
    series = xp.full_like(z, _LANCZOS[0])
    for i, c in enumerate(_LANCZOS[1:], 1):
        series = series + c / (z + i)
    t = z + 7.5
    right = _HALF_LOG_2PI + (z + 0.5) * xp.log(t) - t + xp.log(series)
    sin = xp.abs(xp.sin(math.pi * xp.where(reflect, x, 0.5 * xp.ones_like(x))))
    left = math.log(math.pi) - xp.log(sin) - right
    out = xp.where(reflect, left, right)
    pole = reflect & (x == xp.floor(x))  # 0, -1, -2, ...: +inf, as PyTorch
    return xp.where(pole, xp.full_like(x, math.inf), out)


def _shifted(xp: Any, x: Any, power: int) -> tuple[Any, Any]:
    """``sum_{k<6} 1/(x+k)^power`` and ``x + 6``."""
    acc = xp.zeros_like(x)
    for k in range(6):
        acc = acc + 1.0 / (x + k) ** power
    return acc, x + 6.0


def _digamma_array(xp: Any, x: Any) -> Any:
    reflect = x < 0.5
    z = xp.where(reflect, 1.0 - x, x)
    acc, y = _shifted(xp, z, 1)
    r = 1.0 / (y * y)
    tail = r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r / 132))))
    psi = xp.log(y) - 0.5 / y - tail - acc
    safe = xp.where(reflect, x, 0.25 * xp.ones_like(x))
    out = xp.where(reflect, psi - math.pi / xp.tan(math.pi * safe), psi)
    pole = reflect & (x == xp.floor(x))
    out = xp.where(pole, xp.full_like(x, math.nan), out)
    return xp.where(x == 0, xp.full_like(x, -math.inf), out)  # as PyTorch: -inf at 0


def _trigamma_array(xp: Any, x: Any) -> Any:
    reflect = x < 0.5
    z = xp.where(reflect, 1.0 - x, x)
    acc, y = _shifted(xp, z, 2)
    r = 1.0 / (y * y)
    series = (1.0 / y + 0.5 * r + (1.0 / y) * r * (
        1 / 6 - r * (1 / 30 - r * (1 / 42 - r * (1 / 30 - r * 5 / 66)))))
    psi1 = series + acc
    sin = xp.sin(math.pi * xp.where(reflect, x, 0.5 * xp.ones_like(x)))
    return xp.where(reflect, math.pi ** 2 / (sin * sin) - psi1, psi1)


class Lgamma(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _lgamma_array(ctx.xp, x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * Digamma.apply(x)


class Digamma(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _digamma_array(ctx.xp, x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * Trigamma.apply(x)


class Trigamma(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x):
        return _trigamma_array(ctx.xp, x)

    def backward(ctx, g):
        raise NotImplementedError("the derivative of polygamma(1, x) is not implemented")


@tensor_method()
def lgamma(input: Tensor) -> Tensor:
    """``log |Gamma(x)|``, elementwise (``+inf`` at 0, -1, -2, ...)."""
    return Lgamma.apply(_floating_input("lgamma", input))


@tensor_method()
def digamma(input: Tensor) -> Tensor:
    """The derivative of ``lgamma``, elementwise (``nan`` at 0, -1, -2, ...)."""
    return Digamma.apply(_floating_input("digamma", input))


@tensor_method()
def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of ``digamma`` (``n`` = 0 or 1 here)."""
    if n == 0:
        return digamma(input)
    if n == 1:
        return Trigamma.apply(_floating_input("polygamma", input))
    raise NotImplementedError(f"polygamma: only orders 0 and 1 are implemented, got {n}")


@tensor_method()
def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``, elementwise."""
    if bool((input <= (p - 1) / 2).any()):
        raise ValueError(f"mvlgamma: all elements must be greater than (p-1)/2 = "
                         f"{(p - 1) / 2}")
    total = lgamma(input)
    for j in range(1, p):
        total = total + lgamma(input - j / 2)
    return total + p * (p - 1) / 4 * math.log(math.pi)


__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma"]
