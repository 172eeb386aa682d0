"""The Array API ``linalg`` extension (``volta_wgpu.linalg``).

Products, norms, ``diagonal`` and ``trace`` run on the device, and so do ``det``,
``slogdet``, ``inv``, ``solve`` (Gaussian elimination with partial pivoting),
``cholesky``, ``qr`` (Householder) and ``eigh``/``eigvalsh`` (cyclic Jacobi), one thread
per matrix (:mod:`.kernels.dense_solve`), and ``svd``/``svdvals`` (one-sided Jacobi, one
workgroup per matrix, :mod:`.kernels.svd`) with ``matrix_rank``, ``pinv`` and the 2-, -2-
and nuclear ``matrix_norm`` built on them, for matrices up to ``DEVICE_MAX_N`` (128) on a
side, ``SVD_DEVICE_MAX_N`` (32) for the SVD (larger ones go through NumPy on the host; on
llvmpipe, smaller ones too: see ``LLVMPIPE_LOOP_LIMIT``); ``inv``, ``solve`` and
``cholesky`` read back one flag per matrix to raise NumPy's ``LinAlgError`` for a singular
or non-positive-definite matrix.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from . import dtypes as D
from ._errors import DTypeError
from .array import Array, to_numpy
from .dtypes import DType
from .kernels import dense_solve as DS
from .kernels import svd as SVD
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
    if p != 0 and abs(p) * float(np.finfo(x.dtype.np).max) < 1:  # 1/p overflows the dtype
        return _tiny_order_norm(a, p, kw)
    m = R.max(a, axis=axis, keepdims=True)
    safe = E.where(E.logical_or(E.equal(m, 0), E.isinf(m)), 1.0, m)
    q = E.divide(a, safe)
    s = R.sum(E.square(q), **kw) if p == 2 else R.sum(E.pow(q, p), **kw)
    s = E.sqrt(s) if p == 2 else E.pow(s, 1.0 / p)
    out = E.multiply(s, safe if keepdims else _drop(safe, axis, x.ndim))
    return E.where(E.isinf(R.max(a, **kw)), math.inf, out) if p > 0 else \
        E.pow(R.sum(E.pow(a, p), **kw), 1.0 / p)


def _tiny_order_norm(a: Array, p: float, kw: dict) -> Array:
    """The limit of the ``p``-norm of ``|x|`` (``a``) for an order too close to 0 for the
    dtype (``1/p`` is past its range): with ``k`` nonzero elements, ``inf`` for ``k > 1``,
    the one element for ``k == 1`` and 0 for none when ``p > 0``; for ``p < 0``, the
    element of a single-element vector, else 0."""
    from .namespace import elementwise as E
    from .namespace import reduction as R
    from .namespace.creation import zeros_like
    if p < 0:
        m = R.max(a, **kw)
        return m if a.size == m.size else zeros_like(m)
    k = R.sum(E.astype(E.not_equal(a, 0), a.dtype), **kw)
    return E.where(E.greater(k, 1), math.inf, R.max(a, **kw))


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


# -- factorizations on the device (kernels/dense_solve.py) ---------------------------------
def _work(x: Array) -> tuple[Array, tuple, DType]:
    """A fresh contiguous (batch, n, m) copy of ``x`` in the dtype the kernels compute in
    (float16 in float32), its batch shape and the result dtype."""
    from .namespace.elementwise import astype
    from .namespace.manipulation import reshape
    t = x.dtype
    ct = D.float32 if t is D.float16 else t
    w = astype(x, ct, copy=True)
    batch = x.shape[:-2]
    return reshape(w, (math.prod(batch),) + x.shape[-2:]), batch, t


def _back(a: Array, t: DType) -> Array:
    from .namespace.elementwise import astype
    return a if a.dtype is t else astype(a, t)


# one thread (one workgroup for the SVD) factors a whole matrix: past this size NumPy on the
# host is faster, and a long-running shader risks the driver's watchdog
DEVICE_MAX_N = 128


# Jacobi's rotations add rounding per sweep: on an NVIDIA H100 at n = 100, U diag(S) Vh was
# 1.6e-4 from A in float32 (LAPACK's 2e-6), so larger SVDs go to LAPACK on the host
SVD_DEVICE_MAX_N = 32


# Mesa's llvmpipe (lavapipe, and OpenGL on llvmpipe: the CPU standing in for a GPU) ends a
# shader invocation's loops after 65535 iterations in all, without an error, so there a
# matrix goes to the device only when the kernel's worst case stays below that
LLVMPIPE_LOOP_LIMIT = 65535


def _big(x: Array, loops: int = 0) -> bool:
    """True when ``x`` is factored on the host: past ``DEVICE_MAX_N`` on a side, or on
    llvmpipe when the kernel would run ``loops`` loop iterations or more in one thread."""
    if max(x.shape[-2:]) > DEVICE_MAX_N:
        return True
    return loops >= LLVMPIPE_LOOP_LIMIT and "llvmpipe" in x.engine.name.lower()


def _raise_if(flags: Array, op: str, what: str) -> None:
    """Raise for matrices flagged by the kernel (a sync point, as in NumPy and PyTorch)."""
    if flags.size and bool(np.any(to_numpy(flags) != 0)):
        raise np.linalg.LinAlgError(f"linalg.{op}: {what}")


def cholesky(x: Array, /, *, upper: bool = False) -> Array:
    """The Cholesky factor of symmetric positive-definite matrices."""
    from .namespace.elementwise import contiguous_copy
    from .namespace.manipulation import reshape
    x = _square(x, "cholesky")
    if _big(x, DS.cholesky_loops(x.shape[-1])):
        low = np.linalg.cholesky(to_numpy(x))
        return _up(np.swapaxes(low, -1, -2) if upper else low, x)
    w, batch, t = _work(x)
    low, bad = DS.cholesky(w)
    _raise_if(bad, "cholesky", "a matrix is not positive definite")
    low = reshape(low, x.shape)
    return _back(contiguous_copy(matrix_transpose(low)) if upper else low, t)


def _elim(x: Array, op: str) -> tuple[Array, tuple, DType]:
    w, batch, t = _work(_square(x, op))
    return DS.eliminate(w, None, False), batch, t


def det(x: Array, /) -> Array:
    """Determinants."""
    from .namespace.manipulation import reshape
    if _big(_square(x, "det"), DS.elim_loops(x.shape[-1], 0, False)):
        return _up(np.linalg.det(to_numpy(x)), x)
    d, batch, t = _elim(x, "det")
    return _back(reshape(d[:, 0], batch), t)


def slogdet(x: Array, /) -> SlogdetResult:
    """Sign and log of the absolute value of the determinants."""
    from .namespace.manipulation import reshape
    if _big(_square(x, "slogdet"), DS.elim_loops(x.shape[-1], 0, False)):
        r = np.linalg.slogdet(to_numpy(x))
        return SlogdetResult(_up(r.sign, x), _up(r.logabsdet, x))
    d, batch, t = _elim(x, "slogdet")
    return SlogdetResult(_back(reshape(d[:, 1], batch), t), _back(reshape(d[:, 2], batch), t))


def _solve(a: Array, b: Array, op: str) -> Array:
    """``a^-1 @ b`` for ``a`` (..., n, n) and ``b`` (..., n, k) of one batch shape."""
    from .namespace.manipulation import reshape
    if _big(a, DS.elim_loops(a.shape[-1], b.shape[-1], True)):
        return _up(np.linalg.solve(to_numpy(a), to_numpy(b)), b)
    w, batch, t = _work(a)
    rhs, _, _ = _work(b)
    d = DS.eliminate(w, rhs, True)
    _raise_if(d[:, 3], op, "singular matrix")
    return _back(reshape(rhs, b.shape), t)


def inv(x: Array, /) -> Array:
    """Matrix inverses."""
    from .namespace.creation import eye
    from .namespace.manipulation import broadcast_to
    x = _square(x, "inv")
    n = x.shape[-1]
    return _solve(x, broadcast_to(eye(n, dtype=x.dtype, device=x.device), x.shape), "inv")


def solve(x1: Array, x2: Array, /) -> Array:
    """Solve ``x1 @ result = x2`` (``x2`` 1-d: one right-hand side), batch dims broadcast."""
    from .namespace.elementwise import astype
    from .namespace.manipulation import broadcast_to, expand_dims, reshape
    x1 = _square(x1, "solve")
    x2 = _float(x2, "solve")
    t = D.promote(x1.dtype, x2.dtype)
    n = x1.shape[-1]
    vec = x2.ndim == 1
    b = expand_dims(x2, axis=-1) if vec else x2
    if b.shape[-2] != n:
        raise ValueError(f"linalg.solve: shapes {x1.shape} and {x2.shape} do not match")
    from .layout import broadcast_shapes
    batch = broadcast_shapes(x1.shape[:-2], b.shape[:-2], op="linalg.solve")
    a = broadcast_to(astype(x1, t, copy=False), batch + (n, n))
    b = broadcast_to(astype(b, t, copy=False), batch + b.shape[-2:])
    r = _solve(a, b, "solve")
    return reshape(r, r.shape[:-1]) if vec else r


def _eigh(x: Array, op: str) -> tuple[Array, Array, DType]:
    """Ascending eigenvalues and matching eigenvectors (columns), on the device."""
    from .namespace.indexing import take_along_axis
    from .namespace.manipulation import broadcast_to, expand_dims, reshape
    from .namespace.sorting import argsort
    x = _square(x, op)
    if _big(x, DS.jacobi_loops(x.shape[-1])):
        vals, vec = np.linalg.eigh(to_numpy(x))
        return _up(vals, x), _up(vec, x), x.dtype
    w, batch, t = _work(x)
    vec = DS.jacobi_eigh(w)
    vals = diagonal(w)
    order = argsort(vals, axis=-1, stable=True)
    vals = take_along_axis(vals, order, axis=-1)
    vec = take_along_axis(vec, broadcast_to(expand_dims(order, axis=-2), vec.shape), axis=-1)
    n = x.shape[-1]
    return reshape(vals, batch + (n,)), reshape(vec, batch + (n, n)), t


def eigh(x: Array, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices (the lower
    triangle is read, as NumPy does)."""
    vals, vec, t = _eigh(x, "eigh")
    return EighResult(_back(vals, t), _back(vec, t))


