"""WGSL helper functions, generated per type (``isnan_f32``, ``fpow_f16``, ...).

Notes on WGSL/SPIR-V semantics that these helpers fix:

* NaN tests read the bits (:func:`is_nan`) for float16/32: ``x != x`` compiles to an
  *ordered* compare, which is false for NaN, and a driver that assumes no NaNs
  (NVIDIA's Vulkan compiler) folds ``x == x`` to true.
* float16 functions beyond ``+ - *`` (``pow``, ``atan2``, ``log1p``, ...) compute in
  float32 and round once, as PyTorch does: native float16 transcendentals and division
  may be far less accurate (NVIDIA's ``tan(6.5h)`` was off by 2%).
* ``max``/``min`` do not propagate NaN; ``pow(x, y)`` is undefined for ``x < 0``.
* Vulkan's GLSL.std.450 transcendentals (exp, log, sin, ...) exist only for 16/32-bit
  floats, so ``float64`` uses the polynomial versions of :mod:`.f64_math`.
"""

from __future__ import annotations

import math
import re

from .. import dtypes as D
from ..dtypes import DType

_EXACT = {"f16": "2048.0", "f32": "16777216.0", "f64": "9007199254740992.0"}
_MAX = {"f16": "65504.0", "f32": "3.4028234663852886e38", "f64": "1.7976931348623157e308"}


def _nan(t: str) -> str:
    # the sign bit set, as x86 CPUs (so NumPy and PyTorch there) make an invalid result
    return f"{t}(bitcast<f32>(0xffc00000u))"


def _inf(t: str) -> str:
    return f"{t}(bitcast<f32>(0x7f800000u))"


def _fmod(t: str) -> str:
    """WGSL lines setting ``var m`` to ``fmod(a, b)`` (sign of ``a``; ``a`` finite).

    No ``fma``: drivers may or may not fuse it, and results must not depend on that.
    float16/32 are exact; float64 is ``a - b * trunc(a / b)``, and 0 for a quotient past
    its exact range. An infinite ``b`` leaves ``m = a``.
    """
    zero, mx = f"{t}(0)", f"{t}({_MAX[t]})"
    if t == "f64":  # ldexp/frexp of f64 fail to compile on some drivers
        big = f"    if (!(abs(m) < abs(b))) {{ m = {zero}; }}\n"
    else:  # exactly, by subtracting |b| * 2**k (each step exact: Sterbenz), one step
        # per binary digit of the quotient
        big = (f"    if (b != {zero}) {{\n"
               f"      var r = f32(abs(a)); let y = f32(abs(b));\n"  # f16: exact in f32
               f"      let steps = clamp(i32(frexp(r).exp) - i32(frexp(y).exp) + 2, 0, 300);\n"
               f"      for (var i = 0; i < steps; i = i + 1) {{\n"
               f"        if (r >= y) {{\n"
               f"          let e = i32(frexp(r).exp) - i32(frexp(y).exp);\n"
               f"          var yy = ldexp(y, e);\n"
               f"          if (yy > r) {{ yy = ldexp(y, e - 1); }}\n"
               f"          r = r - yy;\n"
               f"        }}\n"
               f"      }}\n"
               f"      m = {t}(select(r, -r, a < {zero}));\n"
               f"    }}\n")
    return (f"  var m = a;\n"
            f"  if (abs(b) <= {mx}) {{\n"
            f"    m = a - b * trunc(a / b);\n"
            + big +
            "  }\n")


_ATANH_C = [1 / (2 * k + 1) for k in range(8)]          # atanh(s) / s in s**2
_ATANH_C64 = [1 / (2 * k + 1) for k in range(12)]       # the same to 1e-22 for |s| < 1/7
_EXPM1_C = [1 / math.factorial(k + 1) for k in range(9)]  # expm1(x) / x in x


def _series(var: str, coeffs: list[float], t: str) -> str:
    """``c0 + var * (c1 + var * (...))`` as WGSL."""
    expr = f"{t}({coeffs[-1]!r})"
    for c in reversed(coeffs[:-1]):
        expr = f"({t}({c!r}) + {var} * {expr})"
    return expr


