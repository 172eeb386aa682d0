"""Cholesky factorisation, determinants and solves: ``vt.linalg.cholesky``,
``solve_triangular``, ``solve``, ``det``/``slogdet``, ``tensorinv``/``tensorsolve``, and
``vt.cholesky_solve``/``cholesky_inverse``/``triangular_solve``; differentiable (batched).

Forward uses the standard's ``xp.linalg.cholesky`` / ``xp.linalg.solve``; the backward
passes are composed of these same ops, so they are differentiable again.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

from ..autograd.function import Function
from ..autograd.zero_gradient import zero_grad_to
from ..errors import LinAlgError, ShapeError
from ..tensor import Tensor
from .sorting import tril, triu


def _square(op: str, a: Tensor) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"{op}: expected square matrices (..., n, n), got {a.shape}")


def _mT(x: Tensor) -> Tensor:
    return x.transpose(-2, -1)


def factorised(op: str, what: str, fn: Any, *args: Any) -> Any:
    """``fn(*args)`` (a backend's LAPACK-like call), its ``LinAlgError`` (NumPy's, raised
    by every backend) as Volta's, naming ``op`` and ``what`` went wrong."""
    try:
        return fn(*args)
    except Exception as e:
        if type(e).__name__ == "LinAlgError":
            raise LinAlgError(f"{op}: the factorisation could not be completed because the "
                              f"input is {what}") from e
        raise


class Cholesky(Function):
    def forward(ctx, a):
        xp = ctx.xp
        out = factorised("linalg.cholesky", "not positive-definite", xp.linalg.cholesky, a)
        if bool(xp.any(xp.isnan(out))):
            raise LinAlgError("linalg.cholesky: the input is not positive-definite")
        ctx.save_for_backward(out)
        return out

    def backward(ctx, g):
        (low,) = ctx.saved_tensors
        # A = L L^T: gA = L^-T Phi(L^T gL) L^-1, symmetrised (Phi: lower part, half diagonal)
        p = _mT(low) @ tril(g)
        p = tril(p) - 0.5 * (p * _eye_like(p))
        x = solve(_mT(low), solve(_mT(low), _mT(p)).transpose(-2, -1))
        return 0.5 * (x + _mT(x))


def _eye_like(x: Tensor) -> Tensor:
    from ..creation import eye

    return eye(x.shape[-1], dtype=x.dtype, device=x.device)


class Solve(Function):
    def forward(ctx, a, b):
        x = factorised("linalg.solve", "singular", ctx.xp.linalg.solve, a, b)
        ctx.save_for_backward(a, x)
        return x

    def backward(ctx, g):
        a, x = ctx.saved_tensors
        gb = solve(_mT(a), g)
        ga = -(gb @ _mT(x)) if ctx.needs_input_grad[0] else None
        return ga, gb


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor ``L`` (lower) of symmetric positive-definite ``A = L L^T``.

    Raises ``LinAlgError`` when ``A`` is not positive-definite.
    """
    _square("linalg.cholesky", A)
    low = Cholesky.apply(A)
    return _mT(low) if upper else low


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """The solution ``X`` of ``A X = B`` (``X A = B`` with ``left=False``)."""
    _square("linalg.solve", A)
    if not left:
        return _mT(solve(_mT(A), _mT(B)))
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    if vector:
        return Solve.apply(A, B.unsqueeze(-1)).squeeze(-1)
    return Solve.apply(A, B)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """The solution ``X`` of ``A X = B`` for triangular ``A`` (only its ``upper`` or
    lower triangle is read; ``unitriangular`` takes its diagonal as ones)."""
    _square("linalg.solve_triangular", A)
    if B.ndim < 2:
        raise ShapeError(f"linalg.solve_triangular: B must be a batch of matrices, got "
                         f"shape {B.shape}")
    t = triu(A) if upper else tril(A)
    if unitriangular:
        eye = _eye_like(t)
        t = t * (1 - eye) + eye
    return solve(t, B, left=left)


class _CholeskySolve(Function):
    def forward(ctx, b, factor, upper=False):
        # two triangular solves (on the factor's triangle), not one with L L^T: the
        # factor's condition number is the square root of A's
        f = Tensor._make(factor, ctx.device)
        low = _mT(f) if upper else f
        x = solve_triangular(_mT(low), solve_triangular(low, Tensor._make(b, ctx.device),
                                                        upper=False), upper=True).array
        ctx.upper = upper
        ctx.save_for_backward(factor, x)
        return x

    def backward(ctx, g):
        factor, x = ctx.saved_tensors
        gb = cholesky_solve(g, factor, ctx.upper)
        # PyTorch's: the factor's gradient as a full matrix (not only its triangle)
        common = gb @ _mT(x)
        common = common + _mT(common)
        gf = -(factor @ common) if ctx.upper else -(common @ factor)
        return gb, gf


def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False) -> Tensor:
    """The solution ``X`` of ``A X = B`` from the Cholesky factor of ``A`` (``L`` lower,
    ``A = L L^T``; or upper, ``A = U^T U``, with ``upper=True``); gradients as PyTorch's,
    the factor's a full matrix."""
    _square("cholesky_solve", L)
    return _CholeskySolve.apply(B, L, upper=upper)


