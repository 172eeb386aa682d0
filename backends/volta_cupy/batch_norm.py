"""Training batch norm on CUDA: per-channel partial sums over ``(channel, chunk)`` blocks,
a per-channel finalize, and one elementwise pass. The finalize runs in the launch of the
sums, by each channel's last block to finish (a counter per channel, the only atomic: it
picks which block sums, not the order of the sums), together with the running
statistics' update: two launches forward and two backward, each launch costing the host
several microseconds. The results are deterministic, and the same bits as the separate
finalize launch that serves when no counter is at hand.

float32 and float64 inputs take parameters of their own dtype. A bfloat16 input takes
float32 (or no) parameters, as PyTorch's mixed-dtype batch norm does: it is read as
bfloat16, every sum and the statistics are float32, and ``y`` (or the input gradient)
is written as bfloat16, so autocast needs no casts around the layer. float16 inputs are
computed in float32; other inputs go to the generic fallback of ``volta_core.ops``.
"""

from __future__ import annotations

import threading
from typing import Any

import cupy
import numpy as np

from volta_core.ops import nn as generic

from ._util import BFLOAT16, acc_type, contiguous, contiguous_flag
from .launch import launch
from .rows import _raw

_F32_64 = (np.dtype("float32"), np.dtype("float64"))
_F32 = np.dtype("float32")

_BN_FINISH = r"""
// a channel's statistics (rows mean, biased variance, 1/std of ``stats``) and gradient
// sums (rows sum(g), sum(g * xhat)) from its two sums; the roundings spelled out so the
// one-launch and the two-launch paths give the same bits
__device__ __forceinline__ void bn_stats_of(double s1, double s2, double m, A shift,
                                            double eps, int c, int i, A* stats) {
    const double mu = __ddiv_rn(s1, m);
    double v = __dsub_rn(__ddiv_rn(s2, m), __dmul_rn(mu, mu));
    if (v < 0) v = 0;
    stats[i] = (A)__dadd_rn((double)shift, mu);
    stats[c + i] = (A)v;
    stats[2 * c + i] = (A)__ddiv_rn(1.0, __dsqrt_rn(__dadd_rn(v, eps)));
}

__device__ __forceinline__ void bn_grad_sums_of(double s1, double s2, const A* rstd, int c,
                                                int i, A* sums) {
    sums[i] = (A)s1;
    sums[c + i] = (A)__dmul_rn(s2, (double)rstd[i]);
}
"""

_BN_PARTIAL = _BN_FINISH + r"""
extern "C" __global__ void volta_bn_partial(
        const X* x, const X* g, const A* center, long long nb, int c, long long hw,
        long long chunk, double* part, int mode, unsigned int* counter, double eps,
        const A* rstd, A* out, const float* rm, const float* rv, float keep, float fm,
        float fv, float* running) {
    // mode 0: sums of (x - shift) and (x - shift)^2, shift = x[0, ch, 0];
    // mode 1: sums of g and g * (x - center[ch]).
    // With a counter, the channel's last block to finish also sums the partial sums into
    // ``out`` (volta_bn_stats's or volta_bn_grad_stats's results, the same bits) and, in
    // mode 0 with ``running``, the running statistics as volta_bn_running: one launch
    // instead of three.
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
        if (counter != nullptr) {
            __threadfence();  // this block's sums are visible before it is counted
            if (atomicAdd(counter + ch, 1u) == gridDim.y - 1) {
                counter[ch] = 0u;  // ready for the next launch on this stream
                double a = 0, b = 0;
                for (int k = 0; k < (int)gridDim.y; ++k) {  // L2 reads: other blocks' sums
                    a += __ldcg(part + ((long long)ch * gridDim.y + k) * 2);
                    b += __ldcg(part + ((long long)ch * gridDim.y + k) * 2 + 1);
                }
                if (mode == 0) {
                    bn_stats_of(a, b, (double)m, shift, eps, c, ch, out);
                    if (running != nullptr) {
                        running[ch] = __fadd_rn(__fmul_rn(rm[ch], keep),
                                                __fmul_rn((float)out[ch], fm));
                        running[c + ch] = __fadd_rn(__fmul_rn(rv[ch], keep),
                                                    __fmul_rn((float)out[c + ch], fv));
                    }
                } else {
                    bn_grad_sums_of(a, b, rstd, c, ch, out);
                }
            }
        }
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
_BN_STATS = _BN_FINISH + _SUM_PARTS + r"""
extern "C" __global__ void volta_bn_stats(
        const double* part, const X* x, int parts, int c, double m, long long hw, double eps,
        A* stats) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c) return;
    double s1, s2;
    sum_parts(part, parts, i, &s1, &s2);
    bn_stats_of(s1, s2, m, load(x[(long long)i * hw]), eps, c, i, stats);
}
"""

# one thread per channel: rows 0-1 of ``sums`` are sum(g) and sum(g * xhat)
_BN_GRAD_STATS = _BN_FINISH + _SUM_PARTS + r"""
extern "C" __global__ void volta_bn_grad_stats(
        const double* part, int parts, int c, const A* rstd, A* sums) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c) return;
    double s1, s2;
    sum_parts(part, parts, i, &s1, &s2);
    bn_grad_sums_of(s1, s2, rstd, c, i, sums);
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