def eigvalsh(x: Array, /) -> Array:
    """Eigenvalues (ascending) of symmetric matrices."""
    vals, _, t = _eigh(x, "eigvalsh")
    return _back(vals, t)


def qr(x: Array, /, *, mode: str = "reduced") -> QRResult:
    """QR decomposition (``mode`` ``"reduced"`` or ``"complete"``), by Householder
    reflections on the device."""
    from .namespace.elementwise import contiguous_copy
    from .namespace.manipulation import reshape
    x = _matrices(x, "qr")
    if mode not in ("reduced", "complete"):
        raise ValueError(f"linalg.qr: mode must be 'reduced' or 'complete', got {mode!r}")
    if _big(x, DS.qr_loops(*x.shape[-2:])):
        q, r = np.linalg.qr(to_numpy(x), mode=mode)
        return QRResult(_up(q, x), _up(r, x))
    r, batch, t = _work(x)
    q = DS.householder_qr(r)
    m, n = x.shape[-2:]
    k = min(m, n)
    if mode == "reduced":
        q, r = contiguous_copy(q[:, :, :k]), contiguous_copy(r[:, :k, :])
    return QRResult(_back(reshape(q, batch + q.shape[1:]), t),
                    _back(reshape(r, batch + r.shape[1:]), t))


