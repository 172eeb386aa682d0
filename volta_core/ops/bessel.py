"""Modified Bessel functions of the first kind, orders 0 and 1: ``i0`` (also ``vt.i0``),
``i0e``, ``i1``, ``i1e`` (``vt.special``), and the Kaiser window built on ``i0``.

Computed on ``|x|`` as the exponentially scaled forms ``i0e = exp(-|x|) I0`` and
``i1e = exp(-|x|) I1``: the power series ``I0(t) = sum q^k / (k!)^2``, ``I1(t) = (t/2)
sum q^k / (k! (k+1)!)`` with ``q = t^2 / 4`` (positive terms: no cancellation) up to
``t = 25``, and beyond it Hankel's asymptotic expansion, whose smallest term there is below
1e-20. About 1e-15 relative in float64 (PyTorch's Chebyshev fits agree to that); float32
computes in float64 where the device has it, float16/bfloat16 in float32.
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.function import Function
from ..tensor import Tensor, tensor_method
from .elementwise import in_float32
from .gamma_functions import _widened
from .special import _floating_input

_SERIES_UP_TO = 25.0
_SERIES_TERMS = 64  # the terms of I0(25) fall below 1e-17 of the sum by k = 60
_ASYMPTOTIC_TERMS = 30


def _scaled(xp: Any, x: Any, order: int) -> Any:
    """``exp(-|x|) I_order(|x|)`` (order 0 or 1) of an array."""
    t = xp.abs(x)
    small = t <= _SERIES_UP_TO
    ts = xp.where(small, t, xp.zeros_like(t))
    q = ts * ts * 0.25
    term = xp.ones_like(t) if order == 0 else 0.5 * ts
    total = term
    for k in range(1, _SERIES_TERMS):
        term = term * q / (k * (k + order))
        total = total + term
    series = total * xp.exp(-ts)
    tb = xp.where(small, xp.full_like(t, _SERIES_UP_TO), t)
    mu = 4.0 * order * order
    term = xp.ones_like(t)
    total = term
    for k in range(1, _ASYMPTOTIC_TERMS):
        term = term * -(mu - (2 * k - 1) ** 2) / (k * 8.0 * tb)
        total = total + term
    asymptotic = total / xp.sqrt(2 * math.pi * tb)
    return xp.where(small, series, asymptotic)


def _i0e(xp: Any, x: Any) -> Any:
    out = _scaled(xp, x, 0)
    return xp.where(xp.isinf(x), xp.zeros_like(x), out)


def _i1e(xp: Any, x: Any) -> Any:
    out = _scaled(xp, x, 1)
    out = xp.where(xp.isinf(x), xp.zeros_like(x), out)
    return xp.where(x < 0, -out, out)


def _i0(xp: Any, x: Any) -> Any:
    t = xp.abs(x)
    return xp.where(xp.isinf(x), t, _scaled(xp, x, 0) * xp.exp(t))


def _i1(xp: Any, x: Any) -> Any:
    t = xp.abs(x)
    out = xp.where(xp.isinf(x), t, _scaled(xp, x, 1) * xp.exp(t))
    return xp.where(x < 0, -out, out)


class I0(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _widened(ctx, _i0, x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * I1.apply(x)


class I0e(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _widened(ctx, _i0e, x)

    def backward(ctx, g):  # (exp(-|x|) I0)' = i1e - sign(x) i0e
        (x,) = ctx.saved_tensors
        return g * (I1e.apply(x) - x.sign() * I0e.apply(x))


class I1(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _widened(ctx, _i1, x)

    def backward(ctx, g):  # I1' = I0 - I1 / x, 1/2 at 0
        (x,) = ctx.saved_tensors
        from .elementwise import where

        safe = where(x == 0, 1.0, x)
        return g * where(x == 0, 0.5, I0.apply(x) - I1.apply(x) / safe)


class I1e(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _widened(ctx, _i1e, x)

    def backward(ctx, g):  # (exp(-|x|) I1)' = i0e - i1e (sign(x) + 1/x), 1/2 at 0
        (x,) = ctx.saved_tensors
        from .elementwise import where

        safe = where(x == 0, 1.0, x)
        return g * where(x == 0, 0.5, I0e.apply(x) - I1e.apply(x) * (x.sign() + 1 / safe))


def _bessel(op: str, cls: type, input: Tensor) -> Tensor:
    x = _floating_input(op, input)
    if x.dtype.itemsize == 2:  # float16/bfloat16: in float32, rounded once
        return in_float32(cls.apply, x)
    return cls.apply(x)


@tensor_method()
def i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 0, elementwise."""
    return _bessel("i0", I0, input)


def i0e(input: Tensor) -> Tensor:
    """``exp(-|x|) * i0(x)``, which does not overflow (``vt.special.i0e``)."""
    return _bessel("i0e", I0e, input)


def i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 1 (``vt.special.i1``)."""
    return _bessel("i1", I1, input)


def i1e(input: Tensor) -> Tensor:
    """``exp(-|x|) * i1(x)`` (``vt.special.i1e``)."""
    return _bessel("i1e", I1e, input)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: Any = None, device: Any = None, requires_grad: bool = False
                  ) -> Tensor:
    """The Kaiser window ``i0(beta sqrt(1 - ((n - a) / a)^2)) / i0(beta)``,
    ``a = (N - 1) / 2``, for ``n < window_length`` (``N`` is ``window_length + 1`` when
    ``periodic``, whose last point is then dropped)."""
    from ..creation import arange, ones, zeros
    from ..dtypes import get_default_dtype, get_dtype

    if window_length < 0:
        raise ValueError(f"kaiser_window requires non-negative window_length, got "
                         f"window_length={window_length}")
    dtype = get_dtype(dtype) if dtype is not None else get_default_dtype()
    if not dtype.is_floating_point:
        raise TypeError(f"kaiser_window expects floating point dtypes, got {dtype.name}")
    if window_length <= 1:
        out = (ones if window_length else zeros)(window_length, dtype=dtype, device=device)
    else:
        n = window_length + 1 if periodic else window_length
        alpha = (n - 1) / 2.0
        x = arange(window_length, dtype=dtype, device=device)
        out = i0(beta * (1 - ((x - alpha) / alpha) ** 2).clamp(min=0).sqrt()) / i0(
            x.new_full((), beta))
    return out.requires_grad_() if requires_grad else out


__all__ = ["i0", "kaiser_window"]
