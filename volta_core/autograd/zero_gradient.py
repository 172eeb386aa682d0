"""A result whose gradient to some input is zero but present.

PyTorch gives such inputs a gradient of zeros, not None (the grid of a nearest
``grid_sample``, ``cdist`` with ``p=0``); an optimizer with momentum or weight
decay then still steps them, so ``None`` would train differently.
"""

from __future__ import annotations

from ..tensor import Tensor
from .function import Function


class _ZeroGradTo(Function):
    """``x`` as it is, with ``other`` in the graph receiving a zero gradient."""

    def forward(ctx, x, other):
        ctx.other = (other.shape, other.dtype)
        return x

    def backward(ctx, g):
        shape, dtype = ctx.other
        return g, Tensor._make(ctx.xp.zeros(shape, dtype=dtype, device=ctx.device.native),
                               ctx.device)


def zero_grad_to(out: Tensor, other: Tensor) -> Tensor:
    """``out`` unchanged, with ``other`` (when it requires grad) getting zeros in backward."""
    return _ZeroGradTo.apply(out, other) if other.requires_grad else out
