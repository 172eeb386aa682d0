"""Padding layers: ``ZeroPad*``, ``ConstantPad*``, ``ReflectionPad*``, ``ReplicationPad*``."""

from __future__ import annotations

from collections.abc import Sequence

from ..ops.movement import pad
from ..tensor import Tensor
from ._checks import _check_rank, _check_tensor, _ntuple
from .module import Module


class ZeroPad2d(Module):
    """Pad the last two dims with zeros.

    Args:
        padding: one int for all sides, or ``(left, right, top, bottom)``; negative
            amounts crop.

    Shape:
        Input ``(N, C, H, W)`` or ``(C, H, W)``; output
        ``(N, C, H + top + bottom, W + left + right)``.
    """

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__()
        self.padding = _ntuple("ZeroPad2d", padding, 4, "padding")

    def forward(self, input: Tensor) -> Tensor:
        _check_tensor("ZeroPad2d", input)
        _check_rank("ZeroPad2d", input, (3, 4), "(N, C, H, W)")
        return pad(input, self.padding, value=0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


__all__ = ["ZeroPad2d"]
