"""Affine layers: ``Linear``, ``Bilinear``, ``Identity`` and their functional forms."""

from __future__ import annotations

import math
from typing import Any

from ..amp.dispatch import autocast_call, autocast_op
from ..amp.state import state as _autocast_state
from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..backend.kernels import fallback, get_kernel
from ..creation import empty
from ..errors import ShapeError
from ..ops import nn as _kernels  # noqa: F401 - registers the kernels' fallbacks
from ..tensor import Tensor
from . import init
from ._checks import _check_same, _check_tensor
from .module import Module
from .parameter import Parameter


class _Linear(Function):
    """``x @ w.T + b`` as one node (one GEMM forward, two backward)."""

    def forward(ctx, x, w, b=None):
        ctx.save_for_backward(x, w)
        xp = ctx.xp
        if x.ndim == 1:
            y = _like(xp, xp.matmul(w, x), x)
            return y if b is None else xp.add(y, b)
        # one 2-d GEMM over all leading dims (no broadcast batch of w)
        y = get_kernel(ctx.device.backend, "linear")(xp, _rows2d(xp, x), w, b)
        return xp.reshape(y, (*x.shape[:-1], w.shape[0])) if x.ndim > 2 else y

    def backward(ctx, g):
        x, w = ctx.saved_tensors
        nx, nw, nb = ctx.needs_input_grad
        if not _grad_state.enabled and x.ndim > 1:  # plain backward on raw arrays
            return _linear_backward(ctx, g.array, x.array, w.array)
        gx = gw = gb = None
        if nx:
            gx = g @ w
        if nw or nb:
            g2 = g.reshape(-1, w.shape[0])
            if nw:
                gw = g2.mT @ x.reshape(-1, w.shape[1])
            if nb:
                gb = g2.sum(0)
        return gx, gw, gb


@fallback("linear")
def linear_kernel(xp: Any, x: Any, w: Any, b: Any = None) -> Any:
    """``x @ w.T + b`` of a 2-d ``x`` ``(M, K)``, ``w`` ``(N, K)`` and ``b`` ``(N,)`` or None,
    in ``x``'s dtype. A backend may add the bias inside its product."""
    y = _like(xp, xp.matmul(x, xp.matrix_transpose(w)), x)
    return y if b is None else xp.add(y, b)  # the backend's add (a bias kernel)


def _rows2d(xp: Any, a: Any) -> Any:
    """``a`` as a 2-d ``(rows, last dim)`` array (a namespace reshape costs a few us, so
    only when needed)."""
    return a if a.ndim == 2 else xp.reshape(a, (-1, a.shape[-1]))


def _like(xp: Any, y: Any, x: Any) -> Any:
    """``y`` in ``x``'s dtype (NumPy's bfloat16 products come out in float32)."""
    return y if y.dtype == x.dtype else xp.astype(y, x.dtype)


def _linear_backward(ctx: Function, g: Any, x: Any, w: Any) -> tuple:
    """``_Linear``'s gradients with 2-d GEMMs and the ``sum_leading`` kernel."""
    xp, dev = ctx.xp, ctx.device
    nx, nw, nb = ctx.needs_input_grad
    g2 = _rows2d(xp, g)
    gx = gw = gb = None
    if nx:
        gx = xp.matmul(g2, w)
        gx = Tensor._make(_like(xp, gx if x.ndim == 2 else xp.reshape(gx, x.shape), x), dev)
    both = None
    if nw:
        x2 = _rows2d(xp, x)
        if nb:
            both = get_kernel(dev.backend, "linear_weight_bias_grad")(xp, g2, x2)
        if both is None:
            gw = Tensor._make(_like(xp, xp.matmul(xp.matrix_transpose(g2), x2), w), dev)
        else:
            gw, gb = (Tensor._make(a, dev) for a in both)
    if nb and both is None:
        gb = Tensor._make(get_kernel(dev.backend, "sum_leading")(xp, g2), dev)
    return gx, gw, gb


@fallback("linear_weight_bias_grad")
def linear_weight_bias_grad(xp: Any, g: Any, x: Any) -> tuple | None:
    """A linear layer's weight and bias gradients ``(g.T @ x, g.sum(0))`` of 2-d ``g``
    ``(M, N)`` and ``x`` ``(M, K)`` in one pass, where a backend has it (cuBLASLt's bias
    gradient epilogue); None here: the caller runs the product and ``sum_leading``."""
    return None


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """Apply ``y = x W^T + b``.

    Args:
        input: ``(*, in_features)``.
        weight: ``(out_features, in_features)``.
        bias: optional ``(out_features,)``.

    Shape:
        Output ``(*, out_features)``.
    """
    if _autocast_state.active:  # the autocast hook: one thread-local read when off
        return autocast_call("linear", linear, input, weight, bias)
    if type(input) is not Tensor:
        _check_tensor("linear", input)
    if weight.ndim != 2:
        raise ShapeError(f"linear: weight must be 2-D (out_features, in_features), got shape "
                         f"{weight.shape}")
    if input.ndim == 0 or input.shape[-1] != weight.shape[1]:
        raise ShapeError(f"linear: input of shape {input.shape} has {input.shape[-1:]} "
                         f"features but the layer expects in_features={weight.shape[1]} "
                         f"(weight shape {weight.shape}); check the previous layer's size")
    if (input.device is not weight.device or input.array.dtype != weight.array.dtype
            or (bias is not None and (bias.device is not weight.device
                                      or bias.array.dtype != weight.array.dtype))):
        _check_same("linear", input, weight, bias)
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise ShapeError(f"linear: bias must have shape ({weight.shape[0]},), got {bias.shape}")
    return _Linear.apply(input, weight, bias)