def abs_bits(t: str, v: str) -> str:
    """WGSL ``u32``: the float32 bits of ``|v|`` for WGSL float type ``t`` ("f16" widens
    exactly: NaN stays NaN, inf stays inf). Not for "f64"."""
    return f"(bitcast<u32>({v if t == 'f32' else f'f32({v})'}) & 0x7fffffffu)"


def is_nan(t: str, v: str) -> str:
    """WGSL for "``v`` is NaN". For float16/32 it reads the bits: a driver that assumes
    no NaNs (NVIDIA's Vulkan compiler does) folds ``v == v`` to true. float64 has no
    32-bit bitcast in naga; it keeps ``!(v == v)`` (and runs eagerly in lazy mode)."""
    if t == "f64":
        return f"(!({v} == {v}))"
    return f"({abs_bits(t, v)} > 0x7f800000u)"


def is_num(t: str, v: str) -> str:
    """WGSL for "``v`` is not NaN" (see :func:`is_nan`)."""
    if t == "f64":
        return f"({v} == {v})"
    return f"({abs_bits(t, v)} <= 0x7f800000u)"


def _float_helpers(t: str) -> dict[str, str]:
    mx = f"{t}({_MAX[t]})"
    one, zero = f"{t}(1)", f"{t}(0)"
    bits = None if t == "f64" else abs_bits(t, "x")
    nan_a, nan_b = is_nan(t, "a"), is_nan(t, "b")
    # "a is finite" (not inf, not NaN): from the bits where there are 32-bit ones
    fin_a = f"(abs(a) <= {mx})" if t == "f64" else f"({abs_bits(t, 'a')} < 0x7f800000u)"
    return {
        "isnan": f"fn isnan_{t}(x: {t}) -> bool {{ return {is_nan(t, 'x')}; }}",
        "isinf": f"fn isinf_{t}(x: {t}) -> bool {{ return {is_num(t, 'x')} && "
                 f"!(abs(x) <= {mx}); }}" if bits is None else
                 f"fn isinf_{t}(x: {t}) -> bool {{ return {bits} == 0x7f800000u; }}",
        "isfinite": f"fn isfinite_{t}(x: {t}) -> bool {{ return abs(x) <= {mx}; }}"
                    if bits is None else
                    f"fn isfinite_{t}(x: {t}) -> bool {{ return {bits} < 0x7f800000u; }}",
        # NaN propagates: the NaN operand itself is returned
        "fmax": f"fn fmax_{t}(a: {t}, b: {t}) -> {t} {{\n"
                f"  if ({nan_a} || {nan_b}) {{ return select(b, a, {nan_a}); }}\n"
                f"  return max(a, b); }}",
        "fmin": f"fn fmin_{t}(a: {t}, b: {t}) -> {t} {{\n"
                f"  if ({nan_a} || {nan_b}) {{ return select(b, a, {nan_a}); }}\n"
                f"  return min(a, b); }}",
        "fpow": f"fn fpow_{t}(a: {t}, b: {t}) -> {t} {{\n"
                f"  if (b == {zero} || a == {one}) {{ return {one}; }}\n"
                f"  if ({nan_a} || {nan_b}) {{ return select(b, a, {nan_a}); }}\n"
                f"  let ab = abs(a);\n"
                f"  if (ab == {one} && !(abs(b) <= {mx})) {{ return {one}; }}\n"
                f"  let odd = floor(b) == b && abs(b) < {t}({_EXACT[t]}) &&"
                f" floor(b * {t}(0.5)) * {t}(2) != b;\n"
                # the sign bit of a (1/a tells -0 from +0)
                f"  let neg = a < {zero} || (a == {zero} && {one} / a < {zero});\n"
                f"  var r: {t};\n"
                f"  if (ab == {zero} || !(ab <= {mx})) {{\n"
                f"    r = select({zero}, {_inf(t)}, (ab == {zero}) == (b < {zero}));\n"
                f"  }} else {{\n"
                f"    if (a < {zero} && floor(b) != b) {{ return {_nan(t)}; }}\n"
                f"    r = POW(ab, b);\n"
                f"  }}\n"
                f"  if (neg && odd) {{ r = -r; }}\n"
                f"  return r; }}",
        "frem": f"fn frem_{t}(a: {t}, b: {t}) -> {t} {{\n"
                f"  if (b == {zero} || !{fin_a} || {nan_b}) "
                f"{{ return {_nan(t)}; }}\n"
                f"  if (!(abs(b) <= {mx})) {{ if (a != {zero} && (a < {zero}) != "
                f"(b < {zero})) {{ return b; }} return a; }}\n"
                + _fmod(t) +
                f"  if (m != {zero} && ((m < {zero}) != (b < {zero}))) {{ m = m + b; }}\n"
                f"  if (m == {zero}) {{ m = select(abs(m), -abs(m), b < {zero}); }}\n"
                f"  return m; }}",
        "ffloordiv": f"fn ffloordiv_{t}(a: {t}, b: {t}) -> {t} {{\n"
                     f"  if (b == {zero}) {{ return a / b; }}\n"
                     f"  if (!{fin_a} || {nan_b}) {{ return {_nan(t)}; }}\n"
                     + _fmod(t) +
                     f"  var d = (a - m) / b;\n"
                     f"  if (m != {zero} && ((b < {zero}) != (m < {zero}))) {{ d = d - {one}; }}\n"
                     # a zero quotient has the sign of a / b (as PyTorch)
                     f"  if (d == {zero}) {{\n"
                     f"    return {t}(bitcast<f32>(bitcast<u32>(f32(a / b)) & 0x80000000u)); }}\n"
                     f"  let f = floor(d);\n"
                     f"  return select(f, f + {one}, d - f > {t}(0.5)); }}",
        "fsign": f"fn fsign_{t}(x: {t}) -> {t} {{\n"
                 f"  if ({is_nan(t, 'x')}) {{ return x; }}\n"
                 f"  return select(select({zero}, {one}, x > {zero}), -{one}, x < {zero}); }}",
        # near 0: 2 atanh(s), s = x / (2 + x) (log's error near 1 is absolute: log(1 + x)
        # lost all digits of a tiny x; f64 too, with more terms)
        "log1p": f"fn log1p_{t}(x: {t}) -> {t} {{\n"
                 f"  if (abs(x) < {t}(0.25)) {{\n"
                 f"    let s = x / ({t}(2) + x); let s2 = s * s;\n"
                 f"    return {t}(2) * s * "
                 f"{_series('s2', _ATANH_C64 if t == 'f64' else _ATANH_C, t)};\n"
                 f"  }}\n" +
                 f"  let u = {one} + x;\n"
                 f"  if (u == {one}) {{ return x; }}\n"
                 f"  if (!(abs(u) <= {mx})) {{ return LOG(u); }}\n"
                 f"  return LOG(u) * (x / (u - {one})); }}",
        "expm1": f"fn expm1_{t}(x: {t}) -> {t} {{\n"
                 + (f"  if (abs(x) < {t}(0.25)) {{\n"  # Taylor series
                    f"    return x * {_series('x', _EXPM1_C, t)};\n"
                    f"  }}\n" if t != "f64" else "") +
                 f"  let u = EXP(x);\n"
                 f"  if (u == {one}) {{ return x; }}\n"
                 f"  let um = u - {one};\n"
                 f"  if (um == -{one} || !(abs(u) <= {mx})) {{ return um; }}\n"
                 f"  return um * (x / LOG(u)); }}",
        "signbit": f"fn signbit_{t}(x: {t}) -> bool {{\n"
                   f"  return (bitcast<u32>(f32(x)) & 0x80000000u) != 0u; }}",
        "fatan2": f"fn fatan2_{t}(y: {t}, x: {t}) -> {t} {{\n"
                  f"  if ({is_nan(t, 'x')} || {is_nan(t, 'y')}) {{ return x + y; }}\n"
                  f"  let pi = {t}(3.141592653589793);\n"
                  f"  let sy = select({one}, -{one}, signbit_{t}(y));\n"
                  f"  if (y == {zero}) {{ return select(sy * pi, y, !signbit_{t}(x)); }}\n"
                  f"  if (x == {zero}) {{ return sy * pi * {t}(0.5); }}\n"
                  f"  let yi = !(abs(y) <= {mx}); let xi = !(abs(x) <= {mx});\n"
                  f"  if (yi && xi) {{ return sy * select(pi * {t}(0.75), pi * {t}(0.25), "
                  f"x > {zero}); }}\n"
                  # y / x: a zero with y's sign (a constant 0 times sy may lose it)
                  f"  if (xi) {{ return select(sy * pi, y / x, x > {zero}); }}\n"
                  f"  if (yi) {{ return sy * pi * {t}(0.5); }}\n"
                  f"  return ATAN2(y, x); }}",
        "fhypot": f"fn fhypot_{t}(a: {t}, b: {t}) -> {t} {{\n"
                  f"  let x = abs(a); let y = abs(b);\n"
                  f"  let xn = {is_num(t, 'x')}; let yn = {is_num(t, 'y')};\n"
                  f"  if (xn && !(x <= {mx}) || yn && !(y <= {mx})) {{\n"
                  f"    return {_inf(t)}; }}\n"
                  f"  if (!xn || !yn) {{ return {_nan(t)}; }}\n"
                  f"  let m = max(x, y);\n"
                  f"  if (m == {zero}) {{ return {zero}; }}\n"
                  f"  let p = x / m; let q = y / m;\n"
                  f"  return m * sqrt(p * p + q * q); }}",
        "log10": f"fn log10_{t}(x: {t}) -> {t} {{ return log2(x) * {t}(0.3010299956639812); }}",
        "asin": f"fn asin_{t}(x: {t}) -> {t} {{\n"
                f"  if (abs(x) > {one}) {{ return {_nan(t)}; }}\n"
                f"  return atan2(x, sqrt(({one} - x) * ({one} + x))); }}",
        "acos": f"fn acos_{t}(x: {t}) -> {t} {{\n"
                f"  if (abs(x) > {one}) {{ return {_nan(t)}; }}\n"
                f"  return atan2(sqrt(({one} - x) * ({one} + x)), x); }}",
    }


