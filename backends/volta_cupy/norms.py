"""Fused normalisation backward passes and reductions on CUDA.

- ``sum_leading``: column sums of a 2-d array in two deterministic passes (coalesced
  reads; CuPy's ``sum(axis=0)`` reads one column per block).
- ``softmax_backward`` and ``layer_norm_backward``: one thread block per row, as the
  forward row kernels in ``rows.py``.
- ``batch_norm`` / ``batch_norm_backward``: per-channel partial sums over
  ``(channel, chunk)`` blocks, a per-channel finalize, and one elementwise pass; no
  atomics, so the results are deterministic.

Inputs these kernels do not serve (other dtypes, odd layouts) go to the generic
fallbacks of ``volta_core.ops``.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

import cupy
import numpy as np

from volta_core.ops import nn as generic

from ._util import acc_type, contiguous, elementwise
from .rows import _PRELUDE, _grid, _threads

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


@functools.cache
def _raw(source: str, name: str, acc: str) -> cupy.RawKernel:
    return cupy.RawKernel(_PRELUDE.replace("TYPE", acc) + source, name)


# -- column sums ----------------------------------------------------------------------------

_COLSUM = r"""
extern "C" __global__ void volta_colsum(const A* x, A* out, long long m, int n,
                                        long long rows_per) {
    __shared__ A sh[8][33];
    const int col = blockIdx.x * 32 + threadIdx.x;
    const long long r0 = (long long)blockIdx.y * rows_per;
    long long r1 = r0 + rows_per;
    if (r1 > m) r1 = m;
    A s = 0;
    if (col < n)
        for (long long r = r0 + threadIdx.y; r < r1; r += 8) s += x[r * n + col];
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
    m, n = x.shape
    kern = _raw(_COLSUM, "volta_colsum", acc_type(x.dtype))
    # small (launch-bound) sums: one pass, no second launch to add up partial rows
    parts = 1 if m * n <= 1 << 20 else max(1, min(64, (m + 63) // 64,
                                                 -(-512 // ((n + 31) // 32))))
    rows_per = (m + parts - 1) // parts
    out = cupy.empty((parts, n), dtype=x.dtype)
    kern(((n + 31) // 32, parts), (32, 8), (x, out, np.int64(m), np.int32(n),
                                            np.int64(rows_per)))
    if parts == 1:
        return out.reshape(n)
    return _colsum(out)


def sum_leading(xp: Any, x: Any) -> Any:
    """Same contract as ``volta_core.ops.nn.sum_leading``."""
    if not _ok(x) or x.ndim != 2 or 0 in x.shape or x.shape[1] >= 2**31:
        return generic.sum_leading(xp, x)
    return _colsum(contiguous(x))


# -- softmax / layer norm backward ------------------------------------------------------------

_SOFTMAX_BWD = r"""
extern "C" __global__ void volta_softmax_bwd_rows(const A* g, const A* y, A* gx,
                                                  long long rows, int d) {
    __shared__ A sh[32];
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const A* gr = g + row * d;
        const A* yr = y + row * d;
        A s = 0;
        for (int j = threadIdx.x; j < d; j += blockDim.x) s += gr[j] * yr[j];
        s = block_sum(s, sh);
        for (int j = threadIdx.x; j < d; j += blockDim.x)
            gx[row * d + j] = yr[j] * (gr[j] - s);
    }
}
"""


def softmax_backward(xp: Any, grad: Any, y: Any, dim: int) -> Any:
    """Same contract as ``volta_core.ops.softmax.softmax_backward_kernel``."""
    if (not _ok(grad, y) or grad.shape != y.shape or y.ndim == 0 or y.size == 0
            or dim % y.ndim != y.ndim - 1 or y.shape[-1] >= 2**31):
        return generic_softmax.softmax_backward_kernel(xp, grad, y, dim)
    g, yc = contiguous(grad), contiguous(y)
    d = y.shape[-1]
    rows = y.size // d
    out = cupy.empty(y.shape, dtype=y.dtype)
    kern = _raw(_SOFTMAX_BWD, "volta_softmax_bwd_rows", acc_type(y.dtype))
    kern((_grid(rows),), (_threads(d),), (g, yc, out, np.int64(rows), np.int32(d)))
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
    kern((_grid(rows),), (_threads(d),),
         (g, xc, w, np.int32(weight is not None), contiguous(mean), contiguous(rstd),
          np.int64(rows), np.int64(d), gx, gxhat, np.int32(needs[0]), np.int32(needs[1])))
    gw = _colsum(gxhat).reshape(norm_shape) if needs[1] else None
    gb = _colsum(g.reshape(rows, d)).reshape(norm_shape) if needs[2] else None
    return (gx if needs[0] else None), gw, gb


# -- batch norm -----------------------------------------------------------------------------

_BN_PARTIAL = r"""
extern "C" __global__ void volta_bn_partial(
        const A* x, const A* g, const A* center, long long nb, int c, long long hw,
        long long chunk, double* part, int mode) {
    // mode 0: sums of (x - shift) and (x - shift)^2, shift = x[0, ch, 0];
    // mode 1: sums of g and g * (x - center[ch])
    const int ch = blockIdx.x;
    const long long m = nb * hw;
    const long long e0 = (long long)blockIdx.y * chunk;
    long long e1 = e0 + chunk;
    if (e1 > m) e1 = m;
    const A shift = mode == 0 ? x[(long long)ch * hw] : center[ch];
    double s1 = 0, s2 = 0;
    for (long long e = e0 + threadIdx.x; e < e1; e += blockDim.x) {
        const long long n = e / hw, j = e - n * hw;
        const long long idx = (n * c + ch) * hw + j;
        const double d = (double)(x[idx] - shift);
        if (mode == 0) {
            s1 += d;
            s2 += d * d;
        } else {
            const double gv = (double)g[idx];
            s1 += gv;
            s2 += gv * d;
        }
    }
    __shared__ double shd[32];
    for (int o = 16; o > 0; o >>= 1) {
        s1 += __shfl_xor_sync(0xffffffff, s1, o);
        s2 += __shfl_xor_sync(0xffffffff, s2, o);
    }
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    if (lane == 0) { shd[wid] = s1; }
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0;
        for (int k = 0; k < (int)(blockDim.x >> 5); ++k) t += shd[k];
        s1 = t;
    }
    __syncthreads();
    if (lane == 0) { shd[wid] = s2; }
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0;
        for (int k = 0; k < (int)(blockDim.x >> 5); ++k) t += shd[k];
        const long long slot = ((long long)ch * gridDim.y + blockIdx.y) * 2;
        part[slot] = s1;
        part[slot + 1] = t;
    }
}
"""

_BN_FINAL_STATS = """
double s1 = 0, s2 = 0;
for (int k = 0; k < parts; ++k) {
    s1 += part[(i * parts + k) * 2];
    s2 += part[(i * parts + k) * 2 + 1];
}
const double mu = s1 / (double)m;
double v = s2 / (double)m - mu * mu;
if (v < 0) v = 0;
mean = (T)((double)x[(long long)i * hw] + mu);
var = (T)v;
rstd = (T)(1.0 / sqrt(v + (double)eps));
"""

_BN_FINAL_GRAD = """
double s1 = 0, s2 = 0;
for (int k = 0; k < parts; ++k) {
    s1 += part[(i * parts + k) * 2];
    s2 += part[(i * parts + k) * 2 + 1];
}
sg = (T)s1;
sgx = (T)(s2 * (double)rstd);
"""

_BN_APPLY = """
const IDX ch = ((IDX)i / (IDX)hw) % (IDX)c;
A v = ((A)x - (A)mean[ch]) * (A)rstd[ch];
if (has_w) v = v * (A)w[ch];
if (has_b) v = v + (A)b[ch];
y = (T)v;
"""

_BN_GRAD_INPUT = """
const IDX ch = ((IDX)i / (IDX)hw) % (IDX)c;
const A r = (A)rstd[ch];
const A xh = ((A)x - (A)mean[ch]) * r;
const A scale = has_w ? r * (A)w[ch] : r;
gx = (T)(scale * ((A)g - (A)sg[ch] * inv_m - xh * (A)sgx[ch] * inv_m));
"""


def _idx(size: int) -> tuple[str, str]:
    """Kernel-name suffix and C type for index arithmetic over ``size`` elements."""
    return ("_i32", "unsigned int") if size < 2**31 else ("_i64", "long long")


def _bn_partials(x: Any, g: Any, center: Any, mode: int) -> tuple[Any, int]:
    n, c = x.shape[:2]
    hw = x.size // (n * c)
    m = n * hw
    parts = max(1, min((m + 4095) // 4096, max(1, 1024 // c)))
    chunk = (m + parts - 1) // parts
    part = cupy.empty((c, parts, 2), dtype=cupy.float64)
    kern = _raw(_BN_PARTIAL, "volta_bn_partial", acc_type(x.dtype))
    kern((c, parts), (256,), (x, x if g is None else g, x if center is None else center,
                              np.int64(n), np.int32(c), np.int64(hw), np.int64(chunk), part,
                              np.int32(mode)))
    return part, parts


def batch_norm(xp: Any, x: Any, weight: Any = None, bias: Any = None, *,
               eps: float = 1e-5) -> tuple:
    """Same contract as ``volta_core.ops.nn.batch_norm``: ``(y, mean, var, rstd)``."""
    c = x.shape[1] if getattr(x, "ndim", 0) >= 2 else 0
    if (not _ok(x, weight, bias) or x.ndim < 2 or x.size == 0 or c >= 65536
            or any(a is not None and a.shape != (c,) for a in (weight, bias))):
        return generic.batch_norm(xp, x, weight, bias, eps=eps)
    x = contiguous(x)
    n = x.shape[0]
    hw = x.size // (n * c)
    part, parts = _bn_partials(x, None, None, 0)
    acc = acc_type(x.dtype)
    final = elementwise("bn_stats", acc, "raw float64 part, raw T x, int32 parts, float64 m, "
                        "int64 hw, float64 eps", "T mean, T var, T rstd", _BN_FINAL_STATS)
    mean = cupy.empty((c,), dtype=x.dtype)
    var = cupy.empty((c,), dtype=x.dtype)
    rstd = cupy.empty((c,), dtype=x.dtype)
    final(part, x, np.int32(parts), float(n * hw), np.int64(hw), float(eps), mean, var, rstd)
    idx = _idx(x.size)
    apply = elementwise("bn_apply" + idx[0], acc, "T x, raw T mean, raw T rstd, raw T w, raw T b, "
                        "int64 hw, int64 c, int32 has_w, int32 has_b", "T y",
                        _BN_APPLY.replace("IDX", idx[1]))
    y = cupy.empty(x.shape, dtype=x.dtype)
    apply(x, mean, rstd, x if weight is None else contiguous(weight),
          x if bias is None else contiguous(bias), np.int64(hw), np.int64(c),
          np.int32(weight is not None), np.int32(bias is not None), y)
    return y, mean, var, rstd


def batch_norm_backward(xp: Any, grad: Any, x: Any, weight: Any, mean: Any, rstd: Any, *,
                        needs: tuple = (True, True, True)) -> tuple:
    """Same contract as ``volta_core.ops.nn.batch_norm_backward``."""
    c = x.shape[1] if getattr(x, "ndim", 0) >= 2 else 0
    if (not _ok(grad, x, weight, mean, rstd) or x.ndim < 2 or x.size == 0 or c >= 65536
            or grad.shape != x.shape):
        return generic.batch_norm_backward(xp, grad, x, weight, mean, rstd, needs=needs)
    x, g = contiguous(x), contiguous(grad)
    n = x.shape[0]
    hw = x.size // (n * c)
    mean, rstd = contiguous(mean), contiguous(rstd)
    part, parts = _bn_partials(x, g, mean, 1)
    acc = acc_type(x.dtype)
    final = elementwise("bn_grad_stats", acc, "raw float64 part, int32 parts, T rstd",
                        "T sg, T sgx", _BN_FINAL_GRAD)
    sg = cupy.empty((c,), dtype=x.dtype)
    sgx = cupy.empty((c,), dtype=x.dtype)
    final(part, np.int32(parts), rstd, sg, sgx)
    gx = None
    if needs[0]:
        idx = _idx(x.size)
        kern = elementwise("bn_grad_input" + idx[0], acc,
                           "T g, T x, raw T mean, raw T rstd, raw T w, raw T sg, raw T sgx, "
                           "int64 hw, int64 c, int32 has_w, F inv_m", "T gx",
                           _BN_GRAD_INPUT.replace("IDX", idx[1]))
        gx = cupy.empty(x.shape, dtype=x.dtype)
        kern(g, x, mean, rstd, x if weight is None else contiguous(weight), sg, sgx,
             np.int64(hw), np.int64(c), np.int32(weight is not None), 1.0 / (n * hw), gx)
    return gx, (sgx if needs[1] else None), (sg if needs[2] else None)
