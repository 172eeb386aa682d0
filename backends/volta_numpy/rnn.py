"""The LSTM and Elman RNN time loops of the CPU backend (``volta_core.nn.fused_rnn``'s
``lstm_steps``, ``lstm_steps_backward``, ``rnn_steps`` and ``rnn_steps_backward``) with
every step's results written in place.

The generic loops allocate each step's arrays and stack them at the end; here each step
writes straight into the stacked outputs, through preallocated buffers, so a step is one
GEMM and about ten small ufunc calls with no allocation (the LSTM backward's gate
factors are computed step by step, on rows still in cache). The operations, their order
and so the values are the generic loops' own.

A backward loop runs on one core (each step needs the one before), so the layer's weight
gradients, which need only finished steps, run beside it: the steps are cut into pieces
and a worker takes each piece's share (the kernels' ``then``) as soon as the loop has
finished it (``parallel.trailing``). An LSTM LM's layer backward (T=35, B=20, H=256) on
the 2-core development machine: 26 -> 20 ms.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from volta_core.nn import fused_rnn as generic

from .namespace import matmul_2d
from .parallel import chunks, one_blas_thread, trailing

# the backward's steps are cut into about PIECES pieces when their weight gradients take
# at least PIECE_MACS multiply-adds (the cut depends on the shapes only, so the values do
# not depend on the thread count)
PIECES = 7
PIECE_MACS = 1 << 22


def _pieces(steps: int, macs_per_step: int, reverse: bool) -> list[tuple[int, int]]:
    """``[0, steps)`` in pieces, in the order the backward loop reaches them (from the last
    step down; from the first up for a reversed layer)."""
    count = min(steps, PIECES) if steps * macs_per_step >= PIECE_MACS else 1
    pieces = chunks(steps, -(-steps // count)) if steps else [(0, 0)]
    return pieces if reverse else pieces[::-1]


class _NoTrail:
    """Stands for :func:`trailing` where the caller passed no ``then``."""

    def __enter__(self) -> _NoTrail:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def ready(self, i: int) -> None:
        pass


def _trail(then: Any, pieces: list, *arrays: Any) -> Any:
    """``then(lo, hi, *arrays)`` per piece, trailing the loop (nothing without ``then``)."""
    if then is None:
        return _NoTrail()
    return trailing(lambda lo, hi: then(lo, hi, *arrays), pieces)


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


def lstm_steps_backward(xp: Any, g: Any, sigs: Any, ggs: Any, tcs: Any, c_prev: Any,
                        w_hh: Any, *, reverse: bool = False, then: Any = None) -> tuple:
    """See ``volta_core.nn.fused_rnn.lstm_steps_backward``. Each step computes its own
    ``lstm_gate_factors`` (the same operations, on rows still in cache), straight into the
    gates' gradients."""
    if not _plain(g, sigs, ggs, tcs, c_prev, w_hh):
        return generic.lstm_steps_backward(xp, g, sigs, ggs, tcs, c_prev, w_hh,
                                           reverse=reverse, then=then)
    steps, batch, two = g.shape
    hid = two // 2
    dt = g.dtype
    dgates = np.empty((steps, batch, 4 * hid), dt)
    dh_next, dc_next = np.empty((batch, hid), dt), np.empty((batch, hid), dt)
    dh, dc, tmp, dtc = (np.empty((batch, hid), dt) for _ in range(4))
    om = np.empty((batch, 3 * hid), dt)
    first = True
    pieces = _pieces(steps, batch * 4 * hid * hid, reverse)
    # BLAS held once for the loop's products
    with one_blas_thread(), _trail(then, pieces, dgates) as trail:
        for p, (lo, hi) in enumerate(pieces):
            for t in (range(lo, hi) if reverse else range(hi - 1, lo - 1, -1)):
                sig, gg, tc, d = sigs[t], ggs[t], tcs[t], dgates[t]
                i, f, o = sig[:, :hid], sig[:, hid:2 * hid], sig[:, 2 * hid:]
                if first:
                    np.copyto(dh, g[t, :, :hid])
                    np.copyto(dc, g[t, :, hid:])
                    first = False
                else:
                    np.add(g[t, :, :hid], dh_next, out=dh)
                    np.add(g[t, :, hid:], dc_next, out=dc)
                np.multiply(tc, tc, out=tmp)  # dc += dh * o * (1 - tc * tc)
                np.subtract(1.0, tmp, out=tmp)
                np.multiply(o, tmp, out=dtc)
                np.multiply(dh, dtc, out=tmp)
                dc += tmp
                np.subtract(1.0, sig, out=om)
                # (dc, dc, dh, dc) * (gg i (1-i), c_prev f (1-f), tc o (1-o), i (1-gg gg))
                for k, (a, b, src) in enumerate(((gg, i, dc), (c_prev[t], f, dc), (tc, o, dh))):
                    dk = d[:, k * hid:(k + 1) * hid]
                    np.multiply(a, b, out=dk)
                    dk *= om[:, k * hid:(k + 1) * hid]
                    dk *= src
                dk = d[:, 3 * hid:]
                np.multiply(gg, gg, out=tmp)
                np.subtract(1.0, tmp, out=tmp)
                np.multiply(i, tmp, out=dk)
                dk *= dc
                np.multiply(dc, f, out=dc_next)
                matmul_2d(d, w_hh, out=dh_next)
            trail.ready(p)
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
                       reverse: bool = False, then: Any = None) -> tuple:
    """See ``volta_core.nn.fused_rnn.rnn_steps_backward``."""
    if not _plain(g, out, w_hh):
        return generic.rnn_steps_backward(xp, g, out, w_hh, relu=relu, reverse=reverse,
                                          then=then)
    steps, batch, hid = g.shape
    dpre = np.empty(g.shape, g.dtype)
    dh_next = np.empty((batch, hid), g.dtype)
    dh, tmp = np.empty((batch, hid), g.dtype), np.empty((batch, hid), g.dtype)
    first = True
    pieces = _pieces(steps, batch * hid * hid, reverse)
    # BLAS held once for the loop's products
    with one_blas_thread(), _trail(then, pieces, dpre) as trail:
        for p, (lo, hi) in enumerate(pieces):
            for t in (range(lo, hi) if reverse else range(hi - 1, lo - 1, -1)):
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
            trail.ready(p)
    return dpre, dh_next
