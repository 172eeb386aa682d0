"""The LSTM and Elman RNN time loops of the CPU backend (``volta_core.nn.fused_rnn``'s
``lstm_steps``, ``lstm_steps_backward``, ``rnn_steps`` and ``rnn_steps_backward``) with
every step's results written in place.

The generic loops allocate each step's arrays and stack them at the end; here each step
writes straight into the stacked outputs, through preallocated buffers, so a step is one
GEMM and about ten small ufunc calls with no allocation. The operations, their order and
so the values are the generic loops' own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from volta_core.nn import fused_rnn as generic

from .namespace import matmul_2d
from .parallel import one_blas_thread


def _plain(*arrays: Any) -> bool:
    """True for NumPy arrays of one float32/float64 dtype (others run the generic loop)."""
    dt = arrays[0].dtype
    return all(type(a) is np.ndarray and a.dtype == dt for a in arrays) and \
        dt in (np.float32, np.float64)


def lstm_steps(xp: Any, xw: Any, h0: Any, c0: Any, w_hh_t: Any, *,
               reverse: bool = False) -> tuple:
    """See ``volta_core.nn.fused_rnn.lstm_steps``."""
    if not _plain(xw, h0, c0, w_hh_t):
        return generic.lstm_steps(xp, xw, h0, c0, w_hh_t, reverse=reverse)
    steps, batch, four = xw.shape
    hid = four // 4
    dt = xw.dtype
    out = np.empty((steps, batch, 2 * hid), dt)
    sigs = np.empty((steps, batch, 3 * hid), dt)
    ggs, tcs = np.empty((steps, batch, hid), dt), np.empty((steps, batch, hid), dt)
    gates, ig = np.empty((batch, four), dt), np.empty((batch, hid), dt)
    h, c = h0, c0
    with one_blas_thread():  # held once for the loop's products
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            matmul_2d(h, w_hh_t, out=gates)  # the generic loop's xp.matmul
            gates += xw[t]
            sig, gg, tc = sigs[t], ggs[t], tcs[t]
            np.negative(gates[:, :3 * hid], out=sig)  # i, f, o: 1 / (1 + exp(-x))
            np.exp(sig, out=sig)
            sig += 1.0
            np.divide(1.0, sig, out=sig)
            np.tanh(gates[:, 3 * hid:], out=gg)
            h_t, c_t = out[t, :, :hid], out[t, :, hid:]
            np.multiply(sig[:, hid:2 * hid], c, out=c_t)  # f * c + i * g
            np.multiply(sig[:, :hid], gg, out=ig)
            c_t += ig
            np.tanh(c_t, out=tc)
            np.multiply(sig[:, 2 * hid:], tc, out=h_t)
            h, c = h_t, c_t
    return out, sigs, ggs, tcs


def lstm_steps_backward(xp: Any, g: Any, dtc: Any, fac: Any, f: Any, w_hh: Any, *,
                        reverse: bool = False) -> tuple:
    """See ``volta_core.nn.fused_rnn.lstm_steps_backward``."""
    if not _plain(g, dtc, fac, f, w_hh):
        return generic.lstm_steps_backward(xp, g, dtc, fac, f, w_hh, reverse=reverse)
    steps, batch, two = g.shape
    hid = two // 2
    dt = g.dtype
    dgates = np.empty((steps, batch, 4 * hid), dt)
    dh_next, dc_next = np.empty((batch, hid), dt), np.empty((batch, hid), dt)
    dh, dc, tmp = (np.empty((batch, hid), dt) for _ in range(3))
    first = True
    with one_blas_thread():  # held once for the loop's products
        for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
            if first:
                np.copyto(dh, g[t, :, :hid])
                np.copyto(dc, g[t, :, hid:])
                first = False
            else:
                np.add(g[t, :, :hid], dh_next, out=dh)
                np.add(g[t, :, hid:], dc_next, out=dc)
            np.multiply(dh, dtc[t], out=tmp)
            dc += tmp
            d, ft = dgates[t], fac[t]
            for k, src in enumerate((dc, dc, dh, dc)):  # (dc, dc, dh, dc) * fac
                np.multiply(src, ft[:, k * hid:(k + 1) * hid], out=d[:, k * hid:(k + 1) * hid])
            np.multiply(dc, f[t], out=dc_next)
            matmul_2d(d, w_hh, out=dh_next)
    return dgates, dh_next, dc_next


def rnn_steps(xp: Any, xw: Any, h0: Any, w_hh_t: Any, *, relu: bool = False,
              reverse: bool = False) -> Any:
    """See ``volta_core.nn.fused_rnn.rnn_steps``."""
    if not _plain(xw, h0, w_hh_t):
        return generic.rnn_steps(xp, xw, h0, w_hh_t, relu=relu, reverse=reverse)
    out = np.empty(xw.shape, xw.dtype)
    h = h0
    with one_blas_thread():  # held once for the loop's products
        for t in (range(xw.shape[0] - 1, -1, -1) if reverse else range(xw.shape[0])):
            o = out[t]
            matmul_2d(h, w_hh_t, out=o)  # the generic loop's xp.matmul
            o += xw[t]
            if relu:  # x < 0 -> 0 (NaN stays), as the relu kernel
                np.copyto(o, 0, where=o < 0)
            else:
                np.tanh(o, out=o)
            h = o
    return out


def rnn_steps_backward(xp: Any, g: Any, out: Any, w_hh: Any, *, relu: bool = False,
                       reverse: bool = False) -> tuple:
    """See ``volta_core.nn.fused_rnn.rnn_steps_backward``."""
    if not _plain(g, out, w_hh):
        return generic.rnn_steps_backward(xp, g, out, w_hh, relu=relu, reverse=reverse)
    steps, batch, hid = g.shape
    dpre = np.empty(g.shape, g.dtype)
    dh_next = np.empty((batch, hid), g.dtype)
    dh, tmp = np.empty((batch, hid), g.dtype), np.empty((batch, hid), g.dtype)
    first = True
    with one_blas_thread():  # held once for the loop's products
        for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
            if first:
                np.copyto(dh, g[t])
                first = False
            else:
                np.add(g[t], dh_next, out=dh)
            d, y = dpre[t], out[t]
            if relu:  # 0 where y <= 0, as the relu_backward kernel
                np.copyto(d, dh)
                np.copyto(d, 0, where=y <= 0)
            else:  # dh * (1 - y * y)
                np.multiply(y, y, out=tmp)
                np.subtract(1.0, tmp, out=tmp)
                np.multiply(dh, tmp, out=d)
            matmul_2d(d, w_hh, out=dh_next)
    return dpre, dh_next
