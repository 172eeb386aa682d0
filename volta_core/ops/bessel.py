"""The Bessel functions of orders 0 and 1 and the Airy function: ``i0`` (also ``vt.i0``),
``i0e``, ``i1``, ``i1e`` (``vt.special``, with gradients) and the Kaiser window built on
``i0``; ``vt.special``'s ``bessel_j0``/``j1``, ``bessel_y0``/``y1``,
``modified_bessel_i0``/``i1``/``k0``/``k1``, ``scaled_modified_bessel_k0``/``k1`` and
``airy_ai``, which (as in PyTorch) have no gradient.

``I0``, ``I1`` are computed on ``|x|`` as the exponentially scaled forms ``i0e = exp(-|x|)
I0`` and ``i1e = exp(-|x|) I1``: the power series ``I0(t) = sum q^k / (k!)^2``, ``I1(t) =
(t/2) sum q^k / (k! (k+1)!)`` with ``q = t^2 / 4`` (positive terms: no cancellation) up to
``t = 25``, and beyond it Hankel's asymptotic expansion, whose smallest term there is below
1e-20. About 1e-15 relative in float64 (PyTorch's Chebyshev fits agree to that).

Neither the power series nor the asymptotic expansions reach float64's precision between
a few units and ~20 for ``J``, ``Y``, ``K`` and ``Ai`` (the series cancel, the expansions'
smallest terms are still ~1e-10 there), so each has a third form in between:

- ``J0``, ``J1``, ``Y0``, ``Y1``: the power series (with ``Y``'s logarithmic terms, A&S
  9.1.10-13) below 3.5; up to 25 the Taylor series of Bessel's equation around the nearest
  integer, started from ``J0, J1, Y0, Y1`` there (computed once, by the same power series
  in 70-digit decimal arithmetic); from 25 Hankel's phase-amplitude expansion ``sqrt(2 /
  (pi x)) (P cos(x - phi) - Q sin(x - phi))``, with ``cos(x - pi/4)`` taken as ``(cos x +
  sin x) / sqrt 2`` (no rounded ``x - pi/4``: the phase stays exact for any ``x``).
- ``K0``, ``K1``: the series with the logarithm (A&S 9.6.11) up to 1; up to 25 the
  trapezoidal rule on ``exp(x) K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt``
  (positive terms, and exponentially convergent: 36 points give 1e-17); beyond, Hankel's
  expansion.
- ``Ai``: below ``|x| = 12`` the Taylor series of Airy's equation ``y'' = x y`` around
  the nearest multiple of 1/2 (started from ``Ai``, ``Ai'`` there, from the Maclaurin
  series in decimal arithmetic); beyond, the asymptotic expansions in ``zeta = 2/3
  |x|^(3/2)``, with ``zeta`` in double-word arithmetic: ``exp(-zeta)`` and the phase
  ``zeta + pi/4`` need more digits of it than one float holds.

Against mpmath in float64: within 1e-15 relative (of the envelope ``|x|^(-1/2)``, or
``|x|^(-1/4)`` for ``Ai``, near the zeros) for every ``x``; for ``Ai`` of ``x`` below
-1e12 the phase loses digits (1e-9 at -1e16, none from -1e21). float32 computes in float64
where the device has it, float16/bfloat16 in float32, each rounded once. Where PyTorch's
values at the edges are not the limits, Volta gives the limits: ``J``, ``Y`` and ``Ai`` are
0 at the infinities, ``I0``/``I1`` +-inf (PyTorch's are NaN), and ``K0``, ``K1`` of the
smallest subnormal are 744.4 and inf (PyTorch's inf and NaN).
"""

from __future__ import annotations

import functools
import math
import struct
from fractions import Fraction
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
    asymptotic = total / (math.sqrt(2 * math.pi) * xp.sqrt(tb))  # 2 pi t may overflow
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


