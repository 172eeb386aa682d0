"""Differences, diagonals, traces, cross products and ``Tensor.maximum_``.

Every op here is composed of existing differentiable ops (slices, ``index_select``,
``cat``/``stack``), so its backward (and double backward) needs no code of its own.
"""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from ..tensor import Tensor, tensor_method
from ..views import layout, make_view
from ._util import normalize_dim
from .indexing import index_select
from .inplace import inplace
from .joining import cat, stack
from .movement import broadcast_tensors, movedim, narrow, reshape, select


def _check(op: str, x: Any) -> Tensor:
    if type(x) is not Tensor:
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    return x


@tensor_method()
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference ``out[i] = x[i + 1] - x[i]`` along ``dim``.

    Args:
        input: the tensor (at least 1-D).
        n: how many times to take the difference.
        dim: the dimension along which to take it.
        prepend, append: tensors joined to ``input`` along ``dim`` before differencing
            (their other dims must match ``input``'s).

    Shape:
        Output: ``input``'s shape with ``dim`` shrunk by ``n`` (grown by the sizes of
        ``prepend``/``append`` first).
    """
    _check("diff", input)
    if input.ndim == 0:
        raise ShapeError("diff: expected at least a 1-D input, got a 0-d tensor")
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    d = normalize_dim("diff", dim, input.ndim)
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    bool_input = x.dtype.name == "bool"
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        hi, lo = narrow(x, d, 1, size - 1), narrow(x, d, 0, size - 1)
        x = hi.logical_xor(lo) if bool_input else hi - lo
    return x


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
def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a 2-D tensor."""
    _check("trace", input)
    if input.ndim != 2:
        raise ShapeError(f"trace: expected a 2-D matrix, got shape {input.shape}")
    return diagonal(input).sum()


@tensor_method()
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
    x0, x1, x2 = (select(x, d, i) for i in range(3))
    y0, y1, y2 = (select(y, d, i) for i in range(3))
    return stack([x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0], d)


def maximum_(self: Tensor, other: Any) -> Tensor:
    """``self = maximum(self, other)`` in place (``other`` broadcasts to ``self``).

    A Volta convenience: PyTorch has only the out-of-place ``maximum``.
    """
    from .elementwise import _maximum

    return inplace(self, "maximum_", lambda s: _maximum(s, other), other)


Tensor.maximum_ = maximum_

__all__ = ["diff", "diagonal", "trace", "cross"]
