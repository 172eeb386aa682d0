"""Sorting and scans: ``sort``, ``argsort``, ``topk``, ``cumsum``, ``cumprod``, ``tril``/``triu``.

Sorts are always stable (ties keep their order); values are gathered with the sorting
indices, so their gradient flows back through the gather.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ..amp.dispatch import autocast_op
from ..autograd.function import RESULT, Function, saved_by_pytorch
from ..dtypes import bfloat16
from ..errors import DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor, tensor_method
from ._util import normalize_dim
from .joining import Flip
from .movement import _full, expand, movedim, reshape, slice_view

SortResult = namedtuple("SortResult", ["values", "indices"])
TopKResult = namedtuple("TopKResult", ["values", "indices"])


def _gather(x: Tensor, index: Tensor, dim: int) -> Tensor:
    from .indexing import Pick

    return Pick.apply(x, index, dim=dim)


def _argsort(x: Tensor, d: int, descending: bool) -> Tensor:
    xp = x.device.xp
    a = x.array
    if x.dtype is bfloat16:  # NumPy's bfloat16 sorts NaN wrongly; float32 holds it exactly
        a = xp.astype(a, x.device.native_dtype("float32"))
    out = xp.argsort(a, axis=d, descending=descending, stable=True)
    return Tensor._make(xp.astype(out, x.device.native_dtype("int64")), x.device)


@tensor_method()
def argsort(input: Tensor, dim: int = -1, descending: bool = False,
            stable: bool = False) -> Tensor:
    """Indices that sort ``input`` along ``dim`` (ties keep their order: always stable)."""
    if input.ndim == 0:
        normalize_dim("argsort", dim, 0)
        return input.new_zeros((), dtype="int64")
    return _argsort(input, normalize_dim("argsort", dim, input.ndim), descending)


@tensor_method()
def sort(input: Tensor, dim: int = -1, descending: bool = False,
         stable: bool = False) -> SortResult:
    """Sorted values and their indices along ``dim``, as ``(values, indices)``.

    Args:
        input: the tensor.
        dim: the dimension to sort along.
        descending: largest first.
        stable: accepted for PyTorch compatibility; the sort is always stable.
    """
    if input.ndim == 0:
        normalize_dim("sort", dim, 0)
        values, indices = input.clone(), input.new_zeros((), dtype="int64")
        saved_by_pytorch(values, indices, op="sort")  # PyTorch's backward keeps the indices
        return SortResult(values, indices)
    d = normalize_dim("sort", dim, input.ndim)
    idx = _argsort(input, d, descending)
    return SortResult(_gather(input, idx, d), idx)


@tensor_method()
def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True,
         sorted: bool = True) -> TopKResult:
    """The ``k`` largest (or smallest) entries along ``dim`` and their indices."""
    if input.dtype.kind == "b":
        raise DTypeError("topk: bool input is not supported (as in PyTorch); convert with "
                         ".int() first")
    if input.ndim == 0:  # PyTorch: k of 0 or 1 both give the element itself
        normalize_dim("topk", dim, 0)
        if k not in (0, 1):
            raise IndexOutOfRangeError(f"topk: k ({k}) is out of range for a 0-d tensor "
                                       "(0 or 1)")
        v, i = topk(reshape(input, (1,)), 1, 0, largest)
        return TopKResult(reshape(v, ()), reshape(i, ()))
    d = normalize_dim("topk", dim, input.ndim)
    if not 0 <= k <= input.shape[d]:
        raise IndexOutOfRangeError(f"topk: k ({k}) is out of range for dimension {dim} of "
                                   f"size {input.shape[d]}")
    idx = _argsort(input, d, largest)
    idx = slice_view(idx, tuple(slice(0, k, 1) if j == d else _full(n)
                                for j, n in enumerate(idx.shape)))
    return TopKResult(_gather(input, idx, d), idx)


class Cumsum(Function):
    def forward(ctx, x, dim=0):
        ctx.dim = dim
        return ctx.xp.cumulative_sum(x, axis=dim)

    def backward(ctx, g):
        d = (ctx.dim,)
        return Flip.apply(Cumsum.apply(Flip.apply(g, dims=d), dim=ctx.dim), dims=d)


def _accumulated(op: str, x: Tensor, dtype: Any) -> Tensor:
    if dtype is not None:
        return x.to(dtype)
    return x.to("int64") if x.dtype.kind in "bui" else x


@tensor_method()
@autocast_op("cumsum")
def cumsum(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """Cumulative sum along ``dim`` (integer inputs accumulate in int64)."""
    x = _accumulated("cumsum", input, dtype)
    d = normalize_dim("cumsum", dim, x.ndim)
    if x.ndim == 0:
        return x.clone()
    if x.dtype.itemsize == 2 and x.dtype.is_floating_point:  # float16/bfloat16: in float32
        from .elementwise import in_float32

        return in_float32(Cumsum.apply, x, dim=d)
    return Cumsum.apply(x, dim=d)


class Cumprod(Function):
    pytorch_saves = ((0, RESULT),)

    def forward(ctx, x, dim=0):
        y = ctx.xp.cumulative_prod(x, axis=dim)
        ctx.dim, ctx.has_zero = dim, bool(ctx.xp.any(x == 0))
        ctx.save_for_backward(x, y)
        return y

    def backward(ctx, g):
        x, y = ctx.saved_tensors
        d = ctx.dim
        if x.numel() <= 1 or x.shape[d] == 1:  # g itself, even at a NaN x, as in PyTorch
            return g
        d1 = (d,)

        def reversed_cumsum(t: Tensor) -> Tensor:
            return Flip.apply(Cumsum.apply(Flip.apply(t, dims=d1), dim=d), dims=d1)

        if not ctx.has_zero:
            return reversed_cumsum(g * y) / x
        from ..autograd.grad_mode import state as grad_state
        from ..creation import eye
        from .elementwise import where
        from .joining import cat
        from .movement import narrow

        if not grad_state.enabled:  # PyTorch's O(n) first derivative, NaN and inf alike
            zero = g.new_zeros(())
            seen = Cumsum.apply((x == 0).to("int64"), dim=d)  # zeros up to each position
            before = seen == 0
            out = where(before, reversed_cumsum(where(before, g * y, zero)) / x, zero)
            # at the first zero z1: y[z1 - 1] * sum_{z1 <= k < z2} g[k] prod_{z1 < j <= k} x[j]
            span = seen == 1
            first = span.logical_and(Cumsum.apply(span.to("int64"), dim=d) == 1)
            inner = span.logical_and(first.logical_not())
            total = (Cumprod.apply(where(inner, x, 1.0), dim=d) * where(span, g, zero)).sum(
                d, keepdim=True)
            n = x.shape[d]
            shifted = cat([y.new_ones(*(1 if i == d else s for i, s in enumerate(y.shape))),
                           narrow(y, d, 0, n - 1)], d)
            at_first = where(first, shifted, zero).sum(d, keepdim=True)
            return out + where(first, total * at_first, zero)
        # for double backward: d y_j / d x_i = prod_{k <= j, k != i} x_k, an n x n table

        xm, gm = movedim(x, d, -1), movedim(g, d, -1)
        n = xm.shape[-1]
        diag = eye(n, dtype="bool", device=x.device)
        table = where(diag, 1.0, expand(reshape(xm, xm.shape[:-1] + (1, n)), xm.shape + (n,)))
        parts = Cumprod.apply(table, dim=table.ndim - 1) * reshape(gm, gm.shape[:-1] + (1, n))
        return movedim(triu(parts).sum(-1), -1, d)


@tensor_method()
@autocast_op("cumprod")
def cumprod(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """Cumulative product along ``dim`` (integer inputs accumulate in int64)."""
    x = _accumulated("cumprod", input, dtype)
    d = normalize_dim("cumprod", dim, x.ndim)
    if x.ndim == 0:
        out = x.clone()
        saved_by_pytorch(out, x, out, op="cumprod")  # as PyTorch's cumprod keeps both
        return out
    if x.dtype.itemsize == 2 and x.dtype.is_floating_point:  # float16/bfloat16: in float32
        from .elementwise import in_float32

        return in_float32(Cumprod.apply, x, dim=d)
    return Cumprod.apply(x, dim=d)


class Tril(Function):
    upper = False

    def forward(ctx, x, k=0):
        ctx.k = k
        return (ctx.xp.triu if ctx.upper else ctx.xp.tril)(x, k=k)

    def backward(ctx, g):
        return type(ctx).apply(g, k=ctx.k)


class Triu(Tril):
    upper = True


def _triangle(cls: type, name: str, x: Tensor, diagonal: int) -> Tensor:
    if x.ndim < 2:
        raise ShapeError(f"{name}: expected a tensor with at least 2 dims, got shape {x.shape}")
    return cls.apply(x, k=int(diagonal))


@tensor_method()
def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """Lower triangle of the last two dims (entries above ``diagonal`` set to 0)."""
    return _triangle(Tril, "tril", input, diagonal)


@tensor_method()
def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """Upper triangle of the last two dims (entries below ``diagonal`` set to 0)."""
    return _triangle(Triu, "triu", input, diagonal)


__all__ = ["SortResult", "TopKResult", "argsort", "sort", "topk", "cumsum", "cumprod", "tril",
           "triu"]
