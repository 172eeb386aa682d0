"""Normalising activations over a dim: ``Softmax``, ``LogSoftmax``, ``Softmin``,
``Softmax2d`` and the gated ``GLU`` (modules, plus ``softmin``/``glu``; ``softmax`` and
``log_softmax`` themselves are ops in :mod:`volta_core.ops.softmax`)."""

from __future__ import annotations

from typing import Any

from ..amp.dispatch import autocast_op
from ..creation import empty_like, zeros_like
from ..errors import ShapeError
from ..ops.activation import _floating
from ..ops.elementwise import sigmoid
from ..ops.joining import chunk
from ..ops.softmax import log_softmax, softmax
from ..tensor import Tensor
from .module import Module


def _legacy_dim(ndim: int) -> int:
    """PyTorch's implicit softmax dim when none is given."""
    return 0 if ndim in (0, 1, 3) else 1


class _Normalised(Module):
    """An activation normalised along ``dim`` (None picks PyTorch's legacy choice)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_Normalised):
    """``exp(x_i) / sum_j exp(x_j)`` along ``dim``.

    Args:
        dim: the dim to normalise (None picks PyTorch's legacy choice).
    """

    def forward(self, input: Tensor) -> Tensor:
        return softmax(input, self.dim if self.dim is not None else _legacy_dim(input.ndim))


class LogSoftmax(_Normalised):
    """``log(softmax(x))`` along ``dim``, computed stably.

    Args:
        dim: the dim to normalise (None picks PyTorch's legacy choice).
    """

    def forward(self, input: Tensor) -> Tensor:
        return log_softmax(input, self.dim if self.dim is not None else _legacy_dim(input.ndim))


class Softmax2d(Module):
    """Softmax over the channels of each position of ``(N, C, H, W)`` (or ``(C, H, W)``)."""

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (3, 4):
            raise ShapeError(f"Softmax2d: expected a 3-D or 4-D input, got shape {input.shape}")
        return softmax(input, -3)


@autocast_op("softmin")
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """``softmax(-x)`` along ``dim`` (None picks PyTorch's legacy choice); ``dtype`` casts
    the input first, so an integer tensor with a floating ``dtype`` is accepted."""
    if dtype is not None and isinstance(input, Tensor):
        input = input.to(dtype)
    if isinstance(input, Tensor) and input.numel() == 0 and input.dtype.kind in "iu":
        return softmax(input, dim if dim is not None else _legacy_dim(input.ndim))  # itself
    x = _floating("softmin", input)
    return softmax(-x, dim if dim is not None else _legacy_dim(x.ndim))


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax (concrete) distribution over ``dim``:
    ``softmax((logits + g) / tau)`` with Gumbel(0, 1) noise ``g``.

    Args:
        logits: unnormalised log-probabilities.
        tau: the temperature (> 0).
        hard: return one-hot samples whose gradient is the soft sample's
            (straight-through).
        eps: unused, as in PyTorch (kept for compatibility).
        dim: the category dim.
    """
    x = _floating("gumbel_softmax", logits)
    gumbels = -empty_like(x).exponential_().log()
    soft = softmax((x + gumbels) / tau, dim)
    if not hard:
        return soft
    index = soft.argmax(dim, keepdim=True)
    one_hot = zeros_like(x).scatter_(dim, index, 1.0)
    return one_hot - soft.detach() + soft


class Softmin(_Normalised):
    """``softmax(-x)`` along ``dim``.

    Args:
        dim: the dim to normalise (None picks PyTorch's legacy choice).
    """

    def forward(self, input: Tensor) -> Tensor:
        return softmin(input, self.dim)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: split ``input`` in halves ``a, b`` along ``dim``; ``a * sigmoid(b)``.

    Shape:
        Input ``(*, 2N, *)``; output ``(*, N, *)``.
    """
    x = _floating("glu", input)
    if x.ndim == 0:
        raise ShapeError("glu: does not support 0-d (scalar) tensors")
    size = x.shape[dim]
    if size % 2:
        raise ShapeError(f"glu: halving dimension {dim} of shape {x.shape} needs an even "
                         f"size, got {size}")
    if x.dtype.itemsize == 2:  # float16/bfloat16: in float32, rounded once (PyTorch)
        return glu(x.float(), dim).to(x.dtype)
    a, b = chunk(x, 2, dim)
    return a * sigmoid(b)


class GLU(Module):
    """Gated linear unit; see :func:`glu`.

    Args:
        dim: the dimension split in halves.

    Shape:
        Input ``(*, 2N, *)``; output ``(*, N, *)``.
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


__all__ = ["Softmax", "LogSoftmax", "Softmax2d", "Softmin", "GLU"]
