"""More activations: hard/soft shrinks, SELU family, gated and parametric units.

Each functional form sits next to its module and is composed of existing differentiable
ops, so autograd derives the backward (and double backward).
"""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..creation import empty
from ..dtypes import get_default_dtype
from ..errors import ShapeError
from ..ops.activation import _floating, elu, hardtanh, softplus
from ..ops.elementwise import abs as _abs
from ..ops.elementwise import in_float32, sigmoid, tanh, where
from ..ops.joining import chunk
from ..ops.math import sign
from ..ops.softmax import softmax
from ..tensor import Tensor
from . import init
from .activation import Hardtanh, _Inplace, _legacy_dim, _Normalised
from .module import Module
from .parameter import Parameter

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# -- functional forms ---------------------------------------------------------------------

def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(0, x), 6)`` elementwise."""
    return hardtanh(input, 0.0, 6.0)


def _run_float32(cls: type, x: Tensor) -> Tensor:
    """``cls`` on ``x``, float16 and bfloat16 computed in float32 as PyTorch's kernels do
    (``x * 6`` of a large float16 would overflow)."""
    if x.dtype.itemsize == 2:
        return in_float32(cls.apply, x)
    return cls.apply(x)


_ONE_SIXTH_F32 = 0.1666666716337204  # PyTorch's backward scales by 1.0f / 6 in every dtype


class _HardsigmoidOp(Function):
    def forward(ctx, x):
        xp = ctx.xp
        ctx.save_for_backward(x)
        six = xp.asarray(6.0, dtype=x.dtype, device=ctx.device.native)
        zero = xp.asarray(0.0, dtype=x.dtype, device=ctx.device.native)
        return xp.minimum(xp.maximum(x + 3.0, zero), six) / 6.0

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        inside = (x > -3.0).logical_and(x < 3.0)
        return where(inside, g * _ONE_SIXTH_F32, 0.0)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``0`` below -3, ``1`` above 3, else ``x / 6 + 1 / 2``.

    The gradient is ``1 / 6`` strictly inside (-3, 3), else 0 (also at NaN), as in PyTorch.
    """
    return _run_float32(_HardsigmoidOp, _floating("hardsigmoid", input))


class _HardswishOp(Function):
    def forward(ctx, x):
        xp = ctx.xp
        ctx.save_for_backward(x)
        six = xp.asarray(6.0, dtype=x.dtype, device=ctx.device.native)
        zero = xp.asarray(0.0, dtype=x.dtype, device=ctx.device.native)
        # PyTorch's x * min(max(x + 3, 0), 6) / 6: -0.0 below -3, NaN at -inf
        return x * xp.minimum(xp.maximum(x + 3.0, zero), six) / 6.0

    def backward(ctx, g):
        # PyTorch's selection: 0 up to -3, g (x / 3 + 1 / 2) below 3, g from 3 and at NaN;
        # selected, not multiplied, so an infinite g gives no NaN where the slope is 0
        (x,) = ctx.saved_tensors
        middle = where(x < 3.0, g * (x / 3.0 + 0.5), g)
        return where(x <= -3.0, 0.0, middle)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * hardsigmoid(x)``: ``0`` below -3, ``x`` above 3, else ``x (x + 3) / 6``.

    As in PyTorch the gradient is 0 up to -3, ``x / 3 + 1 / 2`` below 3, and 1 from 3
    (and at NaN).
    """
    return _run_float32(_HardswishOp, _floating("hardswish", input))


class _MishOp(Function):
    def forward(ctx, x):
        xp = ctx.xp
        ctx.save_for_backward(x)
        soft = xp.maximum(x, xp.zeros_like(x)) + xp.log1p(xp.exp(-xp.abs(x)))
        return x * xp.tanh(soft)

    def backward(ctx, g):
        # PyTorch's fused form: g times the whole derivative, so an infinite g at x = 0
        # stays infinite (the composite's g * x * ... term would make it NaN)
        (x,) = ctx.saved_tensors
        t = tanh(softplus(x))
        return g * (t + x * sigmoid(x) * (1.0 - t * t))


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))`` (Misra, 2019)."""
    return _run_float32(_MishOp, _floating("mish", input))


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Scaled ELU: ``scale * elu(x, alpha)`` with the self-normalising constants
    ``alpha = 1.6732632...`` and ``scale = 1.0507009...`` (Klambauer et al., 2017)."""
    return elu(_floating("selu", input), _SELU_ALPHA) * _SELU_SCALE


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Args:
        input: the tensor.
        alpha: the scale of the negative part (must not be 0).
    """
    x = _floating("celu", input)
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0 (it divides the input)")
    return elu(x * (1.0 / alpha), 1.0) * alpha


