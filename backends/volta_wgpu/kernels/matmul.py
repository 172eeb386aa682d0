"""Tiled, batched, broadcasting matrix multiply over strided operands.

float32/float16 products of at least 64x64 outputs use the register-blocked template of
:mod:`.gemm` (128x128 or 64x64 tiles, 8x8 or 4x4 outputs per thread; operands whose rows
or columns are aligned contiguous runs are read as vec4s through a second, vec4-typed
binding of the same buffer: float32 4096^3 on an H100 31.3 -> 35.4 TFLOP/s); the rest (small
matrices, integer and float64 dtypes) use a simple kernel where each 16x16 workgroup
computes a 32x32 tile (2x2 per thread). Operands are read with their own strides, so
transposed or broadcast views need no copy. float16 accumulates in float32. Where the
adapter has cooperative matrices (tensor cores) and they pass a test product, float32
products go through :mod:`.coopmat`.
"""

from __future__ import annotations

import struct

from .. import codegen as cg
from .. import dtypes as D
from ..array import Array, new_array
from ..dtypes import DType
from ..layout import broadcast_shapes, broadcast_strides, collapse, prod
from . import coopmat, gemm

T = 32      # output tile edge
TK = 16     # depth of a shared-memory tile
MAX_Z = 65535


def _src(t: DType, acc: DType, rb: int) -> tuple[str, int, int, int]:
    # meta: M, N, K, z0, a_off, a_rs, a_cs, b_off, b_rs, b_cs, bshape[rb], a_b[rb], b_b[rb]
    at_bs = 10
    at_a = at_bs + rb
    at_b = at_a + 1 + rb
    words = at_b + 1 + rb
    # the batch offsets reuse strided_offsets: operand blocks are (off, strides...)
    ops = [("oa", at_a), ("ob", at_b)]
    decomp = cg.strided_offsets(rb, at_bs, ops, index="bz")
    decomp = decomp.replace("var oa = ", "var oa = a_off + ")
    decomp = decomp.replace("var ob = ", "var ob = b_off + ")
    a = acc.wgsl
    ld_a = cg.cast("a[u32(ia)]", t, acc)
    ld_b = cg.cast("b[u32(ib)]", t, acc)
    w = cg.word
    src = cg.header([t, acc], words, [("out", t)], [("a", t), ("b", t)])
    src += (f"var<workgroup> ta: array<{a}, {T * TK}>;\n"
            f"var<workgroup> tb: array<{a}, {TK * T}>;\n"
            "@compute @workgroup_size(16, 16)\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>,\n"
            "        @builtin(local_invocation_id) lid: vec3<u32>) {\n"
            f"  let M = {w(0)}; let N = {w(1)}; let K = {w(2)};\n"
            f"  let bz = wid.z + {w(3)};\n"
            f"  let a_off = {cg.iword(4)}; let a_rs = {cg.iword(5)}; let a_cs = {cg.iword(6)};\n"
            f"  let b_off = {cg.iword(7)}; let b_rs = {cg.iword(8)}; let b_cs = {cg.iword(9)};\n"
            f"{decomp}\n"
            f"  let row0 = wid.y * {T}u; let col0 = wid.x * {T}u;\n"
            "  let tid = lid.y * 16u + lid.x;\n"
            f"  var acc00 = {a}(0); var acc01 = {a}(0); var acc10 = {a}(0); var acc11 = {a}(0);\n"
            f"  for (var k0 = 0u; k0 < K; k0 = k0 + {TK}u) {{\n"
            f"    for (var e = tid; e < {T * TK}u; e = e + 256u) {{\n"
            f"      let r = e / {TK}u; let k = e % {TK}u;\n"
            f"      let gr = row0 + r; let gk = k0 + k;\n"
            f"      var va = {a}(0);\n"
            f"      if (gr < M && gk < K) {{ let ia = oa + i32(gr) * a_rs + i32(gk) * a_cs;"
            f" va = {ld_a}; }}\n"
            f"      ta[e] = va;\n"
            f"      let k2 = e / {T}u; let c = e % {T}u;\n"
            f"      let gc = col0 + c; let gk2 = k0 + k2;\n"
            f"      var vb = {a}(0);\n"
            f"      if (gc < N && gk2 < K) {{ let ib = ob + i32(gk2) * b_rs + i32(gc) * b_cs;"
            f" vb = {ld_b}; }}\n"
            f"      tb[e] = vb;\n"
            "    }\n"
            "    workgroupBarrier();\n"
            f"    for (var k = 0u; k < {TK}u; k = k + 1u) {{\n"
            f"      let x0 = ta[lid.y * {TK}u + k]; let x1 = ta[(lid.y + 16u) * {TK}u + k];\n"
            f"      let y0 = tb[k * {T}u + lid.x]; let y1 = tb[k * {T}u + lid.x + 16u];\n"
            "      acc00 = acc00 + x0 * y0; acc01 = acc01 + x0 * y1;\n"
            "      acc10 = acc10 + x1 * y0; acc11 = acc11 + x1 * y1;\n"
            "    }\n"
            "    workgroupBarrier();\n"
            "  }\n"
            "  let base = bz * M * N;\n"
            "  let ra = row0 + lid.y; let rb2 = ra + 16u;\n"
            "  let ca = col0 + lid.x; let cb = ca + 16u;\n"
            + "".join(f"  if ({r} < M && {c} < N) {{ out[base + {r} * N + {c}] = "
                      f"{cg.cast(v, acc, t)}; }}\n"
                      for r, c, v in (("ra", "ca", "acc00"), ("ra", "cb", "acc01"),
                                      ("rb2", "ca", "acc10"), ("rb2", "cb", "acc11"))) +
            "}\n")
    return src, words, 1, 2


