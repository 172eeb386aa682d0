"""Spectral and QR decompositions and what is built on them: ``vt.linalg.eigh``,
``eigvalsh``, ``svd``, ``svdvals``, ``qr``, ``pinv``, ``lstsq``, ``matrix_rank``, ``cond``,
``matrix_norm``, ``matrix_power``, ``matrix_exp``, ``multi_dot`` and the small helpers
(``vecdot``, ``cross``, ``diagonal``, ``inv_ex``, ``cholesky_ex``), differentiable
(batched, real).

A Function returns one array, so each decomposition's factors travel packed in one
(eigenvalues as a row above the eigenvectors; ``U``, ``S`` and ``V`` stacked by rows)
and are taken apart as views; the backward receives the packed gradient (zeros for an
unused factor) and applies PyTorch's formulas (``linalg_eig_backward`` for a symmetric
matrix, ``svd_backward``, ``linalg_qr_backward``), built from Tensor ops, so they are
differentiable again.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

from ..autograd.function import Function
from ..autograd.zero_gradient import zero_grad_to
from ..errors import AutogradError, DTypeError, LinAlgError, ShapeError
from ..limits import finfo
from ..tensor import Tensor, tensor_method
from .cross_product import cross as _cross
from .decompositions import _eye_like, _mT, _square, inv, solve_triangular
from .elementwise import where
from .matrix_builders import diag_embed
from .movement import cat
from .movement import stack as stack_rows
from .sorting import tril

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
QRResult = namedtuple("QRResult", ["Q", "R"])
LstsqResult = namedtuple("LstsqResult", ["solution", "residuals", "rank", "singular_values"])
InvExResult = namedtuple("InvExResult", ["inverse", "info"])
CholeskyExResult = namedtuple("CholeskyExResult", ["L", "info"])


def _floating(op: str, a: Tensor) -> None:
    if not a.dtype.is_floating_point:
        raise DTypeError(f"{op}: expected a floating point input, got {a.dtype.name}")


def _skew(a: Tensor) -> Tensor:
    return a - _mT(a)


def _off_diagonal_ones(e: Tensor) -> Tensor:
    """``e`` with 1 on its diagonal (the divisor of the off-diagonal terms)."""
    eye = _eye_like(e)
    return e * (1 - eye) + eye


class _Eigh(Function):
    """Packed ``(..., n + 1, n)``: the eigenvalues (ascending) above the eigenvectors."""

    def forward(ctx, a, upper=False):
        xp = ctx.xp
        # the triangle the caller names, mirrored: LAPACK reads only that one
        n = a.shape[-1]
        keep = xp.tril(xp.ones((n, n), dtype=a.dtype, device=ctx.device.native))
        if upper:
            keep = xp.matrix_transpose(keep)
        half = a * keep
        sym = half + xp.matrix_transpose(half) - half * xp.eye(n, dtype=a.dtype,
                                                               device=ctx.device.native)
        vals, vecs = xp.linalg.eigh(sym)
        out = xp.concat([xp.expand_dims(vals, axis=-2), vecs], axis=-2)
        ctx.save_for_backward(out)
        return out

    def backward(ctx, g):
        (packed,) = ctx.saved_tensors
        vals, vecs = packed[..., 0, :], packed[..., 1:, :]
        g_vals, g_vecs = g[..., 0, :], g[..., 1:, :]
        # gA = V (diag(gL) + skew(V^T gV) / 2 / (L_j - L_i)) V^T
        inner = _skew(_mT(vecs) @ g_vecs) * 0.5
        gaps = _off_diagonal_ones(vals.unsqueeze(-2) - vals.unsqueeze(-1))
        inner = inner / gaps * (1 - _eye_like(inner)) + diag_embed(g_vals)
        return vecs @ inner @ _mT(vecs)


def eigh(A: Tensor, UPLO: str = "L") -> EighResult:
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric matrices.

    Args:
        A: ``(..., n, n)``; only its lower (``UPLO='L'``) or upper (``'U'``) triangle is
            read.

    Returns:
        ``(eigenvalues (..., n), eigenvectors (..., n, n))``, the eigenvectors as columns.
    """
    _square("linalg.eigh", A)
    _floating("linalg.eigh", A)
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    packed = _Eigh.apply(A, upper=UPLO == "U")
    return EighResult(packed[..., 0, :], packed[..., 1:, :])


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues (ascending) of symmetric matrices; see :func:`eigh`."""
    return eigh(A, UPLO).eigenvalues


class _SVD(Function):
    """Packed ``(..., m + 1 + n, k)``: ``U``, then ``S`` as a row, then ``V = Vh^T``."""

    def forward(ctx, a):
        xp = ctx.xp
        u, s, vh = xp.linalg.svd(a, full_matrices=False)
        out = xp.concat([u, xp.expand_dims(s, axis=-2), xp.matrix_transpose(vh)], axis=-2)
        ctx.m = a.shape[-2]
        ctx.save_for_backward(out)
        return out

    def backward(ctx, g):
        (packed,) = ctx.saved_tensors
        m = ctx.m
        u, s, v = packed[..., :m, :], packed[..., m, :], packed[..., m + 1:, :]
        gu, gs, gv = g[..., :m, :], g[..., m, :], g[..., m + 1:, :]
        n, k = v.shape[-2], s.shape[-1]
        vh = _mT(v)
        s2 = s * s
        gaps = _off_diagonal_ones(s2.unsqueeze(-2) - s2.unsqueeze(-1))
        inner = (_skew(_mT(u) @ gu) * s.unsqueeze(-2) + s.unsqueeze(-1) * _skew(vh @ gv))
        inner = inner / gaps * (1 - _eye_like(inner)) + diag_embed(gs)
        if m > k:  # the part of gU outside U's span
            gu_s = gu / s.unsqueeze(-2)
            ga = (u @ inner + gu_s - u @ (_mT(u) @ gu_s)) @ vh
        else:
            ga = u @ inner @ vh
        if n > k:  # the part of gV outside V's span
            s_gvh = _mT(gv) / s.unsqueeze(-1)
            ga = ga + u @ (s_gvh - (s_gvh @ v) @ vh)
        return ga


def svd(A: Tensor, full_matrices: bool = True) -> SVDResult:
    """Singular value decomposition ``A = U diag(S) Vh``.

    Args:
        A: ``(..., m, n)``.
        full_matrices: ``U`` ``(m, m)`` and ``Vh`` ``(n, n)`` (the extra columns and rows
            carry no gradient, as in PyTorch) instead of ``(m, k)`` and ``(k, n)``,
            ``k = min(m, n)``.

    Returns:
        ``(U, S, Vh)``, ``S`` descending.
    """
    if A.ndim < 2:
        raise ShapeError(f"linalg.svd: expected matrices (..., m, n), got {A.shape}")
    _floating("linalg.svd", A)
    m, n = A.shape[-2:]
    packed = _SVD.apply(A)
    u, s, vh = packed[..., :m, :], packed[..., m, :], _mT(packed[..., m + 1:, :])
    k = s.shape[-1]
    if full_matrices and (m > k or n > k):
        xp = A.device.xp
        full_u, _, full_vh = xp.linalg.svd(A.detach().array, full_matrices=True)
        if m > k:
            u = cat([u, Tensor._make(full_u, A.device)[..., :, k:]], -1)
        if n > k:
            vh = cat([vh, Tensor._make(full_vh, A.device)[..., k:, :]], -2)
    return SVDResult(u, s, vh)


class _QR(Function):
    """Packed ``(..., m + k, n)``: ``Q`` (its ``k`` columns, zero-padded to ``n``) above
    ``R``; ``k = min(m, n)``."""

    def forward(ctx, a):
        xp = ctx.xp
        q, r = xp.linalg.qr(a, mode="reduced")
        m, n = a.shape[-2:]
        k = r.shape[-2]
        if k < n:
            pad = xp.zeros((*q.shape[:-1], n - k), dtype=q.dtype, device=ctx.device.native)
            q = xp.concat([q, pad], axis=-1)
        out = xp.concat([q, r], axis=-2)
        ctx.mk = (m, k)
        ctx.save_for_backward(out)
        return out

    def backward(ctx, g):
        (packed,) = ctx.saved_tensors
        m, k = ctx.mk
        q, r = packed[..., :m, :k], packed[..., m:, :]
        gq, gr = g[..., :m, :k], g[..., m:, :]
        n = r.shape[-1]
        if n > k:  # A = Q [R1 R2]: the square part, with R2's share of Q's gradient
            r1, r2, gr1, gr2 = r[..., :k], r[..., k:], gr[..., :k], gr[..., k:]
            ga = _qr_square_backward(q, r1, gq + _r2_share(q, r2, gr2), gr1)
            return cat([ga, q @ gr2], -1)
        return _qr_square_backward(q, r, gq, gr)


def _r2_share(q: Tensor, r2: Tensor, gr2: Tensor) -> Tensor:
    """``Y gR2^T`` with ``Y = Q R2``: the gradient ``R2`` sends to ``Q``."""
    return q @ r2 @ _mT(gr2)


def _qr_square_backward(q: Tensor, r: Tensor, gq: Tensor, gr: Tensor) -> Tensor:
    """``gA = (gQ + Q copyltu(M)) R^-T``, ``M = R gR^T - gQ^T Q`` (``m >= n``)."""
    mm = r @ _mT(gr) - _mT(gq) @ q
    low = tril(mm, -1)
    sym = low + _mT(low) + diag_embed(mm.diagonal(0, -2, -1))
    rhs = gq + q @ sym
    return _mT(solve_triangular(r, _mT(rhs), upper=True))


class _RefusesBackward(Function):
    """``x`` as it is, in the graph of ``a``; a backward through it raises ``why``."""

    def forward(ctx, x, a, why=""):
        ctx.why = why
        return x

    def backward(ctx, g):
        raise AutogradError(ctx.why)


def qr(A: Tensor, mode: str = "reduced") -> QRResult:
    """QR decomposition ``A = Q R`` (``Q`` orthonormal columns, ``R`` upper triangular).

    Args:
        mode: ``'reduced'`` (``Q`` ``(m, k)``, ``R`` ``(k, n)``), ``'complete'`` (``Q``
            ``(m, m)``, ``R`` ``(m, n)``; not differentiable for tall ``A``, as in
            PyTorch) or ``'r'`` (``R`` alone, ``Q`` empty; not differentiable).
    """
    if A.ndim < 2:
        raise ShapeError(f"linalg.qr: expected matrices (..., m, n), got {A.shape}")
    _floating("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    m, n = A.shape[-2:]
    if mode == "r" or (mode == "complete" and m > n):
        q, r = A.device.xp.linalg.qr(A.array, mode="complete" if mode == "complete"
                                     else "reduced")
        # as in PyTorch: the values come, and a backward through them is refused
        why = ("linalg.qr: the derivative depends on Q, which mode='r' does not compute; "
               "use mode='reduced' to differentiate through linalg.qr") if mode == "r" else (
            f"linalg.qr: mode='complete' is not differentiable for a {m}x{n} input (more "
            "rows than columns), as in PyTorch; use mode='reduced'")
        r = _RefusesBackward.apply(Tensor._make(r, A.device), A, why=why)
        if mode == "r":
            return QRResult(A.new_zeros(0), r)
        return QRResult(_RefusesBackward.apply(Tensor._make(q, A.device), A, why=why), r)
    packed = _QR.apply(A)
    k = min(m, n)
    return QRResult(packed[..., :m, :k], packed[..., m:, :])


@tensor_method()
def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential: scaling and squaring of a degree-18 Taylor polynomial
    (Horner), differentiable through its products."""
    _square("linalg.matrix_exp", A)
    _floating("linalg.matrix_exp", A)
    norm = float(A.detach().abs().sum(-2).amax().item()) if A.numel() else 0.0
    squarings = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    x = A / (2.0 ** squarings)
    eye_n = _eye_like(A)
    out = eye_n + x / 18.0
    for j in range(17, 0, -1):
        out = eye_n + (x @ out) / float(j)
    for _ in range(squarings):
        out = out @ out
    return out


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *,
          driver: str | None = None) -> LstsqResult:
    """The least-squares (minimum-norm) solution of ``A X = B``, as PyTorch's CPU default
    (``gelsy``): empty ``residuals`` and ``singular_values``, the numerical ``rank``."""
    if A.ndim < 2:
        raise ShapeError(f"linalg.lstsq: expected matrices (..., m, n), got {A.shape}")
    vector = B.ndim == A.ndim - 1
    rhs = B.unsqueeze(-1) if vector else B
    if rhs.shape[-2] != A.shape[-2]:
        raise ShapeError(f"linalg.lstsq: A {A.shape} and B {B.shape} need the same rows")
    x = pinv(A, rtol=rcond) @ rhs
    empty = A.new_zeros(0)
    return LstsqResult(x.squeeze(-1) if vector else x, empty, matrix_rank(A, rtol=rcond),
                       empty)


