"""Binary search of sorted rows on the device (``searchsorted``, and ``isin`` through it).

One thread per query value: a fixed 32 halvings of ``[0, n)`` (a data-dependent ``break``
miscompiles on lavapipe). NaN orders after every number, as in a NumPy sort.
"""

from __future__ import annotations

import struct

from .. import codegen as cg
from .. import dtypes as D
from ..array import Array, new_array
from ..dtypes import DType
from ..engine import groups_for
from .wgsl_lib import is_nan


def _lt(t: DType) -> str:
    """WGSL ``fn lt(a, b) -> bool``: ``a`` sorts before ``b`` (NaN last)."""
    if t.emu:
        body = "return i64e_lt(a, b);"
    elif t.kind == "f":
        isn = is_nan(t.wgsl, "{0}")  # from the bits: drivers fold "a == a" to true
        body = (f"if ({isn.format('a')}) {{ return false; }} "
                f"if ({isn.format('b')}) {{ return true; }} return a < b;")
    else:
        body = "return a < b;"
    return f"fn lt(a: {t.wgsl}, b: {t.wgsl}) -> bool {{ {body} }}\n"


def _src(t: DType, right: bool) -> tuple[str, int, int, int]:
    # meta: m (queries), n (sorted length), sorted offset, query offset
    go_right = "!lt(v, s[o1 + mid])" if right else "lt(s[o1 + mid], v)"
    out = D.default_int()
    body = (f"  if (gi >= {cg.word(0)}) {{ return; }}\n"
            f"  let v = q[{cg.word(3)} + gi]; let o1 = {cg.word(2)};\n"
            f"  var lo = 0u; var hi = {cg.word(1)};\n"
            "  for (var k = 0; k < 32; k = k + 1) {\n"
            "    if (lo < hi) {\n"
            "      let mid = lo + (hi - lo) / 2u;\n"
            f"      if ({go_right}) {{ lo = mid + 1u; }} else {{ hi = mid; }}\n"
            "    }\n  }\n"
            f"  out[gi] = {cg.cast('lo', D.uint32, out)};")
    src = cg.header([t, out], 4, [("out", out)], [("s", t), ("q", t)]) + _lt(t)
    return src + cg.main_1d(body), 4, 1, 2


def search(sorted_: Array, queries: Array, right: bool) -> Array:
    """Insertion points (default int) of ``queries`` (contiguous) into the contiguous
    1-d ``sorted_`` of the same dtype; ``right`` puts them after equal values."""
    t = sorted_.dtype
    out = new_array(queries.shape, D.default_int(), queries.engine)
    m = queries.size
    if m == 0:
        return out
    eng = queries.engine
    kern = eng.kernel(("searchsorted", t, right), lambda: _src(t, right))
    meta = struct.pack("<4I", m, sorted_.size, sorted_.offset, queries.offset)
    eng.dispatch(kern, meta, [out._st.buffer, sorted_._st.buffer, queries._st.buffer],
                 groups_for(m))
    return out
