"""The cross product of 3-vectors: ``cross``.

Composed of ``select`` and ``stack``, so the backward needs no code of its own.
"""

from __future__ import annotations

from ..amp.dispatch import autocast_op
from ..errors import ShapeError
from ..tensor import Tensor, tensor_method
from ._util import normalize_dim
from .differences import _check
from .movement import broadcast_tensors, select


@tensor_method()
@autocast_op("cross")
def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (the inputs broadcast).

    Args:
        input, other: tensors with size 3 along ``dim``.
        dim: the dimension holding the vectors; None takes the first dim of size 3
            (PyTorch's deprecated default; prefer passing it).
    """
    _check("cross", input)
    _check("cross", other)
    x, y = broadcast_tensors(input, other)
    if dim is None:
        dims = [i for i, s in enumerate(x.shape) if s == 3]
        if not dims:
            raise ShapeError(f"cross: no dimension of size 3 in shapes {input.shape} and "
                             f"{other.shape}")
        d = dims[0]
    else:
        d = normalize_dim("cross", dim, x.ndim)
    if x.shape[d] != 3:
        raise ShapeError(f"cross: dimension {d} must have size 3, got shapes {input.shape} "
                         f"and {other.shape}")
    from .joining import stack  # here: joining and movement import each other

    x0, x1, x2 = (select(x, d, i) for i in range(3))
    y0, y1, y2 = (select(y, d, i) for i in range(3))
    return stack([x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0], d)


__all__ = ["cross"]
