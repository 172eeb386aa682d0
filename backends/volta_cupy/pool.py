"""2-d max and average pooling on CUDA: one thread per output (forward) or input pixel
(backward, a gather over the windows that cover it: no atomics, deterministic), each a
raw kernel launched through :mod:`volta_cupy.launch`.

Padding and the ``ceil_mode`` overhang read as ``-inf`` (max) or ``0`` (average), and
the max pool's saved index is the winning kernel tap ``i * kw + j`` (int32), exactly as
the generic fallbacks in ``volta_core.ops.nn`` define them.
"""

from __future__ import annotations

import functools
from typing import Any

import cupy

from volta_core.ops import nn as generic

from ._util import NEG_INF, contiguous, is_float
from .launch import pointwise, run

_GEOM = ("hin", "win", "hout", "wout", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw")

_MAX_FWD = """
long long r = i;
const int ow = r % wout; r /= wout;
const int oh = r % hout;
const long long nc = r / hout;
const long long base = nc * hin * win;
A best = NEG;
int arg = 0;
bool seen = false;  // the scan starts at the window's first real tap, as PyTorch's
for (int ki = 0; ki < kh; ++ki) {
    const int h = oh * sh - ph + ki * dh;
    if (h < 0 || h >= hin) continue;
    for (int kj = 0; kj < kw; ++kj) {
        const int w = ow * sw - pw + kj * dw;
        if (w < 0 || w >= win) continue;
        const A v = (A)x[base + (long long)h * win + w];
        if (!seen || v > best || isnan(v)) {  // the last NaN wins, as in PyTorch
            best = v;
            arg = ki * kw + kj;
            seen = true;
        }
    }
}
y[i] = (T)best;
idx[i] = arg;
""".replace("NEG", NEG_INF)

_MAX_BWD = """
long long r = i;
const int w = r % win; r /= win;
const int h = r % hin;
const long long nc = r / hin;
A acc = 0;
for (int ki = 0; ki < kh; ++ki) {
    const int hp = h + ph - ki * dh;
    if (hp < 0 || hp % sh != 0) continue;
    const int oh = hp / sh;
    if (oh >= hout) continue;
    for (int kj = 0; kj < kw; ++kj) {
        const int wp = w + pw - kj * dw;
        if (wp < 0 || wp % sw != 0) continue;
        const int ow = wp / sw;
        if (ow >= wout) continue;
        const long long o = (nc * hout + oh) * wout + ow;
        if (idx[o] == ki * kw + kj) acc += (A)g[o];
    }
}
gx[i] = (T)acc;
"""

# window count of output (oh, ow): the taps inside [-p, size + p) with count_include_pad,
# else inside [0, size); divisor_override (dov > 0) replaces it
_DIVISOR = """
    A div;
    if (dov > 0) {
        div = (A)dov;
    } else {
        const int h0 = oh * sh - ph, w0 = ow * sw - pw;
        const int hlo = inc ? -ph : 0, hhi = inc ? hin + ph : hin;
        const int wlo = inc ? -pw : 0, whi = inc ? win + pw : win;
        const int ch = min(h0 + kh, hhi) - max(h0, hlo);
        const int cw = min(w0 + kw, whi) - max(w0, wlo);
        div = (A)(ch * cw);
    }
"""

_AVG_FWD = """
long long r = i;
const int ow = r % wout; r /= wout;
const int oh = r % hout;
const long long nc = r / hout;
const long long base = nc * hin * win;
A s = 0;
for (int ki = 0; ki < kh; ++ki) {
    const int h = oh * sh - ph + ki;
    if (h < 0 || h >= hin) continue;
    for (int kj = 0; kj < kw; ++kj) {
        const int w = ow * sw - pw + kj;
        if (w < 0 || w >= win) continue;
        s += (A)x[base + (long long)h * win + w];
    }
}
""" + _DIVISOR + """
y[i] = (T)(s / div);
"""

_AVG_BWD = """
long long r = i;
const int w = r % win; r /= win;
const int h = r % hin;
const long long nc = r / hin;
A acc = 0;
for (int ki = 0; ki < kh; ++ki) {
    const int hp = h + ph - ki;
    if (hp < 0 || hp % sh != 0) continue;
    const int oh = hp / sh;
    if (oh >= hout) continue;
    for (int kj = 0; kj < kw; ++kj) {
        const int wp = w + pw - kj;
        if (wp < 0 || wp % sw != 0) continue;
        const int ow = wp / sw;
        if (ow >= wout) continue;
""" + _DIVISOR + """
        acc += (A)g[(nc * hout + oh) * wout + ow] / div;
    }
}
gx[i] = (T)acc;
"""

_AVG_OPTS = ("inc", "dov")

# (C parameters, body) of each kernel: one output element, at index i, per loop step
_KINDS = {
    "max_pool2d": ("const T* x, T* y, int* idx", _MAX_FWD),
    "max_pool2d_bwd": ("const T* g, const int* idx, T* gx", _MAX_BWD),
    "avg_pool2d": ("const T* x, T* y", _AVG_FWD),
    "avg_pool2d_bwd": ("const T* g, T* gx", _AVG_BWD),
}


def _geom(x_hw: tuple, out_hw: tuple, kernel, stride, pads, dilation) -> tuple:
    return (x_hw[0], x_hw[1], out_hw[0], out_hw[1], kernel[0], kernel[1], stride[0],
            stride[1], pads[0], pads[2], dilation[0], dilation[1])


def _run(kind: str, geom: tuple, *arrays: Any) -> None:
    """The ``kind`` kernel over the last array (its output), with the geometry (and
    average pooling's options) compiled in as constants: a launch passes only arrays,
    and divisions by constants become multiplications."""
    run(_kernel(kind, arrays[0].dtype.name, geom), arrays[-1].size, arrays)


@functools.cache
def _kernel(kind: str, dtype_name: str, geom: tuple) -> cupy.RawKernel:
    names = _GEOM + (_AVG_OPTS if len(geom) > len(_GEOM) else ())
    consts = "".join(f"const int {n} = {int(v)};\n" for n, v in zip(names, geom))
    params, body = _KINDS[kind]
    tag = "_".join(str(int(v)) for v in geom)
    return pointwise(f"{kind}_{tag}", dtype_name, params, consts + body)


def max_pool2d(xp: Any, x: Any, *, kernel, stride, padding=(0, 0), dilation=(1, 1),
               ceil_mode: bool = False) -> tuple:
    """Same contract as ``volta_core.ops.nn.max_pool2d``: ``(values, int32 tap index)``."""
    if not is_float(x) or x.ndim != 4 or x.size == 0:
        return generic.max_pool2d(xp, x, kernel=kernel, stride=stride, padding=padding,
                                  dilation=dilation, ceil_mode=ceil_mode)
    out_hw, pads = generic._pool_geometry(x.shape[2:], kernel, stride, padding, dilation,
                                          ceil_mode)
    n, c = x.shape[:2]
    y = cupy.empty((n, c, *out_hw), dtype=x.dtype)
    idx = cupy.empty((n, c, *out_hw), dtype=cupy.int32)
    geom = _geom(x.shape[2:], out_hw, kernel, stride, pads, dilation)
    _run("max_pool2d", geom, contiguous(x), y, idx)
    return y, idx


def max_pool2d_backward(xp: Any, grad: Any, idx: Any, *, x_shape, kernel, stride,
                        padding=(0, 0), dilation=(1, 1), ceil_mode: bool = False) -> Any:
    """Same contract as ``volta_core.ops.nn.max_pool2d_backward``."""
    if (not is_float(grad) or grad.ndim != 4 or not isinstance(idx, cupy.ndarray)
            or idx.dtype != cupy.int32):
        return generic.max_pool2d_backward(xp, grad, idx, x_shape=x_shape, kernel=kernel,
                                           stride=stride, padding=padding,
                                           dilation=dilation, ceil_mode=ceil_mode)
    out_hw, pads = generic._pool_geometry(x_shape[2:], kernel, stride, padding, dilation,
                                          ceil_mode)
    gx = cupy.empty(tuple(x_shape), dtype=grad.dtype)
    geom = _geom(x_shape[2:], out_hw, kernel, stride, pads, dilation)
    _run("max_pool2d_bwd", geom, contiguous(grad), contiguous(idx), gx)
    return gx


def avg_pool2d(xp: Any, x: Any, *, kernel, stride, padding=(0, 0), ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Any:
    """Same contract as ``volta_core.ops.nn.avg_pool2d``."""
    if not is_float(x) or x.ndim != 4 or x.size == 0:
        return generic.avg_pool2d(xp, x, kernel=kernel, stride=stride, padding=padding,
                                  ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                                  divisor_override=divisor_override)
    out_hw, pads = generic._pool_geometry(x.shape[2:], kernel, stride, padding, (1, 1),
                                          ceil_mode)
    y = cupy.empty((*x.shape[:2], *out_hw), dtype=x.dtype)
    geom = _geom(x.shape[2:], out_hw, kernel, stride, pads, (1, 1)) + (
        int(count_include_pad), int(divisor_override or 0))
    _run("avg_pool2d", geom, contiguous(x), y)
    return y


def avg_pool2d_backward(xp: Any, grad: Any, *, x_shape, kernel, stride, padding=(0, 0),
                        ceil_mode: bool = False, count_include_pad: bool = True,
                        divisor_override: int | None = None) -> Any:
    """Same contract as ``volta_core.ops.nn.avg_pool2d_backward``."""
    if not is_float(grad) or grad.ndim != 4:
        return generic.avg_pool2d_backward(xp, grad, x_shape=x_shape, kernel=kernel,
                                           stride=stride, padding=padding,
                                           ceil_mode=ceil_mode,
                                           count_include_pad=count_include_pad,
                                           divisor_override=divisor_override)
    out_hw, pads = generic._pool_geometry(x_shape[2:], kernel, stride, padding, (1, 1),
                                          ceil_mode)
    gx = cupy.empty(tuple(x_shape), dtype=grad.dtype)
    geom = _geom(x_shape[2:], out_hw, kernel, stride, pads, (1, 1)) + (
        int(count_include_pad), int(divisor_override or 0))
    _run("avg_pool2d_bwd", geom, contiguous(grad), gx)
    return gx
