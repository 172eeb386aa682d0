"""scatter_add and embedding_backward with atomic adds (float32 by compare-and-swap).

WGSL has atomics only for 32-bit integers, so a float32 add is a compare-exchange
loop on the value's bits; int32 uses ``atomicAdd``. The order of the adds is not
fixed, so float32 sums may differ in the last bits from run to run (as with CUDA's
``scatter_add``). Other dtypes use the core's generic kernels. An index outside its
dim is flagged like ``take`` does (raised at the next readback) and skipped.
"""

from __future__ import annotations

import struct

from .. import codegen as cg
from .. import dtypes as D
from ..array import Array
from ..dtypes import DType
from ..engine import groups_for
from ..layout import contiguous_strides
from . import int64_emu


def atomic_add(t: DType) -> str:
    """WGSL ``fn atomic_add_at(i: u32, v)`` adding into ``out: array<atomic<...>>``."""
    if t is D.int32:
        return "fn atomic_add_at(i: u32, v: i32) { atomicAdd(&out[i], v); }\n"
    return ("fn atomic_add_at(i: u32, v: f32) {\n"
            "  var old = atomicLoad(&out[i]);\n"
            "  loop {\n"
            "    let r = atomicCompareExchangeWeak(&out[i], old, bitcast<u32>(bitcast<f32>(old)"
            " + v));\n"
            "    if (r.exchanged) { break; }\n"
            "    old = r.old_value;\n"
            "  }\n}\n")


def _header(t: DType, it: DType, words: int, src_t: DType) -> str:
    n = max(1, -(-words // 4))
    at = "i32" if t is D.int32 else "u32"
    return (f"@group(0) @binding(0) var<uniform> m: array<vec4<u32>, {n}>;\n"
            f"@group(0) @binding(1) var<storage, read_write> out: array<atomic<{at}>>;\n"
            "@group(0) @binding(2) var<storage, read_write> err: array<i32>;\n"
            f"@group(0) @binding(3) var<storage, read> idx: array<{it.storage}>;\n"
            f"@group(0) @binding(4) var<storage, read> src: array<{src_t.storage}>;\n"
            + atomic_add(t) + (int64_emu.SRC if it.emu else ""))


def _scatter_src(t: DType, it: DType, rank: int) -> tuple[str, int, int, int]:
    # meta: n, ishape[rank], src_off, src_str[rank], idx_off, 0, tstr[rank] (0 at dim),
    #       dim_stride, dim_size
    at_s = 1 + rank
    at_i = at_s + 1 + rank
    at_t = at_i + 1
    words = at_t + rank + 3
    body = (f"  if (gi >= {cg.word(0)}) {{ return; }}\n"
            + cg.strided_offsets(rank, 1, [("os", at_s), ("ot", at_t)]) + "\n"
            f"  let v = {cg.index(it, f'idx[{cg.word(at_i)} + gi]')};\n"
            f"  let nsz = {cg.iword(at_t + rank + 2)};\n"
            "  if (v < 0 || v >= nsz) { err[0] = 1; err[1] = v; err[2] = nsz; return; }\n"
            f"  atomic_add_at(u32(ot + v * {cg.iword(at_t + rank + 1)}),"
            f" {cg.cast('src[u32(os)]', t, D.float32 if t is not D.int32 else t)});")
    return _header(t, it, words, t) + cg.main_1d(body), words, 2, 2


def supported(target: Array, src: Array) -> bool:
    """Whether scatter_add runs here (float32/int32 of one dtype)."""
    return (isinstance(target, Array) and isinstance(src, Array)
            and target.dtype is src.dtype and target.dtype in (D.float32, D.int32))


def scatter_add(target: Array, dim: int, index: Array, src: Array) -> Array:
    """A copy of ``target`` with ``out[..., index[p], ...] += src[p]`` (torch semantics)."""
    from ..namespace.elementwise import contiguous_copy
    out = contiguous_copy(target)
    if not index.is_contiguous:
        index = contiguous_copy(index)
    rank = index.ndim
    n = index.size
    if n == 0:
        return out
    tstr = list(contiguous_strides(target.shape))
    dim_stride, dim_size = tstr[dim], target.shape[dim]
    tstr[dim] = 0
    eng = target.engine
    key = ("scatter_add", target.dtype, index.dtype, rank)
    kern = eng.kernel(key, lambda: _scatter_src(target.dtype, index.dtype, rank))
    words = [n, *index.shape, src.offset, *src.strides[:rank], index.offset, 0, *tstr,
             dim_stride, dim_size]
    meta = struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words])
    eng.dispatch(kern, meta, [out._st.buffer, eng.error_buffer, index._st.buffer,
                              src._st.buffer], groups_for(n))
    return out


def _embedding_src(t: DType, it: DType) -> tuple[str, int, int, int]:
    # meta: n (= M * D), D, idx_off, g_off, padding_idx (or -1), num_weights
    body = (f"  if (gi >= {cg.word(0)}) {{ return; }}\n"
            f"  let d = gi % {cg.word(1)}; let r = gi / {cg.word(1)};\n"
            f"  let v = {cg.index(it, f'idx[{cg.word(2)} + r]')};\n"
            f"  let nw = {cg.iword(5)};\n"
            "  if (v < 0 || v >= nw) { err[0] = 1; err[1] = v; err[2] = nw; return; }\n"
            f"  if (v == {cg.iword(4)}) {{ return; }}\n"
            f"  atomic_add_at(u32(v) * {cg.word(1)} + d, "
            f"{cg.cast(f'src[{cg.word(3)} + gi]', t, D.float32)});")
    return _header(D.float32, it, 6, t) + cg.main_1d(body), 6, 2, 2


def embedding_backward(grad: Array, indices: Array, num_weights: int,
                       padding_idx: int | None) -> Array:
    """Sum the rows of ``grad`` ``(M, D)`` into a ``(num_weights, D)`` table."""
    from ..namespace.creation import zeros
    from ..namespace.elementwise import astype, contiguous_copy
    if not grad.is_contiguous:
        grad = contiguous_copy(grad)
    if not indices.is_contiguous:
        indices = contiguous_copy(indices)
    m, d = grad.shape
    out = zeros((num_weights, d), dtype=D.float32, device=grad.device)
    n = m * d
    if n:
        eng = grad.engine
        kern = eng.kernel(("embedding_bwd", grad.dtype, indices.dtype),
                          lambda: _embedding_src(grad.dtype, indices.dtype))
        pad = -1 if padding_idx is None else padding_idx % max(num_weights, 1)
        words = [n, d, indices.offset, grad.offset, pad, num_weights]
        meta = struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words])
        eng.dispatch(kern, meta, [out._st.buffer, eng.error_buffer, indices._st.buffer,
                                  grad._st.buffer], groups_for(n))
    return out if grad.dtype is D.float32 else astype(out, grad.dtype)
