"""Fused normalisation backward passes and reductions on CUDA.

- ``sum_leading``: column sums of a 2-d array in two deterministic passes (coalesced
  reads; CuPy's ``sum(axis=0)`` reads one column per block).
- ``channel_sum``: sums over every dim but the channels (a convolution's bias gradient).
- ``weighted_mean``: ``sum(values) / sum(weights)`` in one launch (cross entropy's mean).
- ``softmax_backward`` and ``layer_norm_backward``: one thread block per row, as the
  forward row kernels in ``rows.py``.

Inputs these kernels do not serve (other dtypes, odd layouts) go to the generic
fallbacks of ``volta_core.ops``.
"""

from __future__ import annotations

import importlib
from typing import Any

import cupy
import numpy as np

from volta_core.ops import nn as generic

from ._util import BFLOAT16, acc_type, contiguous
from .launch import launch
from .raw_arith import convert
from .rows import _grid, _raw, _threads

generic_softmax = importlib.import_module("volta_core.ops.softmax")

_F32_64 = (np.dtype("float32"), np.dtype("float64"))


def _ok(*arrays: Any) -> bool:
    """float32/float64 CuPy arrays of one dtype (None skipped)."""
    first = None
    for a in arrays:
        if a is None:
            continue
        if not isinstance(a, cupy.ndarray) or a.dtype not in _F32_64:
            return False
        if first is None:
            first = a.dtype
        elif a.dtype != first:
            return False
    return first is not None


# -- column sums ----------------------------------------------------------------------------

_COLSUM = r"""
extern "C" __global__ void volta_colsum(const X* x, A* out, long long m, int n,
                                        long long rows_per) {
    __shared__ A sh[8][33];
    const int col = blockIdx.x * 32 + threadIdx.x;
    const long long r0 = (long long)blockIdx.y * rows_per;
    long long r1 = r0 + rows_per;
    if (r1 > m) r1 = m;
    A s = 0;
    if (col < n)
        for (long long r = r0 + threadIdx.y; r < r1; r += 8) s += load(x[r * n + col]);
    sh[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && col < n) {
        A t = 0;
        for (int k = 0; k < 8; ++k) t += sh[k][threadIdx.x];
        out[(long long)blockIdx.y * n + col] = t;
    }
}
"""