# -- the SVD on the device (kernels/svd.py), and what is built on it --------------------
def _svd(x: Array, op: str, full: bool, uv: bool) -> SVDResult:
    """U, S (descending), Vh of the matrices in ``x`` (U and Vh None without ``uv``)."""
    from .namespace.creation import eye, zeros
    from .namespace.manipulation import broadcast_to, reshape
    x = _matrices(x, op)
    m, n = x.shape[-2:]
    k = min(m, n)
    if k == 0:  # no singular values; full U and Vh are identities, as NumPy gives
        s = zeros(x.shape[:-2] + (0,), dtype=x.dtype, device=x.device)
        if not uv:
            return SVDResult(None, s, None)
        mu, nv = (m, n) if full else (0, 0)
        u = broadcast_to(eye(m, mu, dtype=x.dtype, device=x.device), x.shape[:-2] + (m, mu))
        vh = broadcast_to(eye(nv, n, dtype=x.dtype, device=x.device), x.shape[:-2] + (nv, n))
        return SVDResult(_copy(u), s, _copy(vh))
    if max(m, n) > SVD_DEVICE_MAX_N or _big(x, SVD.svd_loops(max(m, n), k, full, uv)):
        if not uv:
            return SVDResult(None, _up(np.linalg.svd(to_numpy(x), compute_uv=False), x), None)
        u, s, vh = np.linalg.svd(to_numpy(x), full_matrices=full)
        return SVDResult(_up(u, x), _up(s, x), _up(vh, x))
    wide = m < n  # the kernel factors tall matrices: a wide one as its transpose
    w, batch, t = _work(matrix_transpose(x) if wide else x)
    u, s, vh = SVD.jacobi_svd(w, full, uv, wide)
    s = _back(reshape(s, batch + (k,)), t)
    if not uv:
        return SVDResult(None, s, None)
    return SVDResult(_back(reshape(u, batch + u.shape[1:]), t), s,
                     _back(reshape(vh, batch + vh.shape[1:]), t))


