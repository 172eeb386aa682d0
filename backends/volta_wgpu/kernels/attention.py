"""Fused (flash-style) attention: ``softmax(q k^T * scale) v`` without the score matrix.

The ``sdpa_flash`` kernels of the core (``volta_core.nn.attention``) for ``(B, H, L, E)``
float32/float16 queries, keys and values of one head size ``E`` (a multiple of 4, at
most 128), any strides:

- forward: one thread per query row, a workgroup of :data:`BR` rows walking the keys in
  tiles of ``BC`` held in workgroup memory; an online softmax (running max and sum,
  rescaled once per tile) accumulates the output in registers. It returns the output and
  ``stats``: the log-sum-exp of each row, then the four Philox words of its dropout.
- backward (FlashAttention-2's): ``D = rowsum(dO * O)`` and ``dq`` with one thread per
  query row, then ``dk`` and ``dv`` with one thread per key row (in two kernels past
  :data:`SPLIT_E` features, to keep a thread's rows in registers), each recomputing the
  probabilities from the log-sum-exp.

Dropout on the attention weights is drawn in the kernels: the score ``(bh, i, j)`` is
kept when word ``idx % 4`` of Philox-4x32-10 at counter ``offset + idx // 4`` (``idx``
its place in the ``(B, H, L, S)`` scores) is at least ``p * 2**32``, with key and
counter reserved from the device's default generator (``vt.manual_seed`` seeds it; see
:meth:`volta_wgpu.random.Generator.state_buffer`), so the backward regenerates the same
mask and a replayed call draws eager's. ``causal`` masks keys after the query (square
scores only, as the core asks).
"""

from __future__ import annotations

import struct
from typing import Any

from .. import dtypes as D
from ..array import Array, new_array
from ..engine import groups_for
from ..random import PHILOX_WGSL

BR = 64  # query (or key) rows per workgroup: one per thread
SPLIT_E = 32  # head sizes above this get dk and dv from two kernels
_LIMIT = 16384  # bytes of workgroup memory every adapter offers


def _tile(e: int, per_row: int) -> int:
    """Rows of a workgroup-memory tile holding ``per_row`` floats per row."""
    bc = 32
    while bc > 4 and bc * per_row * 4 > _LIMIT:
        bc //= 2
    return bc


def supported(q: Any, k: Any, v: Any) -> bool:
    """Whether the kernels take these ``(B, H, L|S, E)`` arrays."""
    if not all(isinstance(a, Array) for a in (q, k, v)):
        return False
    if not (q.ndim == k.ndim == v.ndim == 4 and q.dtype is k.dtype is v.dtype
            and q.dtype in (D.float32, D.float16) and q.engine is k.engine is v.engine):
        return False
    b, h, lq, e = q.shape
    s = k.shape[2]
    if k.shape != (b, h, s, e) or v.shape != (b, h, s, e) or e % 4 or not 0 < e <= 128:
        return False
    if q.dtype is D.float16 and "shader-f16" not in q.engine.features:
        return False
    # the dropout counters index the scores with 32-bit words
    return min(lq, s, b * h) > 0 and b * h * lq * s < 2 ** 32 and all(
        st >= 0 for a in (q, k, v) for st in a.strides)


# -- WGSL --------------------------------------------------------------------------------

_HEAD = PHILOX_WGSL + """
var<private> rblk: u32 = 0xffffffffu;
var<private> rval: vec4<u32>;
// the scaled keep factor of score ``idx`` (1 / (1 - p) or 0)
fn keep(idx: u32, rs0: u32, rs1: u32, rs2: u32, rs3: u32, thr: u32, zs: u32) -> f32 {
  let blk = idx >> 2u;
  if (blk != rblk) {
    rblk = blk;
    let lo = rs2 + blk;
    let hi = rs3 + select(0u, 1u, lo < blk);
    rval = philox(vec4<u32>(lo, hi, 0u, 0u), vec2<u32>(rs0, rs1));
  }
  let w = rval[idx & 3u];
  return select(0.0, bitcast<f32>(zs), w >= thr);
}
"""


