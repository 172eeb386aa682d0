"""2-d convolution forward and backward as implicit GEMMs on the :mod:`.gemm` template.

Per group ``g`` (the GEMM's z), with ``Kk = kh * kw``:

- forward:  ``y[n, o, p] = sum_{c, tap} w[o, c, tap] * x[n, c, p * stride + tap * dil - pad]``,
  an ``og x (N*Ho*Wo)`` product over ``K = Cg * Kk``;
- input gradient: ``og * Kk`` deep, each column an input pixel; a tap contributes where
  ``h + pad - tap * dil`` is a multiple of the stride inside the output;
- weight gradient: an ``og x (Cg * Kk)`` product over ``K = N*Ho*Wo``, split along K
  into partial sums when the output is small (then summed).

The B operand is read straight from the image (no column matrix); padding is a bounds
check. float32 and float16 (float32 accumulation) run here; other dtypes use the
core's generic kernels.
"""

from __future__ import annotations

import struct
from typing import Any

from .. import codegen as cg
from .. import dtypes as D
from ..array import Array, new_array
from ..dtypes import DType
from . import gemm

SLIM = gemm.Tile(32, 128, 8, 4, 8, prefetch=True)
_NAMES = ("NI", "C", "H", "W", "O", "HO", "WO", "KH", "KW", "SH", "SW", "PT", "PL", "DH",
          "DW", "CG", "OG", "G", "XOFF", "WOFF", "GOFF", "BOFF")


# the geometry is compiled into the kernel (one per convolution shape: a network has a
# few): every index division is then by a constant, which the compiler turns into a
# multiply and shift. The im2col index math of each staged element took ~8 divisions
# by metadata words, more than its share of the FMAs (a 3x3 128->256 weight gradient
# at 8x8 ran at 2.5 TFLOP/s on an H100)
_META = ("NI", "XOFF", "WOFF", "GOFF", "BOFF")  # the batch and offsets stay metadata


def _baked(geo: list[int]) -> tuple:
    """The compiled-in part of a geometry (its values in ``_NAMES`` order, None for the
    metadata words)."""
    return tuple(None if n in _META else v for n, v in zip(_NAMES, geo))


def _consts(baked: tuple) -> str:
    """``let`` bindings of the convolution's geometry, for every callback."""
    return "".join(f"  let {n} = {cg.word(gemm.HEAD_WORDS + i) if v is None else f'{v}u'};\n"
                   for i, (n, v) in enumerate(zip(_NAMES, baked)))


_PIX = ("  let hw = HO * WO; let n = p / hw; let q = p % hw; let ho = q / WO; "
        "let wo = q % WO;\n")
_TAP = "  let khw = KH * KW; let c = k / khw; let t = k % khw; let i = t / KW; let j = t % KW;\n"
_IN = ("  let hh = i32(ho * SH + i * DH) - i32(PT); let ww = i32(wo * SW + j * DW) - i32(PL);\n"
       "  if (hh < 0 || ww < 0 || hh >= i32(H) || ww >= i32(W)) { return 0.0; }\n")


_X_AT = "x[XOFF + ((n * C + u32(zo.x) * CG + c) * H + u32(hh)) * W + u32(ww)]"
_G_AT = "g[GOFF + ((n * O + u32(zo.x) * OG + o) * HO + ho) * WO + wo]"