def _int_to_float(op: str, x: Tensor) -> Tensor:
    """Integer inputs become the default float, as PyTorch's composite ops make them."""
    if type(x) is Tensor and x.dtype.kind in "iu":
        return x.to(get_default_dtype())
    return _floating(op, x)


def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)`` elementwise (integer inputs give the default float)."""
    if type(input) is Tensor and input.dtype.kind in "iu":  # |x| + 1 in the integer dtype,
        return input / (_abs(input) + 1)  # wrapping as PyTorch's (127 + 1 is -128 in int8)
    x = _int_to_float("softsign", input)
    return x / (_abs(x) + 1.0)


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x)) = -softplus(-x)``, computed without overflow."""
    x = _floating("logsigmoid", input)
    return -softplus(-x)


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)`` elementwise (integer inputs give the default float)."""
    x = _int_to_float("tanhshrink", input)
    return x - tanh(x)


def _check_lambd(op: str, lambd: float) -> None:
    if lambd < 0:
        raise ValueError(f"{op}: lambd must be non-negative, got {lambd}")


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""
    x = _floating("softshrink", input)
    _check_lambd("softshrink", lambd)
    # NaN stays NaN with gradient 1, as in PyTorch
    # x * 0 in the middle: -0.0 for a negative x, as PyTorch's kernel
    return where(_abs(x) <= lambd, (x * 0.0).detach(), x - sign(x) * lambd)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0."""
    x = _floating("hardshrink", input)
    _check_lambd("hardshrink", lambd)
    return where(_abs(x) <= lambd, x.new_zeros(()), x)  # NaN stays NaN, as in PyTorch


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: split ``input`` in halves ``a, b`` along ``dim``; ``a * sigmoid(b)``.

    Shape:
        Input ``(*, 2N, *)``; output ``(*, N, *)``.
    """
    x = _floating("glu", input)
    if x.ndim == 0:
        raise ShapeError("glu: does not support 0-d (scalar) tensors")
    size = x.shape[dim]
    if size % 2:
        raise ShapeError(f"glu: halving dimension {dim} of shape {x.shape} needs an even "
                         f"size, got {size}")
    a, b = chunk(x, 2, dim)
    return a * sigmoid(b)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``x`` where positive, else ``weight * x``, with one learnt slope per channel.

    Args:
        input: ``(N, C, *)``, ``(C,)`` or any shape when ``weight`` has one element.
        weight: ``(1,)`` (shared) or ``(C,)`` (one slope per channel, dim 1 of the input;
            dim 0 for a 1-D input).
    """
    x = _floating("prelu", input)
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu: weight must be a Tensor, got {type(weight).__name__}")
    n = weight.numel()
    if weight.ndim > 1:
        raise ShapeError(f"prelu: weight must be 1-D, got shape {weight.shape}")
    if n != 1:
        ch = 0 if x.ndim == 1 else 1
        if x.ndim == 0 or x.shape[ch] != n:
            raise ShapeError(f"prelu: weight has {n} slopes but the input of shape {x.shape} "
                             f"has {x.shape[ch] if x.ndim else 0} channels; use "
                             "num_parameters=1 or the channel count")
        weight = weight.reshape(n, *(1,) * (x.ndim - ch - 1))
    elif weight.ndim == 1 and x.ndim == 0:
        weight = weight.reshape(())
    return where(x > 0, x, weight * x)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """``softmax(-x)`` along ``dim`` (None picks PyTorch's legacy choice)."""
    x = _floating("softmin", input)
    if dtype is not None:
        x = x.to(dtype)
    return softmax(-x, dim if dim is not None else _legacy_dim(x.ndim))


