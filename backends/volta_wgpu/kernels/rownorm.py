"""Fused row kernels: cross_entropy (log-softmax + NLL), layer_norm and its input
gradient, float32.

One 128-thread workgroup per row: the threads stride over the row and combine their
partial max/sums through workgroup memory. Outputs follow the core's fallbacks in
``volta_core.ops.nn`` exactly (shapes, ignored rows, label smoothing).
"""

from __future__ import annotations

import struct

from .. import codegen as cg
from .. import dtypes as D
from ..array import Array, new_array
from ..dtypes import DType
from ..engine import groups_for

WGS = 128

_MAIN = (f"@compute @workgroup_size({WGS})\n"
         "fn main(@builtin(workgroup_id) wid: vec3<u32>,\n"
         "        @builtin(local_invocation_index) lid: u32,\n"
         "        @builtin(num_workgroups) nwg: vec3<u32>) {\n"
         "  let row = wid.x + wid.y * nwg.x;\n")

_REDUCE = """
var<workgroup> sh: array<f32, {wgs}>;
fn fmx(a: f32, b: f32) -> f32 {{
  if ((bitcast<u32>(a) & 0x7fffffffu) > 0x7f800000u ||
      (bitcast<u32>(b) & 0x7fffffffu) > 0x7f800000u) {{ return a + b; }}  // NaN, bitwise
  return max(a, b);
}}
fn wg_sum(lid: u32, v: f32) -> f32 {{
  workgroupBarrier(); sh[lid] = v; workgroupBarrier();
  for (var k = {half}u; k > 0u; k = k >> 1u) {{
    if (lid < k) {{ sh[lid] = sh[lid] + sh[lid + k]; }}
    workgroupBarrier();
  }}
  return sh[0];
}}
fn wg_max(lid: u32, v: f32) -> f32 {{
  workgroupBarrier(); sh[lid] = v; workgroupBarrier();
  for (var k = {half}u; k > 0u; k = k >> 1u) {{
    if (lid < k) {{ sh[lid] = fmx(sh[lid], sh[lid + k]); }}
    workgroupBarrier();
  }}
  return sh[0];
}}
""".format(wgs=WGS, half=WGS // 2)


def _ce_src(it: DType, weighted: bool) -> tuple[str, int, int, int]:
    # meta: rows, C, x_off, t_off, w_off, ignore_index, label_smoothing (f32 bits)
    w = cg.word
    reads = [("x", D.float32), ("tgt", it)] + ([("wt", D.float32)] if weighted else [])
    head = cg.header([D.float32], 7, [("loss", D.float32), ("lse", D.float32),
                                      ("roww", D.float32), ("err", D.int32)], reads)
    xs = f"x[{w(2)} + row * C + j]"
    wsum = f"ws = ws + {xs} * wt[{w(4)} + j]; wn = wn + wt[{w(4)} + j];" if weighted else ""
    body = (_MAIN + f"  if (row >= {w(0)}) {{ return; }}\n  let C = {w(1)};\n"
            "  var mx = bitcast<f32>(0xff800000u);\n"
            f"  for (var j = lid; j < C; j = j + {WGS}u) {{ mx = fmx(mx, {xs}); }}\n"
            "  mx = wg_max(lid, mx);\n"
            "  if (!(abs(mx) <= 3.4e38)) { mx = 0.0; }\n"
            "  var s = 0.0; var sx = 0.0; var ws = 0.0; var wn = 0.0;\n"
            f"  for (var j = lid; j < C; j = j + {WGS}u) {{\n"
            f"    s = s + exp({xs} - mx); sx = sx + {xs}; {wsum}\n  }}\n"
            "  s = wg_sum(lid, s); sx = wg_sum(lid, sx);\n"
            + ("  ws = wg_sum(lid, ws); wn = wg_sum(lid, wn);\n" if weighted else "")
            + "  if (lid != 0u) { return; }\n"
            "  let l = log(s) + mx;\n"
            f"  let t = {cg.index(it, f'tgt[{w(3)} + row]')};\n"
            f"  let valid = t != {cg.iword(5)};\n"
            "  var safe = 0;\n"
            "  if (valid) { safe = t; }\n"
            "  if (safe < 0 || safe >= i32(C)) { err[0] = 1; err[1] = safe; err[2] = i32(C);"
            " safe = 0; }\n"
            f"  let picked = x[{w(2)} + row * C + u32(safe)] - l;\n"
            "  let vf = select(0.0, 1.0, valid);\n"
            + (f"  let rw = wt[{w(4)} + u32(safe)] * vf;\n  let smo = ws - l * wn;\n"
               if weighted else "  let rw = vf;\n  let smo = sx - l * f32(C);\n")
            + f"  let ls = bitcast<f32>({w(6)});\n"
            "  var lo = -(1.0 - ls) * rw * picked;\n"
            "  if (ls != 0.0) { lo = lo - (ls / f32(C)) * smo * vf; }\n"
            "  loss[row] = lo; lse[row] = l; roww[row] = rw;\n}\n")
    return head + _REDUCE + body, 7, 4, len(reads)


def _contig(a: Array) -> Array:
    if a.is_contiguous:
        return a
    from ..namespace.elementwise import contiguous_copy
    return contiguous_copy(a)


def _f32(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", float(v)))[0]


def cross_entropy(logits: Array, target: Array, weight: Array | None, ignore_index: int,
                  label_smoothing: float) -> tuple[Array, Array, Array]:
    """``(loss (N,), lse (N, 1), row_weight (N,))`` as the core's fallback defines them."""
    logits, target = _contig(logits), _contig(target)
    n, c = logits.shape
    eng = logits.engine
    loss = new_array((n,), D.float32, eng)
    lse = new_array((n, 1), D.float32, eng)
    roww = new_array((n,), D.float32, eng)
    if n == 0:
        return loss, lse, roww
    weighted = weight is not None
    kern = eng.kernel(("cross_entropy", target.dtype, weighted),
                      lambda: _ce_src(target.dtype, weighted))
    wt = _contig(weight) if weighted else None
    words = [n, c, logits.offset, target.offset, wt.offset if wt is not None else 0,
             ignore_index, _f32(label_smoothing)]
    bufs = [loss._st.buffer, lse._st.buffer, roww._st.buffer, eng.error_buffer,
            logits._st.buffer, target._st.buffer] + ([wt._st.buffer] if wt is not None else [])
    eng.dispatch(kern, struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words]),
                 bufs, groups_for(n * WGS, WGS))
    return loss, lse, roww


