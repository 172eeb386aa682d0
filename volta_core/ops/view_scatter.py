"""The out-of-place inverses of views: ``select_scatter``, ``slice_scatter`` and
``diagonal_scatter`` embed ``src`` into a copy of ``input`` where the view would read
(differentiable: an in-place copy into a view of the clone)."""

from __future__ import annotations

from ..errors import ShapeError
from ..tensor import Tensor, tensor_method
from ._util import normalize_dim


def _embed(op: str, input: Tensor, src: Tensor, view) -> Tensor:
    out = input.clone()
    target = view(out)
    if tuple(src.shape) != tuple(target.shape):
        raise ShapeError(f"{op}: src of shape {src.shape} must have the shape of the "
                         f"embedded view, {target.shape} (input {input.shape})")
    target.copy_(src)
    return out


@tensor_method()
def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """``input`` with ``input.select(dim, index)`` replaced by ``src``."""
    return _embed("select_scatter", input, src, lambda t: t.select(dim, index))


@tensor_method()
def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    """``input`` with the slice ``start:end:step`` of ``dim`` replaced by ``src``."""
    d = normalize_dim("slice_scatter", dim, input.ndim)
    key = (slice(None),) * d + (slice(start, end, step),)
    return _embed("slice_scatter", input, src, lambda t: t[key])


@tensor_method()
def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src``."""
    return _embed("diagonal_scatter", input, src, lambda t: t.diagonal(offset, dim1, dim2))


__all__ = ["select_scatter", "slice_scatter", "diagonal_scatter"]
