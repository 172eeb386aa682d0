"""Diagonals and traces: ``diagonal`` (a view), ``trace``.

Composed of ``index_select`` over the flattened matrix dims, so the backward (and double
backward) needs no code of its own.
"""

from __future__ import annotations

from typing import Any

from ..amp.dispatch import autocast_op
from ..errors import ShapeError
from ..tensor import Tensor, tensor_method
from ..views import layout, make_view
from ._util import normalize_dim
from .differences import _check
from .indexing import index_select
from .movement import movedim, reshape


def _diagonal_index(rows: int, cols: int, offset: int, device: Any) -> Tensor:
    """Flat positions ``r * cols + c`` of the ``offset`` diagonal of a ``rows x cols`` grid."""
    from ..creation import arange

    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    length = max(0, min(rows - r0, cols - c0))
    start = r0 * cols + c0
    return arange(start, start + length * (cols + 1), cols + 1, dtype="int64", device=device)


@tensor_method()
def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of ``input`` over the dims ``dim1`` and ``dim2``, as a new last dim.

    Args:
        input: a tensor of at least 2 dims.
        offset: 0 for the main diagonal, > 0 above it, < 0 below it.
        dim1, dim2: the two dims the diagonal runs over.

    Shape:
        Output: ``input``'s shape without ``dim1`` and ``dim2``, plus the diagonal's
        length as the last dim. A view: writing to it writes the diagonal of ``input``.
    """
    _check("diagonal", input)
    if input.ndim < 2:
        raise ShapeError(f"diagonal: expected a tensor of at least 2 dims, got shape "
                         f"{input.shape}")
    a = normalize_dim("diagonal", dim1, input.ndim)
    b = normalize_dim("diagonal", dim2, input.ndim)
    if a == b:
        raise ValueError(f"diagonal: dim1 and dim2 cannot be the same dim ({dim1}, {dim2})")
    x = movedim(input, (a, b), (-2, -1))
    rows, cols = x.shape[-2:]
    flat = reshape(x, *x.shape[:-2], rows * cols)
    out = index_select(flat, flat.ndim - 1, _diagonal_index(rows, cols, offset, x.device))
    strides, start = layout(input)
    start += offset * strides[b] if offset >= 0 else -offset * strides[a]
    if not out.shape[-1]:
        start = layout(input)[1]
    kept = tuple(s for d, s in enumerate(strides) if d not in (a, b))
    return make_view(out, input, kept + (strides[a] + strides[b],), start)


@tensor_method()
@autocast_op("trace")
def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a 2-D tensor."""
    _check("trace", input)
    if input.ndim != 2:
        raise ShapeError(f"trace: expected a 2-D matrix, got shape {input.shape}")
    return diagonal(input).sum()


__all__ = ["diagonal", "trace"]
