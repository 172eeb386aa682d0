"""Dimension helpers as PyTorch names them: ``swapaxes``/``swapdims``, ``moveaxis``,
``ravel``, ``atleast_1d``/``2d``/``3d``, ``fliplr``/``flipud``, ``absolute``.

Aliases or one-liners over existing differentiable ops.
"""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from ..tensor import Tensor, tensor_method


@tensor_method("swapdims")
def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """``input.transpose(axis0, axis1)`` (also ``swapdims``)."""
    return input.transpose(axis0, axis1)


swapdims = swapaxes


def moveaxis(input: Tensor, source: Any, destination: Any) -> Tensor:
    """``input.movedim(source, destination)``."""
    return input.movedim(source, destination)


@tensor_method()
def ravel(input: Tensor) -> Tensor:
    """``input`` flattened to 1-d."""
    return input.reshape(-1)


def _atleast(n: int, tensors: tuple) -> Any:
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = []
    for t in tensors:
        if t.ndim == 0:
            t = t.reshape((1,) * n)
        elif t.ndim == 1 and n >= 2:
            t = t.unsqueeze(0)
        if t.ndim == 2 and n == 3:
            t = t.unsqueeze(-1)
        out.append(t)
    return out[0] if single else tuple(out)


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor viewed with at least one dimension."""
    return _atleast(1, tensors)


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor viewed with at least two dimensions (1-d becomes ``(1, n)``)."""
    return _atleast(2, tensors)


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor viewed with at least three dimensions (2-d becomes ``(m, n, 1)``)."""
    return _atleast(3, tensors)


@tensor_method()
def fliplr(input: Tensor) -> Tensor:
    """Reverse the columns (dimension 1); needs at least 2 dims."""
    if input.ndim < 2:
        raise ShapeError(f"fliplr: input must be >= 2-d, got shape {input.shape}")
    return input.flip(1)


@tensor_method()
def flipud(input: Tensor) -> Tensor:
    """Reverse the rows (dimension 0); needs at least 1 dim."""
    if input.ndim < 1:
        raise ShapeError("flipud: input must be >= 1-d, got a 0-d tensor")
    return input.flip(0)


@tensor_method()
def absolute(input: Tensor) -> Tensor:
    """``abs``."""
    return input.abs()


__all__ = ["swapaxes", "swapdims", "moveaxis", "ravel", "atleast_1d", "atleast_2d",
           "atleast_3d", "fliplr", "flipud", "absolute"]
