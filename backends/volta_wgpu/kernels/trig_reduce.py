"""Argument reduction for sin/cos/tan of large arguments (Payne-Hanek), in WGSL.

``x = q * pi/2 + r`` with ``|r| <= pi/4``: the mantissa of ``x`` (an integer of up to 64
bits) is multiplied exactly, in 32-bit words, by the 128 bits of ``2/pi`` that matter at
its exponent; the product's integer part gives the quadrant ``q`` and its next 96 bits
the fraction ``r / (pi/2)``. The GPU built-ins reduce with a float32 ``pi`` and are off
by whole units for ``|x|`` beyond about 1e4 (float32) or 1e5 (float64 Cody-Waite).
"""

from __future__ import annotations

# 2/pi in 32-bit words, behind 96 zero bits so that negative bit offsets read zeros
_TWO_OVER_PI = (
    0x00000000, 0x00000000, 0x00000000,
    0xA2F9836E, 0x4E441529, 0xFC2757D1, 0xF534DDC0, 0xDB629599, 0x3C439041, 0xFE5163AB,
    0xDEBBC561, 0xB7246E3A, 0x424DD2E0, 0x06492EEA, 0x09D1921C, 0xFE1DEB1C, 0xB129A73E,
    0xE88235F5, 0x2EBB4484, 0xE99C7026, 0xB45F7E41, 0x3991D639, 0x835339F4, 0x9C845F8B,
    0xBDF9283B, 0x1FF897FF, 0xDE05980F, 0xEF2F118B, 0x5A0A6D1F, 0x6D367ECF, 0x27CB09B7,
    0x4F463F66, 0x9E5FEA2D, 0x7527BAC7, 0xEBE5F17B, 0x3D0739F7, 0x8A5292EA, 0x6BFB5FB1,
    0x1F8D5D08, 0x56033046, 0xFC7B6BAB, 0xF0CFBC20, 0x9AF4361D,
)
_N = len(_TWO_OVER_PI)
_TABLE = ", ".join(f"0x{w:08X}u" for w in _TWO_OVER_PI)

def core_src(nw: int) -> str:
    """The reduction core with ``nw`` words of ``2/pi`` (functions ``tpi{nw}_*``).

    The mantissa times those bits leaves an error below 2**(bits of mantissa + 32 -
    32 * nw) quarter turns: 4 words serve float32, float64 needs 6.
    """
    n, t = nw + 2, f"tpi{nw}"
    return f"""
var<private> {t}_tab: array<u32, {_N}> = array<u32, {_N}>({_TABLE});

fn {t}_mulw(a: u32, b: u32) -> vec2<u32> {{
  // the 64-bit product a * b as (high word, low word)
  let al = a & 0xffffu; let ah = a >> 16u; let bl = b & 0xffffu; let bh = b >> 16u;
  let ll = al * bl; let lh = al * bh; let hl = ah * bl; let hh = ah * bh;
  let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
  return vec2<u32>(hh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u), (ll & 0xffffu) | (mid << 16u));
}}

fn {t}_add(r: ptr<function, array<u32, {n}>>, at: i32, v: u32) {{
  // add v at word ``at`` and carry upwards (a fixed trip count: a divergent break
  // miscompiles on lavapipe)
  var c = v;
  for (var k = {n - 1}; k >= 0; k = k - 1) {{
    if (k <= at) {{
      let s = (*r)[k] + c;
      c = select(0u, 1u, s < c);
      (*r)[k] = s;
    }}
  }}
}}

fn {t}_reduce(mh: u32, ml: u32, e: i32) -> vec4<u32> {{
  // x = (mh * 2**32 + ml) * 2**e, e >= -64: returns (q mod 4, fraction words F0 F1 F2)
  // of x * 2/pi; bits of 2/pi from 2**-(e - 31) on (earlier ones add multiples of 4)
  let p = u32(e + 64);
  let wi = p >> 5u; let sh = p & 31u;
  var w: array<u32, {nw}>;
  for (var j = 0u; j < {nw}u; j = j + 1u) {{
    let a = {t}_tab[wi + j]; let b = {t}_tab[wi + j + 1u];
    w[j] = select((a << sh) | (b >> ((32u - sh) & 31u)), a, sh == 0u);
  }}
  var r: array<u32, {n}>;
  for (var k = 0; k < {n}; k = k + 1) {{ r[k] = 0u; }}
  for (var j = 0; j < {nw}; j = j + 1) {{
    let ph = {t}_mulw(mh, w[j]);
    {t}_add(&r, j + 1, ph.y); {t}_add(&r, j, ph.x);
    let pl = {t}_mulw(ml, w[j]);
    {t}_add(&r, j + 2, pl.y); {t}_add(&r, j + 1, pl.x);
  }}
  return vec4<u32>(r[2] & 3u, r[3], r[4], r[5]);
}}
"""


