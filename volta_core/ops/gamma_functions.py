"""The gamma function family: ``lgamma``, ``digamma``, ``polygamma`` (any order: from 2 on
through Hurwitz's ``zeta``), ``mvlgamma``, as elementwise differentiable ops written with
``xp`` (so every backend runs them).

``lgamma`` uses Lanczos' approximation (g = 7, 9 terms); ``digamma`` and the trigamma
function shift the argument above 10 with the recurrence and finish with the asymptotic
series. Arguments below 0.5 use the reflection formulas. float32 computes in float64
where the device has it. Accuracy is about 1e-13 relative in float64 (absolute near the
zeros of lgamma), not correctly rounded.
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
    # exact zeros at 1 and 2, +inf at the poles 0, -1, -2, ... and at +-inf, as PyTorch
    out = xp.where((x == 1.0) | (x == 2.0), xp.zeros_like(x), out)
    pole = (reflect & (x == xp.floor(x))) | (xp.abs(x) == math.inf)
    return xp.where(pole, xp.full_like(x, math.inf), out)


_SHIFT = 10  # the asymptotic series' next term is ~0.02 / y**12: 2e-14 at y = 10


def _shifted(xp: Any, x: Any, power: int) -> tuple[Any, Any]:
    """``sum_{k<10} 1/(x+k)^power`` and ``x + 10``."""
    acc = xp.zeros_like(x)
    for k in range(_SHIFT):
        acc = acc + 1.0 / (x + k) ** power
    return acc, x + float(_SHIFT)


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
    # as PyTorch: -inf at +0, +inf at -0 (copysign(inf, -x))
    return xp.where(x == 0, xp.copysign(xp.full_like(x, math.inf), -x), out)


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


def _widened(ctx: Function, fn: Any, x: Any) -> Any:
    """``fn(xp, x)``, float32 (and float16/bfloat16, rounded back) computed in float64
    where the device has it: the series' rounding is then far below float32's (near
    lgamma's zeros at 1 and 2 it is the whole value in float32: 5e-7 at 1.0001, where
    lgamma is -6e-5)."""
    xp = ctx.xp
    dt = ctx.device.volta_dtype(x.dtype)
    if dt.kind == "f" and dt.itemsize == 2:  # float16/bfloat16: as float32, rounded once
        return xp.astype(_widened(ctx, fn, xp.astype(x, xp.float32)), x.dtype)
    if x.dtype == xp.float32 and "float64" in ctx.device.backend.dtype_names(
            ctx.device.index):
        return xp.astype(fn(xp, xp.astype(x, xp.float64)), xp.float32)
    return fn(xp, x)


def _bernoulli_factors(count: int) -> tuple[float, ...]:
    """``B_2j / (2j)!`` for ``j = 1..count`` (Euler-Maclaurin's coefficients), exactly from
    the Bernoulli numbers' recurrence."""
    from fractions import Fraction

    b = [Fraction(1)]
    for m in range(1, 2 * count + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return tuple(float(b[2 * j] / math.factorial(2 * j)) for j in range(1, count + 1))


_EM = _bernoulli_factors(12)
_ZETA_SHIFT = 20  # terms summed before the expansion (exact to ~1e-16 from q + 20 >= 9)


def _zeta_array(xp: Any, s: Any, q: Any) -> Any:
    """Hurwitz's zeta ``sum_k (q + k)**-s`` (s > 1): ``_ZETA_SHIFT`` terms, then the
    Euler-Maclaurin expansion at ``w = q + _ZETA_SHIFT``. As PyTorch (Cephes): inf for
    ``s == 1`` and at ``q`` = 0, -1, -2, ...; NaN for ``s < 1`` and for a non-integer ``s``
    with ``q < 0``; but 0 at ``q = inf`` (the limit; PyTorch's gives NaN there). Accurate
    to ~1e-15 relative for ``q > -11``."""
    acc = xp.zeros_like(q + s)
    for k in range(_ZETA_SHIFT):
        acc = acc + xp.pow(q + k, -s)
    w = q + float(_ZETA_SHIFT)
    tail = xp.pow(w, 1.0 - s) / (s - 1.0) + 0.5 * xp.pow(w, -s)
    rising, power = xp.ones_like(acc), xp.pow(w, -s - 1.0)  # s (s+1) ... and w**(-s-2j+1)
    for j, c in enumerate(_EM):
        rising = rising * (s + 2 * j) if j == 0 else rising * (s + 2 * j - 1) * (s + 2 * j)
        tail = tail + c * rising * power
        power = power / (w * w)
    out = acc + tail
    pole = (q <= 0) & (q == xp.floor(q))
    out = xp.where(pole, xp.full_like(out, math.inf), out)
    out = xp.where(s == 1, xp.full_like(out, math.inf), out)
    return xp.where(s < 1, xp.full_like(out, math.nan), out)


class Zeta(Function):
    """``zeta(s, q)``; the gradient w.r.t. ``q`` is ``-s zeta(s + 1, q)`` (PyTorch has none
    w.r.t. ``s``)."""

    def forward(ctx, s, q):
        ctx.save_for_backward(s, q)
        return _widened(ctx, lambda xp, a: _zeta_array(xp, xp.astype(s, a.dtype), a), q)

    def backward(ctx, g):
        s, q = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative of zeta with respect to its first "
                                      "argument is not implemented (as in PyTorch)")
        from .movement import sum_to

        return None, sum_to(g * -s * Zeta.apply(s + 1, q), tuple(q.shape))


_IGAMMA_BATCH = 50  # series terms or fraction levels between two convergence checks
_IGAMMA_MAX = 4000  # their most: enough for a up to ~1e5 near x = a


def _igamma_array(xp: Any, a: Any, x: Any, upper: bool) -> Any:
    """The regularized lower (or ``upper``) incomplete gamma function of float arrays
    (broadcast): below ``x = a + 1`` the lower one from its series ``x^a e^-x / Gamma(a)
    sum_n x^n / (a (a+1) ... (a+n))``, from there the upper one from its continued
    fraction (modified Lentz), each computed until every element converged (a check every
    :data:`_IGAMMA_BATCH` steps), the other as one minus it; PyTorch's values at the
    edges (NaN for ``a < 0`` or ``x < 0``, ``a = 0`` a step at ``x = 0``, the limits at
    the infinities). float32 computes in float64 where the device has it; in float32
    alone the prefactor's exponent, a sum of terms of size ~a, limits the result to
    ~1e-4 relative for ``a`` of 500."""
    a, x = xp.broadcast_arrays(a, x)
    eps = 1e-17 if a.dtype == xp.float64 else 1e-7
    ok = (a > 0) & (x > 0) & (a < math.inf) & (x < math.inf)
    a1 = xp.where(ok, a, xp.ones_like(a))
    x1 = xp.where(ok, x, xp.ones_like(x))
    log_front = a1 * xp.log(x1) - x1 - _lgamma_array(xp, a1)
    use_series = x1 < a1 + 1.0
    # series, for x < a + 1 (else for a stand-in point where it converges at once)
    xs = xp.where(use_series, x1, xp.zeros_like(x1))
    term = 1.0 / a1
    total = term
    n = 0
    while n < _IGAMMA_MAX:
        for _ in range(_IGAMMA_BATCH):
            n += 1
            term = term * (xs / (a1 + n))
            total = total + term
        if bool(xp.all(xp.abs(term) <= eps * xp.abs(total))):
            break
    lower = xp.exp(log_front) * total
    # continued fraction, for x >= a + 1 (else at x = a + 1, where it converges)
    xc = xp.where(use_series, a1 + 1.0, x1)
    tiny = 1e-300 if a.dtype == xp.float64 else 1e-30
    b = xc + 1.0 - a1
    c = xp.full_like(b, 1.0 / tiny)
    d = 1.0 / b
    h = d
    done = xp.zeros_like(b, dtype=xp.bool)
    i = 0
    while i < _IGAMMA_MAX:
        for _ in range(_IGAMMA_BATCH):
            i += 1
            an = -i * (i - a1)
            b = b + 2.0
            d = an * d + b
            d = xp.where(xp.abs(d) < tiny, xp.full_like(d, tiny), d)
            c = b + an / c
            c = xp.where(xp.abs(c) < tiny, xp.full_like(c, tiny), c)
            d = 1.0 / d
            delta = d * c
            # a converged element keeps its value: more factors of 1 +- rounding would
            # drift it (by ~1e-4 over thousands of float32 steps)
            h = xp.where(done, h, h * delta)
            done = done | (xp.abs(delta - 1.0) <= eps)
        if bool(xp.all(done)):
            break
    upper_cf = xp.exp(log_front) * h
    if upper:
        out = xp.where(use_series, 1.0 - lower, upper_cf)
    else:
        out = xp.where(use_series, lower, 1.0 - upper_cf)
    low_edge, high_edge = (1.0, 0.0) if upper else (0.0, 1.0)
    out = xp.where((x == 0) & (a > 0), xp.full_like(out, low_edge), out)  # x = 0
    out = xp.where((a == 0) & (x > 0), xp.full_like(out, high_edge), out)  # a step at 0
    out = xp.where((x == math.inf) & (a < math.inf) & (a >= 0),
                   xp.full_like(out, high_edge), out)
    out = xp.where((a == math.inf) & (x < math.inf) & (x >= 0),
                   xp.full_like(out, low_edge), out)
    bad = (a < 0) | (x < 0) | ((a == 0) & (x == 0)) | ((a == math.inf) & (x == math.inf))
    bad = bad | xp.isnan(a) | xp.isnan(x)
    return xp.where(bad, xp.full_like(out, math.nan), out)


class _Igamma(Function):
    """``gammainc(a, x)`` (``upper``: ``gammaincc``); the gradient w.r.t. ``x`` is
    ``+-x^(a-1) e^-x / Gamma(a)``; PyTorch has none w.r.t. ``a``."""

    upper = False

    def forward(ctx, a, x):
        ctx.save_for_backward(a, x)
        return _widened(ctx, lambda xp, xx: _igamma_array(xp, xp.astype(a, xx.dtype), xx,
                                                          ctx.upper), x)

    def backward(ctx, g):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            name = "igammac" if ctx.upper else "igamma"
            raise NotImplementedError(f"the derivative for '{name}: input' is not "
                                      "implemented (as in PyTorch)")
        from .movement import sum_to

        dens = ((a - 1.0) * x.log() - x - lgamma(a)).exp()
        return None, sum_to(g * (-dens if ctx.upper else dens), tuple(x.shape))


class _Igammac(_Igamma):
    upper = True


class Lgamma(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _widened(ctx, _lgamma_array, x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * Digamma.apply(x)


class Digamma(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _widened(ctx, _digamma_array, x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * Trigamma.apply(x)


class Trigamma(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _widened(ctx, _trigamma_array, x)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * polygamma(2, x)


@tensor_method()
def lgamma(input: Tensor) -> Tensor:
    """``log |Gamma(x)|``, elementwise (``+inf`` at 0, -1, -2, ...)."""
    return Lgamma.apply(_floating_input("lgamma", input))


@tensor_method()
def digamma(input: Tensor) -> Tensor:
    """The derivative of ``lgamma``, elementwise (``nan`` at 0, -1, -2, ...)."""
    return Digamma.apply(_floating_input("digamma", input))


def polygamma(n: int, input: Tensor) -> Tensor:
    """The ``n``-th derivative of ``digamma``: from order 2 on, as PyTorch computes it,
    ``(-1)**(n+1) n! zeta(n + 1, x)``; differentiable to any order."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"polygamma(n, x) does not support negative or non-integer n, got "
                         f"{n!r}")
    x = _floating_input("polygamma", input)
    if n == 0:
        return digamma(x)
    if n == 1:
        return Trigamma.apply(x)
    return zeta(x.new_full((), float(n + 1)), x) * ((-1) ** (n + 1) * math.factorial(n))


# the method takes the order after the tensor: ``x.polygamma(n)`` (as PyTorch's)
Tensor.polygamma = lambda self, n: polygamma(n, self)


def zeta(input: Any, other: Any) -> Tensor:
    """Hurwitz's zeta function ``sum_k (other + k) ** -input`` (``vt.special.zeta``); either
    argument may be a number. Differentiable w.r.t. ``other``."""
    from .special import _run_binary

    return _run_binary(Zeta, "zeta", input, other)


def gammainc(input: Any, other: Any) -> Tensor:
    """The regularized lower incomplete gamma function ``P(input, other)``
    (``vt.special.gammainc``, also ``vt.igamma``); differentiable w.r.t. ``other``."""
    from .special import _run_binary

    return _run_binary(_Igamma, "gammainc", input, other)


def gammaincc(input: Any, other: Any) -> Tensor:
    """The regularized upper incomplete gamma function ``Q(input, other) = 1 - P``
    (``vt.special.gammaincc``, also ``vt.igammac``); differentiable w.r.t. ``other``."""
    from .special import _run_binary

    return _run_binary(_Igammac, "gammaincc", input, other)


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


__all__ = ["lgamma", "digamma", "polygamma", "mvlgamma"]  # zeta: vt.special only, as PyTorch
