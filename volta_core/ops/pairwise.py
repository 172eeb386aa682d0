"""Distances: ``cdist`` between two sets of row vectors, ``dist`` between two tensors."""

from __future__ import annotations

import math

from ..autograd.zero_gradient import zero_grad_to
from ..errors import DTypeError, ShapeError
from ..tensor import Tensor


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of ``x1`` and each row of ``x2``.

    Differentiable; composed of broadcast differences, so it runs on every backend.
    As in PyTorch, the gradient of a zero distance is zero.

    Args:
        x1: ``(B..., P, M)``.
        x2: ``(B..., R, M)``.
        p: the norm's order, ``p >= 0`` (``0`` counts differing coordinates, ``inf``
            takes the largest difference).
        compute_mode: accepted for PyTorch compatibility (the result is the direct one).

    Returns:
        ``(B..., P, R)``.
    """
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"cdist: expected x1 (..., P, M) and x2 (..., R, M) with the same "
                         f"M, got {x1.shape} and {x2.shape}")
    if not x1.dtype.is_floating_point or not x2.dtype.is_floating_point:
        raise DTypeError(f"cdist only supports floating-point dtypes, X1 got: "
                         f"{x1.dtype.name}, X2 got: {x2.dtype.name}")
    if p < 0:
        raise ValueError(f"cdist only supports non-negative p values, got {p}")
    from .elementwise import where

    diff = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs()
    if p == 0:  # a count: its gradient is zeros (PyTorch's), not None
        return zero_grad_to(zero_grad_to((diff != 0).to(diff.dtype).sum(-1), x1), x2)
    if math.isinf(p):
        return diff.amax(-1)
    if p == 1:
        return diff.sum(-1)
    total = diff.pow(p).sum(-1)
    zero = total == 0
    safe = where(zero, total.new_ones(()), total)
    return where(zero, total.new_zeros(()), safe.pow(1.0 / p))


def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The p-norm of ``input - other`` (broadcast), over all elements (PyTorch's
    ``norm(input - other, p)``: float16/bfloat16 accumulate in float32)."""
    from .reduce import vector_norm

    return vector_norm(input - other, p)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between the rows of ``(N, M)`` ``input``, for each pair
    ``i < j``, in row-major order (the upper triangle of ``cdist(input, input)``)."""
    from .matrix_builders import triu_indices

    if input.ndim != 2:
        raise ShapeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    i, j = triu_indices(input.shape[0], input.shape[0], 1, device=input.device)
    diff = (input[i] - input[j]).abs()
    if p == 0:
        return (diff != 0).to(diff.dtype).sum(-1)
    if math.isinf(p):
        return diff.amax(-1)
    from .elementwise import where

    total = diff.pow(p).sum(-1)
    zero = total == 0
    return where(zero, 0.0, where(zero, 1.0, total).pow(1.0 / p))


__all__ = ["cdist", "dist", "pdist"]
