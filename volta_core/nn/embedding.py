"""``Embedding``: a lookup table of learnable vectors, and ``one_hot``."""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from ..backend.kernels import get_kernel
from ..creation import empty
from ..errors import DeviceError, DTypeError, IndexOutOfRangeError, ShapeError
from ..ops import nn as _kernels  # noqa: F401 - registers the kernels' fallbacks
from ..ops.elementwise import where
from ..ops.indexing import one_hot as _one_hot
from ..ops.reduce import vector_norm
from ..ops.unique import unique
from ..tensor import Tensor
from . import init
from ._checks import _check_tensor
from .module import Module
from .parameter import Parameter


class _Embedding(Function):
    def forward(ctx, weight, idx, padding_idx=None, scale_grad_by_freq=False):
        xp = ctx.xp
        ctx.idx, ctx.num, ctx.padding_idx = idx, weight.shape[0], padding_idx
        ctx.by_freq = scale_grad_by_freq
        rows = xp.take(weight, xp.reshape(idx, (-1,)), axis=0)
        return xp.reshape(rows, (*idx.shape, weight.shape[1]))

    def backward(ctx, g):
        if ctx.by_freq:  # each row's gradient divided by its index's count in the batch
            idx = Tensor._make(ctx.idx, ctx.device).reshape(-1)
            counts = g.new_zeros((ctx.num,)).index_add(0, idx, g.new_ones(idx.shape))
            g = g / counts[idx].reshape(*ctx.idx.shape, 1)
        gw = _EmbeddingBackward.apply(g, ctx.idx, num=ctx.num, padding_idx=ctx.padding_idx)
        return gw, None


class _EmbeddingBackward(Function):
    """Scatter-add of output gradients into the table (the ``embedding_backward`` kernel)."""

    def forward(ctx, g, idx, num=0, padding_idx=None):
        xp = ctx.xp
        ctx.idx, ctx.padding_idx = idx, padding_idx
        kern = get_kernel(ctx.device.backend, "embedding_backward")
        return kern(xp, xp.reshape(g, (-1, g.shape[-1])), xp.reshape(idx, (-1,)),
                    num_weights=num, padding_idx=padding_idx)

    def backward(ctx, h):
        out = _Embedding.apply(h, Tensor._make(ctx.idx, ctx.device))
        if ctx.padding_idx is not None:
            out = out * (Tensor._make(ctx.idx, ctx.device) != ctx.padding_idx).unsqueeze(-1)
        return out, None


def _check_indices(op: str, idx: Tensor, num: int) -> None:
    if idx.dtype.kind not in "iu":
        raise DTypeError(f"{op}: indices must be an integer tensor, got {idx.dtype.name}; "
                         "convert with .long()")
    if idx.numel() and idx.device.type == "cpu":  # a host check would sync a GPU
        lo, hi = int(idx.min().item()), int(idx.max().item())
        if lo < 0 or hi >= num:
            bad = lo if lo < 0 else hi
            raise IndexOutOfRangeError(f"{op}: index {bad} is out of range for a table of "
                                       f"{num} rows (valid: 0..{num - 1})")


def embedding_renorm_(weight: Tensor, input: Tensor, max_norm: float,
                      norm_type: float = 2.0) -> Tensor:
    """Scale, in place and without recording, each row of ``weight`` that ``input``
    references and whose ``norm_type``-norm exceeds ``max_norm`` down to ``max_norm``
    (PyTorch's ``embedding_renorm_``: the factor is ``max_norm / (norm + 1e-7)``)."""
    with no_grad():
        rows = unique(input.reshape(-1))
        picked = weight[rows]
        norms = vector_norm(picked, norm_type, dim=1, keepdim=True)
        scale = where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
        weight[rows] = picked * scale.to(picked.dtype)
    return weight


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Look up rows of ``weight`` by the integer indices in ``input``.

    Args:
        input: integer tensor of any shape.
        weight: ``(num_embeddings, embedding_dim)``.
        padding_idx: a row that gets no gradient.
        max_norm: first renormalise (in place) the referenced rows whose
            ``norm_type``-norm exceeds it (see :func:`embedding_renorm_`).
        norm_type: the p of the p-norm for ``max_norm``.
        scale_grad_by_freq: divide each row's gradient by how often its index occurs in
            ``input``.
        sparse: accepted for compatibility; the weight's gradient is always dense.

    Shape:
        Output ``(*input.shape, embedding_dim)``.
    """
    _check_tensor("embedding", input)
    if weight.ndim != 2:
        raise ShapeError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got "
                         f"{weight.shape}")
    if input.device is not weight.device:
        raise DeviceError(f"embedding: indices are on {input.device} but the weight on "
                          f"{weight.device}; move the indices with .to('{weight.device}')")
    _check_indices("embedding", input, weight.shape[0])
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type)
    return _Embedding.apply(weight, input, padding_idx=padding_idx,
                            scale_grad_by_freq=scale_grad_by_freq)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Encode integer class indices as one-hot int64 vectors.

    Shape:
        Input ``(*)``; output ``(*, num_classes)``.
    """
    _check_tensor("one_hot", tensor)
    return _one_hot(tensor, num_classes)


class Embedding(Module):
    """A table of ``num_embeddings`` learnable vectors looked up by index.

    Args:
        num_embeddings: size of the table.
        embedding_dim: size of each vector.
        padding_idx: a row that stays at zero and gets no gradient.
        max_norm: renormalise looked-up rows whose norm exceeds it (in place).
        norm_type: the p of the p-norm for ``max_norm``.
        scale_grad_by_freq: divide gradients by the indices' frequency in the batch.
        sparse: accepted for compatibility; the gradient is always dense.
        _weight: an initial table (else N(0, 1)).

    Shape:
        Input ``(*)`` integers; output ``(*, embedding_dim)``.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False,
                 _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} must be within "
                                 f"num_embeddings {num_embeddings}")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, dtype=dtype,
                                          device=device), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ShapeError(f"Embedding: _weight shape {_weight.shape} does not match "
                                 f"({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        """N(0, 1) entries, the padding row zeroed."""
        init.normal_(self.weight)
        self._zero_padding()

    def _zero_padding(self) -> None:
        if self.padding_idx is not None:
            xp = self.weight.device.xp
            arr = xp.asarray(self.weight.array, copy=True)
            arr[self.padding_idx, ...] = 0
            self.weight.array = arr

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True,
                        padding_idx: int | None = None, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """Build an embedding from a ``(num, dim)`` table (frozen by default)."""
        if embeddings.ndim != 2:
            raise ShapeError(f"Embedding.from_pretrained: embeddings must be 2-D, got "
                             f"{embeddings.shape}")
        n, d = embeddings.shape
        return cls(n, d, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings.detach(), _freeze=freeze)

    def forward(self, input: Tensor) -> Tensor:
        _check_tensor("Embedding", input)
        if input.device is not self.weight.device:
            raise DeviceError(f"Embedding: indices are on {input.device} but the table on "
                              f"{self.weight.device}; move the indices with "
                              f".to('{self.weight.device}')")
        return embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                         self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        if self.sparse:
            s += ", sparse=True"
        return s


__all__ = ["Embedding"]
