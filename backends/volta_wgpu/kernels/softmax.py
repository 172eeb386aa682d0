"""Fused softmax / log_softmax along the last axis (any axis via a moved view), and
softmax's backward.

Rows of up to 64 use one thread per row. float32/float16 rows of up to ``LANES * MAX_PER``
(1024) use ``LANES`` threads per row, ``WGS // LANES`` rows per workgroup: each thread reads
its elements once into registers (consecutive threads, consecutive elements) and the row's
maximum and sum are tree-reduced among its threads in shared memory; an attention score
row of 256 ran 10x slower with a workgroup to itself (16 barriers for 256 elements, each
read three times). Longer rows (and float64) use one 256-thread workgroup per row (max,
then sum of exp, both tree-reduced in shared memory).
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
from ..layout import collapse, normalize_axis, prod
from .f64_math import F64_NAMES, F64_SRC
from .wgsl_lib import is_nan

WGS = 256
LANES = 32  # threads per row in the "lanes" mode
MAX_PER = 32  # elements per thread at most there (registers)


def _mode(t: DType, n: int) -> tuple[str, int]:
    """How rows of ``n`` run: ("thread", 0), ("lanes", elements per thread) or ("wg", 0)."""
    if n <= 64:
        return "thread", 0
    if t in (D.float32, D.float16) and n <= LANES * MAX_PER:
        return "lanes", -(-n // LANES)
    return "wg", 0


def _groups(mode: str, rows: int) -> tuple[int, int, int]:
    if mode == "thread":
        return groups_for(rows, WGS)
    if mode == "lanes":
        return groups_for(-(-rows // (WGS // LANES)) * WGS, WGS)
    return groups_for(rows * WGS, WGS)


def _lanes_main(a: str) -> str:
    """The entry point of a "lanes" kernel: ``LANES`` threads per row (``lane``, the row's
    first thread ``base``), ``live`` false past the last row (such threads still reach
    every barrier)."""
    return (f"var<workgroup> sh: array<{a}, {WGS}>;\n"
            f"@compute @workgroup_size({WGS})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32,\n"
            "        @builtin(num_workgroups) nwg: vec3<u32>) {\n"
            f"  let lane = lid % {LANES}u; let base = lid - lane;\n"
            f"  let row = (wid.x + wid.y * nwg.x) * {WGS // LANES}u + lid / {LANES}u;\n"
            f"  let live = row < {cg.word(0)};\n")


def _lanes_reduce(op: str) -> str:
    """WGSL reducing ``sh[lid]`` over each row's ``LANES`` threads with ``op(a, b)`` (its
    result in ``sh[base]``)."""
    return (f"  for (var k = {LANES // 2}u; k > 0u; k = k >> 1u) {{\n"
            f"    if (lane < k) {{ sh[lid] = {op.format('sh[lid]', 'sh[lid + k]')}; }}\n"
            "    workgroupBarrier(); }\n")


def _src(t: DType, log: bool, rank: int, mode: str, per: int = 0,
         fused: Any = None) -> tuple[str, int, int, int]:
    # An infinite row maximum is kept, as PyTorch does: inf - inf makes the row NaN (a row
    # holding +inf, or all -inf), where the CPU backend gives NaN too.
    # meta: rows, n, shape[rank], x_off, xstr[rank], x_last
    acc = D.float32 if t is D.float16 else t
    a = acc.wgsl
    ex = F64_NAMES["exp"] if t is D.float64 else "exp"
    lg = F64_NAMES["log"] if t is D.float64 else "log"
    at_x = 2 + rank
    words = at_x + 1 + rank + 1
    xl = cg.iword(at_x + 1 + rank)
    # with ``fused`` (a lazy.Fused, its words after these), x's elements are computed
    at = "u32(ox + i32(j) * xl)"
    ld = cg.cast(f"x[{at}]" if fused is None else f"xv({at})", t, acc)
    res = f"(v - mx - {lg}(s))" if log else f"({ex}(v - mx) / s)"
    if fused is None:
        head = cg.header([t, acc], words, [("out", t)], [("x", t)])
        head += F64_SRC if t is D.float64 else ""
    else:
        head = cg.header([t, acc, *fused.types], words + len(fused.words), [("out", t)],
                         fused.reads)
        lib = F64_SRC if t is D.float64 else ""
        head += lib + fused.source(lib)
    neg = cg.const(acc, float("-inf"))
    decomp = cg.strided_offsets(rank, 2, [("ox", at_x)], index="row")
    fmax = (f"fn fmx(a: {a}, b: {a}) -> {a} {{ if ({is_nan(a, 'a')} || {is_nan(a, 'b')}) "
            f"{{ return a + b; }} return max(a, b); }}\n")
    if mode == "lanes":
        body = (_lanes_main(a) +
                f"{decomp}\n  let n = {cg.word(1)}; let xl = {xl};\n"
                f"  var vals: array<{a}, {per}>;\n  var mx = {neg};\n"
                f"  for (var e = 0u; e < {per}u; e = e + 1u) {{\n"
                f"    let j = lane + e * {LANES}u; var v = {neg};\n"
                f"    if (live && j < n) {{ v = {ld}; }}\n"
                "    vals[e] = v; mx = fmx(mx, v); }\n"
                "  sh[lid] = mx; workgroupBarrier();\n" + _lanes_reduce("fmx({0}, {1})") +
                "  mx = sh[base];\n  workgroupBarrier();\n"
                f"  var s = {a}(0);\n"
                f"  for (var e = 0u; e < {per}u; e = e + 1u) {{\n"
                f"    if (lane + e * {LANES}u < n) {{ s = s + {ex}(vals[e] - mx); }} }}\n"
                "  sh[lid] = s; workgroupBarrier();\n" + _lanes_reduce("{0} + {1}") +
                "  s = sh[base];\n"
                f"  for (var e = 0u; e < {per}u; e = e + 1u) {{\n"
                f"    let j = lane + e * {LANES}u;\n"
                "    if (live && j < n) { let v = vals[e];\n"
                f"      out[row * n + j] = {cg.cast(res, acc, t)}; }} }}\n}}\n")
        return head + fmax + body, words, 1, 1
    if mode == "thread":
        body = (f"  let row = gi;\n  if (row >= {cg.word(0)}) {{ return; }}\n{decomp}\n"
                f"  let n = {cg.word(1)}; let xl = {xl};\n"
                f"  var mx = {neg};\n"
                f"  for (var j = 0u; j < n; j = j + 1u) {{ mx = fmx(mx, {ld}); }}\n"
                f"  var s = {a}(0);\n"
                f"  for (var j = 0u; j < n; j = j + 1u) {{ s = s + {ex}({ld} - mx); }}\n"
                f"  for (var j = 0u; j < n; j = j + 1u) {{ let v = {ld};\n"
                f"    out[row * n + j] = {cg.cast(res, acc, t)}; }}")
        return head + fmax + cg.main_1d(body), words, 1, 1
    body = (_row_main(a) +
            f"{decomp}\n  let n = {cg.word(1)}; let xl = {xl};\n"
            f"  var mx = {neg};\n"
            f"  for (var j = lid; j < n; j = j + {WGS}u) {{ mx = fmx(mx, {ld}); }}\n"
            "  sh[lid] = mx; workgroupBarrier();\n"
            f"  for (var k = {WGS // 2}u; k > 0u; k = k >> 1u) {{\n"
            "    if (lid < k) { sh[lid] = fmx(sh[lid], sh[lid + k]); }\n"
            "    workgroupBarrier(); }\n"
            "  mx = sh[0];\n"
            "  workgroupBarrier();\n"
            f"  var s = {a}(0);\n"
            f"  for (var j = lid; j < n; j = j + {WGS}u) {{ s = s + {ex}({ld} - mx); }}\n"
            "  sh[lid] = s; workgroupBarrier();\n"
            f"  for (var k = {WGS // 2}u; k > 0u; k = k >> 1u) {{\n"
            "    if (lid < k) { sh[lid] = sh[lid] + sh[lid + k]; }\n"
            "    workgroupBarrier(); }\n"
            "  s = sh[0];\n"
            f"  for (var j = lid; j < n; j = j + {WGS}u) {{ let v = {ld};\n"
            f"    out[row * n + j] = {cg.cast(res, acc, t)}; }}\n}}\n")
    return head + fmax + body, words, 1, 1


def _run(x: Array, axis: int, log: bool) -> Array:
    from ..namespace.manipulation import moveaxis
    if x.dtype.kind != "f":
        from .._errors import DTypeError
        raise DTypeError(f"{'log_' if log else ''}softmax: needs a floating array, got "
                         f"{x.dtype.name}")
    if x.ndim == 0:
        from ..namespace.manipulation import reshape
        return reshape(_run(reshape(x, (1,)), 0, log), ())
    ax = normalize_axis(axis, x.ndim, "softmax")
    if ax == x.ndim - 1 and lazy.fusable(x):  # x pending: computed in the kernel
        out = _fused(x, log)
        if out is not None:
            return out
    xm = moveaxis(x, ax, -1)
    out = new_array(xm.shape, x.dtype, x.engine)
    n = xm.shape[-1]
    lead = xm.shape[:-1]
    rows = prod(lead)
    if rows * n == 0:
        return moveaxis(out, -1, ax)
    cs, (cst,) = collapse(lead, [xm.strides[:-1]]) if lead else ((), [()])
    rank = len(cs)
    mode, per = _mode(x.dtype, n)
    kern = x.engine.kernel(("softmax", x.dtype, log, rank, mode, per),
                           lambda: _src(x.dtype, log, rank, mode, per))
    words = [rows, n, *cs, xm.offset, *cst, xm.strides[-1]]
    meta = struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words])
    x.engine.dispatch(kern, meta, [out._st.buffer, x._st.buffer], _groups(mode, rows))
    return moveaxis(out, -1, ax)


def _fused(x: Array, log: bool) -> Array | None:
    """Softmax along the last axis of the pending ``x``, computed in the kernel."""
    n = x.shape[-1]
    lead = x.shape[:-1]
    rows = prod(lead)
    if rows * n == 0:
        return None
    cs, (cst,) = collapse(lead, [x.strides[:-1]]) if lead else ((), [()])
    rank = len(cs)
    mode, per = _mode(x.dtype, n)
    words = [rows, n, *cs, 0, *cst, 1]
    f = lazy.fuse(x, "xv", len(words))
    if f is None:
        return None
    out = new_array(x.shape, x.dtype, x.engine)
    key = ("softmax", x.dtype, log, rank, mode, per, f.key)
    ok = lazy.dispatch(f, key, lambda: _src(x.dtype, log, rank, mode, per, f), words, out,
                       _groups(mode, rows))
    return out if ok else None


def softmax(x: Array, axis: int = -1) -> Array:
    """``exp(x) / sum(exp(x))`` along ``axis``, computed stably in one pass per row."""
    return _run(x, axis, False)


def log_softmax(x: Array, axis: int = -1) -> Array:
    """``x - logsumexp(x)`` along ``axis``."""
    return _run(x, axis, True)


def _bwd_src(t: DType, mode: str, per: int = 0) -> tuple[str, int, int, int]:
    # meta: rows, n, g_off, y_off (both row-major)
    acc = D.float32 if t is D.float16 else t
    a = acc.wgsl
    head = cg.header([t, acc], 4, [("out", t)], [("g", t), ("y", t)])
    gj = cg.cast(f"g[{cg.word(2)} + row * n + j]", t, acc)
    yj = cg.cast(f"y[{cg.word(3)} + row * n + j]", t, acc)
    # gx = g * y - y * sum(g * y), as the core's fallback computes it
    write = (f"let gy = {gj} * {yj}; "
             f"out[row * n + j] = {cg.cast(f'gy - {yj} * s', acc, t)};")
    if mode == "lanes":
        body = (_lanes_main(a) +
                f"  let n = {cg.word(1)};\n  var s = {a}(0);\n"
                f"  var gys: array<{a}, {per}>;\n  var ys: array<{a}, {per}>;\n"
                f"  for (var e = 0u; e < {per}u; e = e + 1u) {{\n"
                f"    let j = lane + e * {LANES}u; var gy = {a}(0); var yv = {a}(0);\n"
                f"    if (live && j < n) {{ yv = {yj}; gy = {gj} * yv; s = s + gy; }}\n"
                "    gys[e] = gy; ys[e] = yv; }\n"
                "  sh[lid] = s; workgroupBarrier();\n" + _lanes_reduce("{0} + {1}") +
                "  s = sh[base];\n"
                f"  for (var e = 0u; e < {per}u; e = e + 1u) {{\n"
                f"    let j = lane + e * {LANES}u;\n"
                "    if (live && j < n) { "
                f"out[row * n + j] = {cg.cast('gys[e] - ys[e] * s', acc, t)}; }} }}\n}}\n")
        return head + body, 4, 1, 2
    if mode == "thread":
        body = (f"  let row = gi;\n  if (row >= {cg.word(0)}) {{ return; }}\n"
                f"  let n = {cg.word(1)};\n  var s = {a}(0);\n"
                f"  for (var j = 0u; j < n; j = j + 1u) {{ s = s + {gj} * {yj}; }}\n"
                f"  for (var j = 0u; j < n; j = j + 1u) {{ {write} }}")
        return head + cg.main_1d(body), 4, 1, 2
    body = (_row_main(a) +
            f"  let n = {cg.word(1)};\n  var s = {a}(0);\n"
            f"  for (var j = lid; j < n; j = j + {WGS}u) {{ s = s + {gj} * {yj}; }}\n"
            "  sh[lid] = s; workgroupBarrier();\n"
            f"  for (var k = {WGS // 2}u; k > 0u; k = k >> 1u) {{\n"
            "    if (lid < k) { sh[lid] = sh[lid] + sh[lid + k]; }\n"
            "    workgroupBarrier(); }\n"
            "  s = sh[0];\n"
            f"  for (var j = lid; j < n; j = j + {WGS}u) {{ {write} }}\n}}\n")
    return head + body, 4, 1, 2


def softmax_backward(g: Array, y: Array, axis: int) -> Array | None:
    """Softmax's input gradient ``g * y - y * sum(g * y)`` along ``axis`` from its output
    ``y``, one pass per row (None for dtypes other than float32/float16, or shapes that
    differ: the caller's generic kernel serves those)."""
    from ..namespace.elementwise import contiguous_copy
    from ..namespace.manipulation import moveaxis
    if g.dtype is not y.dtype or g.dtype not in (D.float32, D.float16) or \
            g.shape != y.shape or g.ndim == 0:
        return None
    ax = normalize_axis(axis, y.ndim, "softmax_backward")
    gm, ym = moveaxis(g, ax, -1), moveaxis(y, ax, -1)
    gm = gm if gm.is_contiguous else contiguous_copy(gm)
    ym = ym if ym.is_contiguous else contiguous_copy(ym)
    out = new_array(ym.shape, y.dtype, y.engine)
    n = ym.shape[-1]
    rows = prod(ym.shape[:-1])
    if rows * n == 0:
        return moveaxis(out, -1, ax)
    mode, per = _mode(y.dtype, n)
    kern = y.engine.kernel(("softmax_backward", y.dtype, mode, per),
                           lambda: _bwd_src(y.dtype, mode, per))
    meta = struct.pack("<4I", rows, n, gm.offset, ym.offset)
    y.engine.dispatch(kern, meta, [out._st.buffer, gm._st.buffer, ym._st.buffer],
                      _groups(mode, rows))
    return moveaxis(out, -1, ax)


def _row_main(a: str) -> str:
    """The entry point of a one-workgroup-per-row kernel: shared scratch of type ``a``,
    ``row`` (word 0 rows; 2-d dispatch for many) and ``lid``, past-the-end rows leaving."""
    return (f"var<workgroup> sh: array<{a}, {WGS}>;\n"
            f"@compute @workgroup_size({WGS})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32,\n"
            "        @builtin(num_workgroups) nwg: vec3<u32>) {\n"
            f"  let row = wid.x + wid.y * nwg.x;\n  if (row >= {cg.word(0)}) {{ return; }}\n")