def _passes(size: int) -> tuple[bool, Any, int, int]:
    """(wide, index scalar type, blocks, threads) of an elementwise pass over ``size``."""
    wide = size >= 2**31
    return wide, _WIDE[wide][1], max(1, min((size + 255) // 256, 1 << 20)), 256


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


_NULL = np.uint64(0)  # a null pointer argument
_MAX_STREAMS = 64  # counters kept; beyond, the unfused launches serve
# (device, stream, thread) -> zeroed uint32 per channel; the thread too, because one
# handle (the per-thread default stream's) names a different stream in each thread
_counters: dict[tuple[int, int, int], Any] = {}


def _counter() -> Any:
    """The current stream's per-channel block counters (each launch leaves them zero), or
    None: made outside captures only (:func:`prepare` makes a capture stream's first)."""
    stream = cupy.cuda.get_current_stream()
    key = (cupy.cuda.runtime.getDevice(), stream.ptr, threading.get_ident())
    counter = _counters.get(key)
    if counter is None and len(_counters) < _MAX_STREAMS and not (
            stream.ptr and stream.is_capturing()):
        # our own memory, outside every pool: it lives as long as the process
        size = 65536 * 4
        ptr = cupy.cuda.runtime.malloc(size)
        cupy.cuda.runtime.memset(ptr, 0, size)
        mem = cupy.cuda.MemoryPointer(cupy.cuda.UnownedMemory(ptr, size, None), 0)
        counter = _counters[key] = cupy.ndarray((65536,), cupy.uint32, mem)
    return counter


def prepare(stream: Any) -> None:
    """Make ``stream``'s counters now, before it captures a CUDA graph."""
    with stream:
        _counter()


def _bn_sums(x: Any, g: Any, center: Any, mode: int, acc: str, out: Any, *, eps: float = 0.0,
             rstd: Any = None, running: tuple | None = None) -> Any:
    """Per-channel sums of ``x`` (mode 0: the statistics, into ``out`` rows mean, var, 1/std)
    or of ``g`` against ``x`` (mode 1: sum(g) and sum(g * xhat) into ``out`` rows 0-1, with
    ``center`` the mean and ``rstd``), in one launch where the stream has counters, else
    two. ``running``: ``(running_mean, running_var, momentum, n)`` float32 arrays updated
    in the same launch (mode 0, float32 statistics, one launch only); returns the new
    ``(2, C)`` running statistics, or None when not updated."""
    n, c = x.shape[:2]
    hw = x.size // (n * c)
    m = n * hw
    parts = max(1, min((m + 4095) // 4096, max(1, 1024 // c)))
    chunk = (m + parts - 1) // parts
    part = cupy.empty((c, parts, 2), dtype=cupy.float64)
    bf16 = x.dtype == BFLOAT16
    counter = _counter()
    new = None
    if counter is not None and running is not None:
        rm, rv, momentum, count = running
        new = cupy.empty((2, c), dtype=_F32)
        extra = (rm, rv, np.float32(1.0 - momentum), np.float32(momentum),
                 np.float32(momentum * count / (count - 1)), new)
    else:
        extra = (_NULL, _NULL, np.float32(0), np.float32(0), np.float32(0), _NULL)
    launch(_raw(_BN_PARTIAL, "volta_bn_partial", acc, bf16), c, 256,
           (x, x if g is None else g, part if center is None else center, np.int64(n),
            np.int32(c), np.int64(hw), np.int64(chunk), part, np.int32(mode),
            _NULL if counter is None else counter, np.float64(eps),
            _NULL if rstd is None else rstd, out, *extra), parts)
    if counter is None:
        if mode == 0:
            launch(_raw(_BN_STATS, "volta_bn_stats", acc, bf16), (c + 127) // 128, 128,
                   (part, x, np.int32(parts), np.int32(c), np.float64(m), np.int64(hw),
                    np.float64(eps), out))
        else:
            launch(_raw(_BN_GRAD_STATS, "volta_bn_grad_stats", acc, bf16), (c + 127) // 128,
                   128, (part, np.int32(parts), np.int32(c), rstd, out))
    return new


def batch_norm(xp: Any, x: Any, weight: Any = None, bias: Any = None, *,
               eps: float = 1e-5) -> tuple:
    """Same contract as ``volta_core.ops.nn.batch_norm``: ``(y, mean, var, rstd)``."""
    return batch_norm_train(xp, x, weight, bias, eps=eps)[:4]


def batch_norm_train(xp: Any, x: Any, weight: Any = None, bias: Any = None,
                     running_mean: Any = None, running_var: Any = None, *, eps: float = 1e-5,
                     momentum: float = 0.1) -> tuple:
    """Same contract as ``volta_core.ops.nn.batch_norm_train``: the float32 running
    statistics are updated in the launch that computes the batch's."""
    if isinstance(x, cupy.ndarray) and x.dtype == np.float16:
        y, *rest = batch_norm_train(xp, x.astype(_F32), weight, bias, running_mean,
                                    running_var, eps=eps, momentum=momentum)
        return (y.astype(x.dtype), *rest)
    sd = _stats_dtype(x, weight, bias)
    if sd is None:
        return generic.batch_norm_train(xp, x, weight, bias, running_mean, running_var,
                                        eps=eps, momentum=momentum)
    x = contiguous(x)
    n, c = x.shape[:2]
    hw = x.size // (n * c)
    acc, bf16 = acc_type(x.dtype), x.dtype == BFLOAT16
    stats = cupy.empty((3, c), dtype=sd)
    fuse = (sd == _F32 and running_mean is not None and running_var is not None
            and _running_ok((running_mean, running_var), c))
    new = _bn_sums(x, None, None, 0, acc, stats, eps=eps,
                   running=(running_mean, running_var, momentum, n * hw) if fuse else None)
    mean, var, rstd = stats
    wide, idx, grid, block = _passes(x.size)
    y = cupy.empty(x.shape, dtype=x.dtype)
    launch(_raw(_APPLY[wide], "volta_bn_apply", acc, bf16), grid, block,
           (x, mean, rstd, mean if weight is None else contiguous(weight),
            mean if bias is None else contiguous(bias), idx(x.size), idx(hw), idx(c),
            np.int32(weight is not None), np.int32(bias is not None), y))
    if new is not None:
        return y, mean, var, rstd, new[0], new[1]
    if running_mean is None and running_var is None:
        return y, mean, var, rstd, None, None
    return (y, mean, var, rstd, *batch_norm_running(xp, running_mean, running_var, mean, var,
                                                    momentum=momentum, n=n * hw))


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
    sums = cupy.empty((2, c), dtype=sd)
    _bn_sums(x, g, mean, 1, acc, sums, rstd=rstd)
    gx = None
    if needs[0]:
        wide, idx, grid, block = _passes(x.size)
        gx = cupy.empty(x.shape, dtype=x.dtype)
        inv_m = (np.float64 if acc == "double" else np.float32)(1.0 / (n * hw))
        launch(_raw(_GRAD_INPUT[wide], "volta_bn_grad_input", acc, bf16), grid, block,
               (g, x, mean, rstd, mean if weight is None else contiguous(weight), sums,
                idx(x.size), idx(hw), idx(c), np.int32(weight is not None), inv_m, gx))
    sg, sgx = sums
    return gx, (sgx if needs[1] else None), (sg if needs[2] else None)


def _running_ok(arrays: tuple, c: int) -> bool:
    """Whether the running-statistics kernel serves these buffers: float32, ``(C,)``,
    contiguous."""
    for a in arrays:
        if not (isinstance(a, cupy.ndarray) and a.dtype == _F32 and a.shape == (c,)
                and a.ndim == 1 and contiguous_flag(a)):
            return False
    return True


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
    if not _running_ok((running_mean, running_var, mean, var), mean.shape[0]):
        return generic.batch_norm_running(xp, running_mean, running_var, mean, var,
                                          momentum=momentum, n=n)
    c = mean.shape[0]
    out = cupy.empty((2, c), dtype=_F32)
    launch(_RUNNING, (c + 127) // 128, 128,
           (running_mean, running_var, mean, var, np.float32(1.0 - momentum),
            np.float32(momentum), np.float32(momentum * n / (n - 1)), np.int32(c), out))
    return out[0], out[1]
