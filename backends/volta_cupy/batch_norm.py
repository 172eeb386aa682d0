"""Training batch norm on CUDA: per-channel partial sums over ``(channel, chunk)`` blocks,
a per-channel finalize, and one elementwise pass; no atomics, so results are deterministic.

float32 and float64 inputs take parameters of their own dtype. A bfloat16 input takes
float32 (or no) parameters, as PyTorch's mixed-dtype batch norm does: it is read as
bfloat16, every sum and the statistics are float32, and ``y`` (or the input gradient)
is written as bfloat16, so autocast needs no casts around the layer. float16 inputs are
computed in float32; other inputs go to the generic fallback of ``volta_core.ops``.
"""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np

from volta_core.ops import nn as generic

from ._util import BFLOAT16, acc_type, contiguous
from .rows import _raw

_F32_64 = (np.dtype("float32"), np.dtype("float64"))
_F32 = np.dtype("float32")

_BN_PARTIAL = r"""
extern "C" __global__ void volta_bn_partial(
        const X* x, const X* g, const A* center, long long nb, int c, long long hw,
        long long chunk, double* part, int mode) {
    // mode 0: sums of (x - shift) and (x - shift)^2, shift = x[0, ch, 0];
    // mode 1: sums of g and g * (x - center[ch])
    const int ch = blockIdx.x;
    const long long m = nb * hw;
    const long long e0 = (long long)blockIdx.y * chunk;
    long long e1 = e0 + chunk;
    if (e1 > m) e1 = m;
    const A shift = mode == 0 ? load(x[(long long)ch * hw]) : center[ch];
    double s1 = 0, s2 = 0;
    for (long long e = e0 + threadIdx.x; e < e1; e += blockDim.x) {
        const long long n = e / hw, j = e - n * hw;
        const long long idx = (n * c + ch) * hw + j;
        const double d = (double)(load(x[idx]) - shift);
        if (mode == 0) {
            s1 += d;
            s2 += d * d;
        } else {
            const double gv = (double)load(g[idx]);
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

# channel i's two sums over its chunks' partial sums
_SUM_PARTS = r"""
__device__ __forceinline__ void sum_parts(const double* part, int parts, int i, double* s1,
                                          double* s2) {
    double a = 0, b = 0;
    for (int k = 0; k < parts; ++k) {
        a += part[(i * parts + k) * 2];
        b += part[(i * parts + k) * 2 + 1];
    }
    *s1 = a;
    *s2 = b;
}
"""

# one thread per channel: the statistics from the partial sums, into rows 0-2 of ``stats``
# (mean, biased variance, 1/std)
_BN_STATS = _SUM_PARTS + r"""
extern "C" __global__ void volta_bn_stats(
        const double* part, const X* x, int parts, int c, double m, long long hw, double eps,
        A* stats) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c) return;
    double s1, s2;
    sum_parts(part, parts, i, &s1, &s2);
    const double mu = s1 / m;
    double v = s2 / m - mu * mu;
    if (v < 0) v = 0;
    stats[i] = (A)((double)load(x[(long long)i * hw]) + mu);
    stats[c + i] = (A)v;
    stats[2 * c + i] = (A)(1.0 / sqrt(v + eps));
}
"""

# one thread per channel: rows 0-1 of ``sums`` are sum(g) and sum(g * xhat)
_BN_GRAD_STATS = _SUM_PARTS + r"""
extern "C" __global__ void volta_bn_grad_stats(
        const double* part, int parts, int c, const A* rstd, A* sums) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c) return;
    double s1, s2;
    sum_parts(part, parts, i, &s1, &s2);
    sums[i] = (A)s1;
    sums[c + i] = (A)(s2 * (double)rstd[i]);
}
"""

# raw kernels, not CuPy ElementwiseKernels: a launch with a dozen arguments costs the host
# about half as much (the per-op path of small convolutional nets pays it on every layer)
_BN_APPLY = r"""
extern "C" __global__ void volta_bn_apply(
        const X* x, const A* mean, const A* rstd, const A* w, const A* b, IDX total, IDX hw,
        IDX c, int has_w, int has_b, X* y) {
    for (IDX i = (IDX)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (IDX)gridDim.x * blockDim.x) {
        const IDX ch = (i / hw) % c;
        A v = (load(x[i]) - mean[ch]) * rstd[ch];
        if (has_w) v = v * w[ch];
        if (has_b) v = v + b[ch];
        y[i] = store(v);
    }
}
"""

_BN_GRAD_INPUT = r"""
extern "C" __global__ void volta_bn_grad_input(
        const X* g, const X* x, const A* mean, const A* rstd, const A* w, const A* sums,
        IDX total, IDX hw, IDX c, int has_w, A inv_m, X* gx) {
    for (IDX i = (IDX)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (IDX)gridDim.x * blockDim.x) {
        const IDX ch = (i / hw) % c;
        const A r = rstd[ch];
        const A xh = (load(x[i]) - mean[ch]) * r;
        const A scale = has_w ? r * w[ch] : r;
        gx[i] = store(scale * (load(g[i]) - sums[ch] * inv_m - xh * sums[c + ch] * inv_m));
    }
}
"""

# the index type of the elementwise passes: 32-bit division where the size allows
_WIDE = {False: ("unsigned int", np.uint32), True: ("long long", np.int64)}
_APPLY = {w: _BN_APPLY.replace("IDX", t) for w, (t, _) in _WIDE.items()}
_GRAD_INPUT = {w: _BN_GRAD_INPUT.replace("IDX", t) for w, (t, _) in _WIDE.items()}


def _passes(size: int) -> tuple[bool, Any, tuple, tuple]:
    """(wide, index scalar type, grid, block) of an elementwise pass over ``size``."""
    wide = size >= 2**31
    return wide, _WIDE[wide][1], (max(1, min((size + 255) // 256, 1 << 20)),), (256,)


def _stats_dtype(x: Any, *params: Any) -> Any:
    """The dtype of the statistics and parameters this module serves ``x`` with, or None."""
    if not isinstance(x, cupy.ndarray) or x.ndim < 2 or x.size == 0 or x.shape[1] >= 65536:
        return None
    want = x.dtype if x.dtype in _F32_64 else _F32 if x.dtype == BFLOAT16 else None
    if want is None:
        return None
    for p in params:
        if p is not None and not (isinstance(p, cupy.ndarray) and p.dtype == want
                                  and p.shape == (x.shape[1],)):
            return None
    return want


def _bn_partials(x: Any, g: Any, center: Any, mode: int, acc: str) -> tuple[Any, int]:
    n, c = x.shape[:2]
    hw = x.size // (n * c)
    m = n * hw
    parts = max(1, min((m + 4095) // 4096, max(1, 1024 // c)))
    chunk = (m + parts - 1) // parts
    part = cupy.empty((c, parts, 2), dtype=cupy.float64)
    kern = _raw(_BN_PARTIAL, "volta_bn_partial", acc, x.dtype == BFLOAT16)
    kern((c, parts), (256,), (x, x if g is None else g, part if center is None else center,
                              np.int64(n), np.int32(c), np.int64(hw), np.int64(chunk), part,
                              np.int32(mode)))
    return part, parts


def batch_norm(xp: Any, x: Any, weight: Any = None, bias: Any = None, *,
               eps: float = 1e-5) -> tuple:
    """Same contract as ``volta_core.ops.nn.batch_norm``: ``(y, mean, var, rstd)``."""
    if isinstance(x, cupy.ndarray) and x.dtype == np.float16:
        y, mean, var, rstd = batch_norm(xp, x.astype(_F32), weight, bias, eps=eps)
        return y.astype(x.dtype), mean, var, rstd
    sd = _stats_dtype(x, weight, bias)
    if sd is None:
        return generic.batch_norm(xp, x, weight, bias, eps=eps)
    x = contiguous(x)
    n, c = x.shape[:2]
    hw = x.size // (n * c)
    acc, bf16 = acc_type(x.dtype), x.dtype == BFLOAT16
    part, parts = _bn_partials(x, None, None, 0, acc)
    stats = cupy.empty((3, c), dtype=sd)
    _raw(_BN_STATS, "volta_bn_stats", acc, bf16)(
        ((c + 127) // 128,), (128,),
        (part, x, np.int32(parts), np.int32(c), float(n * hw), np.int64(hw), float(eps), stats))
    mean, var, rstd = stats
    wide, idx, grid, block = _passes(x.size)
    y = cupy.empty(x.shape, dtype=x.dtype)
    _raw(_APPLY[wide], "volta_bn_apply", acc, bf16)(
        grid, block, (x, mean, rstd, mean if weight is None else contiguous(weight),
                      mean if bias is None else contiguous(bias), idx(x.size), idx(hw),
                      idx(c), np.int32(weight is not None), np.int32(bias is not None), y))
    return y, mean, var, rstd


def batch_norm_backward(xp: Any, grad: Any, x: Any, weight: Any, mean: Any, rstd: Any, *,
                        needs: tuple = (True, True, True)) -> tuple:
    """Same contract as ``volta_core.ops.nn.batch_norm_backward``."""
    if isinstance(x, cupy.ndarray) and x.dtype == np.float16:
        gx, gw, gb = batch_norm_backward(xp, grad.astype(_F32), x.astype(_F32), weight, mean,
                                         rstd, needs=needs)
        return (None if gx is None else gx.astype(x.dtype)), gw, gb
    sd = _stats_dtype(x, weight, mean, rstd)
    if (sd is None or not isinstance(grad, cupy.ndarray) or grad.dtype != x.dtype
            or grad.shape != x.shape):
        return generic.batch_norm_backward(xp, grad, x, weight, mean, rstd, needs=needs)
    x, g = contiguous(x), contiguous(grad)
    n, c = x.shape[:2]
    hw = x.size // (n * c)
    mean, rstd = contiguous(mean), contiguous(rstd)
    acc, bf16 = acc_type(x.dtype), x.dtype == BFLOAT16
    part, parts = _bn_partials(x, g, mean, 1, acc)
    sums = cupy.empty((2, c), dtype=sd)
    _raw(_BN_GRAD_STATS, "volta_bn_grad_stats", acc, bf16)(
        ((c + 127) // 128,), (128,), (part, np.int32(parts), np.int32(c), rstd, sums))
    gx = None
    if needs[0]:
        wide, idx, grid, block = _passes(x.size)
        gx = cupy.empty(x.shape, dtype=x.dtype)
        inv_m = (np.float64 if acc == "double" else np.float32)(1.0 / (n * hw))
        _raw(_GRAD_INPUT[wide], "volta_bn_grad_input", acc, bf16)(
            grid, block, (g, x, mean, rstd, mean if weight is None else contiguous(weight),
                          sums, idx(x.size), idx(hw), idx(c), np.int32(weight is not None),
                          inv_m, gx))
    sg, sgx = sums
    return gx, (sgx if needs[1] else None), (sg if needs[2] else None)


# the running statistics' update, both buffers in one launch (rows 0-1 of ``out``); the
# roundings are spelled out so the result is the unfused ``running * (1 - momentum) + stat *
# factor``'s bits
_RUNNING = cupy.RawKernel(r"""
extern "C" __global__ void volta_bn_running(
        const float* rm, const float* rv, const float* mean, const float* var, float keep,
        float fm, float fv, int c, float* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c) return;
    out[i] = __fadd_rn(__fmul_rn(rm[i], keep), __fmul_rn(mean[i], fm));
    out[c + i] = __fadd_rn(__fmul_rn(rv[i], keep), __fmul_rn(var[i], fv));
}
""", "volta_bn_running")


def batch_norm_running(xp: Any, running_mean: Any, running_var: Any, mean: Any, var: Any, *,
                       momentum: float, n: int) -> tuple:
    """Same contract as ``volta_core.ops.nn.batch_norm_running``."""
    arrays = (running_mean, running_var, mean, var)
    if not all(isinstance(a, cupy.ndarray) and a.dtype == _F32 and a.shape == mean.shape
               and a.ndim == 1 and a.flags.c_contiguous for a in arrays):
        return generic.batch_norm_running(xp, running_mean, running_var, mean, var,
                                          momentum=momentum, n=n)
    c = mean.shape[0]
    out = cupy.empty((2, c), dtype=_F32)
    _RUNNING(((c + 127) // 128,), (128,),
             (running_mean, running_var, mean, var, np.float32(1.0 - momentum),
              np.float32(momentum), np.float32(momentum * n / (n - 1)), np.int32(c), out))
    return out[0], out[1]
