"""Order statistics: ``median``, ``nanmedian``, ``kthvalue``, ``msort`` and ``aminmax``.

Values are read from a stable sort (NaN sorts last, as the largest) and gathered from the
input at the chosen indices, so the gradient goes to the index returned, as in PyTorch.
Without ``dim``, ``median`` splits the gradient evenly among the elements equal to it.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ..autograd.function import RESULT, Function, saved_by_pytorch
from ..errors import IndexOutOfRangeError, ShapeError
from ..tensor import Tensor, tensor_method
from ._util import normalize_dim, require_int_dim
from .elementwise import where
from .indexing import Pick
from .movement import reshape
from .reduce import amax, amin
from .sorting import _argsort, sort

MedianResult = namedtuple("MedianResult", ["values", "indices"])
KthvalueResult = namedtuple("KthvalueResult", ["values", "indices"])
AminmaxResult = namedtuple("AminmaxResult", ["min", "max"])


def _pick(x: Tensor, d: int, rank: Any, keepdim: bool) -> tuple[Tensor, Tensor]:
    """Values and indices of the entries of sorted rank ``rank`` (an array of the kept
    shape) along ``d``; NaN sorts last, ties keep their order."""
    xp, dev = x.device.xp, x.device
    order = _argsort(x, d, False).array  # sort's order: NaN last in every float dtype
    idx = xp.take_along_axis(order, rank, axis=d)
    index = Tensor._make(idx, dev)
    values = Pick.apply(x, index, dim=d)
    if not keepdim:
        shape = x.shape[:d] + x.shape[d + 1:]
        values, index = reshape(values, shape), reshape(index, shape)
    return values, index


def _nan_count(x: Tensor, d: int) -> Any:
    xp = x.device.xp
    if not x.dtype.is_floating_point:
        return None
    return xp.sum(xp.astype(xp.isnan(x.array), xp.int64), axis=d, keepdims=True)


def _median_dim(op: str, x: Tensor, dim: int, keepdim: bool, ignore_nan: bool) -> MedianResult:
    if x.ndim == 0:
        normalize_dim(op, dim, 0)
        x = reshape(x, (1,))
        v, i = _median_dim(op, x, 0, True, ignore_nan)
        return MedianResult(reshape(v, ()), reshape(i, ()))
    d = normalize_dim(op, dim, x.ndim)
    n = x.shape[d]
    if n == 0:
        raise ShapeError(f"{op}: expected reduction dim {dim} to have non-zero size (shape "
                         f"{x.shape})")
    xp, dev = x.device.xp, x.device
    keep = x.shape[:d] + (1,) + x.shape[d + 1:]
    i64 = xp.int64
    nans = _nan_count(x, d)
    if nans is None:
        rank = xp.full(keep, (n - 1) // 2, dtype=i64, device=dev.native)
    elif ignore_nan:  # the lower median of the non-NaN values (rank 0 when all are NaN)
        valid = n - nans
        rank = xp.where(valid > 0, (valid - 1) // 2, xp.zeros_like(valid))
    else:  # a NaN makes the median NaN: the first NaN, right after the valid values
        rank = xp.where(nans > 0, n - nans, xp.full(keep, (n - 1) // 2, dtype=i64,
                                                       device=dev.native))
    values, index = _pick(x, d, xp.astype(rank, i64), keepdim)
    return MedianResult(values, index)


class _EvenPick(Function):
    """The precomputed ``value`` of ``x``; the gradient is split among equal elements."""

    pytorch_saves = ((0, RESULT), ())

    def forward(ctx, x, value):
        ctx.save_for_backward(x, value)
        return ctx.xp.asarray(value, copy=True)

    def backward(ctx, g):
        x, value = ctx.saved_tensors
        hit = (x == value).logical_or(x.isnan().logical_and(value.isnan()))
        # PyTorch fills the picks only: a NaN g does not reach the other elements
        return where(hit, g / hit.sum().to(g.dtype), 0.0), None


# PyTorch's median of no integers is its NaN converted by x86's cvttsd2si: the "integer
# indefinite" 0x80000000 (0x8000000000000000 for int64), cut to the dtype's width
_EMPTY_INT_MEDIAN = {"int64": -2 ** 63, "int32": -2 ** 31, "bool": True}


def _median_all(op: str, x: Tensor, ignore_nan: bool) -> Tensor:
    if x.numel() == 0:
        if x.dtype.is_floating_point:  # NaN, still in the graph
            out = reshape(x, (-1,)).sum() * float("nan")
            saved_by_pytorch(out, x, out, op=op)  # as PyTorch's median keeps both
            return out
        return x.new_full((), _EMPTY_INT_MEDIAN.get(x.dtype.name, 0))
    flat = reshape(x, (-1,))
    value = _median_dim(op, flat.detach(), 0, False, ignore_nan).values
    if not x.requires_grad:
        return value
    return _EvenPick.apply(x, value)


@tensor_method()
def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median (NaN if any element is NaN).

    Without ``dim``, the median of all elements (a 0-d tensor); with ``dim``, a
    ``(values, indices)`` pair along it.

    Args:
        input: the tensor.
        dim: the dimension to reduce.
        keepdim: keep the reduced dim with size 1.
    """
    if dim is None:
        return _median_all("median", input, False)
    return _median_dim("median", input, dim, keepdim, False)


