"""Shape layers: ``Flatten``, ``Unflatten`` and ``ChannelShuffle``."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ShapeError
from ..tensor import Tensor
from ._checks import _check_tensor
from .module import Module


class Flatten(Module):
    """Flatten dims ``start_dim`` to ``end_dim`` into one.

    Args:
        start_dim: first dim to flatten (default 1, keeping the batch dim).
        end_dim: last dim to flatten.

    Shape:
        Input ``(*, S_start, ..., S_end, *)``; output ``(*, prod(S), *)``.
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        _check_tensor("Flatten", input)
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expand dim ``dim`` into ``unflattened_size``.

    Args:
        dim: the dim to expand.
        unflattened_size: the new sizes (their product must equal the dim's size).

    Shape:
        Input ``(*, S_dim, *)``; output ``(*, *unflattened_size, *)``.
    """

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        _check_tensor("Unflatten", input)
        d = self.dim % input.ndim if input.ndim else 0
        sizes = self.unflattened_size
        known = 1
        for s in sizes:
            known *= s if s != -1 else 1
        n = input.shape[d] if input.ndim else 1
        if (-1 not in sizes and known != n) or (-1 in sizes and n % max(known, 1)):
            raise ShapeError(f"Unflatten: cannot unflatten dim {self.dim} of size {n} (input "
                             f"shape {input.shape}) into {sizes}")
        if -1 in sizes:
            sizes = tuple(n // known if s == -1 else s for s in sizes)
        return input.reshape(*input.shape[:d], *sizes, *input.shape[d + 1:])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels of ``(N, C, *)`` from ``groups`` groups (ShuffleNet):
    ``(N, g, C/g, *)`` transposed to ``(N, C/g, g, *)``."""
    _check_tensor("channel_shuffle", input)
    if input.ndim < 3:
        raise ShapeError(f"channel_shuffle: expected an input of at least 3 dims (N, C, *), "
                         f"got shape {input.shape}")
    n, c = input.shape[0], input.shape[1]
    if groups <= 0 or c % groups:
        raise ValueError(f"channel_shuffle: the {c} channels must divide into groups="
                         f"{groups}")
    rest = input.shape[2:]
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


class ChannelShuffle(Module):
    """Shuffle the channels of ``(N, C, *)`` across ``groups``; see :func:`channel_shuffle`."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


__all__ = ["Flatten", "Unflatten", "ChannelShuffle"]
