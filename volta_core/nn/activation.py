"""Activation functions as modules (their functional forms live in ``volta_core.ops``)."""

from __future__ import annotations

from ..ops.activation import elu, gelu, hardtanh, leaky_relu, silu, softplus
from ..ops.elementwise import relu, sigmoid, tanh
from ..ops.softmax import log_softmax, softmax
from ..tensor import Tensor
from .module import Module


class _Inplace(Module):
    """An activation with PyTorch's ``inplace`` flag (accepted; results are new tensors)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    """``max(0, x)`` elementwise.

    Args:
        inplace: accepted for compatibility; the result is always a new tensor.

    Shape:
        Input any; output the same.
    """

    def forward(self, input: Tensor) -> Tensor:
        return relu(input)


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` elementwise. Shape: any, unchanged."""

    def forward(self, input: Tensor) -> Tensor:
        return sigmoid(input)


class Tanh(Module):
    """Hyperbolic tangent elementwise. Shape: any, unchanged."""

    def forward(self, input: Tensor) -> Tensor:
        return tanh(input)


class GELU(Module):
    """Gaussian error linear unit, ``x * Phi(x)``.

    Args:
        approximate: ``'none'`` (exact, with erf) or ``'tanh'``.
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:
        return gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)`` (swish). Shape: any, unchanged."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return silu(input)


class LeakyReLU(Module):
    """``x`` for ``x >= 0``, else ``negative_slope * x``.

    Args:
        negative_slope: the slope for negative inputs.
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return leaky_relu(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class ELU(Module):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Args:
        alpha: the saturation value for negative inputs.
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return elu(input, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``.

    Args:
        beta: sharpness.
        threshold: above ``beta * x > threshold`` the function is the identity.
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:
        return softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    """Clamp to ``[min_val, max_val]``.

    Args:
        min_val, max_val: the range.
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if max_val <= min_val:
            raise ValueError(f"Hardtanh: max_val ({max_val}) must be larger than min_val "
                             f"({min_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, input: Tensor) -> Tensor:
        return hardtanh(input, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


def _legacy_dim(ndim: int) -> int:
    """PyTorch's implicit softmax dim when none is given."""
    return 0 if ndim in (0, 1, 3) else 1


class _Normalised(Module):
    """An activation normalised along ``dim`` (None picks PyTorch's legacy choice)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_Normalised):
    """``exp(x_i) / sum_j exp(x_j)`` along ``dim``.

    Args:
        dim: the dim to normalise (None picks PyTorch's legacy choice).
    """

    def forward(self, input: Tensor) -> Tensor:
        return softmax(input, self.dim if self.dim is not None else _legacy_dim(input.ndim))


class LogSoftmax(_Normalised):
    """``log(softmax(x))`` along ``dim``, computed stably.

    Args:
        dim: the dim to normalise (None picks PyTorch's legacy choice).
    """

    def forward(self, input: Tensor) -> Tensor:
        return log_softmax(input, self.dim if self.dim is not None else _legacy_dim(input.ndim))


__all__ = ["ReLU", "Sigmoid", "Tanh", "GELU", "SiLU", "LeakyReLU", "ELU", "Softplus",
           "Hardtanh", "Softmax", "LogSoftmax"]
