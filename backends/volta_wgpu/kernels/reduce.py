"""Reductions over any set of axes, and cumulative sums/products along one axis.

The input is split into kept dims (one output each) and reduced dims, both walked
through the input's strides. Few outputs with long rows use one 256-thread workgroup
per output and a shared-memory tree; sums and means whose outputs lie next to each other
in memory (a bias gradient's column sums) take 32 outputs per workgroup, 8 threads each
(:func:`_cols_main`); otherwise one thread loops over its row.

Either way, when the outputs alone would leave most of a GPU idle (a bias gradient's 512
column sums over 8192 rows: 2 workgroups; batch norm's 64 channel means: 64), the rows
are cut into ``S`` pieces (:func:`_splits`, from the shapes alone, so the bits do not
depend on the device): a first kernel writes ``S`` partial results per output, a second
reduces them.
"""

from __future__ import annotations

import struct
from typing import Any

from .. import codegen as cg
from .. import dtypes as D
from .. import lazy
from ..array import Array, new_array
from ..dtypes import DType
from ..engine import groups_for
from ..layout import collapse, prod
from .wgsl_lib import helper, is_nan

WGR = 256


def _init(op: str, t: DType) -> str:
    if op in ("sum", "mean", "any"):
        return cg.const(t, 0)
    if op in ("prod", "all"):
        return cg.const(t, 1)
    big = op in ("min", "argmin")
    if t.kind == "f":
        return cg.const(t, float("inf") if big else float("-inf"))
    import numpy as np
    info = np.iinfo(t.np)
    v = info.max if big else info.min
    if t.emu:
        return cg.const(t, v)
    if t.wgsl == "i32" and not big:
        return "i32(-2147483648)"
    if t is D.int64 and not big:
        return "i64(-9223372036854775807) - i64(1)"
    return f"{t.wgsl}({v}{'u' if t.kind == 'u' else ''})"


_EMU = {"sum": "i64e_add", "mean": "i64e_add", "prod": "i64e_mul", "max": "i64e_max",
        "any": "i64e_max", "min": "i64e_min", "all": "i64e_min"}


def _combine(op: str, t: DType) -> str:
    w = t.wgsl
    if t.emu and op in _EMU:
        return f"fn comb(a: {w}, b: {w}) -> {w} {{ return {_EMU[op]}(a, b); }}\n"
    if t.emu:
        lt = "i64e_lt(v2, v1)" if op == "argmin" else "i64e_lt(v1, v2)"
        return (f"fn better(v2: {w}, i2: u32, v1: {w}, i1: u32) -> bool {{\n"
                f"  return {lt} || (i64e_eq(v2, v1) && i2 < i1); }}\n")
    if op in ("sum", "mean"):
        body = "return a + b;"
    elif op == "prod":
        body = "return a * b;"
    elif op in ("max", "any"):
        body = f"return fmax_{w}(a, b);" if t.kind == "f" else "return max(a, b);"
    elif op in ("min", "all"):
        body = f"return fmin_{w}(a, b);" if t.kind == "f" else "return min(a, b);"
    else:
        cmp = ">" if op == "argmax" else "<"
        # NaN wins (the first one): tested from the bits before any compare, so a driver
        # that assumes no NaNs cannot let a number replace a NaN
        nan = (f"  let n2 = {is_nan(w, 'v2')}; let n1 = {is_nan(w, 'v1')};\n"
               "  if (n1 || n2) { return n2 && (!n1 || i2 < i1); }\n") if t.kind == "f" else ""
        return (f"fn better(v2: {w}, i2: u32, v1: {w}, i1: u32) -> bool {{\n{nan}"
                f"  return (v2 {cmp} v1) || (v2 == v1 && i2 < i1); }}\n")
    return f"fn comb(a: {w}, b: {w}) -> {w} {{ {body} }}\n"


