"""Connectionist temporal classification: ``ctc_loss`` and ``CTCLoss`` (speech, OCR).

The forward (alpha) recursion over time in log space, vectorised over the batch and the
extended label sequence (a blank between and around the labels), from Tensor ops: the
gradient is autograd's through the recursion. Unreachable states hold a large negative
number rather than -inf, so their gradients are zeros, not NaN.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..autograd.function import Function
from ..creation import arange, full, tensor
from ..errors import DTypeError, ShapeError
from ..ops.elementwise import where
from ..ops.movement import cat, stack
from ..tensor import Tensor
from ._checks import _check_tensor
from .loss import _check_reduction, _Loss

_NEG = -1e30  # log(0) for an unreachable state: finite, so no NaN in its gradient


def _lengths(op: str, what: str, value: Any, n: int) -> list[int]:
    vals = value.tolist() if isinstance(value, Tensor) else list(value)
    vals = [int(v) for v in (vals if isinstance(vals, list) else [vals])]
    if len(vals) != n:
        raise ShapeError(f"{op}: expected {n} {what} (one per batch element), got {len(vals)}")
    return vals


def _padded_targets(op: str, targets: Tensor, lengths: list[int]) -> Tensor:
    """Targets as ``(N, S)``: a 1-D concatenation is cut by ``lengths`` and padded."""
    n = len(lengths)
    if targets.ndim == 2:
        if targets.shape[0] != n or max(lengths, default=0) > targets.shape[1]:
            raise ShapeError(f"{op}: targets of shape {targets.shape} do not hold target "
                             f"lengths {lengths}")
        return targets
    if targets.ndim != 1 or targets.shape[0] < sum(lengths):
        raise ShapeError(f"{op}: expected (N, S) targets or a 1-D concatenation of "
                         f"{sum(lengths)} labels, got shape {targets.shape}")
    width = max(max(lengths, default=0), 1)
    out = full((n, width), 0, dtype=targets.dtype, device=targets.device)
    start = 0
    for i, k in enumerate(lengths):
        if k:
            out[i, :k] = targets[start:start + k]
        start += k
    return out


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The negative log likelihood of the targets summed over every alignment.

    Args:
        log_probs: ``(T, N, C)`` (or ``(T, C)`` unbatched) log-probabilities, e.g. the
            output of ``log_softmax``.
        targets: ``(N, S)`` padded label sequences, or their 1-D concatenation; labels
            in ``[0, C)`` other than ``blank``.
        input_lengths, target_lengths: per batch element (tensors or sequences of ints).
        blank: the blank label.
        reduction: ``'mean'`` (each loss divided by its target length, then averaged),
            ``'sum'`` or ``'none'``.
        zero_infinity: replace infinite losses (targets too long for their inputs) and
            their gradients by zero.
    """
    op = "ctc_loss"
    _check_tensor(op, log_probs)
    _check_tensor(op, targets)
    _check_reduction(op, reduction)
    if not log_probs.dtype.is_floating_point:
        raise DTypeError(f"{op}: expected floating log_probs, got {log_probs.dtype.name}")
    if targets.dtype.kind not in "iu":
        raise DTypeError(f"{op}: expected integer targets, got {targets.dtype.name}")
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.ndim == 1 else targets
    if log_probs.ndim != 3:
        raise ShapeError(f"{op}: expected log_probs of shape (T, N, C) or (T, C), got "
                         f"{log_probs.shape}")
    steps, n, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise ValueError(f"{op}: blank {blank} is not a class of {classes}")
    in_len = _lengths(op, "input lengths", input_lengths, n)
    tg_len = _lengths(op, "target lengths", target_lengths, n)
    if any(t < 0 or t > steps for t in in_len) or any(t < 0 for t in tg_len):
        raise ShapeError(f"{op}: input lengths {in_len} must lie in [0, {steps}] and target "
                         f"lengths {tg_len} be non-negative")
    labels = _padded_targets(op, targets, tg_len).long()
    s = labels.shape[1]
    width = 2 * s + 1
    dev = log_probs.device
    # the extended sequence: blank, l1, blank, l2, ..., blank
    ext = full((n, width), blank, dtype=labels.dtype, device=dev)
    ext[:, 1::2] = labels
    emit = log_probs.gather(2, ext.unsqueeze(0).expand(steps, n, width))  # (T, N, 2S+1)
    pos = arange(width, device=dev)
    prev2 = cat([ext.new_full((n, 2), blank), ext[:, :-2]], 1)
    skip = (ext != blank) & (ext != prev2) & (pos >= 2)
    neg = emit.new_full((n, 1), _NEG)
    alpha = where(pos < 2, emit[0], _NEG)
    lens = tensor(in_len, device=dev)
    for t in range(1, steps):
        one = cat([neg, alpha[:, :-1]], 1)
        two = where(skip, cat([neg, neg, alpha[:, :-2]], 1), _NEG)
        step = stack([alpha, one, two], 0).logsumexp(0) + emit[t]
        alpha = where((lens > t).unsqueeze(1), step, alpha)
    last = tensor([2 * k for k in tg_len], device=dev).unsqueeze(1)
    ends = stack([alpha.gather(1, last), where(last > 0, alpha.gather(1, (last - 1).clamp(
        min=0)), _NEG)], 0).logsumexp(0).squeeze(1)
    # an empty input aligns only with an empty target (log 1), not with its first step
    ends = where(lens == 0, tensor([0.0 if k == 0 else _NEG for k in tg_len],
                                   dtype=ends.dtype, device=dev), ends)
    impossible = ends < _NEG / 2  # no alignment: the loss is infinite
    if zero_infinity:
        loss = where(impossible, 0.0, -ends)
    else:  # inf, and (as PyTorch) a NaN gradient for that element's steps in its input
        live = (arange(steps, device=dev).unsqueeze(1) < lens).unsqueeze(2)  # (T, N, 1)
        anchor = where(live, log_probs, 0.0).sum((0, 2))
        loss = where(impossible, _Infinite.apply(anchor, mask=impossible), -ends)
    if unbatched:
        loss = loss.squeeze(0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    per = tensor([max(k, 1) for k in tg_len], dtype=loss.dtype, device=dev)
    return (loss / (per.squeeze(0) if unbatched else per)).mean()


class _Infinite(Function):
    """``inf`` in ``x``'s shape, whose gradient to ``x`` is NaN where ``mask`` (else 0)."""

    def forward(ctx, x, mask=None):
        ctx.mask = mask
        return ctx.xp.full_like(x, math.inf)

    def backward(ctx, g):
        return where(ctx.mask, math.nan, g * 0.0)


class CTCLoss(_Loss):
    """The connectionist temporal classification loss; see :func:`ctc_loss`.

    Args:
        blank: the blank label.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.
        zero_infinity: replace infinite losses and their gradients by zero.
    """

    def __init__(self, blank: int = 0, reduction: str = "mean",
                 zero_infinity: bool = False) -> None:
        super().__init__(reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Sequence[int] | Tensor,
                target_lengths: Sequence[int] | Tensor) -> Tensor:
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                        self.reduction, self.zero_infinity)


__all__ = ["CTCLoss"]
