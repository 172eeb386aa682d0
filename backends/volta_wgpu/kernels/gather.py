"""Gather (``take``) and scatter (``put``/``scatter_add``) along one axis.

``x`` is viewed as ``(outer..., n, inner...)``; the index array (any shape, flattened)
replaces dim ``n``. Negative indices wrap; an index still out of range is clamped and
flagged in the engine's error buffer, which the next readback raises as an
IndexOutOfRangeError (a GPU kernel cannot raise).
"""

from __future__ import annotations

import struct

from .. import codegen as cg
from .. import dtypes as D
from ..array import Array, new_array
from ..dtypes import DType
from ..engine import groups_for
from ..layout import prod

ERR = D.int32
# flags an index ``v`` outside [0, nsz) in ``err`` (see Engine.error_buffer), then clamps it
BOUNDS_CHECK = ("  if (v < 0 || v >= nsz) { err[0] = 1; err[1] = v; err[2] = nsz; }\n"
                "  v = clamp(v, 0, nsz - 1);")

# meta: n, shape[r] (outer, m, inner view), x_off, x_strides[r], m, inner, nsize, ax_stride,
#       idx_off, v_off (scatter only), v_strides[r] (scatter only)


def _src(mode: str, t: DType, it: DType, rank: int, ax: int) -> tuple[str, int, int, int]:
    at_x = 1 + rank
    at_m = at_x + 1 + rank
    body = [f"  if (gi >= {cg.word(0)}) {{ return; }}"]
    ops = [("ox", at_x)]
    if mode != "gather":
        ops.append(("ov", at_m + 5))
    body.append(cg.strided_offsets(rank, 1, ops))
    body.append(f"  let j = (gi / {cg.word(at_m + 1)}) % {cg.word(at_m)};")
    body.append(f"  var v = {cg.index(it, f'idx[{cg.word(at_m + 4)} + j]')};")
    body.append(f"  let nsz = i32({cg.word(at_m + 2)});")
    body.append("  if (v < 0) { v = v + nsz; }")
    body.append(BOUNDS_CHECK)
    body.append(f"  ox += v * {cg.iword(at_m + 3)};")
    if mode == "gather":
        body.append("  out[gi] = x[u32(ox)];")
        writes, reads = [("out", t)], [("x", t), ("idx", it)]
    elif mode == "put":
        body.append("  x[u32(ox)] = val[u32(ov)];")
        writes, reads = [("x", t)], [("idx", it), ("val", t)]
    else:
        raise ValueError(mode)
    words = at_m + 5 + (1 + rank if mode != "gather" else 0)
    src = cg.header([t, it], words, writes + [("err", ERR)], reads) + cg.main_1d(
        "\n".join(body))
    return src, words, 2, len(reads)


def _prepare(x: Array, indices: Array, axis: int) -> tuple:
    if indices.dtype.kind not in "iu":
        from .._errors import DTypeError
        raise DTypeError(f"take: indices must be an integer array, got {indices.dtype.name}")
    if not indices.is_contiguous:
        from ..namespace.elementwise import contiguous_copy
        indices = contiguous_copy(indices)
    m = indices.size
    shape = x.shape[:axis] + (m,) + x.shape[axis + 1:]
    inner = prod(x.shape[axis + 1:])
    xs = x.strides[:axis] + (0,) + x.strides[axis + 1:]
    return indices, m, shape, inner, xs


def take(x: Array, indices: Array, axis: int) -> Array:
    """``x`` gathered along ``axis`` at ``indices`` (result dims: the index's dims)."""
    indices, m, vshape, inner, xs = _prepare(x, indices, axis)
    out_shape = x.shape[:axis] + indices.shape + x.shape[axis + 1:]
    out = new_array(out_shape, x.dtype, x.engine)
    n = prod(vshape)
    if n == 0:
        return out
    if x.shape[axis] == 0:
        from .._errors import IndexOutOfRangeError
        raise IndexOutOfRangeError(f"take: cannot index into an empty axis {axis} of shape "
                                   f"{x.shape}")
    rank = len(vshape)
    key = ("gather", x.dtype, indices.dtype, rank)
    kern = x.engine.kernel(key, lambda: _src("gather", x.dtype, indices.dtype, rank, axis))
    words = [n, *vshape, x.offset, *xs, m, inner, x.shape[axis], x.strides[axis],
             indices.offset]
    meta = struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words])
    x.engine.dispatch(kern, meta, [out._st.buffer, x.engine.error_buffer, x._st.buffer,
                                    indices._st.buffer],
                      groups_for(n))
    return out


def put(x: Array, indices: Array, axis: int, values: Array) -> None:
    """``x[..., indices, ...] = values`` along ``axis``, in place (last write wins)."""
    from ..namespace.manipulation import broadcast_to
    indices, m, vshape, inner, xs = _prepare(x, indices, axis)
    full_shape = x.shape[:axis] + indices.shape + x.shape[axis + 1:]
    values = broadcast_to(values, full_shape)
    n = prod(vshape)
    if n == 0:
        return
    if values._st is x._st or indices._st is x._st:
        from ..namespace.elementwise import contiguous_copy
        values = contiguous_copy(values)
    if indices.ndim == 1:
        vs = values.strides
    else:  # flatten the index dims of the values: make them contiguous first
        from ..layout import contiguous_strides
        from ..namespace.elementwise import contiguous_copy
        values = contiguous_copy(values)
        vs = contiguous_strides(vshape)
    rank = len(vshape)
    key = ("put", x.dtype, indices.dtype, rank)
    kern = x.engine.kernel(key, lambda: _src("put", x.dtype, indices.dtype, rank, axis))
    words = [n, *vshape, x.offset, *xs, m, inner, x.shape[axis], x.strides[axis],
             indices.offset, values.offset, *vs]
    meta = struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words])
    x.engine.dispatch(kern, meta, [x._st.buffer, x.engine.error_buffer, indices._st.buffer,
                                    values._st.buffer],
                      groups_for(n))

