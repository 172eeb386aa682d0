"""Fused row kernels on CUDA: softmax, log-softmax, cross entropy and layer norm.

One thread block per row (warp shuffles, then shared memory across warps); the input is
read from global memory two or three times but written once, in a single launch. Rows
are the last axis; softmax along another axis uses a strided kernel (one thread per
column) instead of moving the axis. float16 inputs are computed in float32.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

import cupy
import numpy as np

from volta_core.ops import nn as generic

from ._util import BFLOAT16, NEG_INF, acc_type, contiguous, contiguous_flag, elementwise, is_float
from .launch import launch
from .raw_arith import convert

# the module, not the function `softmax` that volta_core.ops re-exports under its name
generic_softmax = importlib.import_module("volta_core.ops.softmax")

_PRELUDE = r"""
typedef TYPE A;
#define NEG_INF ((A)__int_as_float(0xff800000))

__device__ __forceinline__ A max_nan(A a, A b) {  // NaN wins, like xp.max
    return (b > a || b != b) ? b : a;
}

__device__ A block_max(A v, A* sh) {
    for (int o = 16; o > 0; o >>= 1) v = max_nan(v, __shfl_xor_sync(0xffffffff, v, o));
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    if (wid == 0) {
        v = (lane < (int)((blockDim.x + 31) >> 5)) ? sh[lane] : NEG_INF;
        for (int o = 16; o > 0; o >>= 1) v = max_nan(v, __shfl_xor_sync(0xffffffff, v, o));
        if (lane == 0) sh[0] = v;
    }
    __syncthreads();
    return sh[0];
}