@tensor_method()
def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """Like :func:`median`, ignoring NaN (NaN only where every element is NaN)."""
    if dim is None:
        return _median_all("nanmedian", input, True)
    return _median_dim("nanmedian", input, dim, keepdim, True)


@tensor_method()
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> KthvalueResult:
    """The ``k``-th smallest element along ``dim`` (``k`` from 1) and its index.

    NaN counts as larger than every number.

    Args:
        input: the tensor.
        k: the rank, ``1 <= k <= input.shape[dim]``.
        dim: the dimension to search.
        keepdim: keep the reduced dim with size 1.
    """
    x = input
    if x.ndim == 0:
        v, i = kthvalue(reshape(x, (1,)), k, 0, True)
        return KthvalueResult(reshape(v, ()), reshape(i, ()))
    d = normalize_dim("kthvalue", dim, x.ndim)
    n = x.shape[d]
    if not 1 <= k <= n:
        raise IndexOutOfRangeError(f"kthvalue: k ({k}) is out of range for dimension {dim} "
                                   f"of size {n}")
    xp, dev = x.device.xp, x.device
    keep = x.shape[:d] + (1,) + x.shape[d + 1:]
    rank = xp.full(keep, k - 1, dtype=xp.int64, device=dev.native)
    return KthvalueResult(*_pick(x, d, rank, keepdim))


def msort(input: Tensor) -> Tensor:
    """``input`` sorted along its first dim (ascending), values only."""
    return sort(input, dim=0).values


Tensor.msort = msort


@tensor_method()
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> AminmaxResult:
    """``(amin, amax)`` of ``input``, over all elements or along ``dim``."""
    require_int_dim("aminmax", dim)
    dims = () if dim is None else dim
    if dim is None and keepdim:
        dims = tuple(range(input.ndim))
    lo, hi = amin(input, dims, keepdim), amax(input, dims, keepdim)
    # PyTorch's one node saves input, min and max, whichever output the gradient comes from
    saved_by_pytorch(lo, hi, op="aminmax")
    saved_by_pytorch(hi, lo, op="aminmax")
    return AminmaxResult(lo, hi)


ModeResult = namedtuple("ModeResult", ["values", "indices"])


@tensor_method()
def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> ModeResult:
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and
    the index of its last occurrence, as PyTorch; NaNs count as one value."""
    require_int_dim("mode", dim)
    x = input if input.ndim else input.reshape(1)
    d = normalize_dim("mode", dim, x.ndim)
    if x.shape[d] == 0:
        raise IndexOutOfRangeError(f"mode: dimension {dim} of shape {input.shape} is empty")
    xp, dev = x.device.xp, x.device
    a = xp.moveaxis(x.array, d, -1)
    s = xp.sort(a, axis=-1)  # ascending, NaN last
    same = s[..., 1:] == s[..., :-1]
    if x.dtype.is_floating_point:
        same = same | (xp.isnan(s[..., 1:]) & xp.isnan(s[..., :-1]))
    n = a.shape[-1]
    i64 = dev.native_dtype("int64")
    pos = xp.broadcast_to(xp.arange(n, dtype=i64, device=dev.native), s.shape)
    zero = xp.zeros(s.shape[:-1] + (1,), dtype=i64, device=dev.native)
    # a run's start position, carried along it; the run's length counted at its end
    first = xp.ones(s.shape[:-1] + (1,), dtype=xp.bool, device=dev.native)
    start = xp.where(xp.concat([first, ~same], axis=-1), pos, zero)
    start = xp.cumulative_max(start, axis=-1) if hasattr(xp, "cumulative_max") else \
        _running_max(xp, start)
    length = pos - start + 1
    best = xp.argmax(length, axis=-1, keepdims=True)  # the first longest run: smallest value
    value = xp.take_along_axis(s, best, axis=-1)
    hit = a == value
    if x.dtype.is_floating_point:
        hit = hit | (xp.isnan(a) & xp.isnan(value))
    last = xp.max(xp.where(hit, pos, -1), axis=-1, keepdims=True)
    index = Tensor._make(xp.moveaxis(last, -1, d), dev)
    values = Pick.apply(x, index, dim=d)
    if not keepdim or input.ndim == 0:
        shape = x.shape[:d] + x.shape[d + 1:] if input.ndim else ()
        values, index = reshape(values, shape), reshape(index, shape)
    return ModeResult(values, index)


def _running_max(xp: Any, a: Any) -> Any:
    """Running maximum along the last axis (for namespaces without ``cumulative_max``)."""
    out = [a[..., :1]]
    for j in range(1, a.shape[-1]):
        out.append(xp.maximum(out[-1], a[..., j:j + 1]))
    return xp.concat(out, axis=-1)


__all__ = ["MedianResult", "KthvalueResult", "AminmaxResult", "ModeResult", "median",
           "nanmedian", "kthvalue", "msort", "aminmax", "mode"]