def _meta_fields(names: list[str]) -> str:
    return "".join(f"  let {n} = m[{i >> 2}][{i & 3}];\n" for i, n in enumerate(names))


# meta words shared by the three kernels
_COMMON = ["BH", "H", "L", "S", "SCALE", "THR", "ZS"]
_STRIDED = ["OFF", "SB", "SH", "SL", "SE"]


def _fields(arrays: list[str]) -> list[str]:
    return _COMMON + [f"{a}{f}" for a in arrays for f in _STRIDED]


def _at(a: str, row: str, e: str) -> str:
    """Index of element ``(bh, row, e)`` of strided input ``a``."""
    return f"({a}OFF + (bh / H) * {a}SB + (bh % H) * {a}SH + ({row}) * {a}SL + ({e}) * {a}SE)"


def _decl(n_meta: int, writes: list[tuple[str, str]], reads: list[tuple[str, str]],
          f16: bool) -> str:
    lines = ["enable f16;"] if f16 else []
    lines.append(f"@group(0) @binding(0) var<uniform> m: array<vec4<u32>, "
                 f"{max(1, -(-n_meta // 4))}>;")
    b = 1
    for name, t in writes:
        lines.append(f"@group(0) @binding({b}) var<storage, read_write> {name}: array<{t}>;")
        b += 1
    for name, t in reads:
        lines.append(f"@group(0) @binding({b}) var<storage, read> {name}: array<{t}>;")
        b += 1
    return "\n".join(lines) + "\n"


_MAIN = (f"@compute @workgroup_size({BR})\n"
         "fn main(@builtin(workgroup_id) wid: vec3<u32>,\n"
         "        @builtin(local_invocation_index) lid: u32,\n"
         "        @builtin(num_workgroups) nwg: vec3<u32>) {\n")


def _kv_tiles(bc: int, e4: int) -> str:
    """Workgroup tiles of ``bc`` keys and values (``e4`` vec4s a row), shared by a block."""
    return (f"var<workgroup> kt: array<vec4<f32>, {bc * e4}>;\n"
            f"var<workgroup> vt: array<vec4<f32>, {bc * e4}>;\n")


def _key_blocks(bc: int, e: int, bound: str) -> str:
    """The loop over blocks of ``bc`` keys up to ``bound`` (opened, not closed): each
    block's keys and values loaded into the workgroup tiles, then the valid rows' work."""
    return f"""  let base = (bhh * L + ii) * S;
  let tend = {bound};
  for (var t0 = 0u; t0 < tend; t0 = t0 + {bc}u) {{
    workgroupBarrier();
    for (var x = lid; x < {bc * e}u; x = x + {BR}u) {{
      let jj = x / {e}u; let ee = x % {e}u; let key = min(t0 + jj, S - 1u);
      let bh = bhh;
      kt[x / 4u][x % 4u] = f32(k[{_at("K", "key", "ee")}]);
      vt[x / 4u][x % 4u] = f32(v[{_at("V", "key", "ee")}]);
    }}
    workgroupBarrier();
    if (valid) {{"""


# a workgroup's block of BR query rows: ``bh`` (clamped: ``bhh``), its first row ``r0``,
# this thread's row ``i`` (clamped: ``ii``) and whether it is a real row (``valid``)
_QUERY_BLOCK = f"""
  let nb = (L + {BR}u - 1u) / {BR}u;
  let w = wid.x + wid.y * nwg.x;
  let bh = w / nb;
  let r0 = (w % nb) * {BR}u;
  let i = r0 + lid;
  let valid = bh < BH && i < L;
  let ii = min(i, L - 1u);
  let bhh = min(bh, BH - 1u);"""


