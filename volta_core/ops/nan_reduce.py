"""Reductions that skip NaN or count: ``nansum``, ``nanmean`` and ``count_nonzero``.

NaN entries become 0 and their gradient is the incoming one times 0 (so an infinite
incoming gradient gives NaN there, as in PyTorch).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..autograd.function import Function
from ..errors import DTypeError
from ..tensor import Tensor, tensor_method
from ._util import normalize_dims
from .reduce import sum as _sum

Dims = int | Sequence[int] | None


class NanToZero(Function):
    pytorch_saves = ((0,),)

    def forward(ctx, x):
        xp = ctx.xp
        nan = xp.isnan(x)
        ctx.save_for_backward(xp.astype(~nan, x.dtype))
        return xp.where(nan, xp.zeros_like(x), x)

    def backward(ctx, g):
        (keep,) = ctx.saved_tensors
        return g * keep


@tensor_method()
def nansum(input: Tensor, dim: Dims = None, keepdim: bool = False, *,
           dtype: Any = None) -> Tensor:
    """Sum over ``dim`` (all elements when None), treating NaN as zero.

    Args:
        input: the tensor.
        dim: a dim or tuple of dims to reduce.
        keepdim: keep reduced dims with size 1.
        dtype: cast ``input`` to this dtype first (integers sum in int64 otherwise).
    """
    x = input if dtype is None else input.to(dtype)
    if x.dtype.is_floating_point:
        x = NanToZero.apply(x)
    return _sum(x, dim, keepdim)


@tensor_method()
def nanmean(input: Tensor, dim: Dims = None, keepdim: bool = False, *,
            dtype: Any = None) -> Tensor:
    """Mean of the non-NaN elements over ``dim`` (NaN where all are NaN; floating only).

    Args:
        input: a floating tensor.
        dim: a dim or tuple of dims to reduce.
        keepdim: keep reduced dims with size 1.
        dtype: cast ``input`` to this dtype first.
    """
    x = input if dtype is None else input.to(dtype)
    if not x.dtype.is_floating_point:
        raise DTypeError(f"nanmean: expected a floating tensor, got {x.dtype.name}; pass "
                         "dtype= or call .float() first")
    dims = normalize_dims("nanmean", dim, x.ndim)
    keep = x.isnan().logical_not()
    count = _sum(keep, dims, keepdim).to(x.dtype)
    return _sum(NanToZero.apply(x), dims, keepdim) / count


@tensor_method()
def count_nonzero(input: Tensor, dim: Dims = None) -> Tensor:
    """The number of nonzero elements (NaN counts) over ``dim``, as int64."""
    dims = normalize_dims("count_nonzero", dim, input.ndim)
    return _sum(input != 0, dims)


__all__ = ["nansum", "nanmean", "count_nonzero"]