def _int_helpers(t: str, signed: bool) -> dict[str, str]:
    # Vulkan leaves OpSRem/OpSMod undefined for negative operands (NVIDIA's driver does
    # differ from Mesa), so signed remainder/floor division work on magnitudes with
    # unsigned division only; a zero divisor gives 0, as NumPy does for integers
    zero, one = f"{t}(0)", f"{t}(1)"
    u = "u" + t[1:]
    uz = f"{u}(0)"
    if signed:
        mags = (f"  if (b == {zero}) {{ return {zero}; }}\n"
                f"  let ua = select(bitcast<{u}>(a), {uz} - bitcast<{u}>(a), a < {zero});\n"
                f"  let ub = select(bitcast<{u}>(b), {uz} - bitcast<{u}>(b), b < {zero});\n")
        rem = (f"fn irem_{t}(a: {t}, b: {t}) -> {t} {{\n{mags}"
               f"  let m = ua - (ua / ub) * ub;\n"
               f"  var r = bitcast<{t}>(select(m, {uz} - m, a < {zero}));\n"
               f"  if (r != {zero} && ((r < {zero}) != (b < {zero}))) {{ r = r + b; }}\n"
               f"  return r; }}")
        fdiv = (f"fn ifloordiv_{t}(a: {t}, b: {t}) -> {t} {{\n{mags}"
                f"  let q = ua / ub;\n"
                f"  let neg = (a < {zero}) != (b < {zero});\n"
                f"  var r = bitcast<{t}>(select(q, {uz} - q, neg));\n"
                f"  if (neg && q * ub != ua) {{ r = r - {one}; }}\n"
                f"  return r; }}")
        sign = (f"fn isign_{t}(x: {t}) -> {t} {{\n"
                f"  return select(select({zero}, {one}, x > {zero}), -{one}, x < {zero}); }}")
    else:
        rem = (f"fn irem_{t}(a: {t}, b: {t}) -> {t} {{\n"
               f"  if (b == {zero}) {{ return {zero}; }} return a - (a / b) * b; }}")
        fdiv = (f"fn ifloordiv_{t}(a: {t}, b: {t}) -> {t} {{\n"
                f"  if (b == {zero}) {{ return {zero}; }} return a / b; }}")
        sign = f"fn isign_{t}(x: {t}) -> {t} {{ return select({zero}, {one}, x > {zero}); }}"
    ipow = (f"fn ipow_{t}(a0: {t}, b0: {t}) -> {t} {{\n"
            f"  var a = a0; var b = b0; var r = {one};\n"
            + (f"  if (b < {zero}) {{ return select({zero}, select({one}, select(-{one}, {one}, "
               f"(b & {one}) == {zero}), a == -{one}), a == {one} || a == -{one}); }}\n"
               if signed else "")
            + f"  loop {{ if (b == {zero}) {{ break; }}\n"
              f"    if ((b & {one}) == {one}) {{ r = r * a; }}\n"
              f"    a = a * a; b = b >> 1u; }}\n"
              f"  return r; }}")
    return {"irem": rem, "ifloordiv": fdiv, "isign": sign, "ipow": ipow}


