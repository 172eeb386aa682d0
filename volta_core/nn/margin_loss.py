"""Margin, ranking and embedding losses (+ functional): hinge, soft-margin, multi-margin,
margin-ranking, triplet and cosine-embedding losses.

The functional forms follow PyTorch's signatures, including the deprecated
``size_average`` / ``reduce`` arguments (when given, they override ``reduction`` as in
PyTorch). All are composed of differentiable ops, so autograd derives their backward.
"""

from __future__ import annotations

from typing import Any

from ..amp.dispatch import autocast_op
from ..autograd.function import Function
from ..creation import arange
from ..errors import AutogradError, ShapeError
from ..ops.elementwise import exp, relu, sqrt, where
from ..ops.indexing import gather, index_select
from ..ops.math import clamp_min, log1p
from ..ops.reduce import vector_norm
from ..tensor import Tensor
from ._checks import _check_floating, _check_same, _check_tensor, _no_grad_for, _reduce
from .activation import logsigmoid
from .loss import _check_reduction, _class_target, _floats, _legacy, _LegacyLoss, _Loss, _pair_check


@autocast_op("cosine_embedding_loss")
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` for ``y = 1``, ``max(0, cos(x1, x2) - margin)`` for ``y = -1``.

    Shape:
        input1, input2 ``(N, D)`` or ``(D,)``; target ``(N,)`` or ``()``.
    """
    op = "cosine_embedding_loss"
    _check_reduction(op, reduction)
    if input1.ndim != input2.ndim:
        raise ShapeError(f"{op}: input1 {input1.shape} and input2 {input2.shape} must have "
                         "the same number of dims")
    input1, input2 = _pair_check(op, input1, input2, "quiet", dtype="ops")
    _check_tensor(op, target, "target")
    if input1.ndim not in (1, 2) or target.shape != input1.shape[:-1]:
        raise ShapeError(f"{op}: expected inputs (N, D) with target (N,) or (D,) with a 0-d "
                         f"target, got {input1.shape} and target {target.shape}")
    eps = 1e-12
    dot = (input1 * input2).sum(-1)
    cos = dot / sqrt(((input1 * input1).sum(-1) + eps) * ((input2 * input2).sum(-1) + eps))
    zero = cos * 0.0
    loss = where(target == 1, 1.0 - cos, where(target == -1, relu(cos - margin), zero))
    return _reduce(op, loss, reduction)


class _NegatedBoolTarget(Function):
    """The identity, whose backward raises: PyTorch's soft_margin_loss backward negates the
    target, which it refuses for a bool tensor (the forward works)."""

    def forward(ctx, x):
        return x

    def backward(ctx, g):
        raise AutogradError(
            "soft_margin_loss: its backward negates the target, which PyTorch refuses for a "
            "bool target ('Negation, the `-` operator, on a bool tensor is not supported'); "
            "pass target.float() (1 and 0), or the usual 1 and -1")


@autocast_op("soft_margin_loss")
def soft_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Two-class logistic loss ``log(1 + exp(-y x))`` for targets ``y`` in {1, -1}.

    Shape:
        input and target the same shape.
    """
    op = "soft_margin_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(op, reduction)
    _no_grad_for(op, target=target)
    if type(target) is Tensor and target.dtype.kind == "b" and type(input) is Tensor:
        input = _NegatedBoolTarget.apply(input)
    input, target = _pair_check(op, input, target, "to_input", dtype="input")
    # PyTorch's formula as it stands: it overflows to inf where exp does (float16 beyond
    # 11), where a softplus would not
    return _reduce(op, log1p(exp(-(target * input))), reduction)


@autocast_op("hinge_embedding_loss")
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """``x`` where ``y = 1``, ``max(0, margin - x)`` where ``y = -1``.

    As in PyTorch, a target that is neither 1 nor -1 gets both terms.

    Shape:
        input and target the same shape.
    """
    op = "hinge_embedding_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(op, reduction)
    input, target = _pair_check(op, input, target, "quiet", dtype="ops")
    zero = input.new_zeros(())
    # PyTorch's margin - input fills the margin into the input's dtype (an int truncates)
    clamped = clamp_min(input.new_full((), margin) - input, 0)
    loss = where(target != 1, clamped, zero) + where(target != -1, input, zero)
    return _reduce(op, loss, reduction)


@autocast_op("multi_margin_loss")
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: bool | None = None,
                      reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Multi-class hinge loss ``sum_{i != y} max(0, margin - x[y] + x[i])^p / C``.

    Args:
        input: ``(N, C)`` or ``(C,)`` scores.
        target: ``(N,)`` or ``()`` class indices.
        p: 1 or 2.
        margin: the margin.
        weight: ``(C,)`` weights of the classes (of the target's class per sample).
    """
    op = "multi_margin_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(op, reduction)
    if p not in (1, 2):
        raise ValueError(f"{op}: only p == 1 and p == 2 are supported, got {p}")
    _check_tensor(op, input)
    _check_floating(op, input)
    if input.ndim not in (1, 2):
        raise ShapeError(f"{op}: expected a (N, C) or (C,) input, got shape {input.shape}")
    _class_target(op, input, target, -100)
    c = input.shape[-1]
    x = input.reshape(-1, c)
    t = target.reshape(-1).to("int64")
    m = clamp_min(x - gather(x, 1, t.unsqueeze(1)) + margin, 0.0)
    if p == 2:
        m = m * m
    if weight is not None:
        _check_same(op, input, weight)
        if weight.shape != (c,):
            raise ShapeError(f"{op}: weight must have shape ({c},), got {weight.shape}")
        _no_grad_for(op, weight=weight)
        m = m * index_select(weight, 0, t).unsqueeze(1)
    others = arange(c, dtype="int64", device=input.device) != t.unsqueeze(1)
    loss = where(others, m, m.new_zeros(())).sum(1) / c
    return _reduce(op, loss.reshape(target.shape), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: bool | None = None, reduce: bool | None = None,
                                reduction: str = "mean") -> Tensor:
    """Per-class logistic loss averaged over the classes (last dim).

    ``-(y log sigmoid(x) + (1 - y) log sigmoid(-x))``, times ``weight``, mean over ``C``.

    Shape:
        input and target ``(N, C)`` or ``(C,)``; output ``(N,)`` for ``'none'``.
    """
    op = "multilabel_soft_margin_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(op, reduction)
    input, target = _pair_check(op, input, target, "quiet", dtype="ops")
    if input.ndim == 0:
        raise ShapeError(f"{op}: expected a (N, C) or (C,) input, got a 0-d tensor")
    loss = -(target * logsigmoid(input) + (1.0 - target) * logsigmoid(-input))
    if weight is not None:
        _check_same(op, input, weight)
        loss = loss * weight
    return _reduce(op, loss.sum(-1) / input.shape[-1], reduction)


@autocast_op("margin_ranking_loss")
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        size_average: bool | None = None, reduce: bool | None = None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -y (x1 - x2) + margin)``: ``y = 1`` ranks ``x1`` above ``x2``.

    Shape:
        input1, input2 and target the same shape.
    """
    op = "margin_ranking_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(op, reduction)
    input1, input2, target = _floats(op, input1, input2, target, dtype="ops")
    if not input1.ndim == input2.ndim == target.ndim:
        raise ShapeError(f"{op}: input1 {input1.shape}, input2 {input2.shape} and target "
                         f"{target.shape} must have the same number of dims")
    return _reduce(op, clamp_min(-target * (input1 - input2) + margin, 0.0), reduction)


def _distance(a: Tensor, b: Tensor, p: float, eps: float) -> Tensor:
    return vector_norm(a - b + eps, p, -1)


@autocast_op("triplet_margin_loss")
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average: bool | None = None,
                        reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d(x, y) = ||x - y + eps||_p``.

    Args:
        swap: use ``min(d(a, n), d(p, n))`` as the negative distance (Balntas et al.).

    Shape:
        anchor, positive and negative ``(N, D)`` or ``(D,)``; output ``(N,)`` for ``'none'``.
    """
    op = "triplet_margin_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(op, reduction)
    anchor, positive, negative = _floats(op, anchor, positive, negative, dtype="ops")
    if anchor.ndim not in (1, 2) or not anchor.ndim == positive.ndim == negative.ndim:
        raise ShapeError(f"{op}: expected anchor, positive and negative all (N, D) or all "
                         f"(D,), got {anchor.shape}, {positive.shape}, {negative.shape}")
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    d_pos = _distance(anchor, positive, p, eps)
    d_neg = _distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(_distance(positive, negative, p, eps))
    return _reduce(op, clamp_min(d_pos - d_neg + margin, 0.0), reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Any = None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with any distance ``d`` (pairwise distance
    by default).

    Args:
        distance_function: ``d(x, y)`` returning one distance per sample.
        margin: the margin (> 0).
        swap: use ``min(d(a, n), d(p, n))`` as the negative distance.
    """
    op = "triplet_margin_with_distance_loss"
    _check_reduction(op, reduction)
    if margin <= 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    if distance_function is None:
        from .distance import pairwise_distance as distance_function
    d_pos = distance_function(anchor, positive)
    d_neg = distance_function(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance_function(positive, negative))
    return _reduce(op, clamp_min(d_pos - d_neg + margin, 0.0), reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: bool | None = None,
                           reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Multi-class multi-label hinge loss: ``sum_{j, i} max(0, 1 - (x[y_j] - x[i])) / C``
    over the target classes ``y_j`` (the entries of ``target`` before the first -1) and
    the other classes ``i``.

    Shape:
        input ``(C,)`` or ``(N, C)``; target int64 of the same shape.
    """
    op = "multilabel_margin_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(op, reduction)
    _check_tensor(op, input)
    _check_tensor(op, target, "target")
    if input.ndim not in (1, 2) or tuple(target.shape) != tuple(input.shape):
        raise ShapeError(f"{op}: expected input (C,) or (N, C) and a target of the same "
                         f"shape, got {input.shape} and {target.shape}")
    x = input.unsqueeze(0) if input.ndim == 1 else input
    y = target.reshape(x.shape)
    c = x.shape[1]
    valid = (y != -1).to(x.dtype).cumprod(1)                       # before the first -1
    safe = where(y < 0, y.new_zeros(()), y)
    onehot = (safe.unsqueeze(-1) == arange(c, device=x.device)).to(x.dtype)  # (N, T, C)
    is_target = (onehot * valid.unsqueeze(-1)).amax(1)             # (N, C)
    picked = gather(x, 1, safe)                                    # (N, T)
    hinge = clamp_min(1.0 - picked.unsqueeze(-1) + x.unsqueeze(1), 0.0)
    loss = (hinge * valid.unsqueeze(-1) * (1.0 - is_target).unsqueeze(1)).sum((1, 2)) / c
    loss = loss.reshape(input.shape[:-1])
    return _reduce(op, loss, reduction)


# -- modules ------------------------------------------------------------------------------


class SoftMarginLoss(_LegacyLoss):
    """Two-class logistic loss; see :func:`soft_margin_loss`. Shape: input and target alike."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return soft_margin_loss(input, target, reduction=self.reduction)


class HingeEmbeddingLoss(_LegacyLoss):
    """Hinge loss of distances with targets in {1, -1}; see :func:`hinge_embedding_loss`.

    Args:
        margin: the margin of dissimilar pairs.
    """

    def __init__(self, margin: float = 1.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class MultiMarginLoss(_LegacyLoss):
    """Multi-class hinge loss; see :func:`multi_margin_loss`.

    Args:
        p: 1 or 2.
        margin: the margin.
        weight: ``(C,)`` class weights.
    """

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Tensor | None = None,
                 size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 are supported, got {p}")
        if weight is not None and weight.ndim != 1:
            raise ValueError(f"MultiMarginLoss: weight must be 1-D, got {weight.shape}")
        self.p, self.margin = p, margin
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return multi_margin_loss(input, target, self.p, self.margin, self.weight,
                                 reduction=self.reduction)


class MultiLabelSoftMarginLoss(_LegacyLoss):
    """Multi-label logistic loss; see :func:`multilabel_soft_margin_loss`.

    Args:
        weight: ``(C,)`` class weights.
    """

    def __init__(self, weight: Tensor | None = None, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return multilabel_soft_margin_loss(input, target, self.weight,
                                           reduction=self.reduction)


class MarginRankingLoss(_LegacyLoss):
    """Ranking hinge loss; see :func:`margin_ranking_loss`.

    Args:
        margin: the margin.
    """

    def __init__(self, margin: float = 0.0, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return margin_ranking_loss(input1, input2, target, self.margin,
                                   reduction=self.reduction)


class TripletMarginLoss(_LegacyLoss):
    """Triplet loss of anchors, positives and negatives; see :func:`triplet_margin_loss`.

    Args:
        margin: the margin.
        p: the norm degree of the distances.
        eps: added to the differences.
        swap: use the distance swap.
    """

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average: bool | None = None,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: margin must be greater than 0, got "
                             f"{margin}")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_loss(anchor, positive, negative, self.margin, self.p,
                                   self.eps, self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet loss with any distance; see :func:`triplet_margin_with_distance_loss`."""

    def __init__(self, *, distance_function: Any = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: margin must be greater than 0, "
                             f"got {margin}")
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class MultiLabelMarginLoss(_LegacyLoss):
    """Multi-class multi-label hinge loss; see :func:`multilabel_margin_loss`."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return multilabel_margin_loss(input, target, reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """Cosine embedding loss; see :func:`cosine_embedding_loss`.

    Args:
        margin: for dissimilar pairs, cosines below this cost nothing.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.
    """

    def __init__(self, margin: float = 0.0, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return cosine_embedding_loss(input1, input2, target, self.margin, self.reduction)


__all__ = ["SoftMarginLoss", "HingeEmbeddingLoss", "MultiMarginLoss", "MultiLabelSoftMarginLoss",
           "MarginRankingLoss", "TripletMarginLoss", "CosineEmbeddingLoss",
           "TripletMarginWithDistanceLoss", "MultiLabelMarginLoss"]