def _fwd_src(t: str, e: int, causal: bool, drop: bool) -> tuple[str, int, int, int]:
    e4 = e // 4
    bc = _tile(e, 2 * e)
    names = _fields(["Q", "K", "V"])
    reads = [("q", t), ("k", t), ("v", t), ("rs", "u32")]
    src = _decl(len(names), [("o", t), ("stats", "f32")], reads, t == "f16") + _HEAD
    src += _kv_tiles(bc, e4)
    kz = "keep(base + key, rs[0], rs[1], rs[2], rs[3], THR, ZS)" if drop else "1.0"
    bound = f"min(S, r0 + {BR}u)" if causal else "S"
    skip = " || key > i" if causal else ""
    src += _MAIN + _meta_fields(names) + _QUERY_BLOCK + f"""
  var qr: array<vec4<f32>, {e4}>;
  var acc: array<vec4<f32>, {e4}>;
  var sv: array<f32, {bc}>;
  for (var c = 0u; c < {e4}u; c = c + 1u) {{
    let bh = bhh;
    qr[c] = vec4<f32>(f32(q[{_at("Q", "ii", "4u * c")}]), f32(q[{_at("Q", "ii", "4u * c + 1u")}]),
                      f32(q[{_at("Q", "ii", "4u * c + 2u")}]),
                      f32(q[{_at("Q", "ii", "4u * c + 3u")}])) * bitcast<f32>(SCALE);
    acc[c] = vec4<f32>(0.0);
  }}
  var mx = bitcast<f32>(0xff800000u);
  var l = 0.0;
""" + _key_blocks(bc, e, bound) + f"""
      var tmx = mx;
      for (var jj = 0u; jj < {bc}u; jj = jj + 1u) {{
        let key = t0 + jj;
        var s = bitcast<f32>(0xff800000u);
        if (!(key >= S{skip})) {{
          var d = vec4<f32>(0.0);
          for (var c = 0u; c < {e4}u; c = c + 1u) {{ d = d + qr[c] * kt[jj * {e4}u + c]; }}
          s = d.x + d.y + d.z + d.w;
        }}
        sv[jj] = s;
        tmx = max(tmx, s);
      }}
      if (tmx > bitcast<f32>(0xff800000u)) {{
        let corr = exp(mx - tmx);
        l = l * corr;
        for (var c = 0u; c < {e4}u; c = c + 1u) {{ acc[c] = acc[c] * corr; }}
        for (var jj = 0u; jj < {bc}u; jj = jj + 1u) {{
          let key = t0 + jj;
          if (key >= S{skip}) {{ continue; }}
          let pe = exp(sv[jj] - tmx);
          l = l + pe;
          let pz = pe * {kz};
          if (pz != 0.0) {{
            for (var c = 0u; c < {e4}u; c = c + 1u) {{ acc[c] = acc[c] + pz * vt[jj * {e4}u + c]; }}
          }}
        }}
        mx = tmx;
      }}
    }}
  }}
  if (valid) {{
    let inv = 1.0 / l;
    let ob = ((bh / H) * L + i) * H * {e}u + (bh % H) * {e}u;  // (B, L, H, E) layout
    for (var c = 0u; c < {e4}u; c = c + 1u) {{
      let y = acc[c] * inv;
      o[ob + 4u * c] = {t}(y.x); o[ob + 4u * c + 1u] = {t}(y.y);
      o[ob + 4u * c + 2u] = {t}(y.z); o[ob + 4u * c + 3u] = {t}(y.w);
    }}
    stats[bh * L + i] = mx + log(l);
  }}
  if (w == 0u && lid < 4u) {{ stats[BH * L + lid] = bitcast<f32>(rs[lid]); }}
}}
"""
    return src, len(names), 2, len(reads)


