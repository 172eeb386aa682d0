"""The scaled complementary error function and the normal distribution's log-CDF and
inverse CDF: ``erfcx``, ``log_ndtr`` and ``ndtri`` (``vt.special``), with PyTorch's
values in the tails and its gradients.

- ``erfcx(x) = exp(x^2) erfc(x)``: from ``|x| = 1``, ``1 / (sqrt(pi) f)`` with ``f``
  Laplace's continued fraction (no exp, so no overflow or underflow: ``erfcx(1e300)`` is
  finite), below it ``exp(x^2) erfc(x)``, and ``2 exp(x^2) - erfcx(-x)`` for negative
  ``x`` (inf once ``exp(x^2)`` overflows).
- ``log_ndtr(x)``: ``log1p(-erfc(x / sqrt 2) / 2)`` from -1 up, ``log(erfcx(-x / sqrt 2) /
  2) - x^2 / 2`` below (finite far into the left tail: ``log_ndtr(-40)`` is -804.6).
- ``ndtri(p)``: Newton's method on ``log_ndtr(x) = log(p)`` from Abramowitz and Stegun's
  26.2.23 (error below 4.5e-4), so the tails keep full relative precision
  (``ndtri(1e-300)`` is -37.05), then near the median Newton on ``erf``'s series (for
  relative precision where the result is near 0); ``p > 1/2`` through ``-ndtri(1 - p)`` (exact
  there).

float32 and narrower inputs compute as erfc's (``special.evaluate_wide``): in float64 on
the CPU, rounded once; on GPUs in float32 (which flush subnormals to zero: ``ndtri`` of a
subnormal probability is off there).
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.function import Function
from ..tensor import Tensor
from .math import erfc64
from .special import _erfc_array, _floating_input, _laplace_cf, evaluate_wide

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)


def _erfcx_array(xp: Any, x: Any, wide: bool) -> Any:
    """``erfcx`` of a floating array (see the module docstring): the continued fraction
    from 1 on (200 levels in float64, as ``erfc64``; 100 in float32)."""
    s, depth = 1.0, (200 if wide else 100)
    a = xp.abs(x)
    small = xp.where(a < s, a, xp.zeros_like(a))
    near = xp.exp(small * small) * (erfc64(xp, small) if wide
                                    else _erfc_array(xp, small, False))
    big = xp.where(a < s, xp.full_like(a, s), a)
    far = 1.0 / (_SQRT_PI * _laplace_cf(xp, big, depth))
    pos = xp.where(a < s, near, far)
    neg_x = xp.where(x < 0, x, xp.zeros_like(x))
    out = xp.where(x < 0, 2.0 * xp.exp(neg_x * neg_x) - pos, pos)
    return xp.where(xp.isnan(x), x, out)


def _log_ndtr_array(xp: Any, x: Any, wide: bool) -> Any:
    left = xp.where(x < -1.0, x, xp.full_like(x, -1.0))
    tail = xp.log(_erfcx_array(xp, left * -math.sqrt(0.5), wide) * 0.5) - left * left * 0.5
    rest = xp.where(x < -1.0, xp.zeros_like(x), x) * math.sqrt(0.5)
    body = xp.log1p((erfc64(xp, rest) if wide else _erfc_array(xp, rest, False)) * -0.5)
    return xp.where(x < -1.0, tail, body)


def _ndtri_array(xp: Any, p: Any, wide: bool) -> Any:
    q = xp.where(p > 0.5, 1.0 - p, p)  # exact for p in [0.5, 1]
    ok = (q > 0) & (q <= 0.5)
    q = xp.where(ok, q, xp.full_like(q, 0.25))
    t = xp.sqrt(-2.0 * xp.log(q))
    x = -(t - (2.515517 + t * (0.802853 + t * 0.010328))
          / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    log_q = xp.log(q)
    for _ in range(4 if wide else 3):  # Newton on log_ndtr(x) = log(q): quadratic
        ln = _log_ndtr_array(xp, x, wide)
        slope = xp.exp(-0.5 * x * x - ln) / _SQRT_2PI  # d log_ndtr / dx
        x = x - (ln - log_q) / slope
    # near the median (|x| < 0.68), Newton on erf(x / sqrt 2) / 2 = q - 1/2 (exact), for
    # x's relative precision where it is near 0
    central = q > 0.25
    for _ in range(2):
        xc = xp.where(central, x, xp.zeros_like(x))
        pdf = xp.exp(-0.5 * xc * xc) / _SQRT_2PI
        x = xp.where(central, xc - (0.5 * _erf_series(xp, xc * math.sqrt(0.5)) - (q - 0.5))
                     / pdf, x)
    x = xp.where(p > 0.5, -x, x)
    x = xp.where(p == 0.5, xp.zeros_like(x), x)
    x = xp.where(p == 0, xp.full_like(x, -math.inf), x)
    x = xp.where(p == 1, xp.full_like(x, math.inf), x)
    bad = xp.isnan(p) | (p < 0) | (p > 1)
    return xp.where(bad, xp.full_like(x, math.nan), x)


def _erf_series(xp: Any, z: Any) -> Any:
    """``erf(z)`` for ``|z| < 1/2`` from its Maclaurin series (14 terms: 1e-18 there), to
    the relative precision of the dtype near 0."""
    z2 = z * z
    term = z
    total = z
    for n in range(1, 14):
        term = term * (-z2 / n)
        total = total + term / (2 * n + 1)
    return (2.0 / _SQRT_PI) * total


class Erfcx(Function):
    def forward(ctx, x):
        y = evaluate_wide(ctx, _erfcx_array, x)
        ctx.save_for_backward(x, y)
        return y

    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * (2.0 * x * y - 2.0 / _SQRT_PI)  # PyTorch's formula


class LogNdtr(Function):
    def forward(ctx, x):
        y = evaluate_wide(ctx, _log_ndtr_array, x)
        ctx.save_for_backward(x, y)
        return y

    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * (-(y + x * x * 0.5)).exp() / _SQRT_2PI  # pdf / cdf, without overflow


class Ndtri(Function):
    def forward(ctx, p):
        y = evaluate_wide(ctx, _ndtri_array, p)
        ctx.save_for_backward(y)
        return y

    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * _SQRT_2PI * (y * y * 0.5).exp()


def erfcx(input: Tensor) -> Tensor:
    """The scaled complementary error function ``exp(x^2) erfc(x)``, finite for large
    ``x`` (``vt.special.erfcx``)."""
    return Erfcx.apply(_floating_input("erfcx", input))


def log_ndtr(input: Tensor) -> Tensor:
    """The log of the standard normal CDF, accurate far into the left tail
    (``vt.special.log_ndtr``)."""
    return LogNdtr.apply(_floating_input("log_ndtr", input))


def ndtri(input: Tensor) -> Tensor:
    """The inverse of the standard normal CDF (its quantile function): -inf at 0, inf at
    1, NaN outside ``[0, 1]`` (``vt.special.ndtri``)."""
    return Ndtri.apply(_floating_input("ndtri", input))


__all__ = ["erfcx", "log_ndtr", "ndtri"]