def _tiled_src(t: DType, tile: gemm.Tile, rb: int,
               vec: tuple = (None, None)) -> tuple[str, int, int, int]:
    # meta: gemm head, a_off, a_rs, a_cs, b_off, b_rs, b_cs, bshape[rb], 0, a_b[rb], 0, b_b[rb]
    h = gemm.HEAD_WORDS
    at_bs = h + 6
    at_a = at_bs + rb
    at_b = at_a + 1 + rb
    words = at_b + 1 + rb
    iw = cg.iword
    decomp = cg.strided_offsets(rb, at_bs, [("oa", at_a), ("ob", at_b)], index="z")
    ld_a = cg.cast(f"a[u32(zo.x + i32(r) * {iw(h + 1)} + i32(k) * {iw(h + 2)})]", t,
                   D.float32)
    ld_b = cg.cast(f"b[u32(zo.y + i32(k) * {iw(h + 4)} + i32(c) * {iw(h + 5)})]", t,
                   D.float32)
    # zo.z: the output matrix, z * S + s (a K split's own partial product)
    funcs = (f"fn zoff(z: u32, s: u32) -> vec4<i32> {{\n{decomp}\n"
             f"  return vec4<i32>(oa + {iw(h)}, ob + {iw(h + 3)}, "
             f"i32(z * {cg.word(4)} + s), 0); }}\n"
             f"fn load_a(zo: vec4<i32>, r: u32, k: u32) -> f32 {{ return {ld_a}; }}\n"
             f"fn load_b(zo: vec4<i32>, k: u32, c: u32) -> f32 {{ return {ld_b}; }}\n"
             "fn store_c(zo: vec4<i32>, r: u32, c: u32, v: f32) {\n"
             f"  out[u32(zo.z) * {cg.word(0)} * {cg.word(1)} + r * {cg.word(1)} + c] = "
             f"{cg.cast('v', D.float32, t)}; }}\n")
    reads = [("a", t), ("b", t)]
    if vec != (None, None):  # the operands again, read as vec4s (bound twice, read-only)
        funcs += (f"fn load_a4(zo: vec4<i32>, r: u32, k: u32) -> vec4<f32> {{ return "
                  f"vec4<f32>(a4[u32(zo.x + i32(r) * {iw(h + 1)} + i32(k) * {iw(h + 2)}) / 4u]);"
                  " }\n"
                  f"fn load_b4(zo: vec4<i32>, k: u32, c: u32) -> vec4<f32> {{ return "
                  f"vec4<f32>(b4[u32(zo.y + i32(k) * {iw(h + 4)} + i32(c) * {iw(h + 5)}) / 4u]);"
                  " }\n")
        reads += [("a4", t), ("b4", t)]
    src = gemm.gemm_source(t, tile, words, [("out", t)], reads, funcs,
                           a_along_k=f"{iw(h + 2)} == 1", b_along_n=f"{iw(h + 5)} == 1",
                           vec=vec)
    if vec != (None, None):
        for name in ("a4", "b4"):
            src = src.replace(f"var<storage, read> {name}: array<{t.storage}>",
                              f"var<storage, read> {name}: array<vec4<{t.storage}>>")
    return src, words, 1, len(reads)


