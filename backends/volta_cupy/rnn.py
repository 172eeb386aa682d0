"""The LSTM, GRU and Elman RNN time loops on CUDA (``volta_core.nn.fused_rnn``'s
``lstm_steps``, ``gru_steps``, ``rnn_steps`` and their ``_backward``): two launches per
time step, one cuBLAS product and one cell kernel.

The generic loops take about a dozen CuPy calls per step (the gates' sums, three
nonlinearities, the cell and hidden state, and the stacking at the end), each a kernel
launch of ~15 us host time: a 35-step LSTM language model spent ~27 ms per training step
where PyTorch takes ~4. Here the cell kernel does a step's elementwise work at once and
writes straight into the stacked outputs, and the recurrent product goes to cuBLAS
through :func:`volta_cupy.blas.matmul` (so the loops can also be captured in a CUDA graph).

The arithmetic is the generic loops' (the LSTM's sigmoid as ``1 / (1 + exp(-z))``, the
GRU's from ``exp(-|z|)``, the same sums and products in the same order); the compiler may
contract a multiply and an add into one rounding, so values can differ from the generic
loops' by an ulp. float32 and float64
C-contiguous operands; anything else runs the generic loops.
"""

from __future__ import annotations

import functools
from typing import Any

import cupy
import numpy as np

from volta_core.nn import fused_rnn as generic

from . import blas
from ._util import contiguous_flag
from .launch import launch

_F32_64 = (np.dtype("float32"), np.dtype("float64"))
_THREADS = 256

_CELL = r"""
extern "C" __global__ void volta_lstm_cell(const T* gates, const T* xw, const T* c0, T* out,
                                           T* sigs, T* ggs, T* tcs, T* hbuf, int B, int H,
                                           int t, int tprev) {
  const long long n = (long long)B * H;
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n;
       k += (long long)gridDim.x * blockDim.x) {
    const long long b = k / H, j = k % H;
    const long long r = (long long)t * B + b;  // this step's row in the (T, B, .) arrays
    const T* g = gates + b * 4 * H;
    const T* x = xw + r * 4 * H;
    const T i = (T)1 / ((T)1 + exp(-(x[j] + g[j])));
    const T f = (T)1 / ((T)1 + exp(-(x[H + j] + g[H + j])));
    const T o = (T)1 / ((T)1 + exp(-(x[2 * H + j] + g[2 * H + j])));
    const T gg = tanh(x[3 * H + j] + g[3 * H + j]);
    const T cp = tprev < 0 ? c0[k] : out[((long long)tprev * B + b) * 2 * H + H + j];
    const T c = f * cp + i * gg;
    const T tc = tanh(c);
    const T h = o * tc;
    sigs[r * 3 * H + j] = i;
    sigs[r * 3 * H + H + j] = f;
    sigs[r * 3 * H + 2 * H + j] = o;
    ggs[r * H + j] = gg;
    tcs[r * H + j] = tc;
    out[r * 2 * H + j] = h;
    out[r * 2 * H + H + j] = c;
    hbuf[k] = h;
  }
}
"""

_CELL_BACKWARD = r"""
extern "C" __global__ void volta_lstm_cell_backward(const T* g, const T* dtc, const T* fac,
                                                    const T* f, T* dgates, T* dh, T* dc,
                                                    int B, int H, int t) {
  const long long n = (long long)B * H;
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n;
       k += (long long)gridDim.x * blockDim.x) {
    const long long b = k / H, j = k % H;
    const long long r = (long long)t * B + b;
    // dh and dc hold the next step's gradients (zeros before the last step)
    const T dhv = g[r * 2 * H + j] + dh[k];
    T dcv = g[r * 2 * H + H + j] + dc[k];
    dcv = dcv + dhv * dtc[r * H + j];
    const T* fr = fac + r * 4 * H;
    T* d = dgates + r * 4 * H;
    d[j] = dcv * fr[j];
    d[H + j] = dcv * fr[H + j];
    d[2 * H + j] = dhv * fr[2 * H + j];
    d[3 * H + j] = dcv * fr[3 * H + j];
    dc[k] = dcv * f[r * H + j];
  }
}
"""