def _funcs(mode: str, t: DType, bias: bool, baked: tuple) -> str:
    ld = lambda e: cg.cast(e, t, D.float32)  # noqa: E731
    st = lambda e: cg.cast(e, D.float32, t)  # noqa: E731
    consts = _consts(baked)
    zoff = "fn zoff(z: u32, s: u32) -> vec4<i32> { return vec4<i32>(i32(z), i32(s), 0, 0); }\n"
    k_all = cg.word(2)
    if mode == "fwd":
        add_b = f" + {ld('bias[BOFF + o]')}" if bias else ""
        return zoff + (
            "fn load_a(zo: vec4<i32>, r: u32, k: u32) -> f32 {\n" + consts +
            f"  return {ld(f'w[WOFF + (u32(zo.x) * OG + r) * {k_all} + k]')}; }}\n"
            "fn load_b(zo: vec4<i32>, k: u32, p: u32) -> f32 {\n" + consts + _TAP + _PIX
            + _IN + f"  return {ld(_X_AT)};\n}}\n"
            "fn store_c(zo: vec4<i32>, r: u32, p: u32, v: f32) {\n" + consts +
            "  let o = u32(zo.x) * OG + r; let hw = HO * WO; let n = p / hw; let q = p % hw;\n"
            f"  out[(n * O + o) * hw + q] = {st('v' + add_b)};\n}}\n")
    if mode == "bwd_x":
        return zoff + (
            "fn load_a(zo: vec4<i32>, r: u32, k: u32) -> f32 {\n" + consts +
            "  let khw = KH * KW; let o = k / khw; let t = k % khw;\n"
            f"  return {ld('w[WOFF + ((u32(zo.x) * OG + o) * CG + r) * khw + t]')}; }}\n"
            "fn load_b(zo: vec4<i32>, k: u32, p: u32) -> f32 {\n" + consts +
            "  let khw = KH * KW; let o = k / khw; let t = k % khw; let i = t / KW; "
            "let j = t % KW;\n"
            "  let n = p / (H * W); let q = p % (H * W); let h = q / W; let xc = q % W;\n"
            "  let th = i32(h + PT) - i32(i * DH); let tw = i32(xc + PL) - i32(j * DW);\n"
            "  if (th < 0 || tw < 0) { return 0.0; }\n"
            "  if (u32(th) % SH != 0u || u32(tw) % SW != 0u) { return 0.0; }\n"
            "  let ho = u32(th) / SH; let wo = u32(tw) / SW;\n"
            "  if (ho >= HO || wo >= WO) { return 0.0; }\n"
            f"  return {ld(_G_AT)};\n}}\n"
            "fn store_c(zo: vec4<i32>, r: u32, p: u32, v: f32) {\n" + consts +
            "  let n = p / (H * W); let q = p % (H * W);\n"
            f"  out[(n * C + u32(zo.x) * CG + r) * H * W + q] = {st('v')};\n}}\n")
    return zoff + (  # bwd_w
        "fn load_a(zo: vec4<i32>, r: u32, p: u32) -> f32 {\n" + consts +
        "  let hw = HO * WO; let n = p / hw; let q = p % hw;\n"
        f"  return {ld('g[GOFF + (n * O + u32(zo.x) * OG + r) * hw + q]')}; }}\n"
        "fn load_b(zo: vec4<i32>, p: u32, k: u32) -> f32 {\n" + consts + _TAP + _PIX
        + _IN + f"  return {ld(_X_AT)};\n}}\n"
        "fn store_c(zo: vec4<i32>, r: u32, k: u32, v: f32) {\n" + consts +
        "  let cols = CG * KH * KW;\n"
        "  out[((u32(zo.y) * G + u32(zo.x)) * OG + r) * cols + k] = v;\n}\n")


# whether consecutive threads stage B along n (else along k): the order in which B lies
# in memory. The weight gradient's B is the image read along K = the output pixels (on an
# H200, batch 128: a 3x3 3->32 weight gradient at 32x32 ran 344 -> 255 us, 64->128 at
# 16x16 389 -> 374 us)
B_ALONG_N = {"fwd": True, "bwd_x": True, "bwd_w": False}


def _src(mode: str, t: DType, tile: gemm.Tile, bias: bool,
         baked: tuple) -> tuple[str, int, int, int]:
    words = gemm.HEAD_WORDS + len(_NAMES)
    if mode == "fwd":
        reads = [("w", t), ("x", t)] + ([("bias", t)] if bias else [])
        writes = [("out", t)]
    elif mode == "bwd_x":
        reads, writes = [("w", t), ("g", t)], [("out", t)]
    else:
        reads, writes = [("g", t), ("x", t)], [("out", D.float32)]
    src = gemm.gemm_source(t, tile, words, writes, reads, _funcs(mode, t, bias, baked),
                           b_along_n="true" if B_ALONG_N[mode] else "false")
    return src, words, len(writes), len(reads)


def _contig(a: Array) -> Array:
    if a.is_contiguous:
        return a
    from ..namespace.elementwise import contiguous_copy
    return contiguous_copy(a)


def _tile(m: int, n: int, z: int, big_gpu: bool) -> gemm.Tile:
    if m <= 32:
        return SLIM
    if m <= 64 and big_gpu:  # a 64->128 input gradient at 16x16: 385 -> 284 us
        return gemm.NARROW
    gx, gy = gemm.grid(gemm.BIG, m, n)
    return gemm.BIG if big_gpu and gx * gy * z >= 128 else gemm.MID


def _run(mode: str, t: DType, out: Array, bufs: list, geo: list[int], mnk: tuple,
         groups: int, bias: bool = False, splits: int = 1) -> None:
    eng = out.engine
    m, n, k = mnk
    tile = _tile(m, n, groups * splits, eng.is_gpu)
    baked = _baked(geo)
    kern = eng.kernel(("conv", mode, t, tile, bias, baked),
                      lambda: _src(mode, t, tile, bias, baked))
    words = gemm.head(m, n, k, splits) + geo
    meta = struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words])
    gx, gy = gemm.grid(tile, m, n)
    eng.dispatch(kern, meta, [out._st.buffer] + bufs, (gx, gy, groups * splits))


