"""Reductions: sum, mean, max, min over all elements or along dims."""

from __future__ import annotations

from collections import namedtuple
from typing import Sequence

from ..autograd.function import Function
from ..errors import DTypeError, ShapeError
from ..tensor import Tensor, tensor_method
from ._util import normalize_dims

Dims = int | Sequence[int] | None
MaxResult = namedtuple("MaxResult", ["values", "indices"])


def _keep_shape(shape: tuple, dims: tuple) -> tuple:
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


class Sum(Function):
    def forward(ctx, x, dims=(), keepdim=False):
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        return ctx.xp.sum(x, axis=dims, keepdims=keepdim)

    def backward(ctx, g):
        if not ctx.keepdim:
            g = g.reshape(_keep_shape(ctx.in_shape, ctx.dims))
        return g.expand(ctx.in_shape)


@tensor_method()
def sum(x: Tensor, dim: Dims = None, keepdim: bool = False, dtype=None) -> Tensor:  # noqa: A001
    """Sum of the elements of ``x``, over all of them or along ``dim``.

    Args:
        x: the tensor.
        dim: a dim or tuple of dims to reduce; None reduces all.
        keepdim: keep reduced dims with size 1.
        dtype: cast ``x`` to this dtype first.
    """
    if dtype is not None:
        x = x.to(dtype)
    elif x.dtype.kind in "bui" and x.dtype.name != "int64":
        x = x.to("int64")  # integer sums accumulate in int64, as in PyTorch
    dims = normalize_dims("sum", dim, x.ndim)
    return Sum.apply(x, dims=dims, keepdim=keepdim)


@tensor_method()
def mean(x: Tensor, dim: Dims = None, keepdim: bool = False, dtype=None) -> Tensor:
    """Mean of the elements of ``x``, over all of them or along ``dim`` (floating dtypes)."""
    if dtype is not None:
        x = x.to(dtype)
    if not x.dtype.is_floating_point:
        raise DTypeError(f"mean: input dtype must be floating point, got {x.dtype.name}; "
                         "pass dtype= or call .float() first")
    dims = normalize_dims("mean", dim, x.ndim)
    n = 1
    for d in dims:
        n *= x.shape[d]
    return sum(x, dims, keepdim) / max(n, 1) if n else sum(x, dims, keepdim) * float("nan")


class _Extremum(Function):
    """Max or min along dims; the gradient is split evenly among tied extrema."""

    find = "max"

    def forward(ctx, x, dims=(), keepdim=False):
        xp = ctx.xp
        y = getattr(xp, ctx.find)(x, axis=dims, keepdims=True)
        mask = xp.astype(x == y, x.dtype)
        count = xp.sum(mask, axis=dims, keepdims=True)
        ctx.save_for_backward(mask / count)
        ctx.in_shape, ctx.dims, ctx.keepdim = x.shape, dims, keepdim
        return y if keepdim else xp.reshape(y, tuple(s for i, s in enumerate(x.shape)
                                                     if i not in dims))

    def backward(ctx, g):
        (weights,) = ctx.saved_tensors
        if not ctx.keepdim:
            g = g.reshape(_keep_shape(ctx.in_shape, ctx.dims))
        return g * weights


class Max(_Extremum):
    find = "max"


class Min(_Extremum):
    find = "min"


class _ArgExtremum(Function):
    differentiable = False
    find = "argmax"

    def forward(ctx, x, dim=None, keepdim=False):
        return getattr(ctx.xp, ctx.find)(x, axis=dim, keepdims=keepdim)


class Argmax(_ArgExtremum):
    find = "argmax"


class Argmin(_ArgExtremum):
    find = "argmin"


def _extremum(cls, argcls, name: str, x: Tensor, dim, keepdim: bool):
    if x.numel() == 0 and (dim is None or x.shape[dim] == 0):
        raise ShapeError(f"{name}: cannot reduce an empty tensor of shape {x.shape} "
                         "(the operation has no identity)")
    if dim is None:
        return cls.apply(x, dims=tuple(range(x.ndim)), keepdim=False)
    if not isinstance(dim, int):
        raise TypeError(f"{name}: dim must be an int (use amax/amin for several dims)")
    dims = normalize_dims(name, dim, x.ndim)
    values = cls.apply(x, dims=dims, keepdim=keepdim)
    indices = argcls.apply(x.detach(), dim=dims[0] if dims else None, keepdim=keepdim)
    return MaxResult(values, indices)


@tensor_method()
def max(x: Tensor, dim: int | None = None, keepdim: bool = False):  # noqa: A001
    """Largest element of ``x``; with ``dim``, a ``(values, indices)`` pair along it.

    ``max(a, b)`` with a tensor ``b`` is the elementwise maximum.
    """
    if isinstance(dim, Tensor):
        from .elementwise import maximum

        return maximum(x, dim)
    return _extremum(Max, Argmax, "max", x, dim, keepdim)


@tensor_method()
def min(x: Tensor, dim: int | None = None, keepdim: bool = False):  # noqa: A001
    """Smallest element of ``x``; with ``dim``, a ``(values, indices)`` pair along it."""
    if isinstance(dim, Tensor):
        from .elementwise import minimum

        return minimum(x, dim)
    return _extremum(Min, Argmin, "min", x, dim, keepdim)


@tensor_method()
def argmax(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest element (of the flattened tensor when ``dim`` is None)."""
    if dim is None:
        return Argmax.apply(x.reshape(-1))
    return Argmax.apply(x, dim=normalize_dims("argmax", dim, x.ndim)[0], keepdim=keepdim)


@tensor_method()
def argmin(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest element (of the flattened tensor when ``dim`` is None)."""
    if dim is None:
        return Argmin.apply(x.reshape(-1))
    return Argmin.apply(x, dim=normalize_dims("argmin", dim, x.ndim)[0], keepdim=keepdim)

__all__ = ["sum", "mean", "max", "min", "argmax", "argmin", "MaxResult"]