def cholesky_inverse(L: Tensor, upper: bool = False) -> Tensor:
    """The inverse of ``A`` from its Cholesky factor (see :func:`cholesky_solve`)."""
    _square("cholesky_inverse", L)
    return cholesky_solve(_eye_like(L).expand(*L.shape), L, upper)


TriangularSolveResult = namedtuple("TriangularSolveResult", ["solution", "cloned_coefficient"])


def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> TriangularSolveResult:
    """``(X, A.clone())`` with ``X`` solving ``A X = b`` (``A^T X = b`` with ``transpose``)
    for triangular ``A`` (PyTorch's older ``torch.triangular_solve``; its arguments come in
    the opposite order to :func:`solve_triangular`'s)."""
    a = _mT(A) if transpose else A
    x = solve_triangular(a, b, upper=upper != transpose, unitriangular=unitriangular)
    return TriangularSolveResult(x, A.clone())


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of ``A`` as a linear map from its last dims to its first ``ind`` dims:
    the result has shape ``A.shape[ind:] + A.shape[:ind]``."""
    if ind <= 0:
        raise ValueError(f"linalg.tensorinv: expected a strictly positive integer for 'ind', "
                         f"but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise ShapeError(f"linalg.tensorinv: expected prod(shape[:ind]) == prod(shape[ind:]), "
                         f"got {rows} and {cols} for shape {A.shape} and ind={ind}")
    return inv(A.reshape(rows, cols)).reshape(*A.shape[ind:], *A.shape[:ind])


def tensorsolve(A: Tensor, B: Tensor, dims: tuple | None = None) -> Tensor:
    """The ``X`` with ``tensordot(A, X, X.ndim) == B`` (``dims`` of ``A`` moved to its
    end first): ``X`` has shape ``A.shape[B.ndim:]``."""
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = A.permute(*[d for d in range(A.ndim) if d not in dims], *dims)
    rows, cols = math.prod(B.shape), math.prod(A.shape[B.ndim:])
    if tuple(A.shape[:B.ndim]) != tuple(B.shape) or rows != cols:
        raise ShapeError(f"linalg.tensorsolve: A of shape {A.shape} does not map onto B of "
                         f"shape {B.shape} as a square system (A's first dims must be B's "
                         "shape, and its other dims hold as many elements)")
    x = solve(A.reshape(rows, cols), B.reshape(rows))
    return x.reshape(*A.shape[B.ndim:])


GeqrfResult = namedtuple("geqrf", ["a", "tau"])


def geqrf(input: Tensor) -> GeqrfResult:
    """LAPACK's ``geqrf``: the QR factorisation of ``input (..., m, n)`` as Householder
    reflectors, ``(a, tau)`` with ``R`` in ``a``'s upper triangle and the vectors below its
    diagonal (see :func:`householder_product`), as LAPACK's ``dlarfg`` makes them (a
    column already zero below its diagonal gets ``tau = 0``). No gradient, as PyTorch's."""
    from ..autograd.grad_mode import no_grad
    from ..creation import arange
    from .elementwise import where

    if input.ndim < 2:
        raise ShapeError(f"geqrf: input must have at least 2 dimensions, got a tensor of "
                         f"shape {tuple(input.shape)}")
    m, n = input.shape[-2], input.shape[-1]
    k = min(m, n)
    with no_grad():
        a = input.detach().clone()
        taus = []
        rows = arange(m, device=a.device).reshape(m, 1)
        for j in range(k):
            col = a[..., :, j:j + 1]
            alpha = col[..., j:j + 1, :]
            below = where(rows > j, col, 0.0)
            xnorm = (below * below).sum(-2, keepdim=True).sqrt()
            norm = (alpha * alpha + xnorm * xnorm).sqrt()
            beta = where(alpha >= 0, -norm, norm)
            reflect = xnorm != 0
            tau = where(reflect, (beta - alpha) / beta, 0.0)
            v = where(rows > j, below / where(reflect, alpha - beta, 1.0),
                      where(rows == j, 1.0, 0.0))
            if j + 1 < n:  # the later columns: (I - tau v v^T) A[:, j+1:]
                rest = a[..., :, j + 1:]
                a[..., :, j + 1:] = rest - (tau * v) * (_mT(v) @ rest)
            a[..., :, j:j + 1] = where(rows > j, v, where(rows == j, where(reflect, beta, alpha),
                                                           col))
            taus.append(tau[..., 0, :])
        from .joining import cat

        tau = cat(taus, -1) if taus else a.new_zeros(*a.shape[:-2], 0)
    return GeqrfResult(a, tau)


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first ``n`` columns of ``H_1 H_2 ... H_k`` (LAPACK's ``orgqr``), ``A (..., m, n)``
    holding the Householder vectors below its diagonal (``v_i = (0, ..., 0, 1,
    A[i+1:, i])``), ``tau (..., k)`` their scales, ``H_i = I - tau_i v_i v_i^T``. Built of
    differentiable ops, so its gradients are those of the product."""
    if A.ndim < 2:
        raise ShapeError(f"linalg.householder_product: input must have at least 2 "
                         f"dimensions, got a tensor of shape {tuple(A.shape)}")
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1] if tau.ndim else 0
    if m < n:
        raise ShapeError(f"linalg.householder_product: input.shape[-2] must be greater than "
                         f"or equal to input.shape[-1], got shape {tuple(A.shape)}")
    if k > n or tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise ShapeError(f"linalg.householder_product: tau of shape {tuple(tau.shape)} does "
                         f"not fit input of shape {tuple(A.shape)} (tau.shape[-1] <= "
                         "input.shape[-1], the same batch dims)")
    from ..creation import arange, eye
    from .elementwise import where

    rows = arange(m, device=A.device).reshape(m, 1)
    q = eye(m, n, dtype=A.dtype, device=A.device).expand(*A.shape)
    if k == 0:  # no reflector: the identity, with zero gradients as PyTorch's
        return zero_grad_to(zero_grad_to(q, A), tau)
    for i in range(k - 1, -1, -1):  # Q = H_1 (H_2 (... (H_k I)))
        v = where(rows > i, A[..., :, i:i + 1], where(rows == i, 1.0, 0.0))
        q = q - (tau[..., i:i + 1, None] * v) * (_mT(v) @ q)
    return q


class Det(Function):
    def forward(ctx, a):
        out = ctx.xp.linalg.det(a)
        ctx.save_for_backward(a, out)
        return out

    def backward(ctx, g):
        a, d = ctx.saved_tensors
        # d det(A) / dA is the cofactor matrix: det(A) A^-T, or from the SVD where some
        # determinant is 0 (the cofactors of a singular matrix need not vanish)
        if a.numel() and not bool((d != 0).all()):
            return g.unsqueeze(-1).unsqueeze(-1) * _cofactors(a)
        return (g * d).unsqueeze(-1).unsqueeze(-1) * _mT(inv(a))


def _cofactors(a: Tensor) -> Tensor:
    """The cofactor matrices of ``a``, singular ones too: with ``A = U diag(s) V^T``, they
    are ``det(U) det(V) U diag(prod of the other s_j) V^T`` (differentiable again)."""
    from ..creation import ones
    from .movement import cat
    from .spectral import svd

    u, s, vh = svd(a)
    one = ones((*s.shape[:-1], 1), dtype=s.dtype, device=s.device)
    before = cat([one, s[..., :-1]], -1).cumprod(-1)  # prod of s_j, j < i
    after = cat([s[..., 1:], one], -1).flip(-1).cumprod(-1).flip(-1)  # j > i
    sign = (det(u) * det(vh)).unsqueeze(-1).unsqueeze(-1)
    return sign * ((u * (before * after).unsqueeze(-2)) @ vh)


class Inv(Function):
    def forward(ctx, a):
        out = factorised("linalg.inv", "singular", ctx.xp.linalg.inv, a)
        ctx.save_for_backward(out)
        return out

    def backward(ctx, g):
        (ainv,) = ctx.saved_tensors
        return -(_mT(ainv) @ g @ _mT(ainv))


def det(A: Tensor) -> Tensor:
    """The determinant of square matrices ``A`` (batched), differentiable."""
    _square("linalg.det", A)
    return Det.apply(A)


def inv(A: Tensor) -> Tensor:
    """The inverse of square matrices ``A`` (batched), differentiable."""
    _square("linalg.inv", A)
    return Inv.apply(A)


class _LogAbsDet(Function):
    """``log|det A|`` (computed with its sign by the backend's ``slogdet``)."""

    def forward(ctx, a, logabs=None):
        ctx.save_for_backward(a)
        ctx.singular = bool(ctx.xp.any(logabs == -float("inf")))
        return logabs

    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        if ctx.singular:  # A^-T is infinite: the cofactors over det(A) (+-0), as PyTorch's
            return (g / det(a)).unsqueeze(-1).unsqueeze(-1) * _cofactors(a)
        return g.unsqueeze(-1).unsqueeze(-1) * _mT(inv(a))


SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])


def slogdet(A: Tensor) -> tuple[Tensor, Tensor]:
    """``(sign, log|det A|)``, differentiable in the log-magnitude. From the LU factors'
    logarithms, as PyTorch's: no overflow where ``det`` itself would be infinite."""
    _square("linalg.slogdet", A)
    sign, logabs = A.device.xp.linalg.slogdet(A.array)
    sign = zero_grad_to(Tensor._make(sign, A.device), A)  # PyTorch's: zeros, not None
    return SlogdetResult(sign, _LogAbsDet.apply(A, logabs=logabs))


def logdet(A: Tensor) -> Tensor:
    """``log det A`` (NaN for a negative determinant, -inf for a singular one, as
    PyTorch)."""
    sign, logabs = slogdet(A)
    return logabs + sign.log()


inverse = inv  # ``vt.inverse`` as ``torch.inverse``

__all__ = ["det", "inverse", "logdet", "slogdet", "cholesky_solve", "cholesky_inverse",
           "triangular_solve"]