# float16 helpers that compute in float32 and round once (arity of each)
_WIDEN_F16 = {"fpow": 2, "frem": 2, "ffloordiv": 2, "fatan2": 2, "fhypot": 2, "log1p": 1,
              "expm1": 1, "log10": 1, "asin": 1, "acos": 1}


def _widened_f16(name: str) -> str:
    args = ["a", "b"][:_WIDEN_F16[name]]
    params = ", ".join(f"{a}: f16" for a in args)
    call = ", ".join(f"f32({a})" for a in args)
    return (helper(name, D.float32) + "\n"
            f"fn {name}_f16({params}) -> f16 {{ return f16({name}_f32({call})); }}")


def helpers_source(names: tuple[str, ...], t: DType) -> str:
    """The WGSL of helpers ``names`` for dtype ``t``, each function once (helpers share
    dependencies: a widened float16 helper brings its float32 one)."""
    chunks: list[str] = []
    for h in names:
        chunks.extend(c.strip() for c in _FN.split(helper(h, t)) if c.strip())
    return "\n".join(dict.fromkeys(chunks))


_FN = re.compile(r"^(?=fn |const |alias |var<private>)", re.M)
_cache: dict[tuple[str, str], str] = {}


def helper(name: str, t: DType) -> str:
    """WGSL source of helper ``name`` for dtype ``t`` (its function is ``{name}_{wgsl}``)."""
    key = (name, t.wgsl)
    src = _cache.get(key)
    if src is None and t.wgsl == "f16" and name in _WIDEN_F16:
        src = _cache[key] = _widened_f16(name)
    if src is None:
        if t.kind == "f":
            table = _float_helpers(t.wgsl)
            if t.wgsl == "f32":
                from .trig_reduce import f32_helpers
                table.update(f32_helpers())
        else:
            table = _int_helpers(t.wgsl, t.kind == "i")
        src = table[name]
        if t.wgsl == "f64":
            from .f64_math import F64_NAMES
            src = src.replace("POW(", F64_NAMES["pow"] + "(")
            src = src.replace("LOG(", F64_NAMES["log"] + "(")
            src = src.replace("EXP(", F64_NAMES["exp"] + "(")
            src = src.replace("ATAN2(", F64_NAMES["atan2"] + "(")
        else:
            src = src.replace("POW(", "pow(").replace("LOG(", "log(").replace("EXP(", "exp(")
            src = src.replace("ATAN2(", "atan2(")
        if name in ("fatan2", "copysign"):  # they call signbit
            src = helper("signbit", t) + "\n" + src
        _cache[key] = src
    return src
