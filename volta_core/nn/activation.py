"""Elementwise activations: modules, and the functional forms ``volta_core.ops`` lacks."""

from __future__ import annotations

from typing import Any

from ..amp.dispatch import autocast_op
from ..autograd.function import Function, saved_by_pytorch
from ..creation import empty
from ..dtypes import checked_scalar, float32, get_default_dtype
from ..errors import ShapeError
from ..ops.activation import _floating, gelu, softplus
from ..ops.activation import elu as _elu
from ..ops.activation import hardtanh as _hardtanh
from ..ops.activation import leaky_relu as _leaky_relu
from ..ops.activation import silu as _silu
from ..ops.elementwise import abs as _abs
from ..ops.elementwise import in_float32, rounded_to, sigmoid, tanh, where
from ..ops.elementwise import relu as _relu
from ..ops.inplace import inplace as _write_into
from ..ops.math import sign
from ..tensor import Tensor
from . import init
from .module import Module
from .parameter import Parameter

# in-place forms whose PyTorch backward keeps the result (the written tensor): a later
# in-place change of it refuses there
_KEEPS_RESULT = {"elu", "leaky_relu", "selu", "celu", "rrelu"}


def _into(name: str, input: Tensor, fn: Any) -> Tensor:
    """PyTorch's ``inplace=True``: ``fn(input)`` written into ``input``, whose version is
    bumped and whose history is replaced (a backward that needs the old values refuses)."""
    out = _write_into(input, f"{name}_", fn)
    if name in _KEEPS_RESULT:
        saved_by_pytorch(out, out, op=f"{name}_")
    return out


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(0, x)`` elementwise; with ``inplace``, written into ``input``."""
    return _into("relu", input, _relu) if inplace else _relu(input)


def relu_(input: Tensor) -> Tensor:
    """In-place :func:`relu`."""
    return relu(input, inplace=True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` where positive, else ``alpha * (exp(x) - 1)``; see :func:`volta_core.elu`."""
    if inplace:
        return _into("elu", input, lambda s: _elu(s, alpha))
    return _elu(input, alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`elu`."""
    return elu(input, alpha, inplace=True)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` where positive, else ``negative_slope * x``."""
    if inplace:
        return _into("leaky_relu", input, lambda s: _leaky_relu(s, negative_slope))
    return _leaky_relu(input, negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place :func:`leaky_relu`."""
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """Clamp to ``[min_val, max_val]`` (gradient 1 strictly inside, else 0)."""
    if inplace:
        return _into("hardtanh", input, lambda s: _hardtanh(s, min_val, max_val))
    return _hardtanh(input, min_val, max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place :func:`hardtanh`."""
    return hardtanh(input, min_val, max_val, inplace=True)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (swish); with ``inplace``, written into ``input``."""
    return _into("silu", input, _silu) if inplace else _silu(input)


class _Inplace(Module):
    """An activation with PyTorch's ``inplace`` flag (the result written into the input)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    """``max(0, x)`` elementwise.

    Args:
        inplace: write the result into the input.

    Shape:
        Input any; output the same.
    """

    def forward(self, input: Tensor) -> Tensor:
        return relu(input, self.inplace)


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
        return silu(input, self.inplace)


class LeakyReLU(Module):
    """``x`` for ``x >= 0``, else ``negative_slope * x``.

    Args:
        negative_slope: the slope for negative inputs.
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:
        return leaky_relu(input, self.negative_slope, self.inplace)

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
        return elu(input, self.alpha, self.inplace)

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
        return hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: negative inputs are scaled by a slope drawn from
    ``U(lower, upper)`` per element in training, by ``(lower + upper) / 2`` otherwise."""
    if inplace:
        return _into("rrelu", input, lambda s: rrelu(s, lower, upper, training))
    x = _floating("rrelu", input)
    if not training:
        out = where(x > 0, x, x * ((lower + upper) / 2.0))  # slope at 0, as PyTorch
    else:
        slope = empty(*x.shape, dtype=x.dtype, device=x.device).uniform_(lower, upper)
        out = where(x > 0, x, x * slope)
    saved_by_pytorch(out, x, op="rrelu")  # PyTorch's rrelu_with_noise saves its input
    return out


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """In-place :func:`rrelu`."""
    return rrelu(input, lower, upper, training, inplace=True)


class RReLU(Module):
    """Randomized leaky ReLU; see :func:`rrelu`.

    Args:
        lower: lower bound of the random slope.
        upper: upper bound of the random slope.
        inplace: write the result into the input.
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (
            ", inplace=True" if self.inplace else "")


class Threshold(Module):
    """``y = x if x > threshold else value``; see :func:`volta_core.nn.functional.threshold`.

    Args:
        threshold: the threshold.
        value: the value below it.
        inplace: write the result into the input.
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:
        from ..ops.threshold import threshold

        return threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else "")


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# -- functional forms ---------------------------------------------------------------------

def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``min(max(0, x), 6)`` elementwise."""
    return hardtanh(input, 0.0, 6.0, inplace)


def _run_float32(cls: type, x: Tensor) -> Tensor:
    """``cls`` on ``x``, float16 and bfloat16 computed in float32 as PyTorch's kernels do
    (``x * 6`` of a large float16 would overflow)."""
    if x.dtype.itemsize == 2:
        return in_float32(cls.apply, x)
    return cls.apply(x)


_ONE_SIXTH_F32 = 0.1666666716337204  # PyTorch's backward scales by 1.0f / 6 in every dtype


class _HardsigmoidOp(Function):
    pytorch_saves = ((0,),)

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
    if inplace:
        return _into("hardsigmoid", input, hardsigmoid)
    return _run_float32(_HardsigmoidOp, _floating("hardsigmoid", input))


class _HardswishOp(Function):
    pytorch_saves = ((0,),)

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
    if inplace:
        return _into("hardswish", input, hardswish)
    return _run_float32(_HardswishOp, _floating("hardswish", input))


class _MishOp(Function):
    pytorch_saves = ((0,),)

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
    if inplace:
        return _into("mish", input, mish)
    return _run_float32(_MishOp, _floating("mish", input))


def selu_(input: Tensor) -> Tensor:
    """In-place :func:`selu`."""
    return selu(input, inplace=True)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place :func:`celu`."""
    return celu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Scaled ELU: ``scale * elu(x, alpha)`` with the self-normalising constants
    ``alpha = 1.6732632...`` and ``scale = 1.0507009...`` (Klambauer et al., 2017)."""
    if inplace:
        return _into("selu", input, selu)
    x = _floating("selu", input)
    if x.dtype.itemsize == 2:  # in float32, rounded once, as PyTorch's kernel
        return in_float32(selu, x)
    return elu(x, _SELU_ALPHA) * _SELU_SCALE


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Args:
        input: the tensor.
        alpha: the scale of the negative part (must not be 0).
    """
    if inplace:
        return _into("celu", input, lambda s: celu(s, alpha))
    x = _floating("celu", input)
    if alpha == 0:
        raise ValueError("celu: alpha must not be 0 (it divides the input)")
    if x.dtype.itemsize < 8:  # PyTorch takes 1 / alpha in float32, and refuses beyond it
        checked_scalar("celu", float32, 1.0 / alpha, floats=True)
    if x.dtype.itemsize == 2:  # in float32, rounded once, as PyTorch's kernel
        return in_float32(lambda s: celu(s, alpha), x)
    # x itself where positive: x / alpha * alpha would overflow near the dtype's max
    out = where(x > 0, x, elu(x * (1.0 / alpha), 1.0) * alpha)
    saved_by_pytorch(out, x, op="celu")  # PyTorch's celu saves its input
    return out


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
    if x.dtype.itemsize == 2:  # in float32, rounded once, as PyTorch's kernel
        return in_float32(logsigmoid, x)
    out = 0.0 - softplus(-x)  # +0 where softplus underflows, as PyTorch's, not -0
    saved_by_pytorch(out, x, op="logsigmoid")  # PyTorch's logsigmoid saves its input
    return out


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
    if x.dtype.itemsize == 2:  # in float32 with lambd, rounded once, as PyTorch's kernel
        return in_float32(lambda s: softshrink(s, lambd), x)
    # NaN stays NaN with gradient 1, as in PyTorch
    # x * 0 in the middle: -0.0 for a negative x, as PyTorch's kernel
    out = where(_abs(x) <= lambd, (x * 0.0).detach(), x - sign(x) * lambd)
    saved_by_pytorch(out, x, op="softshrink")  # PyTorch's softshrink saves its input
    return out


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """``x`` where ``|x| > lambd``, else 0."""
    x = _floating("hardshrink", input)
    _check_lambd("hardshrink", lambd)
    if x.dtype.itemsize == 2:  # PyTorch compares with lambd in the dtype
        lambd = rounded_to(x.dtype, lambd)
    out = where(_abs(x) <= lambd, x.new_zeros(()), x)  # NaN stays NaN, as in PyTorch
    saved_by_pytorch(out, x, op="hardshrink")  # PyTorch's hardshrink saves its input
    return out


@autocast_op("prelu")
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


# -- modules ------------------------------------------------------------------------------

class ReLU6(Hardtanh):
    """``min(max(0, x), 6)``. Shape: any, unchanged.

    Args:
        inplace: write the result into the input.
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    extra_repr = _Inplace.extra_repr


class Hardsigmoid(_Inplace):
    """Piecewise-linear sigmoid; see :func:`hardsigmoid`. Shape: any, unchanged."""

    def forward(self, input: Tensor) -> Tensor:
        return hardsigmoid(input, self.inplace)


class Hardswish(_Inplace):
    """``x * hardsigmoid(x)`` (Howard et al., 2019). Shape: any, unchanged."""

    def forward(self, input: Tensor) -> Tensor:
        return hardswish(input, self.inplace)


class Mish(_Inplace):
    """``x * tanh(softplus(x))``. Shape: any, unchanged."""

    def forward(self, input: Tensor) -> Tensor:
        return mish(input, self.inplace)


class SELU(_Inplace):
    """Scaled ELU with self-normalising constants; see :func:`selu`. Shape: any."""

    def forward(self, input: Tensor) -> Tensor:
        return selu(input, self.inplace)


class CELU(Module):
    """Continuously differentiable ELU; see :func:`celu`.

    Args:
        alpha: the scale of the negative part.
        inplace: write the result into the input.
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:
        return celu(input, self.alpha, self.inplace)

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


__all__ = ["RReLU", "Threshold", "ReLU", "Sigmoid", "Tanh", "GELU", "SiLU", "LeakyReLU", "ELU",
           "Softplus", "Hardtanh", "ReLU6", "Hardsigmoid", "Hardswish", "Mish", "SELU", "CELU",
           "Softsign", "LogSigmoid", "Tanhshrink", "Softshrink", "Hardshrink", "PReLU"]