def _ln_src(has_w: bool, has_b: bool) -> tuple[str, int, int, int]:
    # meta: rows, L, x_off, w_off, b_off, eps (f32 bits)
    w = cg.word
    reads = [("x", D.float32)] + ([("wt", D.float32)] if has_w else []) + \
        ([("bs", D.float32)] if has_b else [])
    head = cg.header([D.float32], 6, [("y", D.float32), ("mean", D.float32),
                                      ("rstd", D.float32)], reads)
    xs = f"x[{w(2)} + row * L + j]"
    yv = "(xv - mu) * r"
    if has_w:
        yv = f"{yv} * wt[{w(3)} + j]"
    if has_b:
        yv = f"{yv} + bs[{w(4)} + j]"
    body = (_MAIN + f"  if (row >= {w(0)}) {{ return; }}\n  let L = {w(1)};\n"
            "  var s = 0.0;\n"
            f"  for (var j = lid; j < L; j = j + {WGS}u) {{ s = s + {xs}; }}\n"
            "  let mu = wg_sum(lid, s) / f32(L);\n"
            "  var q = 0.0;\n"
            f"  for (var j = lid; j < L; j = j + {WGS}u) {{ let d = {xs} - mu; q = q + d * d; }}\n"
            f"  let r = 1.0 / sqrt(wg_sum(lid, q) / f32(L) + bitcast<f32>({w(5)}));\n"
            f"  for (var j = lid; j < L; j = j + {WGS}u) {{ let xv = {xs};\n"
            f"    y[row * L + j] = {yv}; }}\n"
            "  if (lid == 0u) { mean[row] = mu; rstd[row] = r; }\n}\n")
    return head + _REDUCE + body, 6, 3, len(reads)


