"""Softmax, log-softmax and logsumexp, numerically stable for inputs of any magnitude.

``softmax`` and ``log_softmax`` are extension kernels (a backend may fuse them); the
generic fallbacks below subtract the maximum along ``dim`` before exponentiating.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..amp.dispatch import autocast_call, autocast_op
from ..amp.state import state as _autocast_state
from ..autograd.function import RESULT, Function, saved_by_pytorch
from ..autograd.grad_mode import state as _grad_state
from ..backend.kernels import fallback, get_kernel
from ..dtypes import get_default_dtype
from ..errors import DTypeError
from ..tensor import Tensor, tensor_method
from ._util import normalize_dim, normalize_dims


@fallback("softmax")
def softmax_kernel(xp: Any, x: Any, dim: int) -> Any:
    """Generic softmax of ``x`` along axis ``dim``."""
    if x.shape[dim] == 0:  # empty rows have no maximum (and nothing to normalise)
        return xp.zeros_like(x)
    e = xp.exp(x - xp.max(x, axis=dim, keepdims=True))
    return e / xp.sum(e, axis=dim, keepdims=True)


@fallback("log_softmax")
def log_softmax_kernel(xp: Any, x: Any, dim: int) -> Any:
    """Generic log-softmax of ``x`` along axis ``dim``."""
    if x.shape[dim] == 0:
        return xp.zeros_like(x)
    z = x - xp.max(x, axis=dim, keepdims=True)
    return z - xp.log(xp.sum(xp.exp(z), axis=dim, keepdims=True))


@fallback("softmax_backward")
def softmax_backward_kernel(xp: Any, grad: Any, y: Any, dim: int) -> Any:
    """Gradient of softmax w.r.t. its input, from the output ``y``: ``y * (g - <g, y>)``."""
    gy = grad * y
    return gy - y * xp.sum(gy, axis=dim, keepdims=True)


_LN2 = math.log(2.0)


@fallback("log_softmax_backward")
def log_softmax_backward_kernel(xp: Any, grad: Any, y: Any, dim: int) -> Any:
    """Gradient of log-softmax w.r.t. its input, from the output ``y``: ``g - exp(y) * s``
    with ``s = sum(g)``. Where ``exp(y) > 1/2`` (the dominant entry) it is taken as
    ``(g - s) - expm1(y) * s``: the small ``1 - exp(y)`` keeps its digits there, as in
    PyTorch's fused multiply-add, where the rounded product ``exp(y) * s`` loses them."""
    s = xp.sum(grad, axis=dim, keepdims=True)
    near = (y > -_LN2) & xp.isfinite(s)  # an inf or NaN sum: the plain form's inf/NaN
    return xp.where(near, (grad - s) - xp.expm1(y) * s, grad - xp.exp(y) * s)


class Softmax(Function):
    pytorch_saves = ((RESULT,),)
    saves_as_pytorch = True

    def forward(ctx, x, dim=-1):
        ctx.dim = dim
        y = get_kernel(ctx.device.backend, "softmax")(ctx.xp, x, dim)
        ctx.save_for_backward(y)
        return y

    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        if not _grad_state.enabled:  # plain backward: one fused kernel
            kern = get_kernel(ctx.device.backend, "softmax_backward")
            return Tensor._make(kern(ctx.xp, g.array, y.array, ctx.dim), ctx.device)
        gy = g * y
        return gy - y * gy.sum(ctx.dim, keepdim=True)


class LogSoftmax(Function):
    pytorch_saves = ((RESULT,),)
    saves_as_pytorch = True

    def forward(ctx, x, dim=-1):
        ctx.dim = dim
        y = get_kernel(ctx.device.backend, "log_softmax")(ctx.xp, x, dim)
        ctx.save_for_backward(y)
        return y

    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        if not _grad_state.enabled:  # plain backward: one kernel
            kern = get_kernel(ctx.device.backend, "log_softmax_backward")
            return Tensor._make(kern(ctx.xp, g.array, y.array, ctx.dim), ctx.device)
        from .elementwise import where

        s = g.sum(ctx.dim, keepdim=True)  # the kernel's formula, with Tensor ops
        near = (y > -_LN2).logical_and(s.isfinite())
        return where(near, (g - s) - y.expm1() * s, g - y.exp() * s)


