"""Cholesky factorisation and triangular solves: ``vt.linalg.cholesky``,
``vt.linalg.solve_triangular``, ``vt.linalg.solve``, differentiable (batched).

Forward uses the standard's ``xp.linalg.cholesky`` / ``xp.linalg.solve``; the backward
passes are composed of these same ops, so they are differentiable again.
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
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


class Det(Function):
    def forward(ctx, a):
        out = ctx.xp.linalg.det(a)
        ctx.save_for_backward(a, out)
        return out

    def backward(ctx, g):
        a, d = ctx.saved_tensors
        # d det(A) / dA = det(A) A^-T (singular matrices get a NaN-free zero only via inv)
        return (g * d).unsqueeze(-1).unsqueeze(-1) * _mT(inv(a))


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


def slogdet(A: Tensor) -> tuple[Tensor, Tensor]:
    """``(sign, log|det A|)``, differentiable in the log-magnitude."""
    d = det(A)
    return d.sign(), d.abs().log()


def logdet(A: Tensor) -> Tensor:
    """``log det A`` (NaN for a negative determinant, as PyTorch)."""
    return det(A).log()


inverse = inv  # ``vt.inverse`` as ``torch.inverse``

__all__ = ["det", "inverse", "logdet", "slogdet"]
