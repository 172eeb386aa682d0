"""Layer norm of the CPU backend: the generic kernels' operations row by row, in row blocks
spread over the backend's threads (``parallel.py``).

Every statistic is a reduction along a row (the normalised last dimension), so a block of
rows computes exactly what the whole-array call computes for them; the weight and bias
gradients, sums over the rows, stay one whole-array reduction each (a sum of block sums
would round differently). Results are the generic kernels' bits on any thread count.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from volta_core.ops import nn as generic

from .parallel import batch_chunk, chunks, parallel_for

# at least this many elements: row blocks over the threads (fewer: the generic kernels)
ROW_SPLIT = 1 << 17


def _fast(x: Any, *arrays: Any, ndim: int) -> bool:
    return (ndim == 1 and type(x) is np.ndarray and x.dtype in (np.float32, np.float64)
            and x.ndim >= 2 and x.size >= ROW_SPLIT
            and all(a is None or (type(a) is np.ndarray and a.dtype == x.dtype)
                    for a in arrays))


def _rows(run, n: int, c: int) -> None:
    parallel_for(run, chunks(n, batch_chunk(n, c)))


def layer_norm(xp: Any, x: Any, weight: Any = None, bias: Any = None, *, ndim: int = 1,
               eps: float = 1e-5) -> tuple[Any, Any, Any]:
    """The generic ``layer_norm`` over the last dimension, in row blocks."""
    if not _fast(x, weight, bias, ndim=ndim):
        return generic.layer_norm(xp, x, weight, bias, ndim=ndim, eps=eps)
    c = x.shape[-1]
    rows = x.reshape(-1, c)
    n = rows.shape[0]
    y = np.empty((n, c), dtype=x.dtype)
    mean = np.empty((n, 1), dtype=x.dtype)
    rstd = np.empty((n, 1), dtype=x.dtype)

    def run(lo: int, hi: int) -> None:
        xb, yb = rows[lo:hi], y[lo:hi]
        m = np.mean(xb, axis=1, keepdims=True)
        mean[lo:hi] = m
        np.subtract(xb, m, out=yb)  # xc
        sq = np.multiply(yb, yb)
        r = np.mean(sq, axis=1, keepdims=True)
        r += eps
        np.divide(1.0, np.sqrt(r), out=rstd[lo:hi])
        yb *= rstd[lo:hi]
        if weight is not None:
            yb *= weight
        if bias is not None:
            yb += bias

    _rows(run, n, c)
    stat = (*x.shape[:-1], 1)
    return y.reshape(x.shape), mean.reshape(stat), rstd.reshape(stat)


def layer_norm_backward(xp: Any, grad: Any, x: Any, weight: Any, mean: Any, rstd: Any, *,
                        ndim: int = 1, needs: tuple = (True, True, True)) -> tuple:
    """The generic ``layer_norm_backward`` over the last dimension, in row blocks."""
    if not (_fast(x, grad, weight, mean, rstd, ndim=ndim) and grad.shape == x.shape):
        return generic.layer_norm_backward(xp, grad, x, weight, mean, rstd, ndim=ndim,
                                           needs=needs)
    c = x.shape[-1]
    rows, g = x.reshape(-1, c), grad.reshape(-1, c)
    n = rows.shape[0]
    m, r = mean.reshape(n, 1), rstd.reshape(n, 1)
    gx = np.empty((n, c), dtype=x.dtype) if needs[0] else None
    gxhat = np.empty((n, c), dtype=x.dtype) if needs[1] else None

    def run(lo: int, hi: int) -> None:
        xhat = np.subtract(rows[lo:hi], m[lo:hi])
        xhat *= r[lo:hi]
        gb = g[lo:hi]
        if gxhat is not None:
            np.multiply(gb, xhat, out=gxhat[lo:hi])
        if gx is None:
            return
        gh = gb * weight if weight is not None else gb
        # rstd * (gh - mean(gh) - xhat * mean(gh * xhat))
        m2 = np.mean(np.multiply(gh, xhat), axis=1, keepdims=True)
        out = gx[lo:hi]
        np.subtract(gh, np.mean(gh, axis=1, keepdims=True), out=out)
        xhat *= m2
        out -= xhat
        np.multiply(r[lo:hi], out, out=out)

    _rows(run, n, c)
    lead = tuple(range(x.ndim - 1))
    gw = np.sum(gxhat.reshape(x.shape), axis=lead) if needs[1] else None
    gb = np.sum(grad, axis=lead) if needs[2] else None
    return (None if gx is None else gx.reshape(x.shape)), gw, gb
