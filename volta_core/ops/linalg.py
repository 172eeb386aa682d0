"""Linear algebra: matmul (1-D, 2-D, batched with broadcasting)."""

from __future__ import annotations

from ..autograd.function import Function
from ..errors import ShapeError
from ..tensor import Tensor, tensor_method
from ._util import broadcast_shapes, promote_pair
from .movement import sum_to


class Matmul(Function):
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return ctx.xp.matmul(a, b)

    def backward(ctx, g):
        a, b = ctx.saved_tensors
        na, nb = ctx.needs_input_grad
        # treat vectors as matrices, then undo it: (n,) @ (n, m) is (1, n) @ (n, m)
        a2 = a.unsqueeze(0) if a.ndim == 1 else a
        b2 = b.unsqueeze(-1) if b.ndim == 1 else b
        if a.ndim == 1 and b.ndim == 1:
            g2 = g.reshape(1, 1)
        elif a.ndim == 1:
            g2 = g.unsqueeze(-2)
        elif b.ndim == 1:
            g2 = g.unsqueeze(-1)
        else:
            g2 = g
        ga = gb = None
        if na:
            ga = sum_to(matmul(g2, b2.mT), a2.shape).reshape(a.shape)
        if nb:
            gb = sum_to(matmul(a2.mT, g2), b2.shape).reshape(b.shape)
        return ga, gb


@tensor_method("matmul", "__matmul__")
def matmul(a: Tensor, b: Tensor) -> Tensor:
    """Matrix product of ``a`` and ``b`` (vectors, matrices, or broadcast batches).

    Args:
        a: tensor of shape ``(n,)``, ``(n, k)`` or ``(*batch, n, k)``.
        b: tensor of shape ``(k,)``, ``(k, m)`` or ``(*batch, k, m)``.
    """
    if type(a) is not Tensor or type(b) is not Tensor:
        raise TypeError("matmul: both operands must be tensors")
    sa, sb = a.shape, b.shape
    if not sa or not sb:
        raise ShapeError(f"matmul: both arguments need at least 1 dim, got shapes {sa} and {sb}")
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if k_a != k_b:
        raise ShapeError(f"matmul: shapes {sa} and {sb} cannot be multiplied "
                         f"({k_a} != {k_b} in the contracted dimension)")
    if len(sa) > 2 or len(sb) > 2:
        broadcast_shapes("matmul", sa[:-2], sb[:-2] if len(sb) > 1 else ())
    a, b = promote_pair(a, b)
    return Matmul.apply(a, b)


Tensor.__rmatmul__ = lambda self, other: matmul(other, self)

__all__ = ["matmul"]
