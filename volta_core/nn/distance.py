"""Vector normalisation and similarity: ``normalize`` and ``cosine_similarity``."""

from __future__ import annotations

from ..amp.dispatch import autocast_op
from ..dtypes import promote_types
from ..errors import ShapeError
from ..ops._util import broadcast_shapes, normalize_dim
from ..ops.reduce import vector_norm
from ..tensor import Tensor
from .module import Module


def _floating(op: str, x: Tensor) -> Tensor:
    if type(x) is not Tensor:
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    return x if x.dtype.is_floating_point else x.float()


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """``input / max(||input||_p, eps)`` with the norm taken along ``dim``.

    Args:
        input: a floating tensor.
        p: the order of the norm.
        dim: the dimension holding the vectors.
        eps: the smallest divisor (keeps zero vectors at zero).
    """
    x = _floating("normalize", input)
    if x.ndim == 0:
        raise ShapeError("normalize: expected a tensor with at least 1 dim, got a 0-d tensor")
    d = normalize_dim("normalize", dim, x.ndim)
    return x / vector_norm(x, p, d, keepdim=True).clamp_min(eps)


@autocast_op("cosine_similarity")
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """Cosine of the angle between ``x1`` and ``x2`` seen as vectors along ``dim``.

    Inputs broadcast. Each is divided by its norm clamped to at least ``eps``; as in
    PyTorch, the clamp is not differentiated (the gradient flows as if unclamped).

    Args:
        x1: a tensor.
        x2: a tensor broadcast against ``x1``.
        dim: the dimension holding the vectors.
        eps: the smallest norm divided by.
    """
    a, b = _floating("cosine_similarity", x1), _floating("cosine_similarity", x2)
    if a.dtype is not b.dtype:
        dt = promote_types(a.dtype, b.dtype)
        a, b = a.to(dt), b.to(dt)
    shape = broadcast_shapes("cosine_similarity", a.shape, b.shape)
    a, b = a.expand(shape), b.expand(shape)
    d = normalize_dim("cosine_similarity", dim, len(shape))

    def unit(v: Tensor) -> Tensor:
        n = vector_norm(v, 2, d, keepdim=True)
        return v / (n + (n.detach().clamp_min(eps) - n.detach()))

    return (unit(a) * unit(b)).sum(d)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The ``p``-norm distance ``||x1 - x2 + eps||_p`` along the last dim (inputs broadcast).

    Args:
        x1: ``(N, D)`` or ``(D,)``.
        x2: broadcast against ``x1``.
        p: the norm's order.
        eps: added to the difference (keeps the gradient finite at 0).
        keepdim: keep the reduced dim.
    """
    a, b = _floating("pairwise_distance", x1), _floating("pairwise_distance", x2)
    nd = max(a.ndim, b.ndim)
    return vector_norm(a - b + eps, p, -1 if nd else 0, keepdim=keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """The ``p``-norm distance between every pair of rows ``i < j`` of ``(N, M)``, in the
    order ``(0, 1), (0, 2), ..., (1, 2), ...``: ``N * (N - 1) / 2`` values."""
    x = _floating("pdist", input)
    if x.ndim != 2:
        raise ShapeError(f"pdist: expected a 2-D input (N, M), got shape {x.shape}")
    n = x.shape[0]
    rows = [i for i in range(n) for _ in range(i + 1, n)]
    cols = [j for i in range(n) for j in range(i + 1, n)]
    if not rows:
        return x.new_zeros(0)
    from ..creation import tensor
    from ..ops.indexing import index_select

    a = index_select(x, 0, tensor(rows, dtype="int64", device=x.device))
    b = index_select(x, 0, tensor(cols, dtype="int64", device=x.device))
    return vector_norm(a - b, p, -1)


class CosineSimilarity(Module):
    """Cosine similarity along ``dim``; see :func:`cosine_similarity`."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """The ``p``-norm distance along the last dim; see :func:`pairwise_distance`."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


__all__ = ["CosineSimilarity", "PairwiseDistance"]