def _dq_src(t: str, e: int, causal: bool, drop: bool) -> tuple[str, int, int, int]:
    e4 = e // 4
    bc = _tile(e, 2 * e)
    names = _fields(["Q", "K", "V", "G", "O"])
    reads = [("q", t), ("k", t), ("v", t), ("g", t), ("o", t), ("stats", "f32")]
    src = _decl(len(names), [("dq", t), ("dd", "f32")], reads, t == "f16") + _HEAD
    src += _kv_tiles(bc, e4)
    rs = ", ".join(f"bitcast<u32>(stats[BH * L + {n}u])" for n in range(4))
    kz = f"keep(base + key, {rs}, THR, ZS)" if drop else "1.0"
    bound = f"min(S, r0 + {BR}u)" if causal else "S"
    skip = " || key > i" if causal else ""
    src += _MAIN + _meta_fields(names) + _QUERY_BLOCK + f"""
  var qr: array<vec4<f32>, {e4}>;
  var gr: array<vec4<f32>, {e4}>;
  var acc: array<vec4<f32>, {e4}>;
  var dsum = vec4<f32>(0.0);
  for (var c = 0u; c < {e4}u; c = c + 1u) {{
    let bh = bhh;
    qr[c] = vec4<f32>(f32(q[{_at("Q", "ii", "4u * c")}]), f32(q[{_at("Q", "ii", "4u * c + 1u")}]),
                      f32(q[{_at("Q", "ii", "4u * c + 2u")}]),
                      f32(q[{_at("Q", "ii", "4u * c + 3u")}])) * bitcast<f32>(SCALE);
    gr[c] = vec4<f32>(f32(g[{_at("G", "ii", "4u * c")}]), f32(g[{_at("G", "ii", "4u * c + 1u")}]),
                      f32(g[{_at("G", "ii", "4u * c + 2u")}]),
                      f32(g[{_at("G", "ii", "4u * c + 3u")}]));
    let ov = vec4<f32>(f32(o[{_at("O", "ii", "4u * c")}]), f32(o[{_at("O", "ii", "4u * c + 1u")}]),
                       f32(o[{_at("O", "ii", "4u * c + 2u")}]),
                       f32(o[{_at("O", "ii", "4u * c + 3u")}]));
    dsum = dsum + gr[c] * ov;
    acc[c] = vec4<f32>(0.0);
  }}
  let di = dsum.x + dsum.y + dsum.z + dsum.w;
  let lse = stats[bhh * L + ii];
""" + _key_blocks(bc, e, bound) + f"""
      for (var jj = 0u; jj < {bc}u; jj = jj + 1u) {{
        let key = t0 + jj;
        if (key >= S{skip}) {{ continue; }}
        var d = vec4<f32>(0.0);
        var dp = vec4<f32>(0.0);
        for (var c = 0u; c < {e4}u; c = c + 1u) {{
          d = d + qr[c] * kt[jj * {e4}u + c];
          dp = dp + gr[c] * vt[jj * {e4}u + c];
        }}
        let p = exp(d.x + d.y + d.z + d.w - lse);
        let ds = p * ((dp.x + dp.y + dp.z + dp.w) * {kz} - di);
        for (var c = 0u; c < {e4}u; c = c + 1u) {{ acc[c] = acc[c] + ds * kt[jj * {e4}u + c]; }}
      }}
    }}
  }}
  if (valid) {{
    let sc = bitcast<f32>(SCALE);
    let qb = (bh * L + i) * {e}u;
    for (var c = 0u; c < {e4}u; c = c + 1u) {{
      let y = acc[c] * sc;
      dq[qb + 4u * c] = {t}(y.x); dq[qb + 4u * c + 1u] = {t}(y.y);
      dq[qb + 4u * c + 2u] = {t}(y.z); dq[qb + 4u * c + 3u] = {t}(y.w);
    }}
    dd[bh * L + i] = di;
  }}
}}
"""
    return src, len(names), 2, len(reads)


