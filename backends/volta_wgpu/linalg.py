"""The Array API ``linalg`` extension (``volta_wgpu.linalg``).

Products, norms, ``diagonal`` and ``trace`` run on the device. The decompositions and
solvers (``cholesky``, ``det``, ``eigh``, ``eigvalsh``, ``inv``, ``matrix_rank``,
``pinv``, ``qr``, ``slogdet``, ``solve``, ``svd``, ``svdvals``) are, in this first
version, a host round trip through NumPy (one sync each, float32 stays float32): exact
LAPACK semantics, no WGSL port yet.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from . import dtypes as D
from ._errors import DTypeError
from .array import Array, to_numpy
from .namespace.creation import asarray
from .namespace.linalg import matmul, outer, tensordot, vecdot
from .namespace.manipulation import matrix_transpose


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


def _float(x: Any, op: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"linalg.{op}: expected a volta_wgpu Array, got {type(x).__name__}")
    if x.dtype.kind != "f":
        raise DTypeError(f"linalg.{op}: needs a floating array, got {x.dtype.name}")
    return x


def _matrices(x: Any, op: str) -> Array:
    x = _float(x, op)
    if x.ndim < 2:
        raise ValueError(f"linalg.{op}: needs an array of at least 2 dims, got {x.shape}")
    return x


def _up(a: Any, like: Array) -> Array:
    return asarray(np.asarray(a, like.dtype.np), dtype=like.dtype, device=like.device)


def _square(x: Any, op: str) -> Array:
    x = _matrices(x, op)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"linalg.{op}: needs square matrices, got shape {x.shape}")
    return x


# -- on the device ------------------------------------------------------------------------
def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """The ``offset``-th diagonals of the matrices in ``x`` (a view)."""
    if not isinstance(x, Array) or x.ndim < 2:
        raise ValueError("linalg.diagonal: needs an array of at least 2 dims")
    rows, cols = x.shape[-2:]
    sr, sc = x.strides[-2:]
    if offset >= 0:
        n, start = max(0, min(rows, cols - offset)), offset * sc
    else:
        n, start = max(0, min(rows + offset, cols)), -offset * sr
    off = x.offset + (start if n else 0)
    return Array(x._st, x.shape[:-2] + (n,), x.dtype, x.strides[:-2] + (sr + sc,), off)


def trace(x: Array, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """Sum of the ``offset``-th diagonal of each matrix."""
    from .namespace.reduction import sum as _sum
    return _sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Cross product of 3-vectors along ``axis``."""
    from .namespace.elementwise import subtract
    from .namespace.manipulation import broadcast_arrays, moveaxis, stack
    if not (isinstance(x1, Array) and isinstance(x2, Array)):
        raise TypeError("linalg.cross: expected two volta_wgpu Arrays")
    n = max(x1.ndim, x2.ndim)
    if not -n <= axis < n or -(axis - n if axis >= 0 else axis) > min(x1.ndim, x2.ndim) \
            or x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"linalg.cross: both arrays need size 3 along axis {axis} "
                         f"(shapes {x1.shape} and {x2.shape})")
    ax = axis - n if axis >= 0 else axis
    a, b = broadcast_arrays(x1, x2)
    a, b = moveaxis(a, ax, -1), moveaxis(b, ax, -1)
    c = [subtract(a[..., i] * b[..., j], a[..., j] * b[..., i])
         for i, j in ((1, 2), (2, 0), (0, 1))]
    return stack(c, axis=ax)


def matrix_power(x: Array, n: int, /) -> Array:
    """``x`` multiplied by itself ``n`` times (``n < 0``: of its inverse)."""
    x = _square(x, "matrix_power") if n < 0 else x
    if not isinstance(x, Array) or x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError("linalg.matrix_power: needs square matrices")
    from .namespace.creation import eye
    from .namespace.manipulation import broadcast_to
    if n < 0:
        x, n = inv(x), -n
    result = None
    base = x
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    if result is None:
        result = broadcast_to(eye(x.shape[-1], dtype=x.dtype, device=x.device), x.shape)
        from .namespace.elementwise import contiguous_copy
        result = contiguous_copy(result)
    return result


def vector_norm(x: Array, /, *, axis: Any = None, keepdims: bool = False,
                ord: float = 2) -> Array:  # noqa: A002 - Array-API name
    """The ``ord``-norm of the vectors along ``axis`` (all elements when None)."""
    from .namespace import elementwise as E
    from .namespace import reduction as R
    x = _float(x, "vector_norm")
    a = E.abs(x)
    kw = dict(axis=axis, keepdims=keepdims)
    if ord == math.inf:
        return R.max(a, **kw)
    if ord == -math.inf:
        return R.min(a, **kw)
    if ord == 0:
        return R.sum(E.astype(E.not_equal(a, 0), x.dtype), **kw)
    if ord == 1 or x.size == 0:
        return R.sum(a if ord == 1 else E.pow(a, float(ord)), **kw)
    # the p-norm scaled by the largest element, so that it neither overflows nor underflows
    p = float(ord)
    m = R.max(a, axis=axis, keepdims=True)
    safe = E.where(E.logical_or(E.equal(m, 0), E.isinf(m)), 1.0, m)
    q = E.divide(a, safe)
    s = R.sum(E.square(q), **kw) if p == 2 else R.sum(E.pow(q, p), **kw)
    s = E.sqrt(s) if p == 2 else E.pow(s, 1.0 / p)
    out = E.multiply(s, safe if keepdims else _drop(safe, axis, x.ndim))
    return E.where(E.isinf(R.max(a, **kw)), math.inf, out) if p > 0 else \
        E.pow(R.sum(E.pow(a, p), **kw), 1.0 / p)


