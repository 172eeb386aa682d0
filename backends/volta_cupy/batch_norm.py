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

from ._util import BFLOAT16, acc_type, contiguous, elementwise
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

_BN_FINAL_STATS = """
double s1 = 0, s2 = 0;
for (int k = 0; k < parts; ++k) {
    s1 += part[(i * parts + k) * 2];
    s2 += part[(i * parts + k) * 2 + 1];
}
const double mu = s1 / (double)m;
double v = s2 / (double)m - mu * mu;
if (v < 0) v = 0;
mean = (W)((double)(A)x[(long long)i * hw] + mu);
var = (W)v;
rstd = (W)(1.0 / sqrt(v + (double)eps));
"""

_BN_FINAL_GRAD = """
double s1 = 0, s2 = 0;
for (int k = 0; k < parts; ++k) {
    s1 += part[(i * parts + k) * 2];
    s2 += part[(i * parts + k) * 2 + 1];
}
sg = (W)s1;
sgx = (W)(s2 * (double)rstd);
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
    acc = acc_type(x.dtype)
    part, parts = _bn_partials(x, None, None, 0, acc)
    final = elementwise("bn_stats", acc, "raw float64 part, raw T x, int32 parts, float64 m, "
                        "int64 hw, float64 eps", "W mean, W var, W rstd", _BN_FINAL_STATS)
    mean, var, rstd = (cupy.empty((c,), dtype=sd) for _ in range(3))
    final(part, x, np.int32(parts), float(n * hw), np.int64(hw), float(eps), mean, var, rstd)
    idx = _idx(x.size)
    apply = elementwise("bn_apply" + idx[0], acc, "T x, raw W mean, raw W rstd, raw W w, raw W b, "
                        "int64 hw, int64 c, int32 has_w, int32 has_b", "T y",
                        _BN_APPLY.replace("IDX", idx[1]))
    y = cupy.empty(x.shape, dtype=x.dtype)
    apply(x, mean, rstd, mean if weight is None else contiguous(weight),
          mean if bias is None else contiguous(bias), np.int64(hw), np.int64(c),
          np.int32(weight is not None), np.int32(bias is not None), y)
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
    acc = acc_type(x.dtype)
    part, parts = _bn_partials(x, g, mean, 1, acc)
    final = elementwise("bn_grad_stats", acc, "raw float64 part, int32 parts, W rstd",
                        "W sg, W sgx", _BN_FINAL_GRAD)
    sg = cupy.empty((c,), dtype=sd)
    sgx = cupy.empty((c,), dtype=sd)
    final(part, np.int32(parts), rstd, sg, sgx)
    gx = None
    if needs[0]:
        idx = _idx(x.size)
        kern = elementwise("bn_grad_input" + idx[0], acc,
                           "T g, T x, raw W mean, raw W rstd, raw W w, raw W sg, raw W sgx, "
                           "int64 hw, int64 c, int32 has_w, F inv_m", "T gx",
                           _BN_GRAD_INPUT.replace("IDX", idx[1]))
        gx = cupy.empty(x.shape, dtype=x.dtype)
        kern(g, x, mean, rstd, mean if weight is None else contiguous(weight), sg, sgx,
             np.int64(hw), np.int64(c), np.int32(weight is not None), 1.0 / (n * hw), gx)
    return gx, (sgx if needs[1] else None), (sg if needs[2] else None)


# the running statistics' update, both buffers in one launch; the roundings are spelled
# out so the result is the unfused ``running * (1 - momentum) + stat * factor``'s bits
_RUNNING = cupy.ElementwiseKernel(
    "float32 rm, float32 rv, float32 mean, float32 var, float32 keep, float32 fm, float32 fv",
    "float32 rm2, float32 rv2",
    """
    rm2 = __fadd_rn(__fmul_rn(rm, keep), __fmul_rn(mean, fm));
    rv2 = __fadd_rn(__fmul_rn(rv, keep), __fmul_rn(var, fv));
    """, "volta_bn_running")


def batch_norm_running(xp: Any, running_mean: Any, running_var: Any, mean: Any, var: Any, *,
                       momentum: float, n: int) -> tuple:
    """Same contract as ``volta_core.ops.nn.batch_norm_running``."""
    arrays = (running_mean, running_var, mean, var)
    if not all(isinstance(a, cupy.ndarray) and a.dtype == _F32 and a.shape == mean.shape
               for a in arrays):
        return generic.batch_norm_running(xp, running_mean, running_var, mean, var,
                                          momentum=momentum, n=n)
    return _RUNNING(running_mean, running_var, mean, var, np.float32(1.0 - momentum),
                    np.float32(momentum), np.float32(momentum * n / (n - 1)))