F32_SRC = core_src(4) + """
// 1.0 that the shader compiler cannot see (set from the argument by each entry point):
// error-free sums such as "s - a" with s = a + b are folded to "b" otherwise (Mesa's NIR
// rewrites float algebra that SPIR-V does not mark exact), losing the error term
var<private> tpi_one: f32 = 1.0;

fn tpi_red_f32(ax: f32) -> vec3<f32> {
  // (r, r_lo, q) with ax = q * pi/2 + r + r_lo, |r| <= pi/4, for finite ax > pi/4;
  // r + r_lo carries about 40 bits, so that sin(r) is good to half an ulp
  let b = bitcast<u32>(ax);
  let e = i32(b >> 23u) - 150;
  let red = tpi4_reduce(0u, (b & 0x7fffffu) | 0x800000u, e);
  var q = red.x;
  let f0 = red.y;
  if ((f0 & 0x80000000u) != 0u) { q = q + 1u; }  // round to the nearest quadrant
  let hi = f32(bitcast<i32>(f0) >> 8u) * 5.9604644775390625e-08;
  let mid = f32(((f0 & 0xffu) << 16u) | (red.z >> 16u)) * 3.552713678800501e-15;
  let lo = f32(((red.z & 0xffffu) << 8u) | (red.w >> 24u)) * 2.117582368135751e-22;
  let p1 = 1.5707963705062866; let p2 = -4.371139000186241e-08;
  let ph = tpi_two_prod(hi, p1);               // hi * p1, exactly
  let rest = ph.y + (mid * p1 + (hi * p2 + lo * p1));
  let r = (ph.x + rest) * tpi_one;
  return vec3<f32>(r, rest - (r - ph.x), f32(q & 3u));
}

fn tpi_sin_poly(r: f32) -> f32 {
  let z = r * r;
  return r + r * z * (-0.16666666666666666 + z * (0.008333333333333333 + z * (
    -0.0001984126984126984 + z * (2.7557319223985893e-06 + z * -2.505210838544172e-08))));
}

fn tpi_cos_poly(r: f32) -> f32 {
  let z = r * r;
  return 1.0 + z * (-0.5 + z * (0.041666666666666664 + z * (-0.001388888888888889 + z * (
    2.48015873015873e-05 + z * (-2.755731922398589e-07 + z * 2.08767569878681e-09)))));
}

fn tpi_split(a: f32) -> vec2<f32> {
  // a = hi + lo with 12-bit halves, so that products of halves are exact. By masking
  // the low mantissa bits, not Dekker's a * 4097 trick: a compiler that fuses
  // "a * 4097 - a" into an fma (lavapipe's does) breaks that one
  let hi = bitcast<f32>(bitcast<u32>(a) & 0xfffff000u);
  return vec2<f32>(hi, a - hi);
}

fn tpi_two_prod(a: f32, b: f32) -> vec2<f32> {
  // (a * b, its rounding error), exactly, without fma
  let p = (a * b) * tpi_one;
  let as_ = tpi_split(a); let bs = tpi_split(b);
  return vec2<f32>(p, ((as_.x * bs.x - p) + as_.x * bs.y + as_.y * bs.x) + as_.y * bs.y);
}

fn tpi_two_sum(a: f32, b: f32) -> vec2<f32> {
  let s = (a + b) * tpi_one; let bb = s - a;
  return vec2<f32>(s, (a - (s - bb)) + (b - bb));
}

fn tpi_ddiv(a: vec2<f32>, b: vec2<f32>) -> f32 {
  // (a.x + a.y) / (b.x + b.y) to about half an ulp
  let q = a.x / b.x;
  let p = tpi_two_prod(q, b.x);
  return q + (((a.x - p.x) - p.y) + a.y - q * b.y) / b.x;
}

fn tpi_tan_abs(x: f32) -> f32 {
  // tan(|x|): sin and cos of the reduced argument kept as (value, error) pairs
  let ax = abs(x);
  var rq = vec3<f32>(ax, 0.0, 0.0);
  if (ax > 0.7853981633974483) { rq = tpi_red_f32(ax); }
  let r = rq.x; let z = r * r;
  let ts = r * z * (-0.16666666666666666 + z * (0.008333333333333333 + z * (
    -0.0001984126984126984 + z * (2.7557319223985893e-06 + z * -2.505210838544172e-08))));
  let tc = z * (-0.5 + z * (0.041666666666666664 + z * (-0.001388888888888889 + z * (
    2.48015873015873e-05 + z * (-2.755731922398589e-07 + z * 2.08767569878681e-09)))));
  var sn = tpi_two_sum(r, ts); sn.y = sn.y + rq.y;
  var cs = tpi_two_sum(1.0, tc); cs.y = cs.y - rq.y * r;
  if ((u32(rq.z) & 1u) == 1u) { return -tpi_ddiv(cs, sn); }
  return tpi_ddiv(sn, cs);
}

fn tpi_parts_f32(x: f32) -> vec3<f32> {
  // (sin r, cos r, q) for |x|, with |x| = q * pi/2 + r
  let ax = abs(x);
  var rq = vec3<f32>(ax, 0.0, 0.0);
  if (ax > 0.7853981633974483) { rq = tpi_red_f32(ax); }
  let s = tpi_sin_poly(rq.x); let c = tpi_cos_poly(rq.x);
  return vec3<f32>(s + rq.y * c, c - rq.y * s, rq.z);
}
"""


