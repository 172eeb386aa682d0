"""Max-pooling kernels of the CPU backend (the core's ``max_pool2d`` and its backward).

Disjoint windows (stride >= kernel, no dilation: LeNet's and most CNNs' 2x2 pools) take a
fast path over chunks of the batch on the backend's threads (``parallel.py``): a running
``np.maximum`` over the ``kh * kw`` strided tap views (no window copy), the winning tap
as the first one equal to the maximum, and a backward that writes each tap's gradient
straight into its place. Other windows use one ``argmax`` over a strided window view and
a scatter. The winning tap follows the generic kernel's rule: a later tap wins only where
it is strictly greater, so the first of equal values wins, and the last NaN wins.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from volta_core.ops import nn as generic

from .parallel import parallel_for, row_blocks


def _pad(x: np.ndarray, pads: tuple, fill: float = 0.0) -> np.ndarray:
    pt, pb, pl, pr = pads
    if not (pt or pb or pl or pr):
        return x
    n, c, h, w = x.shape
    out = np.full((n, c, h + pt + pb, w + pl + pr), fill, dtype=x.dtype)
    out[:, :, pt:pt + h, pl:pl + w] = x
    return out


def _disjoint(kernel: tuple, stride: tuple, dilation: tuple) -> bool:
    return dilation == (1, 1) and stride[0] >= kernel[0] and stride[1] >= kernel[1]


def _taps(xpad: np.ndarray, kernel: tuple, stride: tuple, out_hw: tuple) -> list:
    """The strided ``(N, C, Ho, Wo)`` view of every kernel tap, in scan order."""
    (ho, wo), (sh, sw) = out_hw, stride
    return [xpad[:, :, i:i + sh * (ho - 1) + 1:sh, j:j + sw * (wo - 1) + 1:sw]
            for i in range(kernel[0]) for j in range(kernel[1])]


# -0.0 as an integer of the float's width: the sign bit alone, the integer minimum
_NEGZERO_BITS = {2: np.int16(-2 ** 15), 4: np.int32(-2 ** 31), 8: np.int64(-2 ** 63)}


def has_negzero(a: np.ndarray) -> bool:
    """True if the float array ``a`` may hold a -0.0 (one integer compare of its bits;
    always True for a width without a matching integer, e.g. long double)."""
    bits = _NEGZERO_BITS.get(a.dtype.itemsize)
    if bits is None:
        return True
    return bool((a.view(bits.dtype) == bits).any())


def _plain(x: np.ndarray) -> bool:
    """True if ``x`` is floating with no -0.0: then, without NaN (which survives
    ``np.maximum``, so the caller checks the smaller output for it), equal values are equal
    bits and the strictly-greater scan is a plain maximum (no masked writes)."""
    return x.dtype.kind == "f" and not has_negzero(x)


def _max_taps(taps: list, y: np.ndarray, idx: np.ndarray) -> None:
    """Fill ``y``/``idx`` with the strictly-greater scan over the tap views ``taps``."""
    if len(taps) == 1:
        np.copyto(y, taps[0])
    else:
        np.maximum(taps[0], taps[1], out=y)
        for v in taps[2:]:
            np.maximum(y, v, out=y)
    if not np.isnan(y).any():
        # the winner is the first tap equal to the maximum: count the taps before it
        idx.fill(0)
        missed = np.ones(y.shape, dtype=bool)
        ne = np.empty(y.shape, dtype=bool)
        for v in taps[:-1]:
            np.not_equal(v, y, out=ne)
            missed &= ne
            idx += missed
        return
    _masked_scan(taps, y, idx)  # NaN: the generic scan with masked writes


def _masked_scan(taps: list, y: np.ndarray, idx: np.ndarray) -> None:
    """The generic kernel's scan: a greater tap or a NaN (the last NaN wins, as in
    PyTorch) replaces the winner so far."""
    np.copyto(y, taps[0])
    idx.fill(0)
    floating = y.dtype.kind == "f"
    for t, v in enumerate(taps[1:], 1):
        better = v > y
        if floating:
            better |= np.isnan(v)
        np.copyto(y, v, where=better)
        np.copyto(idx, t, where=better)


def max_pool2d(xp: Any, x: Any, *, kernel, stride, padding=(0, 0), dilation=(1, 1),
               ceil_mode: bool = False) -> tuple:
    """Max over windows; returns the values and the winning tap (``i * kw + j``, int32).

    Disjoint windows run over chunks of the batch, in parallel; others take one
    ``argmax`` over an ``as_strided`` window view.
    """
    out_hw, pads = generic._pool_geometry(x.shape[2:], kernel, stride, padding, dilation,
                                          ceil_mode)
    n, c = x.shape[:2]
    if _disjoint(kernel, stride, dilation):
        y = np.empty((n, c, *out_hw), dtype=x.dtype)
        idx = np.empty((n, c, *out_hw), dtype=np.int32)

        def run(lo: int, hi: int) -> None:
            xc = x[lo:hi]
            taps = _taps(_pad(xc, pads, -np.inf), kernel, stride, out_hw)
            if _plain(xc):
                _max_taps(taps, y[lo:hi], idx[lo:hi])
                return
            _masked_scan(taps, y[lo:hi], idx[lo:hi])  # -0.0 or not floating

        parallel_for(run, row_blocks(n, c * x.shape[2] * x.shape[3]))
        return y, _real_winner(y, idx, out_hw, pads, kernel, stride, padding, dilation)
    xpad = _pad(x, pads, -np.inf)
    s0, s1, s2, s3 = xpad.strides
    win = as_strided(xpad, (n, c, out_hw[0], out_hw[1], kernel[0], kernel[1]),
                     (s0, s1, s2 * stride[0], s3 * stride[1], s2 * dilation[0],
                      s3 * dilation[1]), writeable=False)
    taps = kernel[0] * kernel[1]
    flat = win.reshape(n, c, out_hw[0], out_hw[1], taps)
    idx = flat.argmax(axis=-1)  # the first maximum, or the first NaN
    if flat.dtype.kind == "f":
        nan = np.isnan(flat)
        if nan.any():  # PyTorch's: the window's last NaN
            last = taps - 1 - nan[..., ::-1].argmax(axis=-1)
            idx = np.where(nan.any(axis=-1), last, idx)
    y = np.take_along_axis(flat, idx[..., None], axis=-1)[..., 0]
    return y, _real_winner(y, idx.astype(np.int32), out_hw, pads, kernel, stride, padding,
                           dilation)


def _real_winner(y: np.ndarray, idx: np.ndarray, out_hw, pads, kernel, stride, padding,
                 dilation) -> np.ndarray:
    """A window whose real elements are all -inf indexes its first real tap (PyTorch's),
    not the padding that tied with them."""
    if any(pads) and y.dtype.kind == "f":
        first = generic.first_real_tap(np, out_hw, kernel, stride, padding, dilation)
        np.copyto(idx, np.broadcast_to(first, idx.shape), where=y == -np.inf)
    return idx


def max_pool2d_backward(xp: Any, grad: Any, idx: Any, *, x_shape, kernel, stride,
                        padding=(0, 0), dilation=(1, 1), ceil_mode: bool = False) -> np.ndarray:
    """Route each gradient to its window's winner: for disjoint windows a direct store per
    tap (over chunks of the batch, in parallel), else a scatter (``np.add.at`` where
    windows overlap)."""
    out_hw, pads = generic._pool_geometry(x_shape[2:], kernel, stride, padding, dilation,
                                          ceil_mode)
    n, c, h, w = x_shape
    hp, wp = h + pads[0] + pads[1], w + pads[2] + pads[3]
    ho, wo = out_hw
    if _disjoint(kernel, stride, dilation):
        sh, sw = stride
        # the (sh x sw) block of every output, framed to cover the padded input
        fh, fw = max(hp, ho * sh), max(wp, wo * sw)
        framed = np.empty((n, c, fh, fw), dtype=grad.dtype)
        bits = np.dtype(f"i{grad.dtype.itemsize}")
        gbits = grad.view(bits)
        # the taps cover every cell of the frame only if the blocks tile it exactly
        covered = (fh, fw) == (ho * sh, wo * sw) and (sh, sw) == tuple(kernel)

        def run(lo: int, hi: int) -> None:
            out = framed[lo:hi]
            if not covered:
                out.fill(0)
            ob = out.view(bits)
            for t in range(kernel[0] * kernel[1]):
                i, j = divmod(t, kernel[1])
                dst = ob[:, :, i:i + sh * (ho - 1) + 1:sh, j:j + sw * (wo - 1) + 1:sw]
                # g where this tap won, else +0.0: an integer product of the gradient's
                # bits with the 0/1 mask (a select with a data-dependent mask runs
                # several times slower), so every value is g's
                np.multiply(gbits[lo:hi], idx[lo:hi] == t, out=dst)
            if has_negzero(grad[lo:hi]):
                out += 0.0  # a -0.0 gradient lands as +0.0, as a sum into zeros gives

        parallel_for(run, row_blocks(n, c * fh * fw))
        return framed[:, :, pads[0]:pads[0] + h, pads[2]:pads[2] + w]
    kw = kernel[1]
    rows = np.arange(ho).reshape(ho, 1) * stride[0] + (idx // kw) * dilation[0]
    cols = np.arange(wo).reshape(1, wo) * stride[1] + (idx % kw) * dilation[1]
    lin = (rows * wp + cols).reshape(n * c, ho * wo)
    out = np.zeros((n * c, hp * wp), dtype=grad.dtype)
    g = np.ascontiguousarray(grad).reshape(n * c, ho * wo)
    overlap = stride[0] < dilation[0] * (kernel[0] - 1) + 1 or \
        stride[1] < dilation[1] * (kernel[1] - 1) + 1
    if overlap:
        base = (np.arange(n * c) * (hp * wp)).reshape(-1, 1)
        np.add.at(out.reshape(-1), (lin + base).reshape(-1), g.reshape(-1))
    else:
        np.put_along_axis(out, lin, g, axis=1)
    out = out.reshape(n, c, hp, wp)
    return out[:, :, pads[0]:pads[0] + h, pads[2]:pads[2] + w]