# -- the node tables: exact values in decimal arithmetic, computed once ----------------------
_DIGITS = 70  # the Airy series cancel to ~1e-25 of their terms at |x| = 12
_PI = "3.14159265358979323846264338327950288419716939937510582097494"
_EULER = "0.577215664901532860606512090082402431042159335939923598805767"
_AI_0 = "0.355028053887817239260063186004183176397979174199177240583327"  # Ai(0)
_AI_PRIME_0 = "-0.258819403792806798405183560189203963479091138354934582210002"  # Ai'(0)
_EULER_MINUS_LOG2 = float(_EULER) - math.log(2.0)  # ln(x/2) + gamma = ln x + this


def _log_series(x: Any, sign: int, one: Any, terms: int) -> tuple[Any, Any, Any, Any]:
    """The four sums of the power series of ``J0, J1, Y0, Y1`` (``sign`` -1) or ``I0, I1,
    K0, K1`` (``sign`` 1), with ``q = sign x^2 / 4`` and ``H_k`` the harmonic numbers:
    ``sum q^k / (k!)^2``, ``sum q^k / (k! (k+1)!)``, ``sum H_k q^k / (k!)^2`` and ``sum
    (H_k + H_(k+1)) q^k / (k! (k+1)!)``. Plain arithmetic, so ``x`` is an array or a
    ``Decimal`` (``one`` is 1 in its type)."""
    q = x * x / 4 * sign
    t0 = t1 = one
    a0, a1, s0, s1 = t0, t1, 0 * one, t1
    harmonic = 0 * one
    for k in range(1, terms):
        t0 = t0 * q / (k * k)
        t1 = t1 * q / (k * (k + 1))
        harmonic = harmonic + one / k
        a0, a1 = a0 + t0, a1 + t1
        s0 = s0 + harmonic * t0
        s1 = s1 + (harmonic + harmonic + one / (k + 1)) * t1
    return a0, a1, s0, s1


def _jy_from_series(x: Any, log_term: Any, sums: tuple, pi: Any) -> tuple[Any, Any, Any, Any]:
    """``J0, J1, Y0, Y1`` from :func:`_log_series` (A&S 9.1.10-13); ``log_term`` is
    ``ln(x/2) + gamma``."""
    a0, a1, s0, s1 = sums
    j0, j1 = a0, x / 2 * a1
    y0 = 2 / pi * (log_term * j0 - s0)
    y1 = 2 / pi * (log_term * j1 - 1 / x) - x / (2 * pi) * s1
    return j0, j1, y0, y1


def _decimal_table(fn: Any, nodes: range, scale: int) -> tuple[tuple[float, ...], ...]:
    """``fn(Decimal(n) / scale)`` (a tuple of values) for each ``n`` of ``nodes``, in
    :data:`_DIGITS`-digit arithmetic, as one tuple of floats per value."""
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = _DIGITS
        rows = [fn(Decimal(n) / scale, Decimal(1)) for n in nodes]
    return tuple(tuple(float(r[i]) for r in rows) for i in range(len(rows[0])))


_JY_SERIES_BELOW = 3.5
_JY_HANKEL_FROM = 25.0
_JY_NODES = range(4, 26)  # the Taylor series' centres: the integers 4..25


@functools.cache
def _jy_table() -> tuple[tuple[float, ...], ...]:
    """``J0, J1, Y0, Y1`` at the nodes (their series need 90 terms at 25)."""
    from decimal import Decimal

    def values(x: Any, one: Any) -> tuple:
        pi = Decimal(_PI)
        return _jy_from_series(x, (x / 2).ln() + Decimal(_EULER),
                               _log_series(x, -1, one, 90), pi)

    return _decimal_table(values, _JY_NODES, 1)


def _airy_maclaurin(x: Any, one: Any) -> tuple[Any, Any]:
    """``Ai(x)`` and ``Ai'(x)`` from their Maclaurin series (A&S 10.4.2-3); at ``|x| = 12``
    the terms grow to 1e12 and are below 1e-70 from the 95th."""
    from decimal import Decimal

    cube = x * x * x
    # f, g: the solutions with f(0) = g'(0) = 1, g(0) = f'(0) = 0; their derivatives
    tf, tg, tdf, tdg = one, x, x * x / 2, one
    f, g, df, dg = tf, tg, tdf, tdg
    for k in range(1, 100):
        tf = tf * cube / ((3 * k - 1) * (3 * k))
        tg = tg * cube / ((3 * k) * (3 * k + 1))
        tdf = tdf * cube / ((3 * k) * (3 * k + 2))
        tdg = tdg * cube / ((3 * k - 2) * (3 * k))
        f, g, df, dg = f + tf, g + tg, df + tdf, dg + tdg
    a, b = Decimal(_AI_0), Decimal(_AI_PRIME_0)
    return a * f + b * g, a * df + b * dg


