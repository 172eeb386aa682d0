"""max_pool2d / avg_pool2d forward and backward (NCHW), one thread per output or input.

The forward kernels walk the window of one output; the backward kernels walk, for one
input pixel, the taps whose window covers it (no atomics, deterministic). Padding is a
bounds check; the ``ceil_mode`` overhang falls out of the output size. Semantics follow
the core's fallbacks: the first real tap of a window wins ties, the last NaN wins, and
an average's divisor counts the padding only with ``count_include_pad``.
"""

from __future__ import annotations

import struct

from .. import codegen as cg
from .. import dtypes as D
from ..array import Array, new_array
from ..dtypes import DType
from ..engine import groups_for
from .wgsl_lib import is_nan

#: taps one thread may walk on a CPU adapter (llvmpipe ends an invocation after 65535
#: loop iterations in all, without an error): past it the pooling entry points refuse
CPU_ADAPTER_MAX_TAPS = 60000

_NAMES = ("NC", "H", "W", "HO", "WO", "KH", "KW", "SH", "SW", "PT", "PL", "DH", "DW",
          "PH", "PW", "CIP", "OV", "XOFF", "IOFF")


def _consts() -> str:
    return "".join(f"  let {n} = {cg.word(1 + i)};\n" for i, n in enumerate(_NAMES))


_OUT_POS = ("  let wo = gi % WO; let ho = (gi / WO) % HO; let nc = gi / (WO * HO);\n")
_IN_POS = "  let w = gi % W; let h = (gi / W) % H; let nc = gi / (W * H);\n"
# for one input pixel (h, w): the outputs (ho, wo) whose window covers it, walked
# directly (a few per pixel) rather than through every tap of the kernel (a global
# average pool's backward would test its 64 taps per pixel), with the tap (i, j) they
# see it through
_COVER = ("  let th = i32(h + PT); let tw = i32(w + PL);\n"
          "  let ho1 = min(i32(HO) - 1, th / i32(SH));\n"
          "  let wo1 = min(i32(WO) - 1, tw / i32(SW));\n"
          "  for (var ho = max(0, (th - i32((KH - 1u) * DH) + i32(SH) - 1) / i32(SH));\n"
          "       ho <= ho1; ho++) {\n"
          "    let di = th - ho * i32(SH);\n"
          "    if (di % i32(DH) != 0) { continue; }\n"
          "    let i = u32(di) / DH;\n"
          "    for (var wo = max(0, (tw - i32((KW - 1u) * DW) + i32(SW) - 1) / i32(SW));\n"
          "         wo <= wo1; wo++) {\n"
          "      let dj = tw - wo * i32(SW);\n"
          "      if (dj % i32(DW) != 0) { continue; }\n"
          "      let j = u32(dj) / DW;\n"
          "      let o = (nc * HO + u32(ho)) * WO + u32(wo);\n")


_DIVISOR = """
fn divisor(ho: u32, wo: u32) -> f32 {
__CONSTS__  if (OV != 0u) { return f32(OV); }
  var ch = 0; var cw = 0;
  for (var i = 0u; i < KH; i = i + 1u) {
    let p = i32(ho * SH + i) - i32(PT);
    if ((CIP != 0u && p >= -i32(PH) && p < i32(H + PH)) || (p >= 0 && p < i32(H))) { ch++; }
  }
  for (var j = 0u; j < KW; j = j + 1u) {
    let p = i32(wo * SW + j) - i32(PL);
    if ((CIP != 0u && p >= -i32(PW) && p < i32(W + PW)) || (p >= 0 && p < i32(W))) { cw++; }
  }
  return f32(ch * cw);
}
"""


