"""Channel dropout of 1-D feature maps, and alpha dropout for self-normalising networks."""

from __future__ import annotations

from ..creation import rand
from ..errors import ShapeError
from ..tensor import Tensor
from .dropout import Dropout, _check_p, _drop
from .functional_core import _check_floating, _check_tensor

_ALPHA_PRIME = 1.7580993408473766  # -SELU's negative saturation, scale * alpha


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels with probability ``p`` (scaling the rest by ``1 / (1 - p)``).

    Shape:
        Input ``(N, C, L)`` or ``(C, L)``; output the same.
    """
    _check_tensor("dropout1d", input)
    _check_p("dropout1d", p)
    if input.ndim not in (2, 3):
        raise ShapeError(f"dropout1d: expected a 2-D (C, L) or 3-D (N, C, L) input, got "
                         f"shape {input.shape}")
    return _drop("dropout1d", input, p, training, input.shape[:-1] + (1,))


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU activations at zero mean and unit variance.

    Dropped elements are set to SELU's negative saturation ``-alpha'`` and the result is
    transformed by ``a * x + b`` with ``a = ((1 - p) (1 + p alpha'^2))^-1/2`` and
    ``b = a alpha' p``, so that mean and variance are preserved (Klambauer et al., 2017).

    Args:
        input: any floating tensor.
        p: probability of an element to be dropped.
        training: apply dropout (when False, the default as in PyTorch, return ``input``).
        inplace: accepted for compatibility; the result is always a new tensor.
    """
    _check_tensor("alpha_dropout", input)
    _check_p("alpha_dropout", p)
    if not training or p == 0.0:
        return input
    _check_floating("alpha_dropout", input)
    if p == 1.0:
        return input * 0.0
    keep = (rand(*input.shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
    a = ((1.0 - p) * (1.0 + p * _ALPHA_PRIME ** 2)) ** -0.5
    # kept: a * x + a alpha' p; dropped: a * (-alpha') + a alpha' p
    return input * (keep * a) + (keep - 1.0) * (_ALPHA_PRIME * a) + _ALPHA_PRIME * a * p


class Dropout1d(Dropout):
    """During training, zero whole channels of ``(N, C, L)`` inputs with probability ``p``.

    Shape:
        Input ``(N, C, L)`` or ``(C, L)``; output the same.
    """

    def forward(self, input: Tensor) -> Tensor:
        return dropout1d(input, self.p, self.training)


class AlphaDropout(Dropout):
    """Alpha dropout for SELU networks; see :func:`alpha_dropout`.

    Args:
        p: probability of an element to be dropped.
        inplace: accepted for compatibility.

    Shape:
        Input any; output the same.
    """

    def forward(self, input: Tensor) -> Tensor:
        return alpha_dropout(input, self.p, self.training)


__all__ = ["Dropout1d", "AlphaDropout"]
