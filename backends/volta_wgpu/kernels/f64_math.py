"""float64 transcendentals in WGSL (Vulkan's built-ins exist only for 16/32-bit floats).

Classic argument reduction (Cody-Waite with split constants, exact powers of two)
followed by Taylor/atanh series long enough for double precision. Accuracy is a few
ulp for moderate arguments; huge arguments of sin/cos lose precision (no Payne-Hanek).
"""

from __future__ import annotations

import math

from .trig_reduce import F64_RED_SRC


def _lit(v: float) -> str:
    return f"f64({v!r})"


def _horner(var: str, coeffs: list[float]) -> str:
    """``c0 + var*(c1 + var*(c2 + ...))`` as WGSL."""
    expr = _lit(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        expr = f"({_lit(c)} + {var} * {expr})"
    return expr


_EXP_C = [1.0 / math.factorial(n) for n in range(0, 18)]
_LOG_C = [2.0 / (2 * n + 1) for n in range(0, 12)]          # 2 atanh(s) = s * sum c_n s^2n
_SIN_C = [(-1) ** n / math.factorial(2 * n + 1) for n in range(0, 11)]
_COS_C = [(-1) ** n / math.factorial(2 * n) for n in range(0, 11)]
_SINH_C = [1.0 / math.factorial(2 * n + 1) for n in range(0, 10)]
_ATAN_C = [(-1) ** n / (2 * n + 1) for n in range(0, 24)]

INF = "f64(bitcast<f32>(0x7f800000u))"
NAN = "f64(bitcast<f32>(0x7fc00000u))"

F64_SRC = f"""
fn round_f64p(x: f64) -> f64 {{
  // half to even, a zero keeping x's sign (lavapipe's f64 round() rounds 3.5 to 3, -0 to 0)
  let f = floor(x);
  let d = x - f;
  var r = f;
  if (d > f64(0.5) || (d == f64(0.5) && f - f64(2) * floor(f * f64(0.5)) == f64(1))) {{
    r = f + f64(1);
  }}
  if (r == f64(0) && x <= f64(0)) {{ r = ceil(x); }}  // -0: ceil of [-0.5, 0] keeps the sign
  return r;
}}
fn pow2_f64p(k: i32) -> f64 {{
  // 2**k, exactly, without ldexp (which some drivers fail to compile for f64)
  var r = f64(1);
  var e = k;
  loop {{
    if (e > 120) {{ r = r * f64(bitcast<f32>(u32(247) << 23u)); e = e - 120; }}
    else if (e < -120) {{ r = r * f64(bitcast<f32>(u32(7) << 23u)); e = e + 120; }}
    else {{ break; }}
  }}
  return r * f64(bitcast<f32>(u32(e + 127) << 23u));
}}

fn frexp_f64p(x: f64) -> vec2<f64> {{
  // (m, e) with x = m * 2**e, 1 <= m < 2, for finite x > 0 (no frexp: see pow2_f64p)
  var v = x;
  var e = 0;
  for (var i = 0; i < 11 && v > f64(1e30); i = i + 1) {{ v = v * pow2_f64p(-100); e = e + 100; }}
  for (var i = 0; i < 12 && v < f64(1e-30); i = i + 1) {{ v = v * pow2_f64p(100); e = e - 100; }}
  let g = i32(floor(log2(f32(v))));
  var m = v * pow2_f64p(-g);
  e = e + g;
  if (m >= f64(2)) {{ m = m * f64(0.5); e = e + 1; }}
  if (m < f64(1)) {{ m = m * f64(2); e = e - 1; }}
  return vec2<f64>(m, f64(e));
}}

fn exp_f64p(x: f64) -> f64 {{
  if (!(x == x)) {{ return x; }}
  if (x > f64(709.782712893384)) {{ return {INF}; }}
  if (x < f64(-745.1332191019412)) {{ return f64(0); }}
  let k = round(x * f64(1.4426950408889634));
  let r = (x - k * f64(6.93147180369123816490e-01)) - k * f64(1.90821492927058770002e-10);
  let p = {_horner("r", _EXP_C)};
  return p * pow2_f64p(i32(k));
}}

fn log_f64p(x: f64) -> f64 {{
  if (!(x == x) || x < f64(0)) {{ return {NAN}; }}
  if (x == f64(0)) {{ return -{INF}; }}
  if (!(x <= f64(1.7976931348623157e308))) {{ return x; }}
  let fr = frexp_f64p(x);
  var mv = fr.x;
  var e = i32(fr.y);
  if (mv > f64(1.4142135623730951)) {{ mv = mv * f64(0.5); e = e + 1; }}
  let f = mv - f64(1);
  let s = f / (f64(2) + f);
  let z = s * s;
  let lm = s * {_horner("z", _LOG_C)};
  let ef = f64(e);
  return ef * f64(6.93147180369123816490e-01) + (ef * f64(1.90821492927058770002e-10) + lm);
}}

fn pow_f64p(a: f64, b: f64) -> f64 {{ return exp_f64p(b * log_f64p(a)); }}
fn exp2_f64p(x: f64) -> f64 {{
  let k = round(x);
  let kc = i32(clamp(k, f64(-2000), f64(2000)));
  return exp_f64p((x - k) * f64(0.6931471805599453)) * pow2_f64p(kc);
}}
fn log2_f64p(x: f64) -> f64 {{ return log_f64p(x) * f64(1.4426950408889634); }}
fn log10_f64p(x: f64) -> f64 {{ return log_f64p(x) * f64(0.4342944819032518); }}

fn sincos_red_f64(x: f64) -> vec2<f64> {{
  // returns (r, quadrant) with x = r + q * pi/2, |r| <= pi/4
  let q = round(x * f64(0.6366197723675814));
  let r = ((x - q * f64(1.57079632673412561417e+00)) - q * f64(6.07710050630396597660e-11))
          - q * f64(2.02226624879595063154e-21);
  // Payne-Hanek beyond 1e5, where Cody-Waite loses the quadrant (computed on every
  // lane and selected: a divergent early return miscompiles on lavapipe)
  let big = abs(x) > f64(1e5);
  let rq = tpi_red_f64(select(f64(1), abs(x), big));
  let rs = select(rq, vec2<f64>(-rq.x, -rq.y), x < f64(0));
  return select(vec2<f64>(r, q), rs, big);
}}
fn sin_poly_f64(r: f64) -> f64 {{ let z = r * r; return r * {_horner("z", _SIN_C)}; }}
fn cos_poly_f64(r: f64) -> f64 {{ let z = r * r; return {_horner("z", _COS_C)}; }}
fn sin_f64p(x: f64) -> f64 {{
  if (!(abs(x) <= f64(1.7976931348623157e308))) {{ return {NAN}; }}
  let rq = sincos_red_f64(x);
  let q = i32(rq.y - floor(rq.y * f64(0.25)) * f64(4));
  if (q == 0) {{ return sin_poly_f64(rq.x); }}
  if (q == 1) {{ return cos_poly_f64(rq.x); }}
  if (q == 2) {{ return -sin_poly_f64(rq.x); }}
  return -cos_poly_f64(rq.x);
}}
fn cos_f64p(x: f64) -> f64 {{
  if (!(abs(x) <= f64(1.7976931348623157e308))) {{ return {NAN}; }}
  let rq = sincos_red_f64(x);
  let q = i32(rq.y - floor(rq.y * f64(0.25)) * f64(4));
  if (q == 0) {{ return cos_poly_f64(rq.x); }}
  if (q == 1) {{ return -sin_poly_f64(rq.x); }}
  if (q == 2) {{ return -cos_poly_f64(rq.x); }}
  return sin_poly_f64(rq.x);
}}
fn tan_f64p(x: f64) -> f64 {{ return sin_f64p(x) / cos_f64p(x); }}

fn sinh_f64p(x: f64) -> f64 {{
  if (abs(x) < f64(0.5)) {{ let z = x * x; return x * {_horner("z", _SINH_C)}; }}
  let e = exp_f64p(abs(x));
  let r = f64(0.5) * (e - f64(1) / e);
  return select(r, -r, x < f64(0));
}}
fn cosh_f64p(x: f64) -> f64 {{ let e = exp_f64p(abs(x)); return f64(0.5) * (e + f64(1) / e); }}
fn tanh_f64p(x: f64) -> f64 {{
  let a = abs(x);
  if (!(x == x)) {{ return x; }}
  var r: f64;
  if (a < f64(0.5)) {{ r = sinh_f64p(a) / cosh_f64p(a); }}
  else if (a > f64(20)) {{ r = f64(1); }}
  else {{ r = f64(1) - f64(2) / (exp_f64p(f64(2) * a) + f64(1)); }}
  return select(r, -r, x < f64(0));
}}

fn atan_f64p(x: f64) -> f64 {{
  if (!(x == x)) {{ return x; }}
  var t = abs(x);
  var base = f64(0);
  var flip = false;
  if (t > f64(1)) {{ t = f64(1) / t; flip = true; }}
  if (t > f64(0.41421356237309503)) {{
    t = (t - f64(1)) / (t + f64(1)); base = f64(0.7853981633974483);
  }}
  let z = t * t;
  var r = base + t * {_horner("z", _ATAN_C)};
  if (flip) {{ r = f64(1.5707963267948966) - r; }}
  return select(r, -r, x < f64(0));
}}
fn atan2_f64p(y: f64, x: f64) -> f64 {{
  if (!(x == x) || !(y == y)) {{ return x + y; }}
  let pi = f64(3.141592653589793);
  if (x == f64(0)) {{
    if (y == f64(0)) {{
      let sx = select(f64(0), pi, bitcast<u32>(f32(x)) != 0u);
      return sx * select(f64(1), f64(-1), bitcast<u32>(f32(y)) != 0u);
    }}
    return select(pi * f64(0.5), -pi * f64(0.5), y < f64(0));
  }}
  let xi = !(abs(x) <= f64(1.7976931348623157e308));
  let yi = !(abs(y) <= f64(1.7976931348623157e308));
  if (xi && yi) {{
    let a = select(pi * f64(0.25), pi * f64(0.75), x < f64(0));
    return select(a, -a, y < f64(0));
  }}
  var r: f64;
  if (xi) {{ r = f64(0); }} else if (yi) {{ r = pi * f64(0.5); }}
  else {{
    r = atan_f64p(abs(y / x));
    if (abs(y) > abs(x)) {{ r = pi * f64(0.5) - atan_f64p(abs(x / y)); }}
  }}
  if (x < f64(0)) {{ r = pi - r; }}
  return select(r, -r, y < f64(0) || (y == f64(0) && bitcast<u32>(f32(y)) != 0u));
}}
fn asin_f64p(x: f64) -> f64 {{
  if (abs(x) > f64(1)) {{ return {NAN}; }}
  return atan2_f64p(x, sqrt((f64(1) - x) * (f64(1) + x)));
}}
fn acos_f64p(x: f64) -> f64 {{
  if (abs(x) > f64(1)) {{ return {NAN}; }}
  return atan2_f64p(sqrt((f64(1) - x) * (f64(1) + x)), x);
}}
fn log1p_f64p(x: f64) -> f64 {{
  let u = f64(1) + x;
  if (u == f64(1)) {{ return x; }}
  if (!(abs(u) <= f64(1.7976931348623157e308))) {{ return log_f64p(u); }}
  return log_f64p(u) * (x / (u - f64(1)));
}}
fn asinh_f64p(x: f64) -> f64 {{
  let a = abs(x);
  var r: f64;
  if (a > f64(1e150)) {{ r = log_f64p(a) + f64(0.6931471805599453); }}
  else {{ r = log1p_f64p(a + a * a / (f64(1) + sqrt(f64(1) + a * a))); }}
  return select(r, -r, x < f64(0));
}}
fn acosh_f64p(x: f64) -> f64 {{
  if (x < f64(1)) {{ return {NAN}; }}
  if (x > f64(1e150)) {{ return log_f64p(x) + f64(0.6931471805599453); }}
  let t = x - f64(1);
  return log1p_f64p(t + sqrt(t * t + f64(2) * t));
}}
fn atanh_f64p(x: f64) -> f64 {{
  let a = abs(x);
  if (a > f64(1)) {{ return {NAN}; }}
  let r = f64(0.5) * log1p_f64p(f64(2) * a / (f64(1) - a));
  return select(r, -r, x < f64(0));
}}
"""
F64_SRC += F64_RED_SRC  # large-argument reduction of sin/cos/tan

F64_NAMES = {n: f"{n}_f64p" for n in (
    "exp", "log", "pow", "exp2", "log2", "log10", "sin", "cos", "tan", "sinh", "cosh",
    "tanh", "atan", "atan2", "asin", "acos", "asinh", "acosh", "atanh", "round")}