def _prepare(op: str, x: Tensor, dim: Any, dtype: Any) -> tuple[Tensor, int]:
    if type(x) is not Tensor:
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_floating_point and x.numel() != 0:  # empty: PyTorch returns it as is
        raise DTypeError(f"{op}: expected a floating tensor, got {x.dtype.name}; pass "
                         "dtype= or call .float() first")
    if dim is None:
        raise TypeError(f"{op}: dim is required (the dimension that sums to one)")
    return x, normalize_dim(op, dim, x.ndim)


def _run(cls: type, x: Tensor, dim: int) -> Tensor:
    if not x.dtype.is_floating_point:  # an empty integer tensor (see _prepare)
        return x.clone()
    if x.dtype.itemsize == 2:  # float16/bfloat16 accumulate in float32, as in PyTorch
        from .elementwise import in_float32

        return in_float32(lambda t: _run(cls, t, dim), x)
    if x.ndim == 0:
        out = cls.apply(x.reshape(1), dim=0).reshape(())
        saved_by_pytorch(out, out, op=cls.__name__)  # PyTorch's saves its 0-d result
        return out
    if x.shape[dim] == 0:
        out = x * 1.0
        saved_by_pytorch(out, out, op=cls.__name__)  # PyTorch's saves its (empty) result
        return out
    return cls.apply(x, dim=dim)


@tensor_method()
def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim``, stable for large magnitudes.

    Args:
        input: a floating tensor.
        dim: the dimension along which the result sums to one.
        dtype: cast ``input`` to this dtype first.
    """
    if _autocast_state.active:  # the autocast hook: one thread-local read when off
        return autocast_call("softmax", softmax, input, dim, dtype)
    x, d = _prepare("softmax", input, dim, dtype)
    return _run(Softmax, x, d)


@tensor_method()
def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``log(softmax(x))`` along ``dim``, computed without overflow or underflow.

    Args:
        input: a floating tensor.
        dim: the dimension to normalise over.
        dtype: cast ``input`` to this dtype first.
    """
    if _autocast_state.active:  # the autocast hook: one thread-local read when off
        return autocast_call("log_softmax", log_softmax, input, dim, dtype)
    x, d = _prepare("log_softmax", input, dim, dtype)
    return _run(LogSoftmax, x, d)


class LogSumExp(Function):
    pytorch_saves = ((0, RESULT),)
    saves_as_pytorch = True

    def forward(ctx, x, dims=(), keepdim=False):
        xp = ctx.xp
        ctx.keep_shape = tuple(1 if i in dims else s for i, s in enumerate(x.shape))
        if any(x.shape[d] == 0 for d in dims):
            m = xp.zeros(ctx.keep_shape, dtype=x.dtype, device=ctx.device.native)
        else:
            m = xp.max(x, axis=dims, keepdims=True) if dims else x
            m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))  # rows of inf stay inf
        y = xp.log(xp.sum(xp.exp(x - m), axis=dims, keepdims=True)) + m
        if not keepdim:
            y = xp.reshape(y, tuple(s for i, s in enumerate(x.shape) if i not in dims))
        ctx.save_for_backward(x, y)
        return y

    def backward(ctx, g):
        x, y = ctx.saved_tensors
        keep = ctx.keep_shape
        return g.reshape(keep) * (x - y.reshape(keep)).exp()


@tensor_method()
@autocast_op("logsumexp")
def logsumexp(input: Tensor, dim: int | Sequence[int], keepdim: bool = False) -> Tensor:
    """``log(sum(exp(x)))`` over ``dim``, stable for large magnitudes.

    Args:
        input: the tensor (integers are converted to the default float dtype).
        dim: a dim or tuple of dims to reduce.
        keepdim: keep reduced dims with size 1.
    """
    x = input
    if not x.dtype.is_floating_point:
        x = x.to(get_default_dtype())
    if x.dtype.itemsize == 2:  # float16/bfloat16 accumulate in float32, as in PyTorch
        from .elementwise import in_float32

        return in_float32(logsumexp, x, dim, keepdim)
    dims = normalize_dims("logsumexp", dim, x.ndim)
    return LogSumExp.apply(x, dims=dims, keepdim=keepdim)


__all__ = ["softmax", "log_softmax", "logsumexp"]
