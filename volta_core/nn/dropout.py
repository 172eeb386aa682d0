"""Dropout: zero random elements (or whole channels) in training, scaling the rest."""

from __future__ import annotations

from ..backend.kernels import get_kernel
from ..creation import rand
from ..errors import ShapeError
from ..ops import nn as _kernels  # noqa: F401 - registers the kernels' fallbacks
from ..tensor import Tensor
from .functional_core import _check_floating, _check_tensor
from .module import Module


def _mask(x: Tensor, shape: tuple[int, ...], p: float) -> Tensor:
    """A constant keep-mask scaled by ``1 / (1 - p)`` (the ``dropout_mask`` kernel)."""
    u = rand(*shape, dtype=x.dtype, device=x.device)
    kern = get_kernel(x.device.backend, "dropout_mask")
    return Tensor._make(kern(x.device.xp, u.array, p=p), x.device)


def _check_p(op: str, p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, got {p}")


def _drop(op: str, input: Tensor, p: float, training: bool,
          mask_shape: tuple[int, ...]) -> Tensor:
    """In training, multiply ``input`` by a keep-mask of ``mask_shape`` (broadcast)."""
    if not training or p == 0.0:
        return input
    _check_floating(op, input)
    if p == 1.0:
        return input * 0.0
    return input * _mask(input, mask_shape, p)


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    Args:
        input: any floating tensor.
        p: probability of an element to be zeroed.
        training: apply dropout (when False, return ``input``).
        inplace: accepted for compatibility; the result is always a new tensor.
    """
    _check_tensor("dropout", input)
    _check_p("dropout", p)
    return _drop("dropout", input, p, training, input.shape)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels with probability ``p`` (scaling the rest by ``1 / (1 - p)``).

    Shape:
        Input ``(N, C, H, W)`` or ``(C, H, W)``; output the same.
    """
    _check_tensor("dropout2d", input)
    _check_p("dropout2d", p)
    if input.ndim not in (3, 4):
        raise ShapeError(f"dropout2d: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, "
                         f"got shape {input.shape}")
    return _drop("dropout2d", input, p, training, input.shape[:-2] + (1, 1))


class Dropout(Module):
    """During training, zero elements with probability ``p`` and scale by ``1/(1-p)``.

    Args:
        p: probability of an element to be zeroed.
        inplace: accepted for compatibility.

    Shape:
        Input any; output the same.
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        _check_p("Dropout", p)
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return dropout(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Dropout):
    """During training, zero whole channels with probability ``p``.

    Shape:
        Input ``(N, C, H, W)`` or ``(C, H, W)``; output the same.
    """

    def forward(self, input: Tensor) -> Tensor:
        return dropout2d(input, self.p, self.training)


__all__ = ["Dropout", "Dropout2d"]