def _src(op: str, xt: DType, acc: DType, out: DType, rk: int, rr: int,
         wg: bool, split: bool = False, fused: Any = None,
         cols: bool = False) -> tuple[str, int, int, int]:
    # meta: M, K, kshape[rk], x_off, kstrides[rk], rshape[rr], rstrides[rr], mean's
    # divisor, S, chunk; then the words of ``fused`` (a lazy.Fused computing x's
    # elements in place of a buffer). ``split``: piece s of a row covers
    # [s * chunk, (s + 1) * chunk) and its raw result goes to out[s * M + row]
    at_ks = 2
    at_x = at_ks + rk
    at_rs = at_x + 1 + rk
    at_rst = at_rs + rr
    at_div = at_rst + rr
    words = at_div + 3
    xval = "x[u32(o)]" if fused is None else "xv(u32(o))"
    reads = [("x", xt)] if fused is None else fused.reads
    arg = op in ("argmax", "argmin")
    helpers = ""
    if acc.kind == "f" and op in ("max", "min", "any", "all"):
        helpers = helper("fmax", acc) + "\n" + helper("fmin", acc) + "\n"
    lines = ["  var o = ox;", "  var rem = j;"]
    for d in range(rr - 1, -1, -1):
        lines.append(f"  o += i32(rem % {cg.word(at_rs + d)}) * {cg.iword(at_rst + d)}; "
                     f"rem = rem / {cg.word(at_rs + d)};")
    if fused is None:  # a stored element (bool as u32); xv gives the value itself
        xval = cg.load(xt, xval)
    load = cg.cast(xval, xt, acc)
    if op in ("any", "all"):
        nz = cg.cast(xval, xt, D.bool)
        load = f"select({acc.wgsl}(0), {acc.wgsl}(1), {nz})"
    lines.append(f"  let v = {load};")
    if arg:
        lines.append("  if (better(v, j, acc, ai)) { acc = v; ai = j; }")
    else:
        lines.append("  acc = comb(acc, v);")
    inner = "\n".join("    " + ln.strip() for ln in lines)
    if split:
        fin = "acc"
    elif op == "mean":
        fin = cg.cast(f"(acc / {acc.wgsl}({cg.word(at_div)}))", acc, out)  # f16 sums in f32
    elif arg:
        fin = cg.cast("ai", D.uint32, out)
    elif op in ("any", "all"):
        fin = "acc != 0u"
    else:
        fin = cg.cast("acc", acc, out) if out is not D.bool else "acc != 0u"
    if out is D.bool:
        fin = cg.store(out, fin)
    decomp = cg.strided_offsets(rk, at_ks, [("ox", at_x)], index="row")
    types = [xt, acc, out]
    if fused is not None:
        types += list(fused.types)
        words += len(fused.words)
        helpers += fused.source(helpers + _combine(op, acc))
    # the partial results of a split hold the accumulator type (float16 sums: float32)
    head = cg.header(types, words, [("out", acc if split else out)], reads) + helpers
    head += _combine(op, acc)
    if split:  # the piece of the row, and where its result goes
        span = (f"  let s = lin / {cg.word(0)};\n  let row = lin % {cg.word(0)};\n"
                f"  let j0 = s * {cg.word(at_div + 2)};\n"
                f"  let j1 = min({cg.word(1)}, j0 + {cg.word(at_div + 2)});\n")
        dst, total = "lin", f"{cg.word(0)} * {cg.word(at_div + 1)}"
    else:
        span = f"  let row = lin;\n  let j0 = 0u;\n  let j1 = {cg.word(1)};\n"
        dst, total = "row", cg.word(0)
    if cols:
        return head + _cols_main(op, acc, span, decomp, inner, fin, dst, total), words, 1, 1
    if not wg:
        body = (f"  let lin = gi;\n  if (lin >= {total}) {{ return; }}\n{span}{decomp}\n"
                f"  var acc = {_init(op, acc)};\n  var ai = 0xffffffffu;\n"
                f"  for (var j = j0; j < j1; j = j + 1u) {{\n{inner}\n  }}\n"
                f"  let r = acc;\n  out[{dst}] = {fin.replace('acc', 'r')};")
        return head + cg.main_1d(body), words, 1, 1
    shared = (f"var<workgroup> sh: array<{acc.wgsl}, {WGR}>;\n"
              f"var<workgroup> shi: array<u32, {WGR}>;\n")
    if arg:
        merge = ("if (better(sh[lid + s], shi[lid + s], sh[lid], shi[lid])) "
                 "{ sh[lid] = sh[lid + s]; shi[lid] = shi[lid + s]; }")
    else:
        merge = "sh[lid] = comb(sh[lid], sh[lid + s]);"
    body = (f"@compute @workgroup_size({WGR})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32,\n"
            "        @builtin(num_workgroups) nwg: vec3<u32>) {\n"
            f"  let lin = wid.x + wid.y * nwg.x;\n  if (lin >= {total}) {{ return; }}\n"
            f"{span}{decomp}\n  var acc = {_init(op, acc)};\n  var ai = 0xffffffffu;\n"
            f"  for (var j = j0 + lid; j < j1; j = j + {WGR}u) {{\n{inner}\n  }}\n"
            "  sh[lid] = acc; shi[lid] = ai;\n  workgroupBarrier();\n"
            f"  for (var s = {WGR // 2}u; s > 0u; s = s >> 1u) {{\n"
            f"    if (lid < s) {{ {merge} }}\n    workgroupBarrier();\n  }}\n"
            f"  if (lid == 0u) {{ let r = sh[0]; ai = shi[0];\n"
            f"    out[{dst}] = {fin.replace('acc', 'r')}; }}\n}}\n")
    return head + shared + body, words, 1, 1