# -- modules ------------------------------------------------------------------------------

class ReLU6(Hardtanh):
    """``min(max(0, x), 6)``. Shape: any, unchanged.

    Args:
        inplace: accepted for compatibility; the result is always a new tensor.
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    extra_repr = _Inplace.extra_repr


class Hardsigmoid(_Inplace):
    """Piecewise-linear sigmoid; see :func:`hardsigmoid`. Shape: any, unchanged."""

    def forward(self, input: Tensor) -> Tensor:
        return hardsigmoid(input)


class Hardswish(_Inplace):
    """``x * hardsigmoid(x)`` (Howard et al., 2019). Shape: any, unchanged."""

    def forward(self, input: Tensor) -> Tensor:
        return hardswish(input)


class Mish(_Inplace):
    """``x * tanh(softplus(x))``. Shape: any, unchanged."""

    def forward(self, input: Tensor) -> Tensor:
        return mish(input)


class SELU(_Inplace):
    """Scaled ELU with self-normalising constants; see :func:`selu`. Shape: any."""

    def forward(self, input: Tensor) -> Tensor:
        return selu(input)


class CELU(Module):
    """Continuously differentiable ELU; see :func:`celu`.

    Args:
        alpha: the scale of the negative part.
        inplace: accepted for compatibility.
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return celu(input, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softsign(Module):
    """``x / (1 + |x|)``. Shape: any, unchanged."""

    def forward(self, input: Tensor) -> Tensor:
        return softsign(input)


class LogSigmoid(Module):
    """``log(sigmoid(x))``. Shape: any, unchanged."""

    def forward(self, input: Tensor) -> Tensor:
        return logsigmoid(input)


class Tanhshrink(Module):
    """``x - tanh(x)``. Shape: any, unchanged."""

    def forward(self, input: Tensor) -> Tensor:
        return tanhshrink(input)


class Softshrink(Module):
    """Soft thresholding; see :func:`softshrink`.

    Args:
        lambd: the threshold (non-negative).
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        _check_lambd("Softshrink", lambd)
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:
        return softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    """Hard thresholding; see :func:`hardshrink`.

    Args:
        lambd: the threshold (non-negative).
    """

    def forward(self, input: Tensor) -> Tensor:
        return hardshrink(input, self.lambd)


class GLU(Module):
    """Gated linear unit; see :func:`glu`.

    Args:
        dim: the dimension split in halves.

    Shape:
        Input ``(*, 2N, *)``; output ``(*, N, *)``.
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """Leaky ReLU with a learnt negative slope; see :func:`prelu`.

    Args:
        num_parameters: 1 (one shared slope) or the number of input channels.
        init: the initial slope.

    Shape:
        Input ``(N, C, *)`` (or any shape with one shared slope); output the same.
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        if num_parameters < 1:
            raise ValueError(f"PReLU: num_parameters must be positive, got {num_parameters}")
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(empty(num_parameters, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Fill the slopes with ``init``."""
        init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:
        return prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softmin(_Normalised):
    """``softmax(-x)`` along ``dim``.

    Args:
        dim: the dim to normalise (None picks PyTorch's legacy choice).
    """

    def forward(self, input: Tensor) -> Tensor:
        return softmin(input, self.dim)


__all__ = ["ReLU6", "Hardsigmoid", "Hardswish", "Mish", "SELU", "CELU", "Softsign",
           "LogSigmoid", "Tanhshrink", "Softshrink", "Hardshrink", "GLU", "PReLU", "Softmin"]