_RNN_CELL = r"""
extern "C" __global__ void volta_rnn_cell(const T* pre, const T* xw, T* out, int n, int t,
                                          int relu) {
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n;
       k += (long long)gridDim.x * blockDim.x) {
    const T p = xw[(long long)t * n + k] + pre[k];
    out[(long long)t * n + k] = relu ? (p < (T)0 ? (T)0 : p) : tanh(p);
  }
}
"""

_RNN_CELL_BACKWARD = r"""
extern "C" __global__ void volta_rnn_cell_backward(const T* g, const T* out, T* dpre, T* dh,
                                                   int n, int t, int relu) {
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n;
       k += (long long)gridDim.x * blockDim.x) {
    const long long r = (long long)t * n + k;
    const T d = g[r] + dh[k];  // dh: the next step's gradient (zeros before the last step)
    const T y = out[r];
    dpre[r] = relu ? (y <= (T)0 ? (T)0 : d) : d * ((T)1 - y * y);
  }
}
"""

_GRU_CELL = r"""
__device__ __forceinline__ T sigm(T x) {  // as the generic _sigmoid: exp of -|x| only
  const T e = exp(-fabs(x));
  const T d = (T)1 + e;
  return x >= (T)0 ? (T)1 / d : e / d;
}
extern "C" __global__ void volta_gru_cell(const T* gh, const T* bhh, const T* xw, const T* h0,
                                          T* out, T* rz, T* ns, T* hns, int B, int H, int t,
                                          int tprev) {
  const long long n = (long long)B * H;
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n;
       k += (long long)gridDim.x * blockDim.x) {
    const long long b = k / H, j = k % H;
    const long long r = (long long)t * B + b;
    const T* hh = gh + b * 3 * H;
    const T* x = xw + r * 3 * H;
    T ghr = hh[j], ghz = hh[H + j], ghn = hh[2 * H + j];
    if (bhh) { ghr = ghr + bhh[j]; ghz = ghz + bhh[H + j]; ghn = ghn + bhh[2 * H + j]; }
    const T rv = sigm(x[j] + ghr);
    const T zv = sigm(x[H + j] + ghz);
    const T nv = tanh(x[2 * H + j] + rv * ghn);
    const T hp = tprev < 0 ? h0[k] : out[(long long)tprev * n + k];
    out[r * H + j] = nv + zv * (hp - nv);
    rz[r * 2 * H + j] = rv;
    rz[r * 2 * H + H + j] = zv;
    ns[r * H + j] = nv;
    hns[r * H + j] = ghn;
  }
}
"""

_GRU_CELL_BACKWARD = r"""
extern "C" __global__ void volta_gru_cell_backward(const T* g, const T* out, const T* h0,
                                                   const T* rz, const T* ns, const T* hns,
                                                   T* dgi, T* dgh, T* dhz, const T* mm,
                                                   int B, int H, int t, int tprev) {
  const long long n = (long long)B * H;
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n;
       k += (long long)gridDim.x * blockDim.x) {
    const long long b = k / H, j = k % H;
    const long long r = (long long)t * B + b;
    // the next step's dh * z and dgh @ w_hh (zeros before the last step)
    const T dh = g[r * H + j] + (dhz[k] + mm[k]);
    const T rv = rz[r * 2 * H + j], zv = rz[r * 2 * H + H + j];
    const T nv = ns[r * H + j];
    const T hp = tprev < 0 ? h0[k] : out[(long long)tprev * n + k];
    const T dn = dh * ((T)1 - zv);
    const T dz = dh * (hp - nv);
    const T dn_pre = dn * ((T)1 - nv * nv);
    const T dr = dn_pre * hns[r * H + j];
    const T dr_pre = dr * rv * ((T)1 - rv);
    const T dz_pre = dz * zv * ((T)1 - zv);
    T* di = dgi + r * 3 * H;
    T* dg = dgh + r * 3 * H;
    di[j] = dr_pre; di[H + j] = dz_pre; di[2 * H + j] = dn_pre;
    dg[j] = dr_pre; dg[H + j] = dz_pre; dg[2 * H + j] = dn_pre * rv;
    dhz[k] = dh * zv;
  }
}
"""


@functools.cache
def _kernel(source: str, name: str, dtype: np.dtype) -> cupy.RawKernel:
    ctype = "double" if dtype == np.float64 else "float"
    return cupy.RawKernel(f"typedef {ctype} T;\n" + source, name)


