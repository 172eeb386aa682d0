"""int64 on adapters without ``shader-int64``: a pair of 32-bit words in WGSL.

An emulated int64 is a ``vec2<u32>`` ``(lo, hi)`` of two's complement, so its bytes are
those of a little-endian int64 (uploads and downloads need no conversion). The WGSL
functions below (prefix ``i64e_``) give the arithmetic, comparisons, shifts, division and
conversions; :func:`volta_wgpu.codegen.header` adds them to every kernel that touches an
emulated int64. Bitwise and/or/xor/not and ``select`` work on the pair as it is.
"""

from __future__ import annotations

SRC = """
fn i64e_from_i32(x: i32) -> vec2<u32> {
  return vec2<u32>(bitcast<u32>(x), select(0u, 0xffffffffu, x < 0));
}
fn i64e_neg_(a: vec2<u32>) -> bool { return (a.y & 0x80000000u) != 0u; }
fn i64e_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}
fn i64e_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}
fn i64e_neg(a: vec2<u32>) -> vec2<u32> { return i64e_sub(vec2<u32>(0u, 0u), a); }
fn i64e_abs(a: vec2<u32>) -> vec2<u32> { return select(a, i64e_neg(a), i64e_neg_(a)); }
fn i64e_mulw(a: u32, b: u32) -> vec2<u32> {
  // the full 64-bit product of two u32 as (lo, hi)
  let al = a & 0xffffu; let ah = a >> 16u; let bl = b & 0xffffu; let bh = b >> 16u;
  let ll = al * bl; let lh = al * bh; let hl = ah * bl; let hh = ah * bh;
  let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
  return vec2<u32>((ll & 0xffffu) | (mid << 16u),
                   hh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u));
}
fn i64e_mul(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let p = i64e_mulw(a.x, b.x);
  return vec2<u32>(p.x, p.y + a.x * b.y + a.y * b.x);
}
fn i64e_eq(a: vec2<u32>, b: vec2<u32>) -> bool { return a.x == b.x && a.y == b.y; }
fn i64e_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
  let ah = bitcast<i32>(a.y); let bh = bitcast<i32>(b.y);
  return ah < bh || (ah == bh && a.x < b.x);
}
fn i64e_ult(a: vec2<u32>, b: vec2<u32>) -> bool {
  return a.y < b.y || (a.y == b.y && a.x < b.x);
}
fn i64e_max(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(a, b, i64e_lt(a, b)); }
fn i64e_min(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return select(a, b, i64e_lt(b, a)); }
fn i64e_sign(a: vec2<u32>) -> vec2<u32> {
  if (i64e_neg_(a)) { return vec2<u32>(0xffffffffu, 0xffffffffu); }
  return vec2<u32>(select(0u, 1u, (a.x | a.y) != 0u), 0u);
}
fn i64e_shl(a: vec2<u32>, n: vec2<u32>) -> vec2<u32> {
  // a count of at least 64 (or negative) shifts every bit out
  if (n.y != 0u || n.x >= 64u) { return vec2<u32>(0u, 0u); }
  let s = n.x;
  if (s == 0u) { return a; }
  if (s >= 32u) { return vec2<u32>(0u, a.x << (s - 32u)); }
  return vec2<u32>(a.x << s, (a.y << s) | (a.x >> (32u - s)));
}
fn i64e_shr(a: vec2<u32>, n: vec2<u32>) -> vec2<u32> {
  // arithmetic: a count of at least 64 (or negative) leaves copies of the sign bit
  var s = n.x;
  if (n.y != 0u || n.x >= 64u) { s = 63u; }
  let h = bitcast<i32>(a.y);
  if (s == 0u) { return a; }
  if (s >= 32u) { return vec2<u32>(bitcast<u32>(h >> (s - 32u)), bitcast<u32>(h >> 31u)); }
  return vec2<u32>((a.x >> s) | (a.y << (32u - s)), bitcast<u32>(h >> s));
}
fn i64e_udivmod(n: vec2<u32>, d: vec2<u32>) -> vec4<u32> {
  // unsigned (quotient, remainder) by shift and subtract; d != 0
  var q = vec2<u32>(0u, 0u); var r = vec2<u32>(0u, 0u);
  for (var i = 63; i >= 0; i = i - 1) {
    let w = select(n.x, n.y, i >= 32);
    let bit = (w >> (u32(i) & 31u)) & 1u;
    r = vec2<u32>((r.x << 1u) | bit, (r.y << 1u) | (r.x >> 31u));
    if (!i64e_ult(r, d)) {
      r = i64e_sub(r, d);
      if (i >= 32) { q.y = q.y | (1u << (u32(i) - 32u)); } else { q.x = q.x | (1u << u32(i)); }
    }
  }
  return vec4<u32>(q, r);
}
fn i64e_floordivmod(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
  // floor division and its remainder (sign of b); a zero divisor gives 0, 0 as in NumPy
  if ((b.x | b.y) == 0u) { return vec4<u32>(0u); }
  let qr = i64e_udivmod(i64e_abs(a), i64e_abs(b));
  let na = i64e_neg_(a); let nb = i64e_neg_(b);
  var q = select(qr.xy, i64e_neg(qr.xy), na != nb);
  var r = select(qr.zw, i64e_neg(qr.zw), na);
  if ((r.x | r.y) != 0u && i64e_neg_(r) != nb) {
    q = i64e_sub(q, vec2<u32>(1u, 0u));
    r = i64e_add(r, b);
  }
  return vec4<u32>(q, r);
}
fn i64e_floordiv(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return i64e_floordivmod(a, b).xy; }
fn i64e_rem(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> { return i64e_floordivmod(a, b).zw; }
fn i64e_pow(a0: vec2<u32>, b0: vec2<u32>) -> vec2<u32> {
  // negative exponents: 1 for a base of 1, +-1 for -1, else 0 (as the int32 version)
  if (i64e_neg_(b0)) {
    let one = vec2<u32>(1u, 0u); let m1 = vec2<u32>(0xffffffffu, 0xffffffffu);
    if (i64e_eq(a0, one)) { return one; }
    if (i64e_eq(a0, m1)) { return select(one, m1, (b0.x & 1u) == 1u); }
    return vec2<u32>(0u, 0u);
  }
  var a = a0; var b = b0; var r = vec2<u32>(1u, 0u);
  for (var i = 0; i < 63; i = i + 1) {
    if ((b.x & 1u) == 1u) { r = i64e_mul(r, a); }
    a = i64e_mul(a, a);
    b = vec2<u32>((b.x >> 1u) | (b.y << 31u), b.y >> 1u);
  }
  return r;
}
fn i64e_to_f32(a: vec2<u32>) -> f32 {
  // correctly rounded: the top 32 bits with a sticky bit for the ones below
  let m = i64e_abs(a);
  var f: f32;
  if (m.y == 0u) {
    f = f32(m.x);
  } else {
    let p = u32(firstLeadingBit(m.y)) + 1u;        // bits of hi in use, 1..32
    let top = select((m.y << (32u - p)) | (m.x >> p), m.y, p == 32u);
    let lost = select(m.x << (32u - p), m.x, p == 32u);
    f = ldexp(f32(top | select(0u, 1u, lost != 0u)), i32(p));
  }
  return select(f, -f, i64e_neg_(a));
}
fn i64e_from_f32(x: f32) -> vec2<u32> {
  // truncates toward zero; saturates out of range, NaN gives the minimum (as NumPy)
  let nan = (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;  // bitwise: drivers fold x == x
  if (nan || x <= -9.223372036854776e18) { return vec2<u32>(0u, 0x80000000u); }
  if (x >= 9.223372036854776e18) { return vec2<u32>(0xffffffffu, 0x7fffffffu); }
  let ax = abs(trunc(x));
  let hi = floor(ax * 2.3283064365386963e-10);
  let lo = ax - hi * 4294967296.0;
  let m = vec2<u32>(u32(lo), u32(hi));
  return select(m, i64e_neg(m), x < 0.0);
}
fn i64e_index(a: vec2<u32>) -> i32 {
  // an index as i32; one outside the i32 range becomes i32's minimum (out of range)
  let lo = bitcast<i32>(a.x);
  if (a.y != select(0u, 0xffffffffu, lo < 0)) { return i32(-2147483647) - 1; }
  return lo;
}
"""

F64_SRC = """
fn i64e_to_f64(a: vec2<u32>) -> f64 {
  return f64(bitcast<i32>(a.y)) * f64(4294967296.0) + f64(a.x);
}
fn i64e_from_f64(x: f64) -> vec2<u32> {
  if (!(x == x) || x <= f64(-9.223372036854776e18)) { return vec2<u32>(0u, 0x80000000u); }
  if (x >= f64(9.223372036854776e18)) { return vec2<u32>(0xffffffffu, 0x7fffffffu); }
  let ax = abs(trunc(x));
  let hi = floor(ax * f64(2.3283064365386963e-10));
  let lo = ax - hi * f64(4294967296.0);
  let m = vec2<u32>(u32(lo), u32(hi));
  return select(m, i64e_neg(m), x < f64(0));
}
"""


def const(value: int) -> str:
    """A WGSL constant of an emulated int64."""
    v = int(value) & 0xFFFFFFFFFFFFFFFF
    return f"vec2<u32>({v & 0xFFFFFFFF}u, {v >> 32}u)"