def supported(*arrays: Any) -> bool:
    """Whether these arrays can use the WGSL convolution (float32/float16 only)."""
    return all(a is None or (isinstance(a, Array) and a.dtype in (D.float32, D.float16))
               for a in arrays)


def conv2d(x: Array, w: Array, bias: Array | None, stride: tuple, pads: tuple,
           dilation: tuple, groups: int, out_hw: tuple) -> Array:
    """The forward convolution; ``out_hw`` is the output size."""
    x, w = _contig(x), _contig(w)
    ni, c, h, wd = x.shape
    o, cg_, kh, kw = w.shape
    ho, wo = out_hw
    out = new_array((ni, o, ho, wo), x.dtype, x.engine)
    og = o // groups
    if out.size == 0:
        return out
    b = _contig(bias) if bias is not None else None
    geo = [ni, c, h, wd, o, ho, wo, kh, kw, *stride, pads[0], pads[2], *dilation, cg_, og,
           groups, x.offset, w.offset, 0, b.offset if b is not None else 0]
    bufs = [w._st.buffer, x._st.buffer] + ([b._st.buffer] if b is not None else [])
    if cg_ * kh * kw == 0:
        from ..namespace.elementwise import copy_into
        return copy_into(out, 0)
    _run("fwd", x.dtype, out, bufs, geo, (og, ni * ho * wo, cg_ * kh * kw), groups,
         b is not None)
    return out


def conv2d_grad_input(grad: Array, w: Array, x_shape: tuple, stride: tuple, pads: tuple,
                      dilation: tuple, groups: int) -> Array:
    """The input gradient (a transposed convolution of ``grad``)."""
    grad, w = _contig(grad), _contig(w)
    ni, c, h, wd = x_shape
    o, cg_, kh, kw = w.shape
    ho, wo = grad.shape[2:]
    out = new_array(tuple(x_shape), grad.dtype, grad.engine)
    if out.size == 0:
        return out
    geo = [ni, c, h, wd, o, ho, wo, kh, kw, *stride, pads[0], pads[2], *dilation, cg_,
           o // groups, groups, 0, w.offset, grad.offset, 0]
    _run("bwd_x", grad.dtype, out, [w._st.buffer, grad._st.buffer], geo,
         (cg_, ni * h * wd, (o // groups) * kh * kw), groups)
    return out


def _splits(m: int, n: int, k: int, groups: int, gpu: bool) -> int:
    """How many K pieces a weight gradient is cut into (summed afterwards)."""
    # on a GPU, splits counted in 128x128 tiles, up to 256 pieces of at least 512: a 3x3
    # 3->32 weight gradient at 32x32, batch 128 (32 x 27 outputs over K = 131072), ran
    # 316 -> 183 us on an H200 at 256 pieces instead of 64, a 64->128 one at 16x16
    # 374 -> 313 us at 64 instead of 32
    gx, gy = gemm.grid(gemm.BIG if gpu else gemm.MID, m, n)
    tiles = gx * gy * groups
    splits = max(1, min(256, 512 // tiles, k // 512)) if gpu else max(1, min(4, k // 4096))
    return -(-k // gemm.head(m, n, k, splits)[3])  # what the 64-multiple chunk gives


def conv2d_grad_weight(grad: Array, x: Array, w_shape: tuple, stride: tuple, pads: tuple,
                       dilation: tuple, groups: int) -> Array:
    """The weight gradient, with a split-K partial sum when the output is small."""
    from ..namespace.elementwise import astype
    from ..namespace.manipulation import reshape
    from ..namespace.reduction import sum as _sum
    grad, x = _contig(grad), _contig(x)
    ni, c, h, wd = x.shape
    o, cg_, kh, kw = w_shape
    ho, wo = grad.shape[2:]
    og = o // groups
    m, n, k = og, cg_ * kh * kw, ni * ho * wo
    splits = _splits(m, n, k, groups, grad.engine.is_gpu)
    part = new_array((splits, o, n), D.float32, grad.engine)
    geo = [ni, c, h, wd, o, ho, wo, kh, kw, *stride, pads[0], pads[2], *dilation, cg_, og,
           groups, x.offset, 0, grad.offset, 0]
    if k == 0 or part.size == 0:
        from ..namespace.creation import zeros
        return zeros(tuple(w_shape), dtype=grad.dtype, device=grad.device)
    _run("bwd_w", grad.dtype, part, [grad._st.buffer, x._st.buffer], geo, (m, n, k), groups,
         splits=splits)
    gw = part if splits > 1 else reshape(part, (o, n))
    if splits > 1:
        gw = _sum(part, axis=0)
    gw = reshape(gw, tuple(w_shape))
    return gw if grad.dtype is D.float32 else astype(gw, grad.dtype)