def _src(mode: str, t: DType) -> tuple[str, int, int, int]:
    words = 1 + len(_NAMES)
    ld = lambda e: cg.cast(e, t, D.float32)  # noqa: E731
    st = lambda e: cg.cast(e, D.float32, t)  # noqa: E731
    head = f"  if (gi >= {cg.word(0)}) {{ return; }}\n" + _consts()
    if mode == "max":
        body = head + _OUT_POS + (
            f"  var best = {cg.const(D.float32, float('-inf'))}; var bi = 0;\n"
            # the scan starts at the window's first real tap, as PyTorch's
            "  var seen = false;\n"
            "  for (var i = 0u; i < KH; i = i + 1u) { for (var j = 0u; j < KW; j = j + 1u) {\n"
            "    let hh = i32(ho * SH + i * DH) - i32(PT);\n"
            "    let ww = i32(wo * SW + j * DW) - i32(PL);\n"
            "    if (hh < 0 || ww < 0 || hh >= i32(H) || ww >= i32(W)) { continue; }\n"
            f"    let v = {ld('x[XOFF + (nc * H + u32(hh)) * W + u32(ww)]')};\n"
            # a NaN replaces the winner too (the last NaN wins, as in PyTorch), tested
            # from the bits: a driver may assume no NaNs
            f"    if (!seen || v > best || {is_nan('f32', 'v')}) {{\n"
            "      best = v; bi = i32(i * KW + j); seen = true; }\n"
            "  } }\n"
            f"  out[gi] = {st('best')}; idx[gi] = bi;")
        src = cg.header([t], words, [("out", t), ("idx", D.int32)], [("x", t)])
        return src + cg.main_1d(body), words, 2, 1
    if mode == "max_bwd":
        body = head + _IN_POS + "  var s = 0.0;\n" + _COVER + (
            f"      if (idx[IOFF + o] == i32(i * KW + j)) {{ s = s + {ld('g[XOFF + o]')}; }}\n"
            "  } }\n"
            f"  out[gi] = {st('s')};")
        src = cg.header([t], words, [("out", t)], [("g", t), ("idx", D.int32)])
        return src + cg.main_1d(body), words, 1, 2
    div = _DIVISOR.replace("__CONSTS__", _consts())
    if mode == "avg":
        body = head + _OUT_POS + (
            "  var s = 0.0;\n"
            "  for (var i = 0u; i < KH; i = i + 1u) { for (var j = 0u; j < KW; j = j + 1u) {\n"
            "    let hh = i32(ho * SH + i) - i32(PT); let ww = i32(wo * SW + j) - i32(PL);\n"
            "    if (hh >= 0 && ww >= 0 && hh < i32(H) && ww < i32(W)) {\n"
            f"      s = s + {ld('x[XOFF + (nc * H + u32(hh)) * W + u32(ww)]')}; }}\n"
            "  } }\n"
            f"  out[gi] = {st('s / divisor(ho, wo)')};")
        src = cg.header([t], words, [("out", t)], [("x", t)]) + div
        return src + cg.main_1d(body), words, 1, 1
    body = head + _IN_POS + "  var s = 0.0;\n" + _COVER + (  # avg_bwd
        f"      s = s + {ld('g[XOFF + o]')} / divisor(u32(ho), u32(wo));\n"
        "  } }\n"
        f"  out[gi] = {st('s')};")
    src = cg.header([t], words, [("out", t)], [("g", t)]) + div
    return src + cg.main_1d(body), words, 1, 1


def _contig(a: Array) -> Array:
    if a.is_contiguous:
        return a
    from ..namespace.elementwise import contiguous_copy
    return contiguous_copy(a)


def run(mode: str, x: Array, x_shape: tuple, out_hw: tuple, kernel: tuple, stride: tuple,
        padding: tuple, dilation: tuple = (1, 1), idx: Array | None = None,
        count_include_pad: bool = True, divisor_override: int | None = None
        ) -> Array | tuple[Array, Array]:
    """Run pooling kernel ``mode`` (max, max_bwd, avg, avg_bwd).

    Args:
        x: the input (forward) or the output gradient (backward).
        x_shape: the shape of the pooled input.
        out_hw: the pooled output size.
        idx: the tap indices of max_pool2d (max_bwd only).
    """
    x = _contig(x)
    n, c, h, w = x_shape
    ho, wo = out_hw
    fwd = mode in ("max", "avg")
    shape = (n, c, ho, wo) if fwd else tuple(x_shape)
    out = new_array(shape, x.dtype, x.engine)
    outs = [out]
    if mode == "max":
        outs.append(new_array(shape, D.int32, x.engine))
    total = out.size
    if total == 0:
        return tuple(outs) if mode == "max" else out
    bufs = [o._st.buffer for o in outs] + [x._st.buffer]
    ioff = 0
    if idx is not None:
        idx = _contig(idx)
        bufs.append(idx._st.buffer)
        ioff = idx.offset
    words = [total, n * c, h, w, ho, wo, *kernel, *stride, *padding, *dilation, *padding,
             int(count_include_pad), int(divisor_override or 0), x.offset, ioff]
    eng = x.engine
    kern = eng.kernel(("pool", mode, x.dtype), lambda: _src(mode, x.dtype))
    eng.dispatch(kern, struct.pack(f"<{len(words)}I", *words), bufs, groups_for(total))
    return tuple(outs) if mode == "max" else out