def _vec_dims(t: DType, a: Array, b: Array, sa: tuple, sb: tuple, tile: gemm.Tile,
              M: int, N: int, K: int) -> tuple:
    """Along which dims A and B can be read as aligned vec4s (float32 and float16): A
    along k (its rows contiguous) or m (its columns), B along n or k; None: one at a
    time."""
    if t not in (D.float32, D.float16) or tile.bk % 4 or tile.tm % 4 or tile.tn % 4:
        return (None, None)

    def along(x: Array, batch: tuple, inner: int, outer: int, n_in: int, n_out: int,
              names: tuple) -> str | None:
        # inner/outer: the matrix strides (columns, rows); n_in/n_out: their sizes
        if x.offset % 4 or x._st.buffer.size % (4 * t.itemsize) or any(s % 4 for s in batch):
            return None
        if inner == 1 and (outer % 4 == 0 or n_out == 1) and n_in % 4 == 0:
            return names[0]
        if outer == 1 and (inner % 4 == 0 or n_in == 1) and n_out % 4 == 0:
            return names[1]
        return None

    def whole(edge: int) -> bool:  # every thread stages the same number of vec4s
        return edge * tile.bk // 4 % (tile.threads[0] * tile.threads[1]) == 0

    return (along(a, sa, a.strides[-1], a.strides[-2], K, M, ("k", "m")) if whole(tile.tm)
            else None,
            along(b, sb, b.strides[-1], b.strides[-2], N, K, ("n", "k")) if whole(tile.tn)
            else None)


# 128x256 tiles from this many on (two per SM of an H100/H200, which run one at a time)
WIDE_TILES = 264


def _tiles(tile: gemm.Tile, m: int, n: int, nb: int) -> int:
    gx, gy = gemm.grid(tile, m, n)
    return gx * gy * nb


def _pick_tile(m: int, n: int, nb: int, big_gpu: bool, wide_ok: bool = False
               ) -> gemm.Tile | None:
    """The tiling for an (m, n) product over ``nb`` batches, or None for the small kernel;
    ``wide_ok``: the 128x256 tiles may serve (float32, A's and B's rows read as vec4s: in
    other layouts, or in float16, they ran up to 10% slower than 128x128 on an H200)."""
    if m < 64 or n < 64:
        return None
    if big_gpu and wide_ok and m >= 128 and n >= 256 and \
            _tiles(gemm.WIDE, m, n, nb) >= WIDE_TILES:
        return gemm.WIDE
    # enough 128x128 tiles to fill a big GPU, and no side under 128 (half of each tile
    # would be idle)
    if big_gpu and min(m, n) >= 128 and _tiles(gemm.BIG, m, n, nb) >= 256:
        return gemm.BIG
    if big_gpu and max(m, n) >= 128 and min(m, n) < 128:  # one side of 64-127
        return gemm.TALL if n < 128 else gemm.NARROW
    if not big_gpu and m >= 128 and n >= 128:  # a CPU adapter: fewer, larger groups
        return gemm.BIG
    return gemm.MID


# on a CPU adapter (llvmpipe: lavapipe, or OpenGL there) one invocation stops after 65535
# loop iterations in all, silently: a K of 2**19 already went past it, so products are
# cut into slices of at most this many along K there
CPU_ADAPTER_MAX_K = 1 << 17