def _cols_main(op: str, acc: DType, span: str, decomp: str, inner: str, fin: str,
               dst: str, total: str) -> str:
    """``main`` of a reduction whose outputs lie next to each other (a bias gradient's
    column sums): a workgroup takes 32 neighbouring outputs, 8 threads each (a warp reads
    32 neighbours per row instead of one output's row 32 rows apart), summed in shared
    memory. Workgroup ``(s, t)``: piece ``s`` of outputs ``32 t ..``."""
    lanes = WGR // 32
    merge = "".join(
        f"  if (lane < {h}u) {{ sh[lid] = comb(sh[lid], sh[lid + {h * 32}u]); }}\n"
        "  workgroupBarrier();\n" for h in (lanes // 2, lanes // 4, lanes // 8) if h)
    m = cg.word(0)
    return (f"var<workgroup> sh: array<{acc.wgsl}, {WGR}>;\n"
            f"@compute @workgroup_size({WGR})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32,\n"
            "        @builtin(num_workgroups) nwg: vec3<u32>) {\n"
            f"  let c = lid % 32u; let lane = lid / 32u; let nt = ({m} + 31u) / 32u;\n"
            "  let wl = wid.x + wid.y * nwg.x;\n"
            f"  let lin = (wl / nt) * {m} + (wl % nt) * 32u + c;\n"
            f"  let live = (wl % nt) * 32u + c < {m} && lin < {total};\n"
            f"{span}{decomp}\n  var acc = {_init(op, acc)};\n"
            "  if (live) {\n"
            f"  for (var j = j0 + lane; j < j1; j = j + {lanes}u) {{\n{inner}\n  }}\n  }}\n"
            "  sh[lid] = acc;\n  workgroupBarrier();\n" + merge +
            f"  if (lane == 0u && live) {{ let r = sh[lid];\n"
            f"    out[{dst}] = {fin.replace('acc', 'r')}; }}\n}}\n")


# ops whose partial results combine with the op itself (mean: as sums)
_SPLITTABLE = ("sum", "mean", "prod", "max", "min")


def _splits(op: str, m: int, k: int, wg: bool, cols: bool = False) -> int:
    """Pieces to cut each of ``m`` rows of ``k`` elements into, so that a GPU gets some
    64K threads (or ~1K workgroups) with 256+ elements (4096 per workgroup) each; with
    ``cols`` (:func:`_cols_main`), ~1K workgroups of 32 outputs, 256+ rows each."""
    if op not in _SPLITTABLE:
        return 1
    if cols:
        return max(1, min(-(-k // 256), -(-1024 // -(-m // 32))))
    if wg:
        return 1 if m >= 256 or k < 16384 else min(-(-k // 4096), -(-1024 // m))
    return 1 if m >= 16384 or k < 1024 else min(-(-k // 256), -(-65536 // m))


def reduce(op: str, x: Array, axes: tuple[int, ...], acc: DType, out_dtype: DType,
           div: int | None = None) -> Array:
    """Reduce ``x`` over ``axes`` (sorted, non-negative); returns the kept-dims shape.
    ``div``: the mean's divisor when not the reduced count (the second pass of a split)."""
    kept = [d for d in range(x.ndim) if d not in axes]
    kshape = tuple(x.shape[d] for d in kept)
    rshape = tuple(x.shape[d] for d in axes)
    M, K = prod(kshape), prod(rshape)
    if M == 0:
        return new_array(kshape, out_dtype, x.engine)
    ks, (kst,) = collapse(kshape, [tuple(x.strides[d] for d in kept)])
    rs, (rst,) = collapse(rshape, [tuple(x.strides[d] for d in axes)])
    rk, rr = len(ks), len(rs)
    # outputs next to each other in memory, the reduced elements not: 32 outputs per
    # workgroup (see _cols_main)
    cols = (op in ("sum", "mean") and rk == 1 and kst[0] == 1 and rr > 0 and rst[-1] != 1
            and M >= 32 and K > 8)
    wg = K > 64 and M < 2048 and not cols
    pieces = _splits(op, M, K, wg, cols) if out_dtype is not D.bool else 1
    chunk = -(-K // pieces)
    if pieces > 1:
        pieces = -(-K // chunk)  # no empty piece
    split = pieces > 1
    out = new_array((pieces, M) if split else kshape, acc if split else out_dtype, x.engine)
    words = [M, K, *ks, x.offset, *kst, *rs, *rst, K if div is None else div, pieces, chunk]
    groups = groups_for(-(-M // 32) * pieces * WGR if cols else
                        M * pieces * (WGR if wg else 1), WGR)
    done = False
    if lazy.fusable(x):  # x pending: compute its elements here (it stays pending)
        f = lazy.fuse(x, "xv", len(words))
        if f is not None:
            key = ("reduce", op, x.dtype, acc, out_dtype, rk, rr, wg, split, f.key, cols)
            done = lazy.dispatch(
                f, key, lambda: _src(op, x.dtype, acc, out_dtype, rk, rr, wg, split, f,
                                     cols),
                words, out, groups)
    if not done:
        key = ("reduce", op, x.dtype, acc, out_dtype, rk, rr, wg, split, cols)
        kern = x.engine.kernel(key, lambda: _src(op, x.dtype, acc, out_dtype, rk, rr, wg,
                                                 split, cols=cols))
        meta = struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words])
        x.engine.dispatch(kern, meta, [out._st.buffer, x._st.buffer], groups)
    if not split:
        return out
    # the partial results (pieces, M): reduced over the pieces (a mean divides by K)
    res = reduce(op, out, (0,), acc, out_dtype, div=K if div is None else div)
    return Array(res._st, kshape, out_dtype)


def _scan_types(op: str, out: DType) -> tuple[DType, str, str]:
    """(accumulator type, its identity, the update ``upd.format(a, b)``) of a scan."""
    # float16 runs in float32, each output rounded once (PyTorch's opmath): a float16
    # running sum stops growing once its steps fall below half an ulp
    acc = D.float32 if out is D.float16 else out
    if out.emu:
        upd = f"{'i64e_add' if op == 'sum' else 'i64e_mul'}({{}}, {{}})"
    else:
        upd = "({} " + ("+" if op == "sum" else "*") + " {})"
    return acc, cg.const(acc, 0 if op == "sum" else 1), upd


def _scan_src(op: str, xt: DType, out: DType, rank: int) -> tuple[str, int, int, int]:
    # meta: lines, n(axis), shape[rank] (others), x_off, xstr[rank], x_axis_stride,
    #       o_off, ostr[rank], o_axis_stride, initial(0/1)
    at_s = 2
    at_x = at_s + rank
    at_xa = at_x + 1 + rank
    at_o = at_xa + 1
    at_oa = at_o + 1 + rank
    words = at_oa + 2
    acc, ident, upd = _scan_types(op, out)
    body = (f"  if (gi >= {cg.word(0)}) {{ return; }}\n"
            + cg.strided_offsets(rank, at_s, [("ox", at_x), ("oo", at_o)]) + "\n"
            f"  var acc = {ident};\n"
            f"  if ({cg.word(at_oa + 1)} != 0u) {{ out[u32(oo)] = {cg.cast('acc', acc, out)}; "
            f"oo += {cg.iword(at_oa)}; }}\n"
            f"  for (var j = 0u; j < {cg.word(1)}; j = j + 1u) {{\n"
            f"    acc = {upd.format('acc', cg.cast(cg.load(xt, 'x[u32(ox)]'), xt, acc))};\n"
            f"    out[u32(oo)] = {cg.cast('acc', acc, out)};\n"
            f"    ox += {cg.iword(at_xa)}; oo += {cg.iword(at_oa)};\n  }}")
    src = cg.header([xt, acc, out], words, [("out", out)], [("x", xt)]) + cg.main_1d(body)
    return src, words, 1, 1


# rows longer than this are scanned in blocks of SCAN_BLOCK by parallel threads: one thread
# walking a whole row is slow on a GPU, and llvmpipe (lavapipe) silently ends a shader
# invocation after 65535 loop iterations in all
SCAN_SERIAL_MAX = 4096
SCAN_BLOCK = 1024


def _scan_blocks_src(op: str, xt: DType, out: DType, rank: int) -> tuple[str, int, int, int]:
    # meta: threads (lines * nb), n, nb, shape[rank] (others), x_off, xstr[rank],
    # x_axis_stride. Thread (line, b) scans block b of its line into part (lines, n)
    # and writes the block's total to tot (lines, nb), both contiguous
    at_s = 3
    at_x = at_s + rank
    at_xa = at_x + 1 + rank
    words = at_xa + 1
    acc, ident, upd = _scan_types(op, out)
    n, nb = cg.word(1), cg.word(2)
    body = (f"  if (gi >= {cg.word(0)}) {{ return; }}\n"
            f"  let line = gi / {nb};\n  let b = gi % {nb};\n"
            + cg.strided_offsets(rank, at_s, [("ox", at_x)], index="line") + "\n"
            f"  let j0 = b * {SCAN_BLOCK}u;\n  let j1 = min({n}, j0 + {SCAN_BLOCK}u);\n"
            f"  ox += i32(j0) * {cg.iword(at_xa)};\n"
            f"  var po = line * {n} + j0;\n  var acc = {ident};\n"
            "  for (var j = j0; j < j1; j = j + 1u) {\n"
            f"    acc = {upd.format('acc', cg.cast(cg.load(xt, 'x[u32(ox)]'), xt, acc))};\n"
            f"    part[po] = acc;\n    ox += {cg.iword(at_xa)}; po += 1u;\n  }}\n"
            "  tot[gi] = acc;")
    src = cg.header([xt, acc], words, [("part", acc), ("tot", acc)], [("x", xt)])
    return src + cg.main_1d(body), words, 2, 1


def _scan_apply_src(op: str, out: DType, rank: int) -> tuple[str, int, int, int]:
    # meta: threads (lines * n_out), n, nb + 1, n_out, include_initial, shape[rank]
    # (others), o_off, ostr[rank], o_axis_stride. Each output: its block's prefix (pre:
    # the scan of the block totals with the identity first) combined with its partial
    at_s = 5
    at_o = at_s + rank
    at_oa = at_o + 1 + rank
    words = at_oa + 1
    acc, ident, upd = _scan_types(op, out)
    n, nout, first = cg.word(1), cg.word(3), cg.word(4)
    body = (f"  if (gi >= {cg.word(0)}) {{ return; }}\n"
            f"  let line = gi / {nout};\n  let i = gi % {nout};\n"
            + cg.strided_offsets(rank, at_s, [("oo", at_o)], index="line") + "\n"
            f"  oo += i32(i) * {cg.iword(at_oa)};\n"
            f"  if (i < {first}) {{ out[u32(oo)] = {cg.cast(ident, acc, out)}; return; }}\n"
            f"  let j = i - {first};\n"
            f"  let p = pre[line * {cg.word(2)} + j / {SCAN_BLOCK}u];\n"
            f"  let v = {upd.format('p', f'part[line * {n} + j]')};\n"
            f"  out[u32(oo)] = {cg.cast('v', acc, out)};")
    src = cg.header([acc, out], words, [("out", out)], [("pre", acc), ("part", acc)])
    return src + cg.main_1d(body), words, 1, 2


def scan(op: str, x: Array, axis: int, out_dtype: DType, include_initial: bool) -> Array:
    """Cumulative sum/product of ``x`` along ``axis``."""
    n = x.shape[axis]
    oshape = x.shape[:axis] + (n + int(include_initial),) + x.shape[axis + 1:]
    out = new_array(oshape, out_dtype, x.engine)
    others = [d for d in range(x.ndim) if d != axis]
    lines = prod(tuple(x.shape[d] for d in others))
    if prod(oshape) == 0:
        return out
    shp = tuple(x.shape[d] for d in others)
    cs, (xs, os_) = collapse(shp, [tuple(x.strides[d] for d in others),
                                   tuple(out.strides[d] for d in others)])
    rank = len(cs)
    if n > SCAN_SERIAL_MAX:
        _scan_blocked(op, x, axis, out, lines, cs, xs, os_, include_initial)
        return out
    key = ("scan", op, x.dtype, out_dtype, rank)
    kern = x.engine.kernel(key, lambda: _scan_src(op, x.dtype, out_dtype, rank))
    words = [lines, n, *cs, x.offset, *xs, x.strides[axis], 0, *os_, out.strides[axis],
             int(include_initial)]
    meta = struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words])
    x.engine.dispatch(kern, meta, [out._st.buffer, x._st.buffer], groups_for(lines))
    return out


def _scan_blocked(op: str, x: Array, axis: int, out: Array, lines: int, cs: tuple,
                  xs: tuple, os_: tuple, include_initial: bool) -> None:
    """Scan ``x`` into ``out`` in blocks: each block's own scan and total (one thread per
    block), the scan of the totals (recursively), then every output from its block's
    prefix and its partial result."""
    eng, rank, n = x.engine, len(cs), x.shape[axis]
    acc = _scan_types(op, out.dtype)[0]
    nb = -(-n // SCAN_BLOCK)
    part = new_array((lines, n), acc, eng)
    tot = new_array((lines, nb), acc, eng)
    kern = eng.kernel(("scan_blocks", op, x.dtype, out.dtype, rank),
                      lambda: _scan_blocks_src(op, x.dtype, out.dtype, rank))
    words = [lines * nb, n, nb, *cs, x.offset, *xs, x.strides[axis]]
    meta = struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words])
    eng.dispatch(kern, meta, [part._st.buffer, tot._st.buffer, x._st.buffer],
                 groups_for(lines * nb))
    pre = scan(op, tot, 1, acc, True)  # (lines, nb + 1): the identity, then prefixes
    nout = out.shape[axis]
    kern = eng.kernel(("scan_apply", op, out.dtype, rank),
                      lambda: _scan_apply_src(op, out.dtype, rank))
    words = [lines * nout, n, nb + 1, nout, int(include_initial), *cs, out.offset, *os_,
             out.strides[axis]]
    meta = struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words])
    eng.dispatch(kern, meta, [out._st.buffer, pre._st.buffer, part._st.buffer],
                 groups_for(lines * nout))
