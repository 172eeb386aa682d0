"""The dense fast path of the map kernel: no per-element index arithmetic, vec4 I/O.

Used when the output is fresh and every array operand is either dense in the output's
order (one stride of 1 after dim collapsing) or a single broadcast element. Storage is
declared as ``array<vec4<T>>``: each thread handles exactly one vec4 (4 consecutive
elements), found from a 2-D workgroup id (x up to MAX_X groups, y for the rest), with one
bounds check, one vec4 load per operand whose offset is a multiple of 4 (4 component
loads otherwise) and one vec4 store. Only the thread of the last, partial vec4 writes
component by component, so the kernel never touches elements past the output's end.
Every pooled buffer is a multiple of 32 bytes, so a vec4 that holds a valid element
is inside its buffer (see :meth:`volta_wgpu.engine.Engine.alloc`).
"""

from __future__ import annotations

import re

from .. import codegen as cg
from .._errors import OutOfMemoryError
from ..dtypes import DType
from ..engine import WG
from .f64_math import F64_SRC
from .wgsl_lib import helpers_source

VEC = 4
MAX_X = 65535  # workgroups per dispatch dimension (the WebGPU default limit)

_GI = re.compile(r"\bgi\b")

# operand modes: a scalar in the metadata, a dense array with an offset that is a
# multiple of 4, a dense array with any other offset, a single broadcast element
SCALAR, ALIGNED, UNALIGNED, SPLAT = "s", "a", "u", "b"


def groups(n: int, max_x: int | None = None) -> tuple[int, int, int]:
    """Workgroups for ``n`` elements: one vec4 per thread, split over x/y past ``max_x``."""
    lim = MAX_X if max_x is None else max_x
    nv = -(-n // VEC)
    g = max(1, -(-nv // WG))
    if g <= lim:
        return (g, 1, 1)
    y = -(-g // lim)
    if y > MAX_X:
        raise OutOfMemoryError(f"wgpu: {n} elements exceed the dispatch limit")
    return (-(-g // y), y, 1)


def make_source(expr: str, helpers: tuple[str, ...], kinds: tuple, casts: tuple,
                out: DType) -> tuple[str, int, int, int]:
    """WGSL of the dense map kernel; returns (source, meta words, n_write, n_read).

    Args:
        expr: as for :func:`.mapkernel.launch_map`.
        helpers: helper names used by ``expr``.
        kinds: per operand ``(dtype, mode)`` with a mode of this module.
        casts: the dtype each operand is converted to.
        out: the result dtype.

    Metadata words: number of vec4s, element count, output offset (0), the offset of
    each array operand, then the scalar words.
    """
    arrays = [i for i, (_t, md) in enumerate(kinds) if md != SCALAR]
    at = 3 + len(arrays)
    pre, lane_vals, tail_vals = [], [], []
    for i, (t, md) in enumerate(kinds):
        c = casts[i]
        if md == SCALAR:
            pre.append(f"  let s{i} = {cg.cast(cg.scalar_expr(at, t), t, c)};")
            at += 1
            lane_vals.append([f"s{i}"] * VEC)
            tail_vals.append(f"s{i}")
            continue
        o = cg.word(3 + arrays.index(i))
        if md == SPLAT:
            pre.append(f"  let s{i} = {cg.cast(cg.load(t, f'in{i}[{o} >> 2u][{o} & 3u]'), t, c)};")
            lane_vals.append([f"s{i}"] * VEC)
            tail_vals.append(f"s{i}")
            continue
        pre.append(f"  let o{i} = {o};")
        if md == ALIGNED:
            lane_vals.append([cg.cast(cg.load(t, f"a{i}[{k}]"), t, c) for k in range(VEC)])
        else:
            lane_vals.append([cg.cast(cg.load(t, f"in{i}[(o{i} + e + {k}u) >> 2u]"
                                                 f"[(o{i} + e + {k}u) & 3u]"), t, c)
                              for k in range(VEC)])
        tail_vals.append(cg.cast(cg.load(t, f"in{i}[(o{i} + x) >> 2u][(o{i} + x) & 3u]"), t, c))
    T = casts[0].wgsl if casts else out.wgsl

    def ev(vals: list[str], gi: str) -> str:  # ``gi`` in expr: the linear output index
        return cg.store(out, _GI.sub(gi, expr.format(*vals, T=T, R=out.wgsl)))

    full = [f"    let a{i} = in{i}[(o{i} >> 2u) + j];"
            for i, (_t, md) in enumerate(kinds) if md == ALIGNED]
    lanes = ", ".join(ev([v[k] for v in lane_vals], f"(e + {k}u)") for k in range(VEC))
    full.append(f"    out[j] = vec{VEC}<{out.storage}>({lanes});")
    body = f"""  let j = (wid.y * nwg.x + wid.x) * {WG}u + lid;
  let nv = {cg.word(0)};
  if (j >= nv) {{
    return;
  }}
""" + "\n".join(pre) + f"""
  let n = {cg.word(1)};
  let e = j * {VEC}u;
  if (e + {VEC}u <= n) {{
{chr(10).join(full)}
  }} else {{
    for (var k = 0u; e + k < n; k = k + 1u) {{
      let x = e + k;
      out[j][k] = {ev(tail_vals, "x")};
    }}
  }}"""
    main = (f"@compute @workgroup_size({WG})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>,\n"
            "        @builtin(local_invocation_index) lid: u32,\n"
            f"        @builtin(num_workgroups) nwg: vec3<u32>) {{\n{body}\n}}\n")
    types = {t for t, _ in kinds} | set(casts) | {out}
    hsrc = helpers_source(helpers, casts[0] if casts else out)
    lib = F64_SRC if "_f64p(" in (main + hsrc) else ""
    src = (cg.header(types, at, [("out", out)], [(f"in{i}", kinds[i][0]) for i in arrays],
                     vec=VEC) + lib + hsrc + "\n" + main)
    return src, at, 1, len(arrays)