def _k_splits(t: DType, m: int, n: int, k: int, nb: int, big_gpu: bool) -> int:
    """K splits for a float32 product with too few 128x128 output tiles to fill a big GPU
    and a long K (a weight gradient: 512x512 over 8192 rows gave 64 tiles), so that the
    splits bring it to 256 workgroups with 512+ deep slices; on a CPU adapter, slices of
    :data:`CPU_ADAPTER_MAX_K` at most; 1 for no split."""
    if not big_gpu:
        return -(-k // CPU_ADAPTER_MAX_K)
    if t is not D.float32 or k < 1024:
        return 1
    gx, gy = gemm.grid(gemm.BIG, m, n)
    tiles, s = gx * gy * nb, 1
    while tiles * s < 256 and k // (2 * s) >= 512 and s < 16:
        s *= 2
    return s


def matmul_nd(a: Array, b: Array) -> Array:
    """``a @ b`` for ``a`` (..., M, K) and ``b`` (..., K, N) of the same dtype."""
    t = a.dtype
    M, K = a.shape[-2:]
    K2, N = b.shape[-2:]
    if K != K2:
        from .._errors import ShapeError
        raise ShapeError(f"matmul: inner dims differ: {a.shape} @ {b.shape} ({K} != {K2})")
    bshape = broadcast_shapes(a.shape[:-2], b.shape[:-2], op="matmul")
    oshape = bshape + (M, N)  # allocated where written: a K split or slices sum their own
    nb = prod(bshape)
    if nb * M * N == 0:
        return new_array(oshape, t, a.engine)
    if K == 0:
        from ..namespace.elementwise import copy_into
        return copy_into(new_array(oshape, t, a.engine), 0)
    sa = broadcast_strides(a.shape[:-2], a.strides[:-2], bshape)
    sb = broadcast_strides(b.shape[:-2], b.strides[:-2], bshape)
    cs, (sa, sb) = collapse(bshape, [sa, sb]) if bshape else ((), [(), ()])
    rb = len(cs)
    eng = a.engine
    if t is D.float32 and coopmat.usable(eng, M, N):  # tensor cores, where they pass
        out = new_array(oshape, t, eng)
        coopmat.dispatch(out, a, b, M, N, K, nb, cs, sa, sb)
        return out
    splits = _k_splits(t, M, N, K, nb, eng.is_gpu)
    tile = _pick_tile(M, N, nb * splits, eng.is_gpu) if t in (D.float32, D.float16) else None
    if tile is not None:
        vec = _vec_dims(t, a, b, sa, sb, tile, M, N, K)
        if t is D.float32 and vec == ("k", "n"):
            tile = _pick_tile(M, N, nb * splits, eng.is_gpu, wide_ok=True)
        elif t is D.float32 and vec == ("k", "k") and tile is gemm.BIG and eng.is_gpu:
            tile = gemm.DEEP
        kern = eng.kernel(("matmul_tiled", t, tile, rb, vec),
                          lambda: _tiled_src(t, tile, rb, vec))
        gx, gy = gemm.grid(tile, M, N)
        # with K splits, each writes its own partial product, summed after
        dst = new_array(oshape if splits == 1 else (nb, splits, M, N), t, eng)
        for z0 in range(0, nb * splits, MAX_Z):
            words = [*gemm.head(M, N, K, splits, z0), a.offset, a.strides[-2],
                     a.strides[-1], b.offset, b.strides[-2], b.strides[-1], *cs, 0, *sa, 0,
                     *sb]
            meta = struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words])
            bufs = [dst._st.buffer, a._st.buffer, b._st.buffer]
            if vec != (None, None):
                bufs += bufs[1:]
            eng.dispatch(kern, meta, bufs, (gx, gy, min(MAX_Z, nb * splits - z0)))
        if splits == 1:
            return dst
        from .reduce import reduce
        total = reduce("sum", dst, (1,), t, t)
        return Array(total._st, oshape, t)
    if not eng.is_gpu and K > CPU_ADAPTER_MAX_K:
        # the generic kernel on a CPU adapter: K in slices, summed here
        from ..namespace.elementwise import add
        total = None
        for k0 in range(0, K, CPU_ADAPTER_MAX_K):
            k1 = min(K, k0 + CPU_ADAPTER_MAX_K)
            part = matmul_nd(
                Array(a._st, a.shape[:-1] + (k1 - k0,), t, a.strides,
                      a.offset + k0 * a.strides[-1]),
                Array(b._st, b.shape[:-2] + (k1 - k0, N), t, b.strides,
                      b.offset + k0 * b.strides[-2]))
            total = part if total is None else add(total, part)
        return total
    out = new_array(oshape, t, eng)
    acc = D.float32 if t is D.float16 else t
    kern = a.engine.kernel(("matmul", t, rb), lambda: _src(t, acc, rb))
    gx, gy = -(-N // T), -(-M // T)
    for z0 in range(0, nb, MAX_Z):
        words = [M, N, K, z0, a.offset, a.strides[-2], a.strides[-1], b.offset,
                 b.strides[-2], b.strides[-1], *cs, 0, *sa, 0, *sb]
        meta = struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words])
        a.engine.dispatch(kern, meta, [out._st.buffer, a._st.buffer, b._st.buffer],
                          (gx, gy, min(MAX_Z, nb - z0)))
    return out