@autocast_op("bilinear")
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor,
             bias: Tensor | None = None) -> Tensor:
    """Apply ``y_k = x1^T A_k x2 + b_k``.

    Args:
        input1: ``(*, in1)``; input2: ``(*, in2)`` with the same leading dims.
        weight: ``(out, in1, in2)``; bias: optional ``(out,)``.

    Shape:
        Output ``(*, out)``.
    """
    _check_tensor("bilinear", input1, "input1")
    _check_tensor("bilinear", input2, "input2")
    if weight.ndim != 3:
        raise ShapeError(f"bilinear: weight must be 3-D (out, in1, in2), got {weight.shape}")
    out, in1, in2 = weight.shape
    if input1.shape[-1:] != (in1,) or input2.shape[-1:] != (in2,):
        raise ShapeError(f"bilinear: inputs of shapes {input1.shape} and {input2.shape} do not "
                         f"match in1_features={in1}, in2_features={in2}")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise ShapeError(f"bilinear: inputs must have the same batch dims, got "
                         f"{input1.shape} and {input2.shape}")
    _check_same("bilinear", input1, input2, weight, bias)
    lead = input1.shape[:-1]
    x1 = input1.reshape(-1, in1)
    x2 = input2.reshape(-1, in2)
    a = weight.permute(1, 0, 2).reshape(in1, out * in2)
    y = ((x1 @ a).reshape(-1, out, in2) * x2.unsqueeze(1)).sum(-1)
    if bias is not None:
        y = y + bias
    return y.reshape(*lead, out)


class Identity(Module):
    """Return the input unchanged (accepts and ignores any constructor arguments)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """Apply an affine map ``y = x W^T + b``.

    Args:
        in_features: size of each input sample.
        out_features: size of each output sample.
        bias: add a learnable bias.
        device, dtype: where and how to create the parameters.

    Shape:
        Input ``(*, in_features)``, output ``(*, out_features)``.

    Attributes:
        weight: ``(out_features, in_features)``, initialised U(-k, k), ``k = 1/sqrt(in)``.
        bias: ``(out_features,)``, initialised the same way.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(empty(out_features, in_features, dtype=dtype, device=device))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's default initialisation (kaiming-uniform with a=sqrt(5))."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1.0 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        p = self._parameters
        w = p.get("weight")
        if w is None:  # re-parametrized (weight_norm, spectral_norm, parametrize)
            w = self.weight
        return linear(input, w, self.bias if "bias" not in p else p["bias"])

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """Apply ``y = x1^T A x2 + b``.

    Args:
        in1_features, in2_features: sizes of the two inputs.
        out_features: output size.
        bias: add a learnable bias.

    Shape:
        Inputs ``(*, in1)`` and ``(*, in2)``, output ``(*, out)``.
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in1_features, in2_features, dtype=dtype,
                                      device=device))
        if bias:
            self.bias = Parameter(empty(out_features, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """U(-k, k) with ``k = 1/sqrt(in1_features)`` for weight and bias."""
        bound = 1.0 / math.sqrt(self.in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(Linear):
    """A :class:`Linear` whose ``in_features`` is taken from the first input.

    Until the first call the weight is empty; that call gives it the shape
    ``(out_features, input.shape[-1])``, initialises it as :class:`Linear` does, and the
    module becomes a plain :class:`Linear`. The parameter objects stay the same, so an
    optimizer built before the first call keeps working (unlike PyTorch, where it must be
    built after).

    Args:
        out_features: size of each output sample.
        bias: add a learnable bias.
    """

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, out_features, bias, device, dtype)

    def reset_parameters(self) -> None:
        if self.in_features:
            super().reset_parameters()

    def has_uninitialized_params(self) -> bool:
        """True until the first call gives the weight its shape."""
        return True

    def forward(self, input: Tensor) -> Tensor:
        if not isinstance(input, Tensor) or input.ndim < 1:
            raise ShapeError(f"LazyLinear: expected a tensor with at least 1 dim, got "
                             f"{getattr(input, 'shape', type(input).__name__)}")
        w = self.weight
        self.in_features = input.shape[-1]
        fresh = empty(self.out_features, self.in_features, dtype=w.dtype, device=w.device)
        w.array = fresh.array  # same Parameter object, new shape
        w._version[0] += 1
        object.__setattr__(self, "__class__", Linear)
        self.reset_parameters()
        return self.forward(input)


__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear"]