def _dkv_src(t: str, e: int, causal: bool, drop: bool,
             parts: str = "kv") -> tuple[str, int, int, int]:
    # parts: "kv" both gradients; "k" or "v" one (fewer live registers per thread)
    e4 = e // 4
    bc = _tile(e, 2 * e + 2)
    names = _fields(["Q", "K", "V", "G"])
    reads = [("q", t), ("k", t), ("v", t), ("g", t), ("stats", "f32"), ("dd", "f32")]
    wk, wv = "k" in parts, "v" in parts
    writes = ([("dk", t)] if wk else []) + ([("dv", t)] if wv else [])
    src = _decl(len(names), writes, reads, t == "f16") + _HEAD
    src += (f"var<workgroup> qt: array<vec4<f32>, {bc * e4}>;\n"
            f"var<workgroup> gt: array<vec4<f32>, {bc * e4}>;\n"
            f"var<workgroup> lt: array<f32, {bc}>;\n"
            f"var<workgroup> dt: array<f32, {bc}>;\n")
    rs = ", ".join(f"bitcast<u32>(stats[BH * L + {n}u])" for n in range(4))
    kz = f"keep((bhh * L + qi) * S + j, {rs}, THR, ZS)" if drop else "1.0"
    start = f"(r0 / {bc}u) * {bc}u" if causal else "0u"
    skip = " || qi < j" if causal else ""

    def load_row(arr: str, a: str) -> str:
        return (f"vec4<f32>(f32({arr}[{_at(a, 'jj0', '4u * c')}]), "
                f"f32({arr}[{_at(a, 'jj0', '4u * c + 1u')}]), "
                f"f32({arr}[{_at(a, 'jj0', '4u * c + 2u')}]), "
                f"f32({arr}[{_at(a, 'jj0', '4u * c + 3u')}]))")

    decl = [f"  var kr: array<vec4<f32>, {e4}>;"]
    init = ["    kr[c] = " + load_row("k", "K") + ";"]
    if wk:
        decl += [f"  var vr: array<vec4<f32>, {e4}>;", f"  var ak: array<vec4<f32>, {e4}>;"]
        init += ["    vr[c] = " + load_row("v", "V") + ";", "    ak[c] = vec4<f32>(0.0);"]
    if wv:
        decl.append(f"  var av: array<vec4<f32>, {e4}>;")
        init.append("    av[c] = vec4<f32>(0.0);")
    dots = [f"          d = d + qt[ii * {e4}u + c] * kr[c];"]
    if wk:
        dots.append(f"          dp = dp + gt[ii * {e4}u + c] * vr[c];")
    acc = []
    if wv:
        acc.append(f"          av[c] = av[c] + pz * gt[ii * {e4}u + c];")
    if wk:
        acc.append(f"          ak[c] = ak[c] + ds * qt[ii * {e4}u + c];")
    out = []
    for name, reg, on in (("dk", "ak", wk), ("dv", "av", wv)):
        if on:
            out += [f"      {name}[kb + 4u * c + {n}u] = {t}({reg}[c].{x});"
                    for n, x in enumerate("xyzw")]
    nl = "\n"
    src += _MAIN + _meta_fields(names) + f"""
  let nb = (S + {BR}u - 1u) / {BR}u;
  let w = wid.x + wid.y * nwg.x;
  let bh = w / nb;
  let r0 = (w % nb) * {BR}u;
  let j = r0 + lid;
  let valid = bh < BH && j < S;
  let jj0 = min(j, S - 1u);
  let bhh = min(bh, BH - 1u);
{nl.join(decl)}
  for (var c = 0u; c < {e4}u; c = c + 1u) {{
    let bh = bhh;
{nl.join(init)}
  }}
  let sc = bitcast<f32>(SCALE);
  for (var t0 = {start}; t0 < L; t0 = t0 + {bc}u) {{
    workgroupBarrier();
    for (var x = lid; x < {bc * e}u; x = x + {BR}u) {{
      let ii = x / {e}u; let ee = x % {e}u; let qi = min(t0 + ii, L - 1u);
      let bh = bhh;
      qt[x / 4u][x % 4u] = f32(q[{_at("Q", "qi", "ee")}]) * sc;
      gt[x / 4u][x % 4u] = f32(g[{_at("G", "qi", "ee")}]);
    }}
    for (var x = lid; x < {bc}u; x = x + {BR}u) {{
      let qi = min(t0 + x, L - 1u);
      lt[x] = stats[bhh * L + qi];
      dt[x] = dd[bhh * L + qi];
    }}
    workgroupBarrier();
    if (valid) {{
      for (var ii = 0u; ii < {bc}u; ii = ii + 1u) {{
        let qi = t0 + ii;
        if (qi >= L{skip}) {{ continue; }}
        var d = vec4<f32>(0.0);
        var dp = vec4<f32>(0.0);
        for (var c = 0u; c < {e4}u; c = c + 1u) {{
{nl.join(dots)}
        }}
        let p = exp(d.x + d.y + d.z + d.w - lt[ii]);
        let z = {kz};
        let pz = p * z;
        let ds = p * ((dp.x + dp.y + dp.z + dp.w) * z - dt[ii]);
        for (var c = 0u; c < {e4}u; c = c + 1u) {{
{nl.join(acc)}
        }}
      }}
    }}
  }}
  if (valid) {{
    let kb = (bh * S + j) * {e}u;
    for (var c = 0u; c < {e4}u; c = c + 1u) {{
{nl.join(out)}
    }}
  }}
}}
"""
    return src, len(names), len(writes), len(reads)


