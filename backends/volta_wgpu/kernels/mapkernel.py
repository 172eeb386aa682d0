"""The generic strided n-ary map kernel behind every elementwise op.

One pipeline serves every shape of a given (expression, dtypes, rank after dim
collapsing). Operands are arrays, read through their own strides (so views need no
copy), or Python scalars carried in the metadata block. A fresh output whose operands
are all dense (or single broadcast elements) takes the vec4 kernel of :mod:`.contig`.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from .. import codegen as cg
from .. import dtypes as D
from .. import lazy
from ..array import Array, new_array
from ..dtypes import DType
from ..engine import groups_for
from ..layout import broadcast_shapes, broadcast_strides, collapse, contiguous_strides, prod
from . import contig as C
from .f64_math import F64_SRC
from .wgsl_lib import helpers_source


def scalar_word(value: Any, t: DType) -> int:
    """The 32-bit metadata word holding a scalar of 32-bit dtype ``t``."""
    if t is D.float32 or t is D.float16:
        return struct.unpack("<I", struct.pack("<f", float(value)))[0]
    if t is D.bool:
        return 1 if value else 0
    return int(value) & 0xFFFFFFFF


def _make_source(expr: str, helpers: tuple[str, ...], kinds: tuple, casts: tuple,
                 out: DType, rank: int) -> tuple[str, int, int, int]:
    # kinds: per operand (dtype, is_scalar); casts: dtype each operand is cast to.
    # meta: n, shape[rank], strides[rank] of out and of each array operand, then the
    # offsets (out first) and the scalar words: the shape-dependent part is a prefix
    arrays = [(i, t) for i, (t, s) in enumerate(kinds) if not s]
    na = 1 + len(arrays)
    at_off = 1 + rank + rank * na
    ops = [("oo", at_off, 1 + rank)]
    for j, (i, _t) in enumerate(arrays):
        ops.append((f"o{i}", at_off + 1 + j, 1 + rank * (2 + j)))
    at = at_off + na
    vals = []
    for i, (t, s) in enumerate(kinds):
        if s:
            v = cg.scalar_expr(at, t)
            at += 1
        else:
            v = cg.load(t, f"in{i}[u32(o{i})]")
        vals.append(cg.cast(v, t, casts[i]))
    words = at
    body = [f"  if (gi >= {cg.word(0)}) {{ return; }}",
            cg.strided_offsets(rank, 1, ops)]
    for i, v in enumerate(vals):
        body.append(f"  let v{i} = {v};")
    T = casts[0].wgsl if casts else out.wgsl
    e = expr.format(*[f"v{i}" for i in range(len(vals))], T=T, R=out.wgsl)
    body.append(f"  out[u32(oo)] = {cg.store(out, e)};")
    types = {t for t, _ in kinds} | set(casts) | {out}
    hsrc = helpers_source(helpers, casts[0] if casts else out)
    main = cg.main_1d("\n".join(body))
    lib = F64_SRC if "_f64p(" in (e + hsrc) else ""
    src = (cg.header(types, words, [("out", out)],
                     [(f"in{i}", t) for i, t in arrays]) + lib + hsrc + "\n" + main)
    return src, words, 1, len(arrays)


def _mode(a: Array, stride: int) -> str:
    """How the dense kernel reads array ``a`` whose collapsed stride is ``stride``."""
    if stride == 0:
        return C.SPLAT
    return C.ALIGNED if a.offset % C.VEC == 0 else C.UNALIGNED


_FLOAT_SCALARS = (D.float32, D.float16)  # packed straight from the Python value ("f")


class _Plan:
    """What a map launch needs besides offsets and scalars, cached per signature.

    The metadata of a launch is ``prefix`` (shape-dependent words) followed by
    ``packer.pack(*offsets, *scalar words)``; ``convert`` lists the scalar dtypes when a
    scalar needs :func:`scalar_word` (integer and bool scalars), else it is None.
    """

    __slots__ = ("kern", "shape", "strides", "nbytes", "prefix", "packer", "convert",
                 "groups")

    def __init__(self, kern: Any, shape: tuple, nbytes: int, prefix: bytes, n_offsets: int,
                 scalars: tuple, groups: tuple) -> None:
        self.kern = kern
        self.shape = shape
        self.strides = contiguous_strides(shape)
        self.nbytes = nbytes
        self.prefix = prefix
        floats = all(t in _FLOAT_SCALARS for t in scalars)
        codes = "".join("f" if floats else "I" for _ in scalars)
        self.packer = struct.Struct(f"<{n_offsets}i{codes}")
        self.convert = None if floats else scalars
        self.groups = groups


_plans: dict[tuple, _Plan] = {}
_MAX_PLANS = 8192


def launch_map(expr: str, operands: Sequence[Any], casts: Sequence[DType], out_dtype: DType,
               helpers: tuple[str, ...] = (), out: Array | None = None,
               op: str = "map") -> Array:
    """Run ``expr`` elementwise over broadcast operands.

    Args:
        expr: WGSL with ``{0}``, ``{1}``... for the (cast) operands, ``{T}`` for the type
            of operand 0 after the cast and ``{R}`` for the result type.
        operands: Arrays or Python scalars (at least one Array unless ``out`` is given).
        casts: the dtype each operand is converted to before ``expr``.
        out_dtype: the result dtype.
        helpers: names of :mod:`.wgsl_lib` helpers ``expr`` calls (typed by ``casts[0]``).
        out: an array (possibly a strided view) to write into, else a new one.
        op: the op's name for error messages.
    """
    if lazy._enabled:  # record it; it runs fused when a value is needed
        if out is None:
            arr = lazy.record(expr, operands, casts, out_dtype, helpers, op)
            if arr is not None:
                return arr
        elif lazy.run_into(expr, operands, casts, out_dtype, helpers, op, out):
            return out
    if out is None:  # fast path: a plan cached for these shapes, strides and dtypes
        # the signature is flat: 5 items per array operand (the 2nd a DType), 2 per
        # scalar (the 2nd a type), so it parses one way only
        sig: list = [expr, helpers, out_dtype]
        words: list = [0]
        scal: list = []
        bufs: list = [None]
        st = None
        for a, c in zip(operands, casts):
            if isinstance(a, Array):
                off = a.offset
                st = a._st  # a pending array is computed here
                sig += (c, a.dtype, a.shape, a.strides, off & 3)
                words.append(off)
                bufs.append(st.buffer)
            else:
                sig += (c, type(a))
                scal.append(a)
        if st is not None:
            eng = st.engine
            sig.append(eng)
            plan = _plans.get(tuple(sig))
            if plan is not None:
                res = eng.alloc(plan.nbytes)
                bufs[0] = res.buffer
                if scal:
                    conv = plan.convert
                    words += scal if conv is None else map(scalar_word, scal, conv)
                eng.dispatch_packed(plan.kern, plan.prefix, plan.packer, words, bufs,
                                    plan.groups)
                return Array(res, plan.shape, out_dtype, plan.strides, 0)
            return _launch(expr, operands, casts, out_dtype, helpers, None, op, tuple(sig))
    return _launch(expr, operands, casts, out_dtype, helpers, out, op, None)


def _launch(expr: str, operands: Sequence[Any], casts: Sequence[DType], out_dtype: DType,
            helpers: tuple[str, ...], out: Array | None, op: str, sig: tuple | None) -> Array:
    arrs = [a for a in operands if isinstance(a, Array)]
    eng = (out if out is not None else arrs[0]).engine
    # 64-bit scalars do not fit a metadata word: upload them as 0-d arrays
    ops: list[Any] = []
    for a, c in zip(operands, casts):
        if not isinstance(a, Array) and c.itemsize == 8:
            from ..namespace.creation import asarray
            a = asarray(a, dtype=c)
            sig = None
        ops.append(a)
    fresh = out is None  # a new dense output: the dense kernel may serve
    shapes = [a.shape for a in ops if isinstance(a, Array)]
    shape = broadcast_shapes(*shapes, op=op) if shapes else ()
    if out is not None:
        if broadcast_shapes(shape, out.shape, op=op) != out.shape:
            from .._errors import ShapeError
            raise ShapeError(f"{op}: cannot write a result of shape {shape} into an array "
                             f"of shape {out.shape}")
        shape = out.shape
        if any(isinstance(a, Array) and a._st is out._st for a in ops):
            tmp = _launch(expr, ops, casts, out_dtype, helpers, None, op, None)
            return _launch("{0}", [tmp], [out.dtype], out.dtype, (), out, op, None)
    else:
        out = new_array(shape, out_dtype, eng)
    n = prod(shape)
    if n == 0:
        return out
    strides = [out.strides] + [broadcast_strides(a.shape, a.strides, shape)
                               for a in ops if isinstance(a, Array)]
    cshape, cstrides = collapse(shape, strides)
    rank = len(cshape)
    casts_t = tuple(casts)
    emu = out_dtype.emu or any(c.emu for c in casts) or any(
        a.dtype.emu for a in ops if isinstance(a, Array))  # no vec4 of vec2<u32> pairs
    if fresh and rank == 1 and all(s[0] in (0, 1) for s in cstrides) and not emu:
        dense = iter(s[0] for s in cstrides[1:])
        kinds = tuple((a.dtype, _mode(a, next(dense))) if isinstance(a, Array)
                      else (c, C.SCALAR) for a, c in zip(ops, casts))
        key = ("contig", expr, helpers, kinds, casts_t, out_dtype)
        kern = eng.kernel(key, lambda: C.make_source(expr, helpers, kinds, casts_t,
                                                     out_dtype))
        head = [-(-n // C.VEC), n]
        groups = C.groups(n)
    else:
        kinds = tuple((a.dtype if isinstance(a, Array) else c, not isinstance(a, Array))
                      for a, c in zip(ops, casts))
        key = ("map", expr, helpers, kinds, casts_t, out_dtype, rank)
        kern = eng.kernel(key, lambda: _make_source(expr, helpers, kinds, casts_t,
                                                    out_dtype, rank))
        head = [n, *cshape]
        for st in cstrides:
            head.extend(st)
        groups = groups_for(n)
    prefix = struct.pack(f"<{len(head)}I", *[w & 0xFFFFFFFF for w in head])
    scalars = tuple(t for (t, _), a in zip(kinds, ops) if not isinstance(a, Array))
    fmt = f"<{len(cstrides)}i{len(scalars)}I"
    if sig is not None:
        if len(_plans) >= _MAX_PLANS:
            _plans.clear()
        _plans[sig] = _Plan(kern, shape, max(n, 1) * out_dtype.itemsize, prefix,
                            len(cstrides), scalars, groups)
    words = [out.offset] + [a.offset for a in ops if isinstance(a, Array)]
    words += [scalar_word(a, t) for a, (t, _) in zip(ops, kinds) if not isinstance(a, Array)]
    bufs = [out._st.buffer] + [a._st.buffer for a in ops if isinstance(a, Array)]
    eng.dispatch(kern, prefix + struct.pack(fmt, *words), bufs, groups)
    return out