def _plain(*arrays: Any) -> bool:
    """C-contiguous float32/float64 CuPy arrays of one dtype."""
    dt = arrays[0].dtype
    return dt in _F32_64 and all(
        isinstance(a, cupy.ndarray) and a.dtype == dt and contiguous_flag(a) for a in arrays)


def _grid(n: int) -> int:
    return max(1, min(-(-n // _THREADS), 1024))


def lstm_steps(xp: Any, xw: Any, h0: Any, c0: Any, w_hh_t: Any, *,
               reverse: bool = False) -> tuple:
    """See ``volta_core.nn.fused_rnn.lstm_steps``."""
    if not _plain(xw, h0, c0, w_hh_t) or xw.size == 0:
        return generic.lstm_steps(xp, xw, h0, c0, w_hh_t, reverse=reverse)
    steps, batch, four = xw.shape
    hid = four // 4
    dt = xw.dtype
    out = cupy.empty((steps, batch, 2 * hid), dt)
    sigs = cupy.empty((steps, batch, 3 * hid), dt)
    ggs, tcs = cupy.empty((steps, batch, hid), dt), cupy.empty((steps, batch, hid), dt)
    gates = cupy.empty((batch, four), dt)
    hbuf = cupy.empty((batch, hid), dt)
    kern = _kernel(_CELL, "volta_lstm_cell", dt)
    grid = _grid(batch * hid)
    h, tprev = h0, -1
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        blas.matmul(h, w_hh_t, out=gates)
        launch(kern, grid, _THREADS, (gates, xw, c0, out, sigs, ggs, tcs, hbuf,
                                      np.int32(batch), np.int32(hid), np.int32(t),
                                      np.int32(tprev)))
        h, tprev = hbuf, t
    return out, sigs, ggs, tcs


def lstm_steps_backward(xp: Any, g: Any, sigs: Any, ggs: Any, tcs: Any, c_prev: Any,
                        w_hh: Any, *, reverse: bool = False, then: Any = None) -> tuple:
    """See ``volta_core.nn.fused_rnn.lstm_steps_backward``."""
    args = (xp, g, sigs, ggs, tcs, c_prev, w_hh)
    if not (isinstance(g, cupy.ndarray) and isinstance(sigs, cupy.ndarray)) or g.size == 0:
        return generic.lstm_steps_backward(*args, reverse=reverse, then=then)
    dtc, fac, f = generic.lstm_gate_factors(xp, sigs, ggs, tcs, c_prev)
    g, f = cupy.ascontiguousarray(g), cupy.ascontiguousarray(f)
    if not _plain(g, dtc, fac, f, w_hh):
        return generic.lstm_steps_backward(*args, reverse=reverse, then=then)
    steps, batch, two = g.shape
    hid = two // 2
    dt = g.dtype
    dgates = cupy.empty((steps, batch, 4 * hid), dt)
    dh, dc = cupy.zeros((batch, hid), dt), cupy.zeros((batch, hid), dt)
    kern = _kernel(_CELL_BACKWARD, "volta_lstm_cell_backward", dt)
    grid = _grid(batch * hid)
    for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
        launch(kern, grid, _THREADS, (g, dtc, fac, f, dgates, dh, dc, np.int32(batch),
                                      np.int32(hid), np.int32(t)))
        blas.matmul(dgates[t], w_hh, out=dh)
    if then is not None:
        then(0, steps, dgates)
    return dgates, dh, dc


def rnn_steps(xp: Any, xw: Any, h0: Any, w_hh_t: Any, *, relu: bool = False,
              reverse: bool = False) -> Any:
    """See ``volta_core.nn.fused_rnn.rnn_steps``."""
    if not _plain(xw, h0, w_hh_t) or xw.size == 0:
        return generic.rnn_steps(xp, xw, h0, w_hh_t, relu=relu, reverse=reverse)
    steps, batch, hid = xw.shape
    out = cupy.empty(xw.shape, xw.dtype)
    pre = cupy.empty((batch, hid), xw.dtype)
    kern = _kernel(_RNN_CELL, "volta_rnn_cell", xw.dtype)
    n = batch * hid
    h = h0
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        blas.matmul(h, w_hh_t, out=pre)
        launch(kern, _grid(n), _THREADS,
               (pre, xw, out, np.int32(n), np.int32(t), np.int32(relu)))
        h = out[t]
    return out


def rnn_steps_backward(xp: Any, g: Any, out: Any, w_hh: Any, *, relu: bool = False,
                       reverse: bool = False, then: Any = None) -> tuple:
    """See ``volta_core.nn.fused_rnn.rnn_steps_backward``."""
    if isinstance(g, cupy.ndarray):
        g = cupy.ascontiguousarray(g)
    if not _plain(g, out, w_hh) or g.size == 0:
        return generic.rnn_steps_backward(xp, g, out, w_hh, relu=relu, reverse=reverse,
                                          then=then)
    steps, batch, hid = g.shape
    dpre = cupy.empty(g.shape, g.dtype)
    dh = cupy.zeros((batch, hid), g.dtype)
    kern = _kernel(_RNN_CELL_BACKWARD, "volta_rnn_cell_backward", g.dtype)
    n = batch * hid
    for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
        launch(kern, _grid(n), _THREADS,
               (g, out, dpre, dh, np.int32(n), np.int32(t), np.int32(relu)))
        blas.matmul(dpre[t], w_hh, out=dh)
    if then is not None:
        then(0, steps, dpre)
    return dpre, dh


def gru_steps(xp: Any, xw: Any, h0: Any, w_hh_t: Any, b_hh: Any, *,
              reverse: bool = False) -> tuple:
    """See ``volta_core.nn.fused_rnn.gru_steps``."""
    arrays = (xw, h0, w_hh_t) if b_hh is None else (xw, h0, w_hh_t, b_hh)
    if not _plain(*arrays) or xw.size == 0:
        return generic.gru_steps(xp, xw, h0, w_hh_t, b_hh, reverse=reverse)
    steps, batch, three = xw.shape
    hid = three // 3
    dt = xw.dtype
    out = cupy.empty((steps, batch, hid), dt)
    rz = cupy.empty((steps, batch, 2 * hid), dt)
    ns, hns = cupy.empty((steps, batch, hid), dt), cupy.empty((steps, batch, hid), dt)
    gh = cupy.empty((batch, three), dt)
    kern = _kernel(_GRU_CELL, "volta_gru_cell", dt)
    grid = _grid(batch * hid)
    h, tprev = h0, -1
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        blas.matmul(h, w_hh_t, out=gh)
        bias = np.uintp(0) if b_hh is None else b_hh  # a null pointer: no bias
        launch(kern, grid, _THREADS, (gh, bias, xw, h0, out, rz, ns, hns, np.int32(batch),
                                      np.int32(hid), np.int32(t), np.int32(tprev)))
        h, tprev = out[t], t
    return out, rz, ns, hns


def gru_steps_backward(xp: Any, g: Any, out: Any, h0: Any, rz: Any, n: Any, hn: Any,
                       w_hh: Any, *, reverse: bool = False, then: Any = None) -> tuple:
    """See ``volta_core.nn.fused_rnn.gru_steps_backward``."""
    if isinstance(g, cupy.ndarray):
        g = cupy.ascontiguousarray(g)
    if not _plain(g, out, h0, rz, n, hn, w_hh) or g.size == 0:
        return generic.gru_steps_backward(xp, g, out, h0, rz, n, hn, w_hh, reverse=reverse,
                                          then=then)
    steps, batch, hid = g.shape
    dt = g.dtype
    dgi = cupy.empty((steps, batch, 3 * hid), dt)
    dgh = cupy.empty((steps, batch, 3 * hid), dt)
    dhz, mm = cupy.zeros((batch, hid), dt), cupy.zeros((batch, hid), dt)
    kern = _kernel(_GRU_CELL_BACKWARD, "volta_gru_cell_backward", dt)
    grid = _grid(batch * hid)
    order = list(range(steps - 1, -1, -1) if reverse else range(steps))
    for k in range(steps - 1, -1, -1):
        t = order[k]
        tprev = order[k - 1] if k else -1
        launch(kern, grid, _THREADS, (g, out, h0, rz, n, hn, dgi, dgh, dhz, mm,
                                      np.int32(batch), np.int32(hid), np.int32(t),
                                      np.int32(tprev)))
        blas.matmul(dgh[t], w_hh, out=mm)
    if then is not None:
        then(0, steps, dgi, dgh)
    return dgi, dgh, dhz + mm
