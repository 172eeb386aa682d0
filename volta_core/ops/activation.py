"""Activation functions: softplus, gelu, silu, leaky_relu, elu, hardtanh.

(``relu``, ``sigmoid`` and ``tanh`` live in ``elementwise``; ``softmax`` in ``softmax``.)
"""

from __future__ import annotations

import math
from typing import Any

from ..amp.dispatch import autocast_op
from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..backend.kernels import fallback, get_kernel
from ..dtypes import checked_scalar
from ..errors import DTypeError
from ..tensor import Tensor
from .elementwise import in_float32, sigmoid, tanh, through_float32, where

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TANH_K = math.sqrt(2.0 / math.pi)
_TANH_C = 0.044715


def _floating(op: str, x: Tensor) -> Tensor:
    if type(x) is not Tensor:
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{op}: expected a floating tensor, got {x.dtype.name}; "
                         "call .float() first")
    return x


def _run(cls: type, x: Tensor, **params) -> Tensor:
    if through_float32(x):
        return in_float32(cls.apply, x, **params)
    return cls.apply(x, **params)


class Softplus(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x, beta=1.0, threshold=20.0):
        xp = ctx.xp
        bx = x * beta
        ctx.beta, ctx.threshold = beta, threshold
        ctx.save_for_backward(x)
        # log1p(exp(bx)) = max(bx, 0) + log1p(exp(-|bx|)), which never overflows
        soft = (xp.maximum(bx, xp.zeros_like(bx)) + xp.log1p(xp.exp(-xp.abs(bx)))) / beta
        return xp.where(bx > threshold, x, soft)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        bx = x * ctx.beta
        return where(bx > ctx.threshold, g, g * sigmoid(bx))