# -- host side ---------------------------------------------------------------------------

def _f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


def _common(q: Array, k: Array, scale: float, dropout_p: float) -> list[int]:
    b, h, lq, _ = q.shape
    thr = min(int(round(dropout_p * 2.0 ** 32)), 2 ** 32 - 1)
    zs = 1.0 / (1.0 - dropout_p) if dropout_p < 1.0 else 0.0
    return [b * h, h, lq, k.shape[2], _f32(scale), thr, _f32(zs)]


def _strided(*arrays: Array) -> list[int]:
    return [w for a in arrays for w in (a.offset, *a.strides)]


def _groups(bh: int, rows: int) -> tuple:
    return groups_for(bh * -(-rows // BR) * BR, BR)


def forward(q: Array, k: Array, v: Array, *, scale: float, causal: bool,
            dropout_p: float = 0.0) -> tuple[Array, Array] | None:
    """``(out, stats)``: the attention output ``(B, H, L, E)`` and ``stats`` (float32,
    the ``B * H * L`` log-sum-exps then the dropout's four Philox words), or None where
    :func:`supported` refuses the arrays. ``out`` is laid out ``(B, L, H, E)`` in memory
    (as PyTorch's flash attention's): the heads merged back, ``out.permute(0, 2, 1, 3)
    .reshape(B, L, H * E)``, need no copy."""
    if not supported(q, k, v) or not 0.0 <= dropout_p <= 1.0:
        return None
    eng = q.engine
    b, h, lq, e = q.shape
    drop = dropout_p > 0.0
    o = new_array((b, lq, h, e), q.dtype, eng)
    o = Array(o._st, (b, h, lq, e), q.dtype, (lq * h * e, e, h * e, 1), 0)
    stats = new_array((b * h * lq + 4,), D.float32, eng)
    if drop:
        # the device's default generator, as the core's dropout draws from it
        import volta_core as vt
        from volta_core.random import draw_from
        gen = draw_from("scaled_dot_product_attention", None, vt.device(f"wgpu:{eng.index}"))
        rs = gen._g.state_buffer(-(-(b * h * lq * k.shape[2]) // 4))
    else:
        rs = eng.upload(bytes(16))
    t = q.dtype.storage
    kern = eng.kernel(("flash_fwd", t, e, causal, drop),
                      lambda: _fwd_src(t, e, causal, drop))
    words = _common(q, k, scale, dropout_p) + _strided(q, k, v)
    eng.dispatch(kern, struct.pack(f"<{len(words)}I", *words),
                 [o._st.buffer, stats._st.buffer, q._st.buffer, k._st.buffer, v._st.buffer,
                  rs.buffer], _groups(b * h, lq))
    return o, stats


def backward(q: Array, k: Array, v: Array, o: Array, grad: Array, stats: Array, *,
             scale: float, causal: bool, dropout_p: float = 0.0) -> tuple | None:
    """``(dq, dk, dv)`` of :func:`forward` (``o`` and ``stats`` as it returned them)."""
    if not (supported(q, k, v) and isinstance(grad, Array) and grad.shape == o.shape
            and grad.dtype is q.dtype and all(st >= 0 for st in (*grad.strides, *o.strides))):
        return None
    eng = q.engine
    b, h, lq, e = q.shape
    s = k.shape[2]
    drop = dropout_p > 0.0
    t = q.dtype.storage
    dq = new_array(q.shape, q.dtype, eng)
    dk, dv = new_array(k.shape, q.dtype, eng), new_array(v.shape, q.dtype, eng)
    dd = new_array((b * h * lq,), D.float32, eng)
    words = _common(q, k, scale, dropout_p) + _strided(q, k, v, grad)
    meta = struct.pack(f"<{len(words)}I", *words)
    ins = [q._st.buffer, k._st.buffer, v._st.buffer, grad._st.buffer]
    kern = eng.kernel(("flash_dq", t, e, causal, drop), lambda: _dq_src(t, e, causal, drop))
    words_o = words + _strided(o)
    eng.dispatch(kern, struct.pack(f"<{len(words_o)}I", *words_o),
                 [dq._st.buffer, dd._st.buffer, *ins, o._st.buffer, stats._st.buffer],
                 _groups(b * h, lq))
    rest = [*ins, stats._st.buffer, dd._st.buffer]
    # a thread keeps k, v, dk and dv rows: past 32 features (128 registers) the two
    # gradients go in two kernels, each recomputing the probabilities
    for parts in ("kv",) if e <= SPLIT_E else ("v", "k"):
        kern = eng.kernel(("flash_dkv", t, e, causal, drop, parts),
                          lambda parts=parts: _dkv_src(t, e, causal, drop, parts))
        outs = ([dk._st.buffer] if "k" in parts else []) + \
            ([dv._st.buffer] if "v" in parts else [])
        eng.dispatch(kern, meta, outs + rest, _groups(b * h, s))
    return dq, dk, dv


# Below this many bytes of float32 scores (B * H * L * S * 4) the core's unfused attention
# (tiled matmuls, one softmax kernel) is faster than these one-thread-per-row kernels: on
# an H100 at (32, 8, 256, 64), 3.1 against 8.4 ms forward and backward (lavapipe alike).
# The fused kernels pay where the scores would take much memory.
FLASH_MIN_SCORE_BYTES = 128 << 20


def _chosen(q: Any, k: Any, v: Any) -> bool:
    """:func:`supported`, for scores of at least :data:`FLASH_MIN_SCORE_BYTES`."""
    if not supported(q, k, v):
        return False
    b, h, lq, _ = q.shape
    return b * h * lq * k.shape[2] * 4 >= FLASH_MIN_SCORE_BYTES


def sdpa_flash() -> Any:
    """The core's ``sdpa_flash`` kernels (``dropout``: they draw it themselves), for
    large scores (:data:`FLASH_MIN_SCORE_BYTES`). ``VOLTA_WGPU_FLASH=0`` in the
    environment turns them off (the core's unfused attention then runs), ``=1`` uses them
    wherever they apply."""
    import os
    from types import SimpleNamespace
    mode = os.environ.get("VOLTA_WGPU_FLASH", "")
    pick = {"0": lambda q, k, v: False, "1": supported}.get(mode, _chosen)
    return SimpleNamespace(supported=pick, forward=forward, backward=backward, dropout=True)