_AIRY_ASYMPTOTIC_FROM = 12.0
_AIRY_NODES = range(-24, 25)  # the Taylor series' centres: -12, -11.5, ..., 12


@functools.cache
def _airy_table() -> tuple[tuple[float, ...], ...]:
    return _decimal_table(_airy_maclaurin, _AIRY_NODES, 2)


def _at_nodes(xp: Any, centre: Any, first: float, step: float, table: tuple) -> list:
    """The table's values at each element's node ``centre`` (``first + i step``)."""
    index = xp.reshape(xp.astype(xp.round((centre - first) / step), xp.int64), (-1,))
    return [xp.reshape(xp.take(xp.asarray(column, dtype=centre.dtype,
                                          device=centre.device), index), centre.shape)
            for column in table]


# -- J0, J1, Y0, Y1 -----------------------------------------------------------------------
_HANKEL_TERMS = 22  # at x = 25 the terms are below 1e-17 from the 20th


def _hankel(xp: Any, x: Any, order: int) -> tuple[Any, Any]:
    """Hankel's ``P`` and ``Q`` of ``order`` at ``x >= 25`` (A&S 9.2.9-10)."""
    mu = 4.0 * order * order
    r = 1.0 / x
    term = xp.ones_like(x)
    p, q = term, xp.zeros_like(x)
    for k in range(1, _HANKEL_TERMS):
        term = term * ((mu - (2 * k - 1) ** 2) / (8.0 * k)) * r
        signed = -term if (k // 2) % 2 else term
        if k % 2:
            q = q + signed
        else:
            p = p + signed
    return p, q


def _jy_taylor(xp: Any, t: Any, second: bool) -> tuple[Any, Any]:
    """``J0, J1`` (``Y0, Y1`` if ``second``) at ``3.5 <= t < 25``: the Taylor series of
    Bessel's equation ``x y'' + y' + x y = 0`` around the nearest integer ``c``, whose
    coefficients follow ``c_(n+2) = -((n+1)^2 c_(n+1) + c c_n + c_(n-1)) / ((n+2)(n+1)
    c)``; the order-1 function is minus the derivative. ``|t - c| <= 1/2``: 18 terms
    reach 1e-17, 20 are summed."""
    centre = xp.round(t)
    table = _jy_table()
    y, y1 = _at_nodes(xp, centre, 4.0, 1.0, table[2:] if second else table[:2])
    h = t - centre  # exact
    inv = 1.0 / centre
    before, now, after = xp.zeros_like(t), y, -y1  # c_(n-1), c_n, c_(n+1)
    value, slope, power = y - y1 * h, -y1, h
    for n in range(18):
        new = -((n + 1) ** 2 * after + centre * now + before) * inv / ((n + 2) * (n + 1))
        slope = slope + (n + 2) * new * power
        power = power * h
        value = value + new * power
        before, now, after = now, after, new
    return value, -slope


def _jy_array(xp: Any, x: Any, order: int, second: bool) -> Any:
    """``J_order`` (``Y_order`` if ``second``) of a float array: PyTorch's values at the
    edges (``J0`` even, ``J1`` odd, ``Y`` -inf at 0 and NaN below) but the limit 0 at the
    infinities."""
    t = xp.abs(x)
    small = t < _JY_SERIES_BELOW
    large = t >= _JY_HANKEL_FROM
    ts = xp.where(small, t, xp.ones_like(t))
    sums = _log_series(ts, -1, 1.0, 20)
    series = _jy_from_series(ts, xp.log(ts) + _EULER_MINUS_LOG2, sums, math.pi)
    tm = xp.where(small | large | xp.isnan(t), xp.full_like(t, 4.0), t)
    mid = _jy_taylor(xp, tm, second)
    tb = xp.where(large, t, xp.full_like(t, _JY_HANKEL_FROM))
    p, q = _hankel(xp, tb, order)
    c, s = xp.cos(tb), xp.sin(tb)
    # cos(x - pi/4) = (c + s) / sqrt 2, sin(x - pi/4) = (s - c) / sqrt 2; x - 3pi/4 alike
    if order == 0:
        far = p * (s - c) + q * (c + s) if second else p * (c + s) - q * (s - c)
    else:
        far = q * (s - c) - p * (s + c) if second else p * (s - c) + q * (s + c)
    far = far / (math.sqrt(math.pi) * xp.sqrt(tb))  # (pi x overflows near the largest x)
    out = xp.where(small, series[2 * second + order], xp.where(large, far, mid[order]))
    out = xp.where(xp.isinf(x), xp.zeros_like(x), out)
    if second:
        out = xp.where(x == 0, xp.full_like(x, -math.inf), out)
        out = xp.where(x < 0, xp.full_like(x, math.nan), out)
    elif order == 1:  # odd, -0.0 kept
        out = xp.where(x < 0, -out, out)
        out = xp.where(x == 0, x, out)
    return xp.where(xp.isnan(x), x, out)


# -- K0, K1 -------------------------------------------------------------------------------
_K_SERIES_UP_TO = 1.0  # the series' terms cancel: 5e-15 relative at 2, 1e-15 at 1
_K_HANKEL_FROM = 25.0
_K_STEP = 0.125  # the trapezoidal rule's error ~exp(x - pi^2 / step): 3e-24 at x = 25


def _k_nodes() -> tuple[tuple[float, float], ...]:
    """``(cosh t - 1, cosh t)`` at ``t = j step`` while the integrand at ``x = 1`` still
    counts (``exp(-(cosh t - 1)) cosh t`` down to 1e-20): 36 points."""
    out = []
    j = 1
    while True:
        t = j * _K_STEP
        w = 2.0 * math.sinh(t / 2) ** 2
        if math.exp(-_K_SERIES_UP_TO * w) * math.cosh(t) < 1e-20:
            return tuple(out)
        out.append((w, math.cosh(t)))
        j += 1


_K_TRAPEZOID = _k_nodes()


def _k_array(xp: Any, x: Any, order: int, scaled: bool) -> Any:
    """``K_order(x)`` (``exp(x) K_order(x)`` if ``scaled``) of a float array: NaN below 0,
    inf at 0, 0 at inf."""
    small = x <= _K_SERIES_UP_TO
    large = x >= _K_HANKEL_FROM
    xs = xp.where(small & (x > 0), x, xp.ones_like(x))
    log_term = xp.log(xs) + _EULER_MINUS_LOG2
    a0, a1, s0, s1 = _log_series(xs, 1, 1.0, 14)
    if order == 0:
        series = s0 - log_term * a0
    else:
        series = 1.0 / xs + log_term * (xs * 0.5 * a1) - xs * 0.25 * s1
    xm = xp.where(small | large, xp.full_like(x, 10.0), x)
    total = xp.full_like(x, 0.5)
    for w, cosh in _K_TRAPEZOID:
        term = xp.exp(xm * -w)
        total = total + (term * cosh if order else term)
    mid = total * _K_STEP
    xb = xp.where(large, x, xp.full_like(x, _K_HANKEL_FROM))
    mu = 4.0 * order * order
    term = xp.ones_like(x)
    total = term
    for k in range(1, _HANKEL_TERMS):
        term = term * ((mu - (2 * k - 1) ** 2) / (8.0 * k)) / xb
        total = total + term
    far = total * (math.sqrt(math.pi / 2.0) / xp.sqrt(xb))  # (2x overflows near the top)
    out = xp.where(large, far, mid)  # both scaled
    if scaled:
        series = series * xp.exp(xs)
    else:
        out = out * xp.exp(-xp.where(small, xp.zeros_like(x), x))  # 0 from ~745 on
    out = xp.where(small, series, out)
    out = xp.where(x == 0, xp.full_like(x, math.inf), out)
    out = xp.where(x == math.inf, xp.zeros_like(x), out)
    return xp.where(xp.isnan(x) | (x < 0), xp.full_like(x, math.nan), out)


# -- Ai -----------------------------------------------------------------------------------
_AIRY_TERMS = 20  # at zeta = 27.7 (|x| = 12) the terms are below 1e-17 from the 17th


def _two_product(a: Any, b: Any, split: float) -> tuple[Any, Any]:
    """``a b`` as ``p + e`` exactly (Dekker: each factor split in halves by ``split``)."""
    p = a * b
    c = a * split
    ah = c - (c - a)
    al = a - ah
    c = b * split
    bh = c - (c - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _zeta(xp: Any, t: Any) -> tuple[Any, Any]:
    """``2/3 t^(3/2)`` as an unevaluated sum ``hi + lo`` (about twice the dtype's digits):
    ``sqrt(t)`` corrected by Newton's step with its exact square, times ``t`` and 2/3
    with exact products."""
    wide = t.dtype == xp.float64
    split = 134217729.0 if wide else 4097.0  # 2^27 + 1, 2^12 + 1
    c_hi = 2 / 3 if wide else struct.unpack("f", struct.pack("f", 2 / 3))[0]
    c_lo = float(Fraction(2, 3) - Fraction(c_hi))
    s = xp.sqrt(t)
    p, e = _two_product(s, s, split)
    s_lo = ((t - p) - e) / (s + s)
    m, m_lo = _two_product(t, s, split)
    m_lo = m_lo + t * s_lo
    hi, lo = _two_product(xp.full_like(t, c_hi), m, split)
    return hi, lo + (c_hi * m_lo + c_lo * m)


def _airy_series(xp: Any, zeta: Any, alternate: bool) -> tuple[Any, Any]:
    """The even and odd terms of ``sum (-1)^k u_k zeta^-k`` (A&S 10.4.59, for x > 0),
    or with ``alternate`` ``P = sum (-1)^k u_2k zeta^-2k`` and ``Q = sum (-1)^k u_(2k+1)
    zeta^-(2k+1)`` (10.4.60, for x < 0); ``u_k = u_(k-1) (6k-5)(6k-3)(6k-1) / ((2k-1) 216
    k)``."""
    r = 1.0 / zeta
    term = xp.ones_like(zeta)
    even, odd = term, xp.zeros_like(zeta)
    for k in range(1, _AIRY_TERMS):
        term = term * ((6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216.0 * k)) * r
        if alternate:
            signed = -term if (k // 2) % 2 else term
        else:
            signed = -term if k % 2 else term
        if k % 2:
            odd = odd + signed
        else:
            even = even + signed
    return even, odd


def _airy_array(xp: Any, x: Any) -> Any:
    """``Ai(x)`` of a float array: 0 at +-inf (the limits) and where it underflows, NaN
    below ~-1e200 (where ``zeta`` overflows, as PyTorch's from -3e205)."""
    t = xp.abs(x)
    near = t < _AIRY_ASYMPTOTIC_FROM
    # the Taylor series of y'' = x y around the nearest node c, |x - c| <= 1/4, whose
    # coefficients follow a_(n+2) = (c a_n + a_(n-1)) / ((n+2)(n+1)): 18 terms reach 1e-17
    xn = xp.where(near, x, xp.zeros_like(x))
    centre = xp.round(xn * 2.0) * 0.5
    a0, a1 = _at_nodes(xp, centre, -12.0, 0.5, _airy_table())
    h = xn - centre  # exact
    before, now, after = xp.zeros_like(x), a0, a1
    value, power = a0 + a1 * h, h
    for n in range(18):
        new = (centre * now + before) / ((n + 2) * (n + 1))
        power = power * h
        value = value + new * power
        before, now, after = now, after, new
    mid = value
    # asymptotic expansions in zeta (t clamped at 200, where Ai is 0 already)
    tb = xp.where(near, xp.full_like(t, _AIRY_ASYMPTOTIC_FROM),
                  xp.where((x > 0) & (t > 200.0), xp.full_like(t, 200.0), t))
    hi, lo = _zeta(xp, tb)
    quarter = xp.sqrt(xp.sqrt(tb))
    # x > 0: exp(-zeta) / (2 sqrt(pi) x^(1/4)) sum (-1)^k u_k zeta^-k, exp(-lo) = 1 - lo
    even, odd = _airy_series(xp, hi, False)
    decay = xp.exp(-hi) * (1.0 - lo) * (even + odd) / (2.0 * math.sqrt(math.pi) * quarter)
    # x < 0: (sin(zeta + pi/4) P - cos(zeta + pi/4) Q) / (sqrt(pi) |x|^(1/4)), with
    # sin(zeta + pi/4) = (sin zeta + cos zeta) / sqrt 2 and cos alike
    p, q = _airy_series(xp, hi, True)
    s = xp.sin(hi) * xp.cos(lo) + xp.cos(hi) * xp.sin(lo)  # sin(zeta), cos(zeta)
    c = xp.cos(hi) * xp.cos(lo) - xp.sin(hi) * xp.sin(lo)
    wave = ((s + c) * p - (c - s) * q) / (math.sqrt(2.0 * math.pi) * quarter)
    out = xp.where(near, mid, xp.where(x > 0, decay, wave))
    out = xp.where(xp.isinf(x), xp.zeros_like(x), out)
    return xp.where(xp.isnan(x), x, out)


def _bessel(op: str, cls: type, input: Tensor, **params: Any) -> Tensor:
    x = _floating_input(op, input)
    if x.dtype.itemsize == 2:  # float16/bfloat16: in float32, rounded once
        return in_float32(cls.apply, x, **params)
    return cls.apply(x, **params)


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


class _NoGradient(Function):
    """``evaluate(xp, x)`` of one tensor, with no gradient: PyTorch's Bessel and Airy functions
    of ``torch.special`` (``i0``/``i0e``/``i1``/``i1e`` aside) have no derivative formula
    and return results that don't require grad."""

    differentiable = False

    def forward(ctx, x, evaluate=None):
        return _widened(ctx, evaluate, x)


def _no_gradient(op: str, input: Tensor, fn: Any, **fixed: Any) -> Tensor:
    """``fn(xp, x, **fixed)`` of ``input``, with no gradient."""
    return _bessel(op, _NoGradient, input, evaluate=functools.partial(fn, **fixed))


def bessel_j0(input: Tensor) -> Tensor:
    """The Bessel function of the first kind of order 0, ``J0``, elementwise
    (``vt.special.bessel_j0``).

    Args:
        input: the input tensor; integers compute in the default float dtype.

    Returns:
        ``J0(input)``, without a gradient (as in PyTorch); 0 at +-inf, the limit (PyTorch
        gives NaN).
    """
    return _no_gradient("bessel_j0", input, _jy_array, order=0, second=False)


def bessel_j1(input: Tensor) -> Tensor:
    """The Bessel function of the first kind of order 1, ``J1``, elementwise
    (``vt.special.bessel_j1``).

    Args:
        input: the input tensor; integers compute in the default float dtype.

    Returns:
        ``J1(input)``, odd, without a gradient (as in PyTorch); 0 at +-inf, the limit
        (PyTorch gives NaN).
    """
    return _no_gradient("bessel_j1", input, _jy_array, order=1, second=False)


def bessel_y0(input: Tensor) -> Tensor:
    """The Bessel function of the second kind of order 0, ``Y0``, elementwise
    (``vt.special.bessel_y0``).

    Args:
        input: the input tensor; integers compute in the default float dtype.

    Returns:
        ``Y0(input)``, without a gradient (as in PyTorch): -inf at 0 and NaN for negative
        numbers, as PyTorch's; 0 at inf, the limit (PyTorch gives NaN).
    """
    return _no_gradient("bessel_y0", input, _jy_array, order=0, second=True)


def bessel_y1(input: Tensor) -> Tensor:
    """The Bessel function of the second kind of order 1, ``Y1``, elementwise
    (``vt.special.bessel_y1``).

    Args:
        input: the input tensor; integers compute in the default float dtype.

    Returns:
        ``Y1(input)``, without a gradient (as in PyTorch): -inf at 0 and NaN for negative
        numbers, as PyTorch's; 0 at inf, the limit (PyTorch gives NaN).
    """
    return _no_gradient("bessel_y1", input, _jy_array, order=1, second=True)


def modified_bessel_i0(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 0, ``I0``, elementwise
    (``vt.special.modified_bessel_i0``): the values of :func:`i0`, without its gradient.

    Args:
        input: the input tensor; integers compute in the default float dtype.

    Returns:
        ``I0(input)``, without a gradient (as in PyTorch); inf at +-inf, the limit (PyTorch
        gives NaN).
    """
    return _no_gradient("modified_bessel_i0", input, _i0)


def modified_bessel_i1(input: Tensor) -> Tensor:
    """The modified Bessel function of the first kind of order 1, ``I1``, elementwise
    (``vt.special.modified_bessel_i1``): the values of ``vt.special.i1``, without its
    gradient.

    Args:
        input: the input tensor; integers compute in the default float dtype.

    Returns:
        ``I1(input)``, odd, without a gradient (as in PyTorch); +-inf at +-inf, the limits
        (PyTorch gives NaN).
    """
    return _no_gradient("modified_bessel_i1", input, _i1)


def modified_bessel_k0(input: Tensor) -> Tensor:
    """The modified Bessel function of the second kind of order 0, ``K0``, elementwise
    (``vt.special.modified_bessel_k0``).

    Args:
        input: the input tensor; integers compute in the default float dtype.

    Returns:
        ``K0(input)``, without a gradient (as in PyTorch): inf at 0, NaN for negative
        numbers and 0 at inf, as PyTorch's.
    """
    return _no_gradient("modified_bessel_k0", input, _k_array, order=0, scaled=False)


def modified_bessel_k1(input: Tensor) -> Tensor:
    """The modified Bessel function of the second kind of order 1, ``K1``, elementwise
    (``vt.special.modified_bessel_k1``).

    Args:
        input: the input tensor; integers compute in the default float dtype.

    Returns:
        ``K1(input)``, without a gradient (as in PyTorch): inf at 0, NaN for negative
        numbers and 0 at inf, as PyTorch's.
    """
    return _no_gradient("modified_bessel_k1", input, _k_array, order=1, scaled=False)


def scaled_modified_bessel_k0(input: Tensor) -> Tensor:
    """``exp(x) K0(x)``, elementwise, which does not underflow
    (``vt.special.scaled_modified_bessel_k0``).

    Args:
        input: the input tensor; integers compute in the default float dtype.

    Returns:
        ``exp(input) K0(input)``, without a gradient (as in PyTorch): inf at 0, NaN for
        negative numbers and 0 at inf, as PyTorch's.
    """
    return _no_gradient("scaled_modified_bessel_k0", input, _k_array, order=0, scaled=True)


def scaled_modified_bessel_k1(input: Tensor) -> Tensor:
    """``exp(x) K1(x)``, elementwise, which does not underflow
    (``vt.special.scaled_modified_bessel_k1``).

    Args:
        input: the input tensor; integers compute in the default float dtype.

    Returns:
        ``exp(input) K1(input)``, without a gradient (as in PyTorch): inf at 0, NaN for
        negative numbers and 0 at inf, as PyTorch's.
    """
    return _no_gradient("scaled_modified_bessel_k1", input, _k_array, order=1, scaled=True)


def airy_ai(input: Tensor) -> Tensor:
    """The Airy function ``Ai``, elementwise (``vt.special.airy_ai``).

    Args:
        input: the input tensor; integers compute in the default float dtype.

    Returns:
        ``Ai(input)``, without a gradient (as in PyTorch); 0 at +-inf, the limits (PyTorch
        gives NaN), and NaN below about -1e200, where ``|x|^(3/2)`` overflows (PyTorch's
        from -3e205).
    """
    return _no_gradient("airy_ai", input, _airy_array)


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
