"""Cases of the special functions, sign/infinity helpers, rounded division and threshold."""

from __future__ import annotations

import volta_core as vt

from ..case import ALL_FLOAT, FLOAT, INT, Arg, OpCase, Scalar
from ._build import binary, unary

A34 = Arg((3, 4))
POS = {"low": 0.2, "high": 2.0}
_SMALL = {"large": False}


def case(name: str, op: str, *args, fn=None, dtypes: tuple = FLOAT, **kw) -> OpCase:
    extra = {k: kw.pop(k) for k in ("covers", "needs", "tol", "grad") if k in kw}
    return OpCase(f"{op}/{name}", op, dtypes, args=args, fn=fn, kwargs=kw, **extra)


CASES: list = []

# -- special functions ---------------------------------------------------------------------
CASES += unary("erfc", low=-3.0, high=3.0, dtypes=ALL_FLOAT, **_SMALL)
CASES += unary("log10", dtypes=ALL_FLOAT, **POS, **_SMALL)
CASES += unary("sinc", low=-2.0, high=2.0, **_SMALL)
CASES += unary("logit", low=0.1, high=0.9, **_SMALL)
CASES += unary("acosh", low=1.2, high=3.0, covers=("arccosh",), **_SMALL)
CASES += unary("asinh", low=-3.0, high=3.0, covers=("arcsinh",), **_SMALL)
CASES += unary("atanh", low=-0.8, high=0.8, covers=("arctanh",), **_SMALL)
CASES += unary("deg2rad", low=-180.0, high=180.0, **_SMALL)
CASES += unary("rad2deg", low=-3.0, high=3.0, **_SMALL)
CASES += unary("frac", low=-3.0, high=3.0, **_SMALL)
CASES += unary("positive", dtypes=FLOAT + INT, **_SMALL)
CASES += unary("sgn", dtypes=FLOAT + INT, **_SMALL)
CASES += unary("lgamma", low=0.2, high=6.0, **_SMALL)
CASES += unary("digamma", low=0.2, high=6.0, **_SMALL)
CASES += unary("erfinv", low=-0.95, high=0.95, covers=("Tensor.erfinv",), **_SMALL)
CASES += unary("i0", low=-30.0, high=30.0, covers=("Tensor.i0",), **_SMALL)
CASES += [
    # the series below 25 and the asymptotic expansion above, both signs
    case("special.i0e", "i0", Arg((3, 4), -40.0, 40.0), fn=lambda x: vt.special.i0e(x)),
    case("special.i1", "i0", Arg((3, 4), -30.0, 30.0), fn=lambda x: vt.special.i1(x)),
    case("special.i1e", "i0", Arg((3, 4), -40.0, 40.0), fn=lambda x: vt.special.i1e(x)),
    case("trigamma", "polygamma", Scalar(1), Arg((3, 4), 0.2, 6.0), grad=False),
    case("order3", "polygamma", Scalar(3), Arg((3, 4), 0.2, 6.0)),
    case("negative", "polygamma", Scalar(2), Arg((3, 4), -3.9, -0.1)),
    case("basic", "mvlgamma", Arg((3, 4), 1.5, 6.0), Scalar(3)),
]
CASES += binary("xlogy", low=-1.0, high=1.0, low2=0.2, high2=2.0, **_SMALL)
CASES += binary("logaddexp", low=-3.0, high=3.0, scalar=None, **_SMALL)
CASES += binary("logaddexp2", low=-3.0, high=3.0, scalar=None, **_SMALL)
CASES += binary("hypot", scalar=None, **_SMALL)
CASES += binary("copysign", scalar=None, **_SMALL)
CASES += binary("fmax", scalar=None, **_SMALL)
CASES += binary("fmin", scalar=None, **_SMALL)
CASES += [
    # mantissa and exponent of numbers from 1e-20 to 1e20 (both signs), and back
    case("mantissa", "frexp", Arg((3, 4), -46.0, 46.0),
         fn=lambda x: vt.frexp(vt.sinh(x))[0], covers=("Tensor.frexp",)),
    case("exponent", "frexp", Arg((3, 4), -46.0, 46.0),
         fn=lambda x: vt.frexp(vt.sinh(x))[1], grad=False),
    case("basic", "ldexp", A34, Arg((3, 4), -20, 21, kind="index"),
         covers=("Tensor.ldexp",)),
    case("basic", "heaviside", A34, Arg((4,)), grad=False, covers=("Tensor.heaviside",)),
    case("zeros", "heaviside", Arg((3, 4)), Arg((4,)), grad=False,
         fn=lambda x, v: vt.heaviside(vt.round(x), v)),
    case("basic", "nextafter", A34, Arg((4,)), grad=False, covers=("Tensor.nextafter",)),
    # the complex ops on real tensors: angle is 0 or pi (NaN kept), conj the input itself
    case("basic", "angle", A34, dtypes=FLOAT + INT, covers=("Tensor.angle",)),
    case("nan", "angle", A34, fn=lambda x: vt.angle(vt.log(x))),
    case("basic", "isreal", A34, grad=False, covers=("Tensor.isreal",)),
    case("basic", "conj", A34, covers=("Tensor.conj", "resolve_conj", "resolve_neg",
                                        "conj_physical", "Tensor.resolve_conj",
                                        "Tensor.resolve_neg", "Tensor.conj_physical")),
    case("eps", "logit", Arg((3, 4), -0.2, 1.2), eps=0.1),
    case("tail", "erfc", Arg((3, 4), 2.0, 6.0)),
    # the continued fraction from 1, exp(x^2) erfc(x) below, the reflection for x < 0
    case("special.erfcx", "erfc", Arg((3, 4), -3.0, 8.0), fn=lambda x: vt.special.erfcx(x)),
    case("special.log_ndtr", "erfc", Arg((3, 4), -12.0, 4.0),
         fn=lambda x: vt.special.log_ndtr(x)),
    case("special.ndtri", "erfc", Arg((3, 4), 0.01, 0.99), fn=lambda x: vt.special.ndtri(x)),
    # the series below x = a + 1, the continued fraction above; a gradient w.r.t. x only
    case("special.gammainc", "lgamma", Arg((3, 4), 0.5, 6.0), Arg((4,), 0.1, 9.0),
         fn=lambda a, x: vt.special.gammainc(a.detach(), x)),
    case("special.gammaincc", "lgamma", Arg((3, 4), 0.5, 6.0), Arg((4,), 0.1, 9.0),
         fn=lambda a, x: vt.special.gammaincc(a.detach(), x)),
    # the Bessel and Airy functions without a gradient (as PyTorch): J, Y across the series
    # (below 3.5), the Taylor series around the integers and Hankel's expansion (from 25),
    # Y and K of negative numbers NaN; K's series (to 1), trapezoidal rule and expansion
    # (from 25); Ai's Taylor series around the half-integers and its expansions past 12
    case("special.bessel_j0", "i0", Arg((3, 4), -40.0, 40.0), grad=False,
         fn=lambda x: vt.special.bessel_j0(x)),
    case("special.bessel_j1", "i0", Arg((3, 4), -40.0, 40.0), grad=False,
         fn=lambda x: vt.special.bessel_j1(x)),
    case("special.bessel_y0", "i0", Arg((3, 4), -2.0, 40.0), grad=False,
         fn=lambda x: vt.special.bessel_y0(x)),
    case("special.bessel_y1", "i0", Arg((3, 4), -2.0, 40.0), grad=False,
         fn=lambda x: vt.special.bessel_y1(x)),
    case("special.bessel_j0_int", "i0", Arg((5,)), dtypes=INT, grad=False,
         fn=lambda x: vt.special.bessel_j0(x)),
    case("special.modified_bessel_i0", "i0", Arg((3, 4), -30.0, 30.0), grad=False,
         fn=lambda x: vt.special.modified_bessel_i0(x)),
    case("special.modified_bessel_i1", "i0", Arg((3, 4), -30.0, 30.0), grad=False,
         fn=lambda x: vt.special.modified_bessel_i1(x)),
    case("special.modified_bessel_k0", "i0", Arg((3, 4), -1.0, 40.0), grad=False,
         fn=lambda x: vt.special.modified_bessel_k0(x)),
    case("special.modified_bessel_k1", "i0", Arg((3, 4), -1.0, 40.0), grad=False,
         fn=lambda x: vt.special.modified_bessel_k1(x)),
    case("special.scaled_modified_bessel_k0", "i0", Arg((3, 4), -1.0, 40.0), grad=False,
         fn=lambda x: vt.special.scaled_modified_bessel_k0(x)),
    case("special.scaled_modified_bessel_k1", "i0", Arg((3, 4), -1.0, 40.0), grad=False,
         fn=lambda x: vt.special.scaled_modified_bessel_k1(x)),
    case("special.airy_ai", "i0", Arg((3, 4), -20.0, 16.0), grad=False,
         fn=lambda x: vt.special.airy_ai(x)),
    # the recurrences up to degree 7 and the trigonometric form past 6 (no gradient)
    case("special.chebyshev_polynomial_t", "cos", Arg((3, 8), -1.5, 1.5), grad=False,
         fn=lambda x: vt.special.chebyshev_polynomial_t(x, vt.arange(8, device=x.device))),
    case("special.legendre_polynomial_p", "cos", Arg((3, 6), -1.5, 1.5), grad=False,
         fn=lambda x: vt.special.legendre_polynomial_p(x, vt.arange(6, device=x.device))),
    case("int_input", "erfc", Arg((5,)), dtypes=INT, grad=False),
    case("basic", "float_power", Arg((3, 4), 0.3, 2.0), Arg((4,), -2.0, 2.0)),
    case("scalar", "float_power", Arg((3, 4), 0.3, 2.0), Scalar(2.5)),
    case("int", "fmax", A34, A34, dtypes=INT, grad=False),
    case("scalar", "copysign", A34, Scalar(-0.0)),
    case("nan", "fmax", A34, Arg((4,)), fn=lambda a, b: vt.fmax(vt.log(a), b)),
    case("nan", "fmin", A34, Arg((4,)), fn=lambda a, b: vt.fmin(vt.log(a), b)),
    case("basic", "signbit", A34, dtypes=FLOAT + INT, grad=False),
    case("basic", "isposinf", A34, fn=lambda x: vt.isposinf(1.0 / x), grad=False),
    case("basic", "isneginf", A34, fn=lambda x: vt.isneginf(vt.log(x)), grad=False),
    case("basic", "threshold", A34, Scalar(0.1), Scalar(-2.0),
         covers=("nn.functional.threshold",)),
    case("in_place", "nn.functional.threshold_", A34,
         fn=lambda x: vt.nn.functional.threshold_(x * 1.0, 0.0, 0.5)),
]