def _colsum(x: Any) -> Any:
    """Column sums of a C-contiguous 2-d array; a bfloat16 one is summed in float32 and
    rounded once at the end."""
    m, n = x.shape
    bf16 = x.dtype == BFLOAT16
    acc_dtype = np.dtype("float32") if bf16 else x.dtype
    kern = _raw(_COLSUM, "volta_colsum", acc_type(acc_dtype), bf16)
    # small (launch-bound) sums: one pass, no second launch to add up partial rows
    parts = 1 if m * n <= 1 << 20 else max(1, min(64, (m + 63) // 64,
                                                 -(-512 // ((n + 31) // 32))))
    rows_per = (m + parts - 1) // parts
    out = cupy.empty((parts, n), dtype=acc_dtype)
    kern(((n + 31) // 32, parts), (32, 8), (x, out, np.int64(m), np.int32(n),
                                            np.int64(rows_per)))
    out = out.reshape(n) if parts == 1 else _colsum(out)
    return convert(out, BFLOAT16) if bf16 else out


def sum_leading(xp: Any, x: Any) -> Any:
    """Same contract as ``volta_core.ops.nn.sum_leading``."""
    if (not (_ok(x) or getattr(x, "dtype", None) == BFLOAT16) or x.ndim != 2 or 0 in x.shape
            or x.shape[1] >= 2**31):
        return generic.sum_leading(xp, x)
    return _colsum(contiguous(x))


_CHANNEL_SUM = r"""
extern "C" __global__ void volta_channel_sum(const X* x, A* out, int c, long long plane,
                                             long long n, long long per) {
    __shared__ A sh[32];
    const int ch = blockIdx.x;
    const long long n0 = (long long)blockIdx.y * per;
    long long n1 = n0 + per;
    if (n1 > n) n1 = n;
    const long long count = (n1 - n0) * plane;
    A s = 0;
    for (long long i = threadIdx.x; i < count; i += blockDim.x) {
        const long long k = i / plane;
        s += load(x[((n0 + k) * c + ch) * plane + (i - k * plane)]);
    }
    s = block_sum(s, sh);
    if (threadIdx.x == 0) out[(long long)blockIdx.y * c + ch] = s;
}
"""


def channel_sum(xp: Any, x: Any) -> Any:
    """Same contract as ``volta_core.ops.nn.channel_sum``: a block per channel (and per
    slice of the batch when there are few channels for many elements, the slices' sums
    then added by :func:`_colsum`), in a fixed order, so deterministic. One launch where
    CuPy's ``sum(axis=(0, 2, 3))`` costs ~45 us of host time on an H100's host."""
    if (not (_ok(x) or getattr(x, "dtype", None) == BFLOAT16) or x.ndim < 2 or 0 in x.shape
            or x.shape[1] >= 2**31):
        return generic.channel_sum(xp, x)
    x = contiguous(x)
    n, c = x.shape[0], x.shape[1]
    plane = x.size // (n * c)
    bf16 = x.dtype == BFLOAT16
    acc_dtype = np.dtype("float32") if bf16 else x.dtype
    kern = _raw(_CHANNEL_SUM, "volta_channel_sum", acc_type(acc_dtype), bf16)
    # about 512 blocks in all for large inputs; one slice when launch-bound
    parts = 1 if x.size <= 1 << 20 else max(1, min(n, 512 // c))
    per = (n + parts - 1) // parts
    parts = (n + per - 1) // per
    out = cupy.empty((parts, c), dtype=acc_dtype)
    launch(kern, c, 256, (x, out, np.int32(c), np.int64(plane), np.int64(n), np.int64(per)),
           parts)
    out = out.reshape(c) if parts == 1 else _colsum(out)
    return convert(out, BFLOAT16) if bf16 else out


_WEIGHTED_MEAN = r"""
extern "C" __global__ void volta_weighted_mean(const A* v, const A* w, long long n, A* out) {
    __shared__ A sh[32];
    A s = 0, t = 0;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) { s += v[i]; t += w[i]; }
    s = block_sum(s, sh);
    t = block_sum(t, sh);
    if (threadIdx.x == 0) { out[0] = s / t; out[1] = t; }
}
"""


def weighted_mean(xp: Any, values: Any, weights: Any) -> tuple:
    """Same contract as ``volta_core.ops.nn.weighted_mean``: both sums and the quotient in
    one launch (one block: the rows of a loss), where CuPy takes three."""
    if not (_ok(values, weights) and values.ndim == 1 and values.shape == weights.shape
            and 0 < values.size <= 1 << 22):
        return generic.weighted_mean(xp, values, weights)
    out = cupy.empty((2,), dtype=values.dtype)
    kern = _raw(_WEIGHTED_MEAN, "volta_weighted_mean", acc_type(values.dtype))
    launch(kern, 1, _threads(values.size),
           (contiguous(values), contiguous(weights), np.int64(values.size), out))
    return out[0], out[1]


# -- softmax / layer norm backward ------------------------------------------------------------

_SOFTMAX_BWD = r"""
extern "C" __global__ void volta_softmax_bwd_rows(const X* g, const X* y, X* gx,
                                                  long long rows, int d) {
    __shared__ A sh[32];
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const X* gr = g + row * d;
        const X* yr = y + row * d;
        A s = 0;
        for (int j = threadIdx.x; j < d; j += blockDim.x) s += load(gr[j]) * load(yr[j]);
        s = block_sum(s, sh);
        for (int j = threadIdx.x; j < d; j += blockDim.x)
            gx[row * d + j] = store(load(yr[j]) * (load(gr[j]) - s));
    }
}
"""


def softmax_backward(xp: Any, grad: Any, y: Any, dim: int) -> Any:
    """Same contract as ``volta_core.ops.softmax.softmax_backward_kernel``."""
    bf16 = (isinstance(y, cupy.ndarray) and isinstance(grad, cupy.ndarray)
            and y.dtype == grad.dtype == BFLOAT16)  # read and written as bfloat16
    if (not (bf16 or _ok(grad, y)) or grad.shape != y.shape or y.ndim == 0 or y.size == 0
            or dim % y.ndim != y.ndim - 1 or y.shape[-1] >= 2**31):
        return generic_softmax.softmax_backward_kernel(xp, grad, y, dim)
    g, yc = contiguous(grad), contiguous(y)
    d = y.shape[-1]
    rows = y.size // d
    out = cupy.empty(y.shape, dtype=y.dtype)
    kern = _raw(_SOFTMAX_BWD, "volta_softmax_bwd_rows", acc_type(y.dtype), bf16)
    launch(kern, _grid(rows), _threads(d), (g, yc, out, np.int64(rows), np.int32(d)))
    return out


_LAYER_NORM_BWD = r"""
extern "C" __global__ void volta_layer_norm_bwd_rows(
        const A* g, const A* x, const A* w, int has_w, const A* mean, const A* rstd,
        long long rows, long long d, A* gx, A* gxhat, int want_gx, int want_gxhat) {
    __shared__ A sh[32];
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const A* gr = g + row * d;
        const A* xr = x + row * d;
        const A mu = mean[row], rs = rstd[row];
        A a = 0, b = 0;
        for (long long j = threadIdx.x; j < d; j += blockDim.x) {
            const A xh = (xr[j] - mu) * rs;
            const A gh = has_w ? gr[j] * w[j] : gr[j];
            a += gh;
            b += gh * xh;
            if (want_gxhat) gxhat[row * d + j] = gr[j] * xh;
        }
        if (want_gx) {
            a = block_sum(a, sh) / (A)d;
            b = block_sum(b, sh) / (A)d;
            for (long long j = threadIdx.x; j < d; j += blockDim.x) {
                const A xh = (xr[j] - mu) * rs;
                const A gh = has_w ? gr[j] * w[j] : gr[j];
                gx[row * d + j] = rs * (gh - a - xh * b);
            }
        }
    }
}
"""


def layer_norm_backward(xp: Any, grad: Any, x: Any, weight: Any, mean: Any, rstd: Any, *,
                        ndim: int = 1, needs: tuple = (True, True, True)) -> tuple:
    """Same contract as ``volta_core.ops.nn.layer_norm_backward``."""
    norm_shape = x.shape[x.ndim - ndim:] if 0 < ndim <= x.ndim else None
    if (norm_shape is None or not _ok(grad, x, weight, mean, rstd) or x.size == 0
            or grad.shape != x.shape or (weight is not None and weight.shape != norm_shape)):
        return generic.layer_norm_backward(xp, grad, x, weight, mean, rstd, ndim=ndim,
                                           needs=needs)
    d = 1
    for s in norm_shape:
        d *= s
    rows = x.size // d
    g, xc = contiguous(grad), contiguous(x)
    w = xc if weight is None else contiguous(weight)
    gx = cupy.empty(x.shape, dtype=x.dtype) if needs[0] else xc
    gxhat = cupy.empty((rows, d), dtype=x.dtype) if needs[1] else xc
    kern = _raw(_LAYER_NORM_BWD, "volta_layer_norm_bwd_rows", acc_type(x.dtype))
    launch(kern, _grid(rows), _threads(d),
           (g, xc, w, np.int32(weight is not None), contiguous(mean), contiguous(rstd),
            np.int64(rows), np.int64(d), gx, gxhat, np.int32(needs[0]), np.int32(needs[1])))
    gw = _colsum(gxhat).reshape(norm_shape) if needs[1] else None
    gb = _colsum(g.reshape(rows, d)).reshape(norm_shape) if needs[2] else None
    return (gx if needs[0] else None), gw, gb
