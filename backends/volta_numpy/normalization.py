"""Layer norm of the CPU backend: the generic kernels' formulas with every row sum taken
by ``rowsum.row_sum`` (einsum's loop, 3-4x faster than ``np.mean`` over short rows).

Large inputs are cut into row blocks over the backend's threads (``parallel.py``); every
row's statistics depend on that row only, so the results are the same on any thread
count. The weight and bias gradients, sums over the rows, are one whole-array reduction
each.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from volta_core.ops import nn as generic

from .parallel import by_rows
from .rowsum import row_sum

# at least this many elements: row blocks over the threads (fewer: one call per pass,
# cheaper than waking a worker; a small GPT's (1024, 128) runs 1.4x faster unsplit)
ROW_SPLIT = 1 << 19


def _fast(x: Any, *arrays: Any, ndim: int) -> bool:
    return (ndim == 1 and type(x) is np.ndarray and x.dtype in (np.float32, np.float64)
            and x.ndim >= 2 and x.size > 0
            and all(a is None or (type(a) is np.ndarray and a.dtype == x.dtype)
                    for a in arrays))


def _row_mean(a: np.ndarray, v: np.ndarray | None = None,
              out: np.ndarray | None = None) -> np.ndarray:
    """``(a * v).mean(axis=1)`` of a 2-d block (``v`` a row of weights, or None)."""
    m = row_sum(a, v, out=out)
    m /= a.shape[1]
    return m


def layer_norm(xp: Any, x: Any, weight: Any = None, bias: Any = None, *, ndim: int = 1,
               eps: float = 1e-5) -> tuple[Any, Any, Any]:
    """The generic ``layer_norm`` over the last dimension, fast row sums."""
    if not _fast(x, weight, bias, ndim=ndim):
        return generic.layer_norm(xp, x, weight, bias, ndim=ndim, eps=eps)
    c = x.shape[-1]
    rows = np.ascontiguousarray(x).reshape(-1, c)
    n = rows.shape[0]
    y = np.empty((n, c), dtype=x.dtype)
    mean = np.empty(n, dtype=x.dtype)
    rstd = np.empty(n, dtype=x.dtype)

    def run(lo: int, hi: int) -> None:
        yb, r = y[lo:hi], rstd[lo:hi]
        m = _row_mean(rows[lo:hi], out=mean[lo:hi])
        np.subtract(rows[lo:hi], m[:, None], out=yb)  # xc
        _row_mean(np.multiply(yb, yb), out=r)  # var
        r += eps
        np.sqrt(r, out=r)
        np.divide(1.0, r, out=r)
        yb *= r[:, None]
        if weight is not None:
            yb *= weight
        if bias is not None:
            yb += bias

    by_rows(run, n, c, ROW_SPLIT)
    stat = (*x.shape[:-1], 1)
    return y.reshape(x.shape), mean.reshape(stat), rstd.reshape(stat)


def layer_norm_backward(xp: Any, grad: Any, x: Any, weight: Any, mean: Any, rstd: Any, *,
                        ndim: int = 1, needs: tuple = (True, True, True)) -> tuple:
    """The generic ``layer_norm_backward`` over the last dimension, fast row sums."""
    if not (_fast(x, grad, weight, mean, rstd, ndim=ndim) and grad.shape == x.shape):
        return generic.layer_norm_backward(xp, grad, x, weight, mean, rstd, ndim=ndim,
                                           needs=needs)
    c = x.shape[-1]
    rows, g = (np.ascontiguousarray(a).reshape(-1, c) for a in (x, grad))
    n = rows.shape[0]
    m, r = mean.reshape(n, 1), rstd.reshape(n, 1)
    gx = np.empty((n, c), dtype=x.dtype) if needs[0] else None
    gxhat = np.empty((n, c), dtype=x.dtype) if needs[1] else None

    def run(lo: int, hi: int) -> None:
        xhat = np.subtract(rows[lo:hi], m[lo:hi])
        xhat *= r[lo:hi]
        gb = g[lo:hi]
        gxh = np.multiply(gb, xhat, out=None if gxhat is None else gxhat[lo:hi])
        if gx is None:
            return
        # rstd * (gh - mean(gh) - xhat * mean(gh * xhat)) with gh = g * w; the row means
        # weighted by w: mean(gh * xhat) = mean((g * xhat) w), mean(gh) = mean(g w)
        m2 = _row_mean(gxh, weight)
        m1 = _row_mean(gb, weight)
        out = gx[lo:hi]
        if weight is None:
            np.copyto(out, gb)
        else:
            np.multiply(gb, weight, out=out)
        xhat *= m2[:, None]
        out -= xhat
        out -= m1[:, None]
        out *= r[lo:hi]

    by_rows(run, n, c, ROW_SPLIT)
    # sums over the rows: NumPy's column sums (a threaded BLAS product would split the
    # rows between its threads, so its bits would depend on the thread count)
    gw = np.sum(gxhat, axis=0) if needs[1] else None
    gb = np.sum(g, axis=0) if needs[2] else None
    return (None if gx is None else gx.reshape(x.shape)), gw, gb