def svdvals(A: Tensor) -> Tensor:
    """The singular values of ``A`` (descending); see :func:`svd`."""
    return svd(A, full_matrices=False).S


def pinv(A: Tensor, *, atol: float | None = None, rtol: float | None = None,
         hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse: singular values at most ``max(atol, rtol * S_max)``
    are taken as zero (``rtol`` defaults to ``eps * max(m, n)`` without ``atol``)."""
    u, s, vh = svd(A, full_matrices=False)
    cut = _cutoff(A, s, atol, rtol)
    keep = s > cut.unsqueeze(-1)
    inv_s = keep.to(s.dtype) / where(keep, s, 1.0)
    return _mT(vh) @ (inv_s.unsqueeze(-1) * _mT(u))


def _cutoff(A: Tensor, s: Tensor, atol: float | None, rtol: float | None) -> Tensor:
    """PyTorch's tolerance: ``max(atol, rtol * S_max)``, ``rtol`` by default ``eps *
    max(m, n)`` (0 when only ``atol`` is given)."""
    if rtol is None:
        rtol = 0.0 if atol not in (None, 0) else finfo(A.dtype).eps * max(A.shape[-2:])
    top = s.amax(-1) if s.shape[-1] else s.sum(-1)
    return (top * rtol).clamp(min=atol or 0.0).detach()


def matrix_rank(A: Tensor, *, atol: float | None = None, rtol: float | None = None,
                hermitian: bool = False) -> Tensor:
    """The number of singular values above the tolerance of :func:`pinv` (int64)."""
    s = svdvals(A.detach())
    return (s > _cutoff(A, s, atol, rtol).unsqueeze(-1)).sum(-1)


def matrix_norm(A: Tensor, ord: Any = "fro", dim: tuple[int, int] = (-2, -1),
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Matrix norms over ``dim``: ``'fro'``, ``'nuc'`` (sum of singular values), ``2`` /
    ``-2`` (largest / smallest singular value), ``1`` / ``-1`` (max / min column sum of
    absolute values), ``inf`` / ``-inf`` (max / min row sum)."""
    if A.ndim < 2:
        raise ShapeError(f"linalg.matrix_norm: expected matrices, got shape {A.shape}")
    if dtype is not None:
        A = A.to(dtype)
    _floating("linalg.matrix_norm", A)
    d0, d1 = (d % A.ndim for d in dim)
    if d0 == d1:
        raise ShapeError(f"linalg.matrix_norm: dim {dim} must name two different dims")
    x = A.movedim((d0, d1), (-2, -1))
    inf = float("inf")
    if ord == "fro":  # the vector norm of the entries: float16's squares can overflow,
        from .reduce import vector_norm  # its float32 accumulation does not

        out = vector_norm(x, 2, (-2, -1))
    elif ord in ("nuc", 2, -2):
        s = svdvals(x)
        out = s.sum(-1) if ord == "nuc" else (_max0(s) if ord == 2 else s.amin(-1))
    elif ord in (1, -1, inf, -inf):
        sums = x.abs().sum(-2 if ord in (1, -1) else -1)
        out = _max0(sums) if ord in (1, inf) else sums.amin(-1)
    else:
        raise ValueError(f"linalg.matrix_norm: unknown ord {ord!r}; expected 'fro', 'nuc', "
                         "1, -1, 2, -2, inf or -inf")
    if keepdim:
        for d in sorted((d0, d1)):
            out = out.unsqueeze(d)
    return out


def _max0(x: Tensor) -> Tensor:
    """The largest entry along the last dim, 0 where it is empty (PyTorch's matrix norms
    of empty matrices; the smallest stays refused, as there)."""
    return x.amax(-1) if x.shape[-1] else x.sum(-1)


def cond(A: Tensor, p: Any = None) -> Tensor:
    """The condition number ``norm(A) * norm(A^-1)`` (``p=None`` or 2: the ratio of the
    extreme singular values); 0 for empty matrices, as PyTorch."""
    if A.ndim >= 2 and 0 in A.shape[-2:]:
        return A.new_zeros(A.shape[:-2])
    if p in (None, 2, -2):
        s = svdvals(A)
        top, low = s.amax(-1), s.amin(-1)
        return low / top if p == -2 else top / low
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


@tensor_method()
def matrix_power(A: Tensor, n: int) -> Tensor:
    """``A`` multiplied by itself ``n`` times (``n < 0``: of its inverse; 0: identity)."""
    _square("linalg.matrix_power", A)
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg.matrix_power: n must be an int, got {type(n).__name__}")
    if n == 0:  # the identity, its gradient zeros (PyTorch's), not None
        return zero_grad_to(_eye_like(A).expand(*A.shape).clone(), A)
    base = inv(A) if n < 0 else A
    out = None
    n = abs(n)
    while n:  # binary powering
        if n & 1:
            out = base if out is None else out @ base
        n >>= 1
        if n:
            base = base @ base
    return out


def multi_dot(tensors: list[Tensor]) -> Tensor:
    """The product of a chain of matrices (the first may be a vector, as the last)."""
    if len(tensors) < 2:
        raise ValueError("linalg.multi_dot: expected at least two tensors")
    for i, t in enumerate(tensors):
        ends = i in (0, len(tensors) - 1)
        if not (t.ndim == 2 or (ends and t.ndim == 1)):
            raise ShapeError(f"linalg.multi_dot: tensor {i} must be 2-D (the first and last "
                             f"may be 1-D), got shape {t.shape}")
    out = tensors[0]
    for t in tensors[1:]:
        out = out @ t
    return out


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot products of ``x`` and ``y`` (broadcast) along ``dim``."""
    return (x * y).sum(dim)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (the last by default)."""
    return _cross(input, other, dim)


def inv_ex(A: Tensor, *, check_errors: bool = False) -> InvExResult:
    """``(inverse, info)``: ``info`` is 0 where inverted, else (LAPACK's) the 1-based
    column of the first zero pivot: the first ``k`` whose leading ``k`` columns are
    dependent (the inverse is NaN there)."""
    _square("linalg.inv_ex", A)
    try:
        return InvExResult(inv(A), A.new_zeros(A.shape[:-2], dtype="int32"))
    except LinAlgError:
        if check_errors:
            raise
    return InvExResult(*_each_matrix(A, inv, lambda m: next(
        (k for k in range(1, m.shape[-1] + 1) if int(matrix_rank(m[:, :k]).item()) < k), 0)))


def _each_matrix(A: Tensor, factor: Any, first_bad: Any) -> tuple[Tensor, Tensor]:
    """``factor`` of each matrix of ``A`` alone, NaN where ``first_bad(matrix)`` (the
    LAPACK-style ``info``) is not 0; returns the results and the int32 infos."""
    n = A.shape[-1]
    flat = A.detach().reshape(-1, n, n)
    outs, infos = [], []
    for i in range(flat.shape[0]):
        info = first_bad(flat[i])
        outs.append(factor(flat[i]) if not info else flat[i] * math.nan)
        infos.append(info)
    return (stack_rows(outs).reshape(A.shape),
            A.new_tensor(infos, dtype="int32").reshape(A.shape[:-2]))


def cholesky_ex(A: Tensor, *, upper: bool = False,
                check_errors: bool = False) -> CholeskyExResult:
    """``(L, info)``: ``info`` is 0 where ``A`` is positive-definite, else the order of its
    first leading minor that is not (``L`` is NaN there)."""
    from .decompositions import cholesky

    try:
        return CholeskyExResult(cholesky(A, upper=upper),
                                A.new_zeros(A.shape[:-2], dtype="int32"))
    except LinAlgError:
        if check_errors:
            raise
    # some matrix is not positive-definite: factor each one alone, finding its minor
    low, info = _each_matrix(A, cholesky, lambda m: next(
        (k for k in range(1, m.shape[-1] + 1) if _not_pd(m[:k, :k])), 0))
    return CholeskyExResult(_mT(low) if upper else low, info)


def _not_pd(m: Tensor) -> bool:
    from .decompositions import cholesky

    try:
        cholesky(m)
        return False
    except LinAlgError:
        return True


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonals of ``A`` over ``dim1``, ``dim2`` (PyTorch's default: the last two)."""
    return A.diagonal(offset, dim1, dim2)


# -- PyTorch's top-level spellings -----------------------------------------------------


@tensor_method("svd")
def legacy_svd(input: Tensor, some: bool = True, compute_uv: bool = True) -> SVDResult:
    """``torch.svd``: ``(U, S, V)`` with ``V`` (not ``Vh``); ``some=False`` gives the full
    ``U`` and ``V``; without ``compute_uv``, ``U`` and ``V`` are zeros."""
    u, s, vh = svd(input, full_matrices=not some)
    if not compute_uv:
        return SVDResult(u.detach() * 0, s, _mT(vh).detach() * 0)
    return SVDResult(u, s, _mT(vh))


@tensor_method()
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: :func:`pinv` with singular values below ``rcond * S_max`` cut."""
    return pinv(input, rtol=rcond)


__all__ = ["pinverse", "matrix_exp", "matrix_power"]