def _copy(a: Array) -> Array:
    from .namespace.elementwise import contiguous_copy
    return contiguous_copy(a)


def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult:
    """Singular value decomposition ``x = U @ diag(S) @ Vh``, singular values descending
    (one-sided Jacobi on the device up to ``SVD_DEVICE_MAX_N`` on a side)."""
    return _svd(x, "svd", full_matrices, True)


def svdvals(x: Array, /) -> Array:
    """Singular values, descending (the ``S`` of :func:`svd`, bit for bit)."""
    return _svd(x, "svdvals", False, False).S


def _cutoff(s: Array, rtol: Any, shape: tuple) -> Array:
    """``rtol`` (default ``max(M, N) * eps``) times the largest singular value, per matrix
    (keepdims)."""
    from .namespace import elementwise as E
    from .namespace.manipulation import expand_dims
    from .namespace.reduction import max as _max
    if rtol is None:
        rtol = max(shape[-2:]) * float(np.finfo(s.dtype.np).eps)
    elif isinstance(rtol, Array):
        rtol = expand_dims(E.astype(rtol, s.dtype), axis=-1)
    return E.multiply(_max(s, axis=-1, keepdims=True), rtol)


def matrix_rank(x: Array, /, *, rtol: Any = None) -> Array:
    """Number of singular values above ``rtol`` times the largest."""
    from .namespace import elementwise as E
    from .namespace.creation import zeros
    from .namespace.reduction import sum as _sum
    x = _matrices(x, "matrix_rank")
    if min(x.shape[-2:]) == 0:
        return zeros(x.shape[:-2], dtype=D.default_int(), device=x.device)
    s = svdvals(x)
    big = E.greater(s, _cutoff(s, rtol, x.shape))
    return _sum(E.astype(big, D.default_int()), axis=-1)


def pinv(x: Array, /, *, rtol: Any = None) -> Array:
    """Moore-Penrose pseudo-inverse ``Vh^T @ diag(1/S) @ U^T``, dropping singular values
    at most ``rtol`` times the largest."""
    from .namespace import elementwise as E
    from .namespace.creation import zeros
    from .namespace.manipulation import expand_dims
    x = _matrices(x, "pinv")
    m, n = x.shape[-2:]
    if min(m, n) == 0:
        return zeros(x.shape[:-2] + (n, m), dtype=x.dtype, device=x.device)
    u, s, vh = svd(x, full_matrices=False)
    keep = E.greater(s, _cutoff(s, rtol, x.shape))
    inv_s = E.where(keep, E.divide(1.0, E.where(keep, s, 1.0)), 0.0)
    return matmul(E.multiply(matrix_transpose(vh), expand_dims(inv_s, axis=-2)),
                  matrix_transpose(u))


__all__ = ["cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
           "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv",
           "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm"]