# -- rounded division, alpha ----------------------------------------------------------------
# floor_divide has no derivative (its backward raises, as PyTorch's): forward only
CASES += binary("floor_divide", low=-4.0, high=4.0, low2=0.5, high2=2.0, large=False,
                grad=False, covers=("Tensor.__floordiv__",))
CASES += [
    case("int", "floor_divide", Arg((3, 4), ints=(-9, 9)), Arg((4,), ints=(1, 4)),
         dtypes=INT, grad=False),
    case("trunc", "div", A34, Arg((4,), 0.5, 2.0), rounding_mode="trunc"),
    case("floor", "div", Arg((3, 4), ints=(-9, 9)), Arg((4,), ints=(1, 4)), dtypes=INT,
         rounding_mode="floor", grad=False),
    case("alpha", "add", A34, Arg((4,)), alpha=-2.5),
    case("alpha", "sub", A34, Arg((4,)), alpha=0.5),
    case("alpha_int", "add", A34, A34, alpha=3, dtypes=INT, grad=False),
    case("in_place", "Tensor.floor_divide_", A34, fn=lambda x: (x * 4.0).floor_divide_(1.5),
         grad=False),
]

# -- in-place math forms ------------------------------------------------------------------------
CASES += [
    case("in_place", "Tensor.lerp_", A34, A34, fn=lambda a, b: (a * 1.0).lerp_(b, 0.3)),
    case("in_place", "Tensor.addcmul_", A34, A34, Arg((4,)),
         fn=lambda a, b, c: (a * 1.0).addcmul_(b, c, value=0.5)),
    case("in_place", "Tensor.addcdiv_", A34, A34, Arg((4,), 0.5, 2.0),
         fn=lambda a, b, c: (a * 1.0).addcdiv_(b, c, value=-2.0)),
    case("in_place", "Tensor.clamp_min_", A34, fn=lambda a: (a * 1.0).clamp_min_(0.1)),
    case("in_place", "Tensor.clamp_max_", A34, Arg((4,)),
         fn=lambda a, b: (a * 1.0).clamp_max_(b)),
]