def _drop(m: Array, axis: Any, ndim: int) -> Array:
    from .layout import normalize_axes
    from .namespace.manipulation import reshape
    axes = normalize_axes(axis, ndim, "vector_norm")
    return reshape(m, tuple(n for d, n in enumerate(m.shape) if d not in axes))


def matrix_norm(x: Array, /, *, keepdims: bool = False, ord: Any = "fro") -> Array:
    """Frobenius, nuclear, 1/2/inf (and negative) norms of the matrices in ``x``."""
    x = _matrices(x, "matrix_norm")
    if ord == "fro":
        return vector_norm(x, axis=(-2, -1), keepdims=keepdims)
    from .namespace import elementwise as E
    from .namespace import reduction as R
    if ord in (1, -1, math.inf, -math.inf):
        ax = -2 if ord in (1, -1) else -1
        s = R.sum(E.abs(x), axis=ax, keepdims=True)
        red = R.max if ord > 0 else R.min
        return red(s, axis=(-2, -1), keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        s = svdvals(x)
        r = R.sum(s, axis=-1) if ord == "nuc" else (R.max if ord == 2 else R.min)(s, axis=-1)
        if keepdims:
            from .namespace.manipulation import reshape
            r = reshape(r, r.shape + (1, 1))
        return r
    raise ValueError(f"linalg.matrix_norm: unknown ord {ord!r}")


# -- host round trips through NumPy ------------------------------------------------------
def cholesky(x: Array, /, *, upper: bool = False) -> Array:
    """The Cholesky factor of Hermitian positive-definite matrices."""
    x = _square(x, "cholesky")
    low = np.linalg.cholesky(to_numpy(x))
    return _up(np.swapaxes(low, -1, -2).conj() if upper else low, x)


def det(x: Array, /) -> Array:
    """Determinants."""
    x = _square(x, "det")
    return _up(np.linalg.det(to_numpy(x)), x)


def slogdet(x: Array, /) -> SlogdetResult:
    """Sign and log of the absolute value of the determinants."""
    x = _square(x, "slogdet")
    r = np.linalg.slogdet(to_numpy(x))
    return SlogdetResult(_up(r.sign, x), _up(r.logabsdet, x))


def inv(x: Array, /) -> Array:
    """Matrix inverses."""
    x = _square(x, "inv")
    return _up(np.linalg.inv(to_numpy(x)), x)


def solve(x1: Array, x2: Array, /) -> Array:
    """Solve ``x1 @ result = x2`` (``x2`` 1-d: one right-hand side)."""
    x1 = _square(x1, "solve")
    x2 = _float(x2, "solve")
    t = D.promote(x1.dtype, x2.dtype)
    a, b = to_numpy(x1).astype(t.np), to_numpy(x2).astype(t.np)
    if b.ndim == 1:
        if b.shape[0] != a.shape[-1]:
            raise ValueError(f"linalg.solve: shapes {x1.shape} and {x2.shape} do not match")
        r = np.linalg.solve(a, b[:, None])[..., 0]
    else:
        r = np.linalg.solve(a, b)
    return asarray(r.astype(t.np), dtype=t, device=x1.device)


def eigh(x: Array, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices."""
    x = _square(x, "eigh")
    w, v = np.linalg.eigh(to_numpy(x))
    return EighResult(_up(w, x), _up(v, x))


def eigvalsh(x: Array, /) -> Array:
    """Eigenvalues (ascending) of symmetric matrices."""
    x = _square(x, "eigvalsh")
    return _up(np.linalg.eigvalsh(to_numpy(x)), x)


def qr(x: Array, /, *, mode: str = "reduced") -> QRResult:
    """QR decomposition (``mode`` ``"reduced"`` or ``"complete"``)."""
    x = _matrices(x, "qr")
    if mode not in ("reduced", "complete"):
        raise ValueError(f"linalg.qr: mode must be 'reduced' or 'complete', got {mode!r}")
    q, r = np.linalg.qr(to_numpy(x), mode=mode)
    return QRResult(_up(q, x), _up(r, x))


def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult:
    """Singular value decomposition."""
    x = _matrices(x, "svd")
    u, s, vh = np.linalg.svd(to_numpy(x), full_matrices=full_matrices)
    return SVDResult(_up(u, x), _up(s, x), _up(vh, x))


def svdvals(x: Array, /) -> Array:
    """Singular values, descending."""
    x = _matrices(x, "svdvals")
    return _up(np.linalg.svd(to_numpy(x), compute_uv=False), x)


def _rtol(rtol: Any, a: np.ndarray) -> Any:
    if rtol is None:
        return max(a.shape[-2:]) * np.finfo(a.dtype).eps
    return to_numpy(rtol)[..., None] if isinstance(rtol, Array) else rtol


def matrix_rank(x: Array, /, *, rtol: Any = None) -> Array:
    """Number of singular values above ``rtol`` times the largest."""
    x = _matrices(x, "matrix_rank")
    a = to_numpy(x)
    s = np.linalg.svd(a, compute_uv=False)
    tol = s.max(axis=-1, keepdims=True, initial=0.0) * _rtol(rtol, a)
    r = np.count_nonzero(s > tol, axis=-1)
    return asarray(np.asarray(r, np.int64), dtype=D.default_int(), device=x.device)


def pinv(x: Array, /, *, rtol: Any = None) -> Array:
    """Moore-Penrose pseudo-inverse."""
    x = _matrices(x, "pinv")
    a = to_numpy(x)
    if rtol is None:
        rtol = max(a.shape[-2:]) * np.finfo(a.dtype).eps
    elif isinstance(rtol, Array):
        rtol = to_numpy(rtol)
    return _up(np.linalg.pinv(a, rtol=rtol), x)


__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv",
           "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm"]