__device__ A block_sum(A v, A* sh) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    if (wid == 0) {
        v = (lane < (int)((blockDim.x + 31) >> 5)) ? sh[lane] : (A)0;
        for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
        if (lane == 0) sh[0] = v;
    }
    __syncthreads();
    return sh[0];
}
"""

_SOFTMAX = r"""
extern "C" __global__ void volta_softmax_rows(const X* x, X* y, long long rows, int d,
                                              int logmode) {
    __shared__ A sh[32];
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const X* xr = x + row * d;
        X* yr = y + row * d;
        A m = NEG_INF;
        for (int j = threadIdx.x; j < d; j += blockDim.x) m = max_nan(m, load(xr[j]));
        m = block_max(m, sh);
        A s = 0;
        for (int j = threadIdx.x; j < d; j += blockDim.x) s += EXP(load(xr[j]) - m);
        s = block_sum(s, sh);
        if (logmode) {
            const A ls = LOG(s);
            for (int j = threadIdx.x; j < d; j += blockDim.x)
                yr[j] = store((load(xr[j]) - m) - ls);
        } else {
            for (int j = threadIdx.x; j < d; j += blockDim.x)
                yr[j] = store(EXP(load(xr[j]) - m) / s);
        }
    }
}
"""

_CROSS_ENTROPY = r"""
extern "C" __global__ void volta_cross_entropy_rows(
        const A* x, const long long* target, const A* weight, int has_w, long long rows,
        int c, long long ignore, A smoothing, A* loss, A* lse_out, A* row_w) {
    __shared__ A sh[32];
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const A* xr = x + row * c;
        A m = NEG_INF;
        for (int j = threadIdx.x; j < c; j += blockDim.x) m = max_nan(m, xr[j]);
        m = block_max(m, sh);
        const A ms = (m - m == (A)0) ? m : (A)0;  // non-finite max -> 0, as the fallback
        A s = 0;
        for (int j = threadIdx.x; j < c; j += blockDim.x) s += EXP(xr[j] - ms);
        s = block_sum(s, sh);
        A swx = 0, sw = 0;
        if (smoothing != (A)0) {
            for (int j = threadIdx.x; j < c; j += blockDim.x) {
                const A wj = has_w ? weight[j] : (A)1;
                swx += wj * xr[j];
                sw += wj;
            }
            swx = block_sum(swx, sh);
            sw = block_sum(sw, sh);
        }
        if (threadIdx.x == 0) {
            const A lse = LOG(s) + ms;
            const long long t = target[row];
            const bool valid = t != ignore;
            A picked = 0, wt = has_w ? (A)0 : (A)1;
            if (valid && t >= 0 && t < c) {
                picked = xr[t] - lse;
                if (has_w) wt = weight[t];
            }
            const A vf = valid ? (A)1 : (A)0;
            const A rw = wt * vf;
            A l = -((A)1 - smoothing) * rw * picked;
            if (smoothing != (A)0 && valid) l -= (smoothing / (A)c) * (swx - lse * sw);
            loss[row] = l;
            lse_out[row] = lse;
            row_w[row] = rw;
        }
    }
}
"""

_LAYER_NORM = r"""
extern "C" __global__ void volta_layer_norm_rows(
        const A* x, const A* weight, const A* bias, int has_w, int has_b, long long rows,
        long long d, A eps, A* y, A* mean_out, A* rstd_out) {
    __shared__ A sh[32];
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const A* xr = x + row * d;
        A* yr = y + row * d;
        A s = 0;
        for (long long j = threadIdx.x; j < d; j += blockDim.x) s += xr[j];
        const A mean = block_sum(s, sh) / (A)d;
        A q = 0;
        for (long long j = threadIdx.x; j < d; j += blockDim.x) {
            const A v = xr[j] - mean;
            q += v * v;
        }
        const A rstd = (A)1 / SQRT(block_sum(q, sh) / (A)d + eps);
        for (long long j = threadIdx.x; j < d; j += blockDim.x) {
            A v = (xr[j] - mean) * rstd;
            if (has_w) v = v * weight[j];
            if (has_b) v = v + bias[j];
            yr[j] = v;
        }
        if (threadIdx.x == 0) {
            mean_out[row] = mean;
            rstd_out[row] = rstd;
        }
    }
}
"""

_FUNCS = {"float": ("expf", "logf", "sqrtf"), "double": ("exp", "log", "sqrt")}

ELEMENT = {
    False: "typedef A X;\n"
           "__device__ __forceinline__ A load(X v) { return v; }\n"
           "__device__ __forceinline__ X store(A v) { return v; }\n",
    # bfloat16 is the high half of a float32; stores round to nearest even, NaN stays NaN
    True: "typedef unsigned short X;\n"
          "__device__ __forceinline__ float load(X v) "
          "{ return __uint_as_float(((unsigned int)v) << 16); }\n"
          "__device__ __forceinline__ X store(float f) {\n"
          "    unsigned int u = __float_as_uint(f);\n"
          "    if ((u & 0x7fffffffu) > 0x7f800000u) return (X)((u >> 16) | 0x40u);\n"
          "    return (X)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n"
          "}\n",
}
"""Element type ``X`` of kernels that read and write bfloat16 arrays (``bf16`` True) or
arrays of the accumulator type, with ``load``/``store`` converting to and from ``A``."""


@functools.cache
def _raw(source: str, name: str, acc: str, bf16: bool = False) -> cupy.RawKernel:
    exp, log, sqrt = _FUNCS[acc]
    code = (_PRELUDE.replace("TYPE", acc) + ELEMENT[bf16] + source).replace("EXP(", exp + "(")
    code = code.replace("LOG(", log + "(").replace("SQRT(", sqrt + "(")
    return cupy.RawKernel(code, name)


def _threads(d: int) -> int:
    """Block size for rows of length ``d``: about four elements per thread, 32..1024."""
    t = 32
    while t < 1024 and t * 4 < d:
        t *= 2
    return t


def _grid(rows: int) -> int:
    return max(1, min(rows, 1 << 20))


def _compute_dtype(dtype):
    """Row kernels run in float32 (float16 inputs) or float64."""
    return np.dtype("float64") if dtype == np.float64 else np.dtype("float32")


def _scalar(dtype, v: float):
    return np.float64(v) if dtype == np.float64 else np.float32(v)


_COLUMNS = """
const long long o = i / inner, b = i % inner;
const long long base = o * d * inner + b;
A m = NEG;
for (long long j = 0; j < d; ++j) {
    const A v = (A)x[base + j * inner];
    m = (v > m || v != v) ? v : m;
}
A s = 0;
for (long long j = 0; j < d; ++j) s += exp((A)x[base + j * inner] - m);
const A ls = log(s);
for (long long j = 0; j < d; ++j) {
    const A z = (A)x[base + j * inner] - m;
    y[base + j * inner] = (T)(logmode ? z - ls : exp(z) / s);
}
""".replace("NEG", NEG_INF)


def _softmax(x: Any, dim: int, logmode: int) -> Any:
    dim = dim % x.ndim
    d = x.shape[dim]
    x = contiguous(x)
    inner = 1
    for s in x.shape[dim + 1:]:
        inner *= s
    if inner > 1:  # reduce along a strided axis: one thread per (outer, inner) column
        y = cupy.empty_like(x)
        kern = elementwise("softmax_cols", acc_type(x.dtype),
                           "raw T x, int64 d, int64 inner, int32 logmode", "raw T y",
                           _COLUMNS)
        kern(x, d, inner, logmode, y, size=x.size // d)
        return y
    bf16 = x.dtype == BFLOAT16  # read and written as bfloat16, computed in float32
    cdt = x.dtype if bf16 else _compute_dtype(x.dtype)
    xc = x.astype(cdt, copy=False)
    y = cupy.empty_like(xc)
    rows = x.size // d
    kern = _raw(_SOFTMAX, "volta_softmax_rows", acc_type(cdt), bf16)
    launch(kern, _grid(rows), _threads(d),
           (xc, y, np.int64(rows), np.int32(d), np.int32(logmode)))
    return y if y.dtype == x.dtype else convert(y, x.dtype)


def softmax(xp: Any, x: Any, dim: int) -> Any:
    """Same contract as ``volta_core.ops.softmax.softmax_kernel``."""
    if not is_float(x) or x.ndim == 0 or x.size == 0 or x.shape[dim] >= 2**31:
        return generic_softmax.softmax_kernel(xp, x, dim)
    return _softmax(x, dim, 0)


def log_softmax(xp: Any, x: Any, dim: int) -> Any:
    """Same contract as ``volta_core.ops.softmax.log_softmax_kernel``."""
    if not is_float(x) or x.ndim == 0 or x.size == 0 or x.shape[dim] >= 2**31:
        return generic_softmax.log_softmax_kernel(xp, x, dim)
    return _softmax(x, dim, 1)


def cross_entropy(xp: Any, logits: Any, target: Any, weight: Any = None, *,
                  ignore_index: int = -100, label_smoothing: float = 0.0) -> tuple:
    """Same contract as ``volta_core.ops.nn.cross_entropy``: ``(loss, lse, row_weight)``."""
    ok = (is_float(logits, weight) and logits.ndim == 2 and logits.size > 0
          and isinstance(target, cupy.ndarray) and target.dtype.kind in "iu"
          and target.shape == logits.shape[:1] and logits.shape[1] < 2**31
          and (weight is None or weight.shape == logits.shape[1:]))
    if not ok:
        return generic.cross_entropy(xp, logits, target, weight, ignore_index=ignore_index,
                                     label_smoothing=label_smoothing)
    n, c = logits.shape
    cdt = _compute_dtype(logits.dtype)
    x = contiguous(logits).astype(cdt, copy=False)
    w = x if weight is None else contiguous(weight).astype(cdt, copy=False)
    t = contiguous(target).astype(cupy.int64, copy=False)
    loss = cupy.empty((n,), dtype=cdt)
    lse = cupy.empty((n, 1), dtype=cdt)
    row_w = cupy.empty((n,), dtype=cdt)
    kern = _raw(_CROSS_ENTROPY, "volta_cross_entropy_rows", acc_type(cdt))
    launch(kern, _grid(n), _threads(c),
           (x, t, w, np.int32(weight is not None), np.int64(n), np.int32(c),
            np.int64(ignore_index), _scalar(cdt, label_smoothing), loss, lse, row_w))
    if cdt != logits.dtype:
        loss, lse, row_w = (convert(a, logits.dtype) for a in (loss, lse, row_w))
    return loss, lse, row_w


def layer_norm(xp: Any, x: Any, weight: Any = None, bias: Any = None, *, ndim: int = 1,
               eps: float = 1e-5) -> tuple:
    """Same contract as ``volta_core.ops.nn.layer_norm``: ``(y, mean, rstd)``."""
    norm_shape = x.shape[x.ndim - ndim:] if 0 < ndim <= x.ndim else None
    ok = (norm_shape is not None and is_float(x, weight, bias) and x.size > 0
          and all(a is None or a.shape == norm_shape for a in (weight, bias)))
    if not ok:
        return generic.layer_norm(xp, x, weight, bias, ndim=ndim, eps=eps)
    d = 1
    for s in norm_shape:
        d *= s
    rows = x.size // d
    cdt = _compute_dtype(x.dtype)
    xc = contiguous(x).astype(cdt, copy=False)
    w = xc if weight is None else contiguous(weight).astype(cdt, copy=False)
    b = xc if bias is None else contiguous(bias).astype(cdt, copy=False)
    y = cupy.empty(x.shape, dtype=cdt)
    stat_shape = x.shape[:x.ndim - ndim] + (1,) * ndim
    mean = cupy.empty(stat_shape, dtype=cdt)
    rstd = cupy.empty(stat_shape, dtype=cdt)
    kern = _raw(_LAYER_NORM, "volta_layer_norm_rows", acc_type(cdt))
    launch(kern, _grid(rows), _threads(d),
           (xc, w, b, np.int32(weight is not None), np.int32(bias is not None), np.int64(rows),
            np.int64(d), _scalar(cdt, eps), y, mean, rstd))
    if cdt != x.dtype:
        y, mean, rstd = (convert(a, x.dtype) for a in (y, mean, rstd))
    return y, mean, rstd


_CE_BACKWARD = """
const long long r = i / c;
const long long col = i - r * c;
const A w = (A)row_w[r];
const A gw = w == (A)0 ? (A)0 : (A)g[r] * w;
gx = (T)(gw * (exp((A)x - (A)lse[r]) - (col == (long long)t[r] ? (A)1 : (A)0)));
"""


def cross_entropy_backward(xp: Any, g: Any, logits: Any, lse: Any, target: Any,
                           row_w: Any) -> Any:
    """Same contract as ``volta_core.ops.nn.cross_entropy_backward``: one kernel."""
    ok = (is_float(logits, lse, row_w) and isinstance(g, cupy.ndarray)
          and g.dtype == logits.dtype and logits.ndim == 2 and contiguous_flag(logits)
          and isinstance(target, cupy.ndarray) and target.dtype.kind in "iu"
          and g.shape == target.shape == row_w.shape == logits.shape[:1]
          and lse.shape == (logits.shape[0], 1))
    if not ok:
        return generic.cross_entropy_backward(xp, g, logits, lse, target, row_w)
    kern = elementwise("ce_backward", acc_type(logits.dtype),
                       "T x, raw T lse, raw I t, raw T g, raw T row_w, int64 c", "T gx",
                       _CE_BACKWARD)
    return kern(logits, lse, target, g, row_w, logits.shape[1])