@autocast_op("softplus")
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold``.

    Args:
        input: the tensor.
        beta: the sharpness.
        threshold: above this value of ``beta * x`` the function is the identity.
    """
    return _run(Softplus, _floating("softplus", input), beta=beta, threshold=threshold)


class Gelu(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x, approximate="none"):
        ctx.approximate = approximate
        ctx.save_for_backward(x)
        xp = ctx.xp
        if approximate == "tanh":
            return 0.5 * x * (1.0 + xp.tanh(_TANH_K * (x + _TANH_C * x * x * x)))
        if x.dtype == xp.float64:  # x * Phi(x) with erfc: no 1 + erf cancellation for x < 0
            from .math import erfc64

            return 0.5 * x * erfc64(xp, x * -_SQRT_HALF)
        fused = get_kernel(ctx.device.backend, "gelu_erf")(xp, x)
        if fused is not None:  # the steps below as one backend kernel (the same values)
            y, e = fused
        else:
            e = get_kernel(ctx.device.backend, "erf")(xp, x * _SQRT_HALF)
            y = 0.5 * x
            y *= 1.0 + e  # in place: one temporary fewer, the same products
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(x, e)  # backward reuses erf: it costs more than the rest
        return y

    def backward(ctx, g):
        saved = ctx.saved_tensors
        x = saved[0]
        if ctx.approximate == "tanh":
            th = tanh(_TANH_K * (x + _TANH_C * x * x * x))
            slope = _TANH_K * (1.0 + 3.0 * _TANH_C * x * x)
            return g * (0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * slope)
        if len(saved) == 2 and not _grad_state.enabled and g.dtype is x.dtype:
            # plain backward: the same operations on arrays, with the forward's erf
            # (in place where a temporary is ours: the same products, fewer arrays)
            xa, ga = x.array, g.array
            fused = get_kernel(ctx.device.backend, "gelu_erf_backward")(ctx.xp, xa,
                                                                        saved[1].array, ga)
            if fused is not None:  # the steps below as one backend kernel (same values)
                return Tensor._make(fused, ctx.device)
            pdf = xa * xa
            pdf *= -0.5
            pdf = ctx.xp.exp(pdf)
            pdf *= _INV_SQRT_2PI
            pdf *= xa
            out = 1.0 + saved[1].array
            out *= 0.5
            out += pdf
            out *= ga
            return Tensor._make(out, ctx.device)
        cdf = 0.5 * (1.0 + (x * _SQRT_HALF).erf())
        pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
        return g * (cdf + x * pdf)


@fallback("gelu_erf")
def gelu_erf(xp: Any, x: Any) -> tuple | None:
    """GELU's float32/float16 forward as one kernel: ``(y, e)`` with
    ``e = erf(x * sqrt(1/2))`` and ``y = 0.5 * x`` times ``1 + e``, the operations of
    ``Gelu.forward``; or None where the backend has no such kernel (this fallback):
    ``Gelu`` then runs them itself."""
    return None


@fallback("gelu_erf_backward")
def gelu_erf_backward(xp: Any, x: Any, e: Any, g: Any) -> Any:
    """GELU's plain backward from the forward's ``erf`` ``e``, the operations of
    ``Gelu.backward``, as one kernel; or None (this fallback: ``Gelu`` runs them)."""
    return None


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit ``x * Phi(x)``.

    Args:
        input: the tensor.
        approximate: ``'none'`` for the exact form (with erf) or ``'tanh'`` for the
            tanh approximation.
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    x = _floating("gelu", input)
    # gelu(+inf) is inf, as PyTorch's scalar loop and its AVX2 vector loop give (its AVX-512
    # float32/bfloat16 vector loop gives NaN)
    if x.dtype.name == "float16":  # in float32, as PyTorch: x^2 overflows, 1 + erf cancels
        return in_float32(Gelu.apply, x, approximate=approximate)
    return _run(Gelu, x, approximate=approximate)


class Silu(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x):
        xp = ctx.xp
        e = xp.exp(-xp.abs(x))
        s = xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        ctx.save_for_backward(x)
        return x * s

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        s = sigmoid(x)
        return g * (s * (1.0 + x * (1.0 - s)))


def silu(input: Tensor) -> Tensor:
    """Sigmoid linear unit ``x * sigmoid(x)`` (also called swish)."""
    return _run(Silu, _floating("silu", input))


class LeakyRelu(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x, negative_slope=0.01):
        ctx.slope = negative_slope
        ctx.save_for_backward(x)
        return ctx.xp.where(x > 0, x, x * negative_slope)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return where(x > 0, g, g * ctx.slope)


def leaky_relu(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """``x`` where positive, else ``negative_slope * x``.

    Args:
        input: the tensor.
        negative_slope: the slope for negative inputs.
    """
    return _run(LeakyRelu, _floating("leaky_relu", input), negative_slope=negative_slope)


class Elu(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x, alpha=1.0):
        xp = ctx.xp
        ctx.alpha = alpha
        ctx.save_for_backward(x)
        # x itself (not minimum(x, 0)) on the negative side keeps elu(-0.0) = -0.0, as PyTorch
        neg = xp.where(x > 0, xp.zeros_like(x), x)
        return xp.where(x > 0, x, alpha * xp.expm1(neg))

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        # NaN takes the linear branch's gradient, as in PyTorch
        return where(x <= 0, g * (x.exp() * ctx.alpha), g)


def elu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """Exponential linear unit: ``x`` where positive, else ``alpha * (exp(x) - 1)``.

    Args:
        input: the tensor.
        alpha: the scale of the negative part.
    """
    return _run(Elu, _floating("elu", input), alpha=alpha)


class Hardtanh(Function):
    pytorch_saves = ((0,),)
    saves_as_pytorch = True

    def forward(ctx, x, min_val=-1.0, max_val=1.0):
        xp = ctx.xp
        ctx.bounds = (min_val, max_val)
        ctx.save_for_backward(x)
        lo = xp.full((), min_val, dtype=x.dtype, device=ctx.device.native)
        hi = xp.full((), max_val, dtype=x.dtype, device=ctx.device.native)
        # PyTorch's x < lo ? lo : x: a tie keeps x (relu6(-0.0) is -0.0), NaN stays
        y = xp.where(x < lo, lo, x)
        return xp.where(y > hi, hi, y)

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        lo, hi = ctx.bounds
        # 0 at and beyond the bounds; NaN passes the gradient, as in PyTorch
        outside = (x <= lo).logical_or(x >= hi)
        return where(outside, g.new_zeros(()), g)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """Clamp to ``[min_val, max_val]``; the gradient is 1 strictly inside, else 0.

    Args:
        input: the tensor.
        min_val: the lower bound.
        max_val: the upper bound.
    """
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) must not exceed max_val ({max_val})")
    if type(input) is not Tensor:
        raise TypeError(f"hardtanh: expected a Tensor, got {type(input).__name__}")
    if input.dtype.kind == "b":
        raise DTypeError("hardtanh: bool inputs are not supported (as in PyTorch); convert "
                         "with .int() or .float() first")
    if input.dtype.kind == "u" and min_val <= -1:  # PyTorch: -0.5 truncates to 0
        raise DTypeError(f"hardtanh: cannot clamp an unsigned {input.dtype.name} tensor to "
                         f"a negative limit ({min_val}); convert it with .int() or .float()")
    for v in (min_val, max_val):  # (a bound in (-1, 0) truncates to 0 for unsigned)
        checked_scalar("hardtanh", input.dtype, max(v, 0) if input.dtype.kind == "u" else v,
                       floats=True)
    return _run(Hardtanh, input, min_val=min_val, max_val=max_val)


__all__ = ["softplus", "gelu", "silu", "leaky_relu", "elu", "hardtanh"]
