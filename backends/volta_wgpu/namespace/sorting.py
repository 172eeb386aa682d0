"""``sort`` and ``argsort``: a stable bitonic sort along one axis.

Each row is padded to a power of two; keys are ``(value, original index)`` pairs, so
equal values keep their order (stable) and padding sorts last. NaN sorts as the largest
value (last ascending, first descending), as in PyTorch.
"""

from __future__ import annotations

import struct

from .. import codegen as cg
from .. import dtypes as D
from ..array import Array, new_array
from ..dtypes import DType
from ..engine import groups_for
from ..kernels.wgsl_lib import is_nan
from ..layout import collapse, prod
from .manipulation import moveaxis, reshape


def _init_src(t: DType, rank: int) -> tuple[str, int, int, int]:
    # meta: total, n, P, shape[rank], x_off, xstr[rank], x_last_stride
    at_x = 3 + rank
    words = at_x + 1 + rank + 1
    body = (f"  if (gi >= {cg.word(0)}) {{ return; }}\n"
            f"  let line = gi / {cg.word(2)}; let p = gi % {cg.word(2)};\n"
            + cg.strided_offsets(rank, 3, [("ox", at_x)], index="line") + "\n"
            f"  if (p < {cg.word(1)}) {{\n"
            f"    keys[gi] = x[u32(ox + i32(p) * {cg.iword(at_x + 1 + rank)})];\n"
            "    idx[gi] = p;\n"
            "  } else { idx[gi] = 0xffffffffu; }")
    src = cg.header([t], words, [("keys", t), ("idx", D.uint32)], [("x", t)])
    return src + cg.main_1d(body), words, 2, 1


def _step_src(t: DType, descending: bool) -> tuple[str, int, int, int]:
    # meta: half_total, P, k, j
    # NaN is the largest value (last ascending, first descending), as in PyTorch; read
    # from the bits for float16/32 (a driver that assumes no NaNs folds "k == k" to true)
    isn = is_nan(t.wgsl, "{0}")
    nan = (f"let na = {isn.format('ka')}; let nb = {isn.format('kb')};\n"
           f"  if (na != nb) {{ return {'nb' if descending else 'na'}; }}\n"
           "  if (na) { return ia > ib; }\n") if t.kind == "f" else ""
    cmp = "ka < kb" if descending else "ka > kb"
    ne = "ka != kb"
    if t.emu:  # int64 as a (lo, hi) pair
        cmp = "i64e_lt(ka, kb)" if descending else "i64e_lt(kb, ka)"
        ne = "!i64e_eq(ka, kb)"
    after = (f"fn after(ka: {t.storage}, ia: u32, kb: {t.storage}, ib: u32) -> bool {{\n"
             "  let pa = ia == 0xffffffffu; let pb = ib == 0xffffffffu;\n"
             "  if (pa || pb) { return pa && !pb; }\n"
             f"  {nan}"
             f"  if ({ne}) {{ return {cmp}; }}\n"
             "  return ia > ib;\n}\n")
    body = (f"  if (gi >= {cg.word(0)}) {{ return; }}\n"
            f"  let P = {cg.word(1)}; let kk = {cg.word(2)}; let j = {cg.word(3)};\n"
            "  let line = gi / (P / 2u); let h = gi % (P / 2u);\n"
            "  let lo = (h / j) * 2u * j + (h % j);\n"
            "  let p = line * P + lo; let q = p + j;\n"
            "  let asc = (lo & kk) == 0u;\n"
            "  let ka = keys[p]; let kb = keys[q]; let ia = idx[p]; let ib = idx[q];\n"
            "  let sw = select(after(kb, ib, ka, ia), after(ka, ia, kb, ib), asc);\n"
            "  if (sw) { keys[p] = kb; keys[q] = ka; idx[p] = ib; idx[q] = ia; }")
    src = cg.header([t], 4, [("keys", t), ("idx", D.uint32)], []) + after
    return src + cg.main_1d(body), 4, 2, 0


def _bitonic(x: Array, axis: int, descending: bool) -> tuple[Array, Array, int]:
    """Sorted keys and indices, each of shape (lines, P), and the row length."""
    xm = moveaxis(x, axis, -1)
    n = xm.shape[-1]
    lead = xm.shape[:-1]
    lines = prod(lead)
    P = 1 << max(0, (n - 1).bit_length())
    t = x.dtype
    eng = x.engine
    keys = new_array((lines, P), t, eng)
    idx = new_array((lines, P), D.uint32, eng)
    cs, (cst,) = collapse(lead, [xm.strides[:-1]]) if lead else ((), [()])
    rank = len(cs)
    kern = eng.kernel(("sort_init", t, rank), lambda: _init_src(t, rank))
    words = [lines * P, n, P, *cs, xm.offset, *cst, xm.strides[-1]]
    meta = struct.pack(f"<{len(words)}I", *[w & 0xFFFFFFFF for w in words])
    eng.dispatch(kern, meta, [keys._st.buffer, idx._st.buffer, x._st.buffer],
                 groups_for(lines * P))
    if P > 1:
        step = eng.kernel(("sort_step", t, descending), lambda: _step_src(t, descending))
        half = lines * P // 2
        groups = groups_for(half)
        k = 2
        while k <= P:
            j = k // 2
            while j >= 1:
                eng.dispatch(step, struct.pack("<4I", half, P, k, j),
                             [keys._st.buffer, idx._st.buffer], groups)
                j //= 2
            k *= 2
    return keys, idx, n


def _finish(a: Array, x: Array, axis: int, n: int) -> Array:
    xm_shape = tuple(d for i, d in enumerate(x.shape) if i != axis) + (x.shape[axis],)
    v = a[:, :n]
    return moveaxis(reshape(v, xm_shape), -1, axis)


def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """Sorted copy of ``x`` along ``axis`` (stable; NaN largest)."""
    from ..layout import normalize_axis
    if x.ndim == 0:
        raise ValueError("sort: not defined for 0-d arrays")
    ax = normalize_axis(axis, x.ndim, "sort")
    if x.size == 0:
        return new_array(x.shape, x.dtype, x.engine)
    keys, _, n = _bitonic(x, ax, descending)
    from .elementwise import contiguous_copy
    return contiguous_copy(_finish(keys, x, ax, n))


def argsort(x: Array, /, *, axis: int = -1, descending: bool = False,
            stable: bool = True) -> Array:
    """Indices that sort ``x`` along ``axis`` (default integer dtype)."""
    from ..layout import normalize_axis
    from .elementwise import astype
    if x.ndim == 0:
        raise ValueError("argsort: not defined for 0-d arrays")
    ax = normalize_axis(axis, x.ndim, "argsort")
    if x.size == 0:
        return new_array(x.shape, D.default_int(), x.engine)
    _, idx, n = _bitonic(x, ax, descending)
    return astype(_finish(idx, x, ax, n), D.default_int())
