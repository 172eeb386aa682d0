"""``EmbeddingBag``: sums, means or maxima of bags of embeddings, without the per-index rows."""

from __future__ import annotations

from typing import Any

from ..creation import arange, empty, zeros
from ..errors import DeviceError, DTypeError, ShapeError
from ..ops.bucketing import searchsorted
from ..ops.elementwise import where
from ..ops.joining import cat
from ..tensor import Tensor
from . import init
from ._checks import _check_tensor
from .embedding import _check_indices, embedding
from .module import Module
from .parameter import Parameter

_MODES = ("sum", "mean", "max")


def _check_offsets(input: Tensor, offsets: Tensor, include_last_offset: bool) -> None:
    if offsets.ndim != 1:
        raise ShapeError(f"embedding_bag: offsets must be 1-D, got shape {offsets.shape}")
    if offsets.dtype.kind not in "iu":
        raise DTypeError(f"embedding_bag: offsets must be integers, got {offsets.dtype.name}")
    if offsets.device is not input.device:
        raise DeviceError(f"embedding_bag: offsets are on {offsets.device} but the indices on "
                          f"{input.device}; move them with .to('{input.device}')")
    if include_last_offset and offsets.shape[0] < 1:
        raise ShapeError("embedding_bag: include_last_offset needs at least one offset")
    # PyTorch's check (on the host only: reading a GPU's offsets would sync it)
    if offsets.numel() and offsets.device.type == "cpu" and int(offsets[0]) != 0:
        raise ValueError(f"embedding_bag: offsets[0] has to be 0, i.e. the first bag starts "
                         f"at position 0; got {int(offsets[0])}")