def _rows(x: Array, ndim: int) -> tuple[tuple[int, ...], int, int]:
    """(leading shape, rows, row length) of ``x`` normalised over its last ``ndim`` dims."""
    lead = x.shape[:x.ndim - ndim]
    rows = 1
    for d in lead:
        rows *= d
    return lead, rows, (x.size // max(rows, 1) if rows else 0)


def layer_norm(x: Array, weight: Array | None, bias: Array | None, ndim: int,
               eps: float) -> tuple[Array, Array, Array]:
    """``(y, mean, rstd)`` over the last ``ndim`` dims (mean/rstd keep those dims as 1)."""
    from ..namespace.manipulation import reshape
    x = _contig(x)
    lead, rows, length = _rows(x, ndim)
    eng = x.engine
    y = new_array(x.shape, D.float32, eng)
    stat_shape = lead + (1,) * ndim
    mean = new_array(stat_shape, D.float32, eng)
    rstd = new_array(stat_shape, D.float32, eng)
    if rows == 0 or length == 0:
        return y, mean, rstd
    wt = _contig(reshape(weight, (length,))) if weight is not None else None
    bs = _contig(reshape(bias, (length,))) if bias is not None else None
    kern = eng.kernel(("layer_norm", wt is not None, bs is not None),
                      lambda: _ln_src(wt is not None, bs is not None))
    words = [rows, length, x.offset, wt.offset if wt is not None else 0,
             bs.offset if bs is not None else 0, _f32(eps)]
    bufs = [y._st.buffer, mean._st.buffer, rstd._st.buffer, x._st.buffer]
    bufs += [a._st.buffer for a in (wt, bs) if a is not None]
    eng.dispatch(kern, struct.pack(f"<{len(words)}I", *words), bufs,
                 groups_for(rows * WGS, WGS))
    return y, mean, rstd


def _ln_bwd_src(has_w: bool) -> tuple[str, int, int, int]:
    # meta: rows, L, g_off, x_off, w_off, mean_off, rstd_off
    w = cg.word
    reads = [("g", D.float32), ("x", D.float32), ("mn", D.float32), ("rs", D.float32)] + \
        ([("wt", D.float32)] if has_w else [])
    head = cg.header([D.float32], 7, [("gx", D.float32)], reads)
    gh = f"g[{w(2)} + row * L + j]" + (f" * wt[{w(4)} + j]" if has_w else "")
    xh = f"((x[{w(3)} + row * L + j] - mu) * r)"
    # gx = rstd * (gh - mean(gh) - xhat * mean(gh * xhat)), as the core's fallback
    body = (_MAIN + f"  if (row >= {w(0)}) {{ return; }}\n  let L = {w(1)};\n"
            f"  let mu = mn[{w(5)} + row]; let r = rs[{w(6)} + row];\n"
            "  var a = 0.0; var b = 0.0;\n"
            f"  for (var j = lid; j < L; j = j + {WGS}u) {{ let h = {gh}; a = a + h;"
            f" b = b + h * {xh}; }}\n"
            "  a = wg_sum(lid, a) / f32(L); b = wg_sum(lid, b) / f32(L);\n"
            f"  for (var j = lid; j < L; j = j + {WGS}u) {{\n"
            f"    gx[row * L + j] = r * ({gh} - a - {xh} * b); }}\n}}\n")
    return head + _REDUCE + body, 7, 1, len(reads)


def layer_norm_dx(grad: Array, x: Array, weight: Array | None, mean: Array, rstd: Array,
                  ndim: int) -> Array:
    """The input gradient of :func:`layer_norm` over the last ``ndim`` dims, one
    workgroup per row (``mean`` and ``rstd`` as the forward returned them)."""
    from ..namespace.manipulation import reshape
    grad, x = _contig(grad), _contig(x)
    lead, rows, length = _rows(x, ndim)
    eng = x.engine
    gx = new_array(x.shape, D.float32, eng)
    if rows == 0 or length == 0:
        return gx
    wt = _contig(reshape(weight, (length,))) if weight is not None else None
    mean, rstd = _contig(reshape(mean, (rows,))), _contig(reshape(rstd, (rows,)))
    kern = eng.kernel(("layer_norm_dx", wt is not None), lambda: _ln_bwd_src(wt is not None))
    words = [rows, length, grad.offset, x.offset, wt.offset if wt is not None else 0,
             mean.offset, rstd.offset]
    bufs = [gx._st.buffer, grad._st.buffer, x._st.buffer, mean._st.buffer, rstd._st.buffer]
    bufs += [wt._st.buffer] if wt is not None else []
    eng.dispatch(kern, struct.pack(f"<{len(words)}I", *words), bufs,
                 groups_for(rows * WGS, WGS))
    return gx
