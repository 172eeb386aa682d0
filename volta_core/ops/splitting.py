"""Splitting along a named axis: ``hsplit``, ``vsplit``, ``dsplit`` (NumPy's names, as
PyTorch has them), over ``tensor_split``; and ``argwhere``."""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from ..tensor import Tensor, tensor_method


def _split(op: str, x: Tensor, sections: Any, dim: int, min_ndim: int) -> tuple:
    if x.ndim < min_ndim:
        raise ShapeError(f"{op} requires a tensor with at least {min_ndim} dimension(s), "
                         f"but got a tensor with {x.ndim} dimensions!")
    if isinstance(sections, int) and x.shape[dim] % sections:
        raise ShapeError(f"{op} attempted to split along dimension {dim}, but the size "
                           f"of the dimension {x.shape[dim]} is not divisible by the "
                           f"split_size {sections}!")
    return x.tensor_split(sections, dim)


@tensor_method()
def hsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dimension 1 (dimension 0 for a 1-d tensor)."""
    return _split("torch.hsplit", input, indices_or_sections, 1 if input.ndim > 1 else 0, 1)


@tensor_method()
def vsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dimension 0 (needs at least 2 dims)."""
    return _split("torch.vsplit", input, indices_or_sections, 0, 2)


@tensor_method()
def dsplit(input: Tensor, indices_or_sections: Any) -> tuple[Tensor, ...]:
    """Split along dimension 2 (needs at least 3 dims)."""
    return _split("torch.dsplit", input, indices_or_sections, 2, 3)


@tensor_method()
def argwhere(input: Tensor) -> Tensor:
    """The indices of the nonzero elements, one row per element (``nonzero()``)."""
    return input.nonzero()


__all__ = ["hsplit", "vsplit", "dsplit", "argwhere"]