def _bag_membership(input: Tensor, offsets: Tensor, include_last_offset: bool) -> Tensor:
    """``(B, n)`` booleans: index ``j`` of the flat ``input`` belongs to bag ``b``."""
    _check_offsets(input, offsets, include_last_offset)
    n = input.shape[0]
    offsets = offsets.to("int64")
    # the last bag runs to the end of the indices, also with include_last_offset (where
    # PyTorch's kernels read the last offset as the indices' count, whatever it says)
    starts = offsets[:-1] if include_last_offset else offsets
    tail = arange(n, n + 1, dtype="int64", device=input.device)
    ends = cat([starts[1:], tail])
    pos = arange(n, dtype="int64", device=input.device)
    return (pos >= starts.unsqueeze(1)).logical_and(pos < ends.unsqueeze(1))


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Reduce bags of embedding rows by ``"sum"``, ``"mean"`` or ``"max"``.

    Args:
        input: ``(B, L)`` indices (B bags of L each), or 1-D indices cut into bags by
            ``offsets``.
        weight: ``(num_embeddings, embedding_dim)``.
        offsets: with a 1-D ``input``, the start of every bag.
        max_norm: renormalise the looked-up rows whose ``norm_type``-norm exceeds it
            (in place; see :func:`volta_core.nn.functional.embedding`).
        scale_grad_by_freq: divide each row's gradient by its index's count in ``input``.
        mode: ``"sum"``, ``"mean"`` or ``"max"``.
        sparse: accepted for compatibility; the weight's gradient is always dense.
        per_sample_weights: weights of the indices (``input``'s shape), ``"sum"`` only.
        include_last_offset: ``offsets`` has one more entry, the end of the last bag.
        padding_idx: indices equal to it are left out of their bag (an empty bag is 0).

    Shape:
        Output ``(B, embedding_dim)``.
    """
    op = "embedding_bag"
    _check_tensor(op, input)
    if mode not in _MODES:
        raise ValueError(f"{op}: mode must be one of {_MODES}, got {mode!r}")
    if weight.ndim != 2:
        raise ShapeError(f"{op}: weight must be 2-D (num_embeddings, embedding_dim), got "
                         f"{weight.shape}")
    if input.device is not weight.device:
        raise DeviceError(f"{op}: indices are on {input.device} but the weight on "
                          f"{weight.device}; move the indices with .to('{weight.device}')")
    _check_indices(op, input, weight.shape[0])
    if per_sample_weights is not None:
        if mode != "sum":
            raise ValueError(f"{op}: per_sample_weights is only supported for mode='sum', "
                             f"got mode={mode!r}")
        if per_sample_weights.shape != input.shape:
            raise ShapeError(f"{op}: per_sample_weights of shape {per_sample_weights.shape} "
                             f"must have the indices' shape {input.shape}")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{op}: offsets must be None for a 2-D input (B, L)")
        member = input == input  # every index belongs to its row's bag
        rows = embedding(input, weight, None, max_norm, norm_type,
                         scale_grad_by_freq)  # (B, L, D)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError(f"{op}: a 1-D input needs offsets marking where bags start")
        if mode != "max":
            return _bags_by_index(input, weight, offsets, max_norm, norm_type,
                                  scale_grad_by_freq, mode, per_sample_weights,
                                  include_last_offset, padding_idx)
        member = _bag_membership(input, offsets, include_last_offset)  # (B, n)
        input = input.unsqueeze(0)
        rows = embedding(input, weight, None, max_norm, norm_type,
                         scale_grad_by_freq)  # (1, n, D)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.unsqueeze(0)
    else:
        raise ShapeError(f"{op}: expected 1-D (with offsets) or 2-D indices, got shape "
                         f"{input.shape}")
    if padding_idx is not None:
        member = member.logical_and(input != padding_idx)
    keep = member.to(weight.dtype)
    count = keep.sum(1, keepdim=True)
    if mode == "max":
        low = rows.new_full((), float("-inf"))
        best = where(member.unsqueeze(-1), rows, low).amax(1)
        return where(count > 0, best, best.new_zeros(()))
    scale = keep if per_sample_weights is None else keep * per_sample_weights
    out = (scale.unsqueeze(-1) * rows).sum(1)
    if mode == "mean":
        out = out / count.clamp_min(1.0)
    return out


def _bags_by_index(input: Tensor, weight: Tensor, offsets: Tensor, max_norm: float | None,
                   norm_type: float, scale_grad_by_freq: bool, mode: str,
                   per_sample_weights: Tensor | None, include_last_offset: bool,
                   padding_idx: int | None) -> Tensor:
    """Sums or means of the bags of a 1-D ``input``: each row added into its bag with
    ``index_add`` (O(n * D); a (bags, n) membership matrix times the rows was O(bags * n
    * D)). Indices outside every bag, and ``padding_idx``, go to a spare bag, dropped."""
    _check_offsets(input, offsets, include_last_offset)
    n = input.shape[0]
    offsets = offsets.to("int64")
    starts = offsets[:-1] if include_last_offset else offsets
    bags = starts.shape[0]
    pos = arange(n, dtype="int64", device=input.device)
    # a bag is the last one starting at or before the position (empty bags are skipped);
    # the last runs to the end (see _bag_membership)
    bag = searchsorted(starts, pos, right=True) - 1
    valid = bag >= 0
    if padding_idx is not None:  # (made non-negative by the caller)
        valid = valid.logical_and(input != padding_idx)
    target = where(valid, bag, bags)
    rows = embedding(input, weight, None, max_norm, norm_type, scale_grad_by_freq)  # (n, D)
    keep = valid.to(weight.dtype)
    scale = keep if per_sample_weights is None else keep * per_sample_weights
    out = zeros(bags + 1, weight.shape[1], dtype=weight.dtype, device=weight.device)
    out = out.index_add(0, target, rows * scale.unsqueeze(-1))[:bags]
    if mode == "mean":
        count = zeros(bags + 1, dtype=weight.dtype, device=weight.device)
        count = count.index_add(0, target, keep)[:bags]
        out = out / count.clamp_min(1.0).unsqueeze(-1)
    return out


class EmbeddingBag(Module):
    """A table of learnable vectors whose bags are summed, averaged or maxed.

    Args:
        num_embeddings: size of the table.
        embedding_dim: size of each vector.
        mode: ``"sum"``, ``"mean"`` (default) or ``"max"``.
        include_last_offset: see :func:`embedding_bag`.
        padding_idx: a row that is left out of every bag, stays zero and gets no gradient.
        _weight: an initial table (else N(0, 1)).

    Shape:
        Input ``(B, L)``, or 1-D with ``offsets`` ``(B,)``; output ``(B, embedding_dim)``.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Tensor | None = None,
                 include_last_offset: bool = False, padding_idx: int | None = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if mode not in _MODES:
            raise ValueError(f"EmbeddingBag: mode must be one of {_MODES}, got {mode!r}")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"EmbeddingBag: padding_idx {padding_idx} must be within "
                                 f"num_embeddings {num_embeddings}")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.mode, self.sparse = scale_grad_by_freq, mode, sparse
        self.include_last_offset, self.padding_idx = include_last_offset, padding_idx
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype,
                                          device=device))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ShapeError(f"EmbeddingBag: _weight shape {_weight.shape} does not "
                                 f"match ({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight)

    def reset_parameters(self) -> None:
        """N(0, 1) entries, the padding row zeroed."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            xp = self.weight.device.xp
            arr = xp.asarray(self.weight.array, copy=True)
            arr[self.padding_idx, ...] = 0
            self.weight.array = arr

    def forward(self, input: Tensor, offsets: Tensor | None = None,
                per_sample_weights: Tensor | None = None) -> Tensor:
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"
        return s + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")


__all__ = ["EmbeddingBag"]