def f32_helpers() -> dict[str, str]:
    """``fsin_f32``, ``fcos_f32``, ``ftan_f32`` with the reduction above."""
    nan = "bitcast<f32>(0x7fc00000u)"
    head = f"  if (!(abs(x) <= 3.4028234663852886e38)) {{ return {nan}; }}\n" \
           "  if (x == 0.0) { return X0; }\n" \
           "  tpi_one = select(1.0, 0.5, bitcast<u32>(x) == 0x7fffffffu);\n"
    guard = head + "  let p = tpi_parts_f32(x);\n  let q = u32(p.z);\n"
    sign = "select(1.0, -1.0, x < 0.0)"
    return {
        "fsin": F32_SRC + "fn fsin_f32(x: f32) -> f32 {\n" + guard.replace("X0", "x") +
        f"  let v = select(p.x, p.y, (q & 1u) == 1u);\n"
        f"  return {sign} * select(v, -v, q >= 2u); }}",
        "fcos": F32_SRC + "fn fcos_f32(x: f32) -> f32 {\n" + guard.replace("X0", "1.0") +
        "  let v = select(p.y, p.x, (q & 1u) == 1u);\n"
        "  return select(v, -v, q == 1u || q == 2u); }",
        "ftan": F32_SRC + "fn ftan_f32(x: f32) -> f32 {\n" + head.replace("X0", "x") +
        f"  return {sign} * tpi_tan_abs(x); }}",
    }


F64_RED_SRC = core_src(6) + """
fn tpi_red_f64(ax: f64) -> vec2<f64> {
  // (r, q) with ax = q * pi/2 + r, |r| <= pi/4, for finite ax >= 1
  let fr = frexp_f64p(ax);
  let m = fr.x * f64(4503599627370496.0);     // the 53-bit integer mantissa
  let e = i32(fr.y) - 52;
  let mh = u32(floor(m * f64(2.3283064365386963e-10)));
  let ml = u32(m - f64(mh) * f64(4294967296.0));
  let red = tpi6_reduce(mh, ml, e);
  var q = red.x;
  if ((red.y & 0x80000000u) != 0u) { q = q + 1u; }
  let f = f64(bitcast<i32>(red.y)) * f64(2.3283064365386963e-10)
        + (f64(red.z) * f64(5.421010862427522e-20) + f64(red.w) * f64(1.2621774483536189e-29));
  let r = f * f64(1.5707963267948966) + f * f64(6.123233995736766e-17);
  return vec2<f64>(r, f64(q & 3u));
}
"""
