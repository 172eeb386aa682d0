"""Writes at indices: ``index_copy``, ``index_fill``, ``index_put``, ``put``, ``take`` and
``scatter_reduce``, with their in-place forms.

Each is built on the differentiable gathers and scatters of ``indexing.py``. Where
several writes hit one place, ``index_copy``/``index_put``/``put`` keep the last (PyTorch
leaves the order unspecified). ``scatter_reduce`` reduces runs of equal destinations
with a segmented scan (log2(n) vector steps, no loop over elements).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..amp.dispatch import autocast_op
from ..autograd.function import RESULT, Function
from ..backend.kernels import get_kernel
from ..dtypes import checked_scalar
from ..errors import DTypeError, ShapeError
from ..tensor import Tensor, tensor_method
from ._scatter import _flat_positions, _runs
from ._util import broadcast_shapes, normalize_dim
from .elementwise import where
from .indexing import (
    IndexAdd,
    IndexSelect,
    Scatter,
    _as_python,
    _check_range,
    _gather_src,
    _int_index,
    getitem,
)
from .inplace import inplace
from .movement import ConstantPad, expand, reshape


class Overwrite(Scatter):
    """``scatter`` whose source gradient is a plain gather: every duplicate write gets
    the gradient of the place it went to, as PyTorch's ``put``/``index_copy``/
    ``index_put`` do."""

    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        nt, _, ns = ctx.needs_input_grad
        gt = Scatter.apply(g, index, g.new_zeros(index.shape), dim=ctx.dim) if nt else None
        return gt, None, (_gather_src(g, index, ctx.dim, ctx.src_shape) if ns else None)


def _flat_index(op: str, x: Tensor, index: Any) -> Tensor:
    """``index`` as 1-D int64 positions into ``x`` flattened, negatives wrapped."""
    index = _int_index(op, index, x.device)
    n = x.numel()
    xp = x.device.xp
    _check_range(op, index.array, n, 0, xp, negative=True)
    a = xp.reshape(xp.astype(index.array, x.device.native_dtype("int64")), (-1,))
    return Tensor._make(xp.where(a < 0, a + n, a), x.device)


@tensor_method()
def take(input: Tensor, index: Tensor) -> Tensor:
    """The entries of ``input`` seen as 1-D at ``index`` (negatives count from the end).

    The result has ``index``'s shape.
    """
    pos = _flat_index("take", input, index)
    out = IndexSelect.apply(reshape(input, (-1,)), pos, dim=0)
    return reshape(out, tuple(index.shape))


@tensor_method()
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """``input`` with ``source`` written at the flat positions ``index`` (a copy).

    Args:
        input: the tensor written into.
        index: int positions into ``input`` seen as 1-D (negatives count from the end).
        source: as many values as ``index`` has.
        accumulate: add the values instead of replacing (duplicates then sum).
    """
    pos = _flat_index("put", input, index)
    if type(source) is not Tensor or source.numel() != pos.shape[0]:
        n = source.numel() if type(source) is Tensor else type(source).__name__
        raise ShapeError(f"put: expected source and index to have the same number of "
                         f"elements, but got source.numel() = {n}, index.numel() = "
                         f"{pos.shape[0]}")
    src = reshape(source.to(input.dtype), (-1,))
    flat = reshape(input, (-1,))
    out = (IndexAdd.apply(flat, pos, src, dim=0) if accumulate
           else Overwrite.apply(flat, pos, src, dim=0))
    return reshape(out, input.shape)


def _along(op: str, x: Tensor, dim: int, index: Any, negative: bool) -> tuple[int, Tensor]:
    """The dim and the 1-D int64 index (negatives wrapped if allowed) of an index_* op."""
    index = _int_index(op, index, x.device)
    if index.ndim > 1:
        raise ShapeError(f"{op}: index must be 0-d or 1-D, got shape {index.shape}")
    d = normalize_dim(op, dim, x.ndim)
    n = x.shape[d] if x.ndim else 1
    xp = x.device.xp
    _check_range(op, index.array, n, dim, xp, negative=negative)
    a = xp.reshape(xp.astype(index.array, x.device.native_dtype("int64")), (-1,))
    return d, Tensor._make(xp.where(a < 0, a + n, a) if negative else a, x.device)


def _source_shape(op: str, input: Tensor, dim: int, d: int, idx: Tensor,
                  source: Any) -> tuple:
    """The shape ``source`` of an index_* op must have (``input``'s, with the number of
    indices along ``d``); raises naming ``op`` when it has another."""
    want = input.shape[:d] + (idx.shape[0],) + input.shape[d + 1:]
    if type(source) is not Tensor or source.shape != want:
        got = source.shape if type(source) is Tensor else type(source).__name__
        raise ShapeError(f"{op}: source of shape {got} must have shape {want} for input "
                         f"{input.shape} and {idx.shape[0]} indices along dim {dim}")
    return want


@tensor_method()
@autocast_op("index_copy")
def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``input`` with slice ``i`` of ``source`` along ``dim`` copied to slice ``index[i]``.

    Args:
        input: the tensor copied into.
        dim: the dimension indexed.
        index: 1-D int tensor of destinations (in range, no negatives).
        source: ``input``'s shape with ``len(index)`` along ``dim``.
    """
    if input.ndim == 0:
        out = index_copy(reshape(input, (1,)), dim, reshape(index, (-1,)),
                         reshape(source, (-1,)))
        return reshape(out, ())
    d, idx = _along("index_copy", input, dim, index, negative=False)
    want = _source_shape("index_copy", input, dim, d, idx, source)
    if source.dtype is not input.dtype:
        raise DTypeError(f"index_copy: source dtype {source.dtype.name} must match the "
                         f"input's {input.dtype.name}; convert it with .to()")
    lay = tuple(-1 if k == d else 1 for k in range(input.ndim))
    return Overwrite.apply(input, expand(reshape(idx, lay), want), source, dim=d)


@tensor_method()
def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """``input`` with every slice ``index[i]`` along ``dim`` set to ``value``.

    Args:
        input: the tensor.
        dim: the dimension indexed.
        index: 0-d or 1-D int tensor (negatives count from the end).
        value: a number or a 0-d tensor (differentiable).
    """
    d, idx = _along("index_fill", input, dim, index, negative=True)
    if type(value) is Tensor:
        if value.ndim:
            raise ShapeError(f"index_fill: only supports a 0-dimensional value tensor, but "
                             f"got shape {value.shape}")
        value = value.to(input.dtype)
    else:
        value = checked_scalar("index_fill", input.dtype, value, floats=True)
        value = input.new_full((), _as_python(input, value))
    if input.ndim == 0:
        return where(input.new_full((), idx.shape[0] > 0, dtype="bool"), value, input)
    xp, dev = input.device.xp, input.device
    n = input.shape[d]
    i64 = dev.native_dtype("int64")
    hits = get_kernel(dev.backend, "index_add")(
        xp, xp.zeros((n,), dtype=i64, device=dev.native), 0, idx.array,
        xp.ones(idx.shape, dtype=i64, device=dev.native))
    lay = tuple(n if k == d else 1 for k in range(input.ndim))
    mask = Tensor._make(xp.reshape(hits > 0, lay), dev)
    return where(mask, value, input)


@tensor_method()
@autocast_op("index_put")
def index_put(input: Tensor, indices: Sequence[Tensor], values: Any,
              accumulate: bool = False) -> Tensor:
    """``input`` with ``values`` written at ``input[indices]`` (a copy).

    Args:
        input: the tensor written into.
        indices: a tuple of int or bool tensors, as in ``input[indices] = values``.
        values: a tensor (or number) broadcast to the indexed shape.
        accumulate: add instead of replacing (duplicate positions then sum).
    """
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put: indices must be a tuple of tensors, got "
                        f"{type(indices).__name__}")
    from ..creation import arange

    grid = reshape(arange(input.numel(), device=input.device), input.shape)
    pos = getitem(grid, tuple(indices))
    if type(values) is not Tensor:
        values = input.new_full((), _as_python(input, values))
    elif values.dtype is not input.dtype:
        raise DTypeError(f"index_put: values dtype {values.dtype.name} must match the "
                         f"input's {input.dtype.name}; convert it with .to()")
    if broadcast_shapes("index_put", values.shape, pos.shape) != pos.shape:
        raise ShapeError(f"index_put: values of shape {values.shape} cannot be broadcast to "
                         f"the indexed shape {pos.shape}")
    v = reshape(expand(values, pos.shape), (-1,))
    flat, p = reshape(input, (-1,)), reshape(pos, (-1,))
    out = IndexAdd.apply(flat, p, v, dim=0) if accumulate else Overwrite.apply(flat, p, v, dim=0)
    return reshape(out, input.shape)


# -- scatter_reduce -----------------------------------------------------------------------

_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _segment_scan(xp: Any, keys: Any, vals: Any, combine: Any) -> Any:
    """Inclusive scan of ``vals`` with ``combine`` within runs of equal sorted ``keys``."""
    n = vals.shape[0]
    s = 1
    while s < n:
        same = keys[s:] == keys[:-s]
        tail = xp.where(same, combine(vals[s:], vals[:-s]), vals[s:])
        vals = xp.concat([vals[:s], tail])
        s *= 2
    return vals


class ScatterReduce(Function):
    pytorch_saves = ((0, 1, 2, RESULT), (), (0, 1, 2, RESULT))

    def forward(ctx, x, index, src, dim=0, reduce="sum", include_self=True):
        xp, dev = ctx.xp, ctx.device
        shape = tuple(x.shape)
        ctx.args = (dim, reduce, include_self, shape, tuple(src.shape))
        ctx.save_for_backward(x, index, src)
        flat = xp.reshape(x, (-1,))
        if any(i < s for i, s in zip(index.shape, src.shape)):
            src = src[tuple(slice(0, i) for i in index.shape)]
        pos = _flat_positions(xp, shape, dim, index)
        order = xp.argsort(pos, stable=True)
        keys = xp.take(pos, order)
        vals = xp.take(xp.reshape(src, (-1,)), order)
        if not keys.shape[0]:
            return xp.asarray(x, copy=True)
        ends = _runs(xp, keys)
        at = xp.take(keys, ends)
        integer = not dev.volta_dtype(x.dtype).is_floating_point
        # a segmented scan, not prefix-sum differences: a NaN or inf stays in its run
        combine = {"sum": lambda a, b: a + b, "mean": lambda a, b: a + b,
                   "prod": lambda a, b: a * b, "amax": xp.maximum, "amin": xp.minimum}[reduce]
        red = xp.take(_segment_scan(xp, keys, vals, combine), ends)
        here = xp.take(flat, at)
        if include_self:
            red = {"sum": lambda: here + red, "mean": lambda: here + red,
                   "prod": lambda: here * red, "amax": lambda: xp.maximum(here, red),
                   "amin": lambda: xp.minimum(here, red)}[reduce]()
        if reduce == "mean":
            starts = xp.concat([xp.full((1,), -1, dtype=ends.dtype, device=dev.native),
                                ends[:-1]])
            count = xp.astype(ends - starts + (1 if include_self else 0), red.dtype)
            red = xp.floor_divide(red, count) if integer else red / count
        red = xp.astype(red, x.dtype)
        out = get_kernel(dev.backend, "scatter")(xp, flat, 0, at, red)
        return xp.reshape(out, shape)

    def backward(ctx, g):
        x, index, src = ctx.saved_tensors
        dim, reduce, include_self, shape, src_shape = ctx.args
        nx, _, ns = ctx.needs_input_grad
        gx, _, gs = _scatter_reduce_grads(g, x, index, src, dim, reduce, include_self, nx, ns)
        if gs is not None and gs.shape != src_shape:  # src beyond index gets no gradient
            gs = ConstantPad.apply(gs, pads=tuple((0, s - i) for s, i in zip(src_shape,
                                                                            gs.shape)))
        return gx, None, gs


def _scatter_reduce_grads(g: Tensor, x: Tensor, index: Tensor, src: Tensor, dim: int,
                          reduce: str, include_self: bool, nx: bool, ns: bool) -> tuple:
    """PyTorch's gradients of ``scatter_reduce`` (ties of amax/amin share the gradient)."""
    from .indexing import gather, scatter

    if index.shape != src.shape:
        src = src[tuple(slice(0, i) for i in index.shape)]
    gx = gs = None
    if reduce == "sum":
        gx, gs = g, gather(g, dim, index)
    elif reduce == "mean":
        ones = g.new_ones(index.shape)
        count = scatter_reduce(g.new_full(g.shape, 1.0 if include_self else 0.0), dim,
                               index, ones, "sum")
        gd = g / where(count == 0, 1.0, count)
        gx, gs = gd, gather(gd, dim, index)
    elif reduce in ("amax", "amin"):
        result = scatter_reduce(x.detach(), dim, index, src.detach(), reduce,
                                include_self=include_self)
        value = gather(result, dim, index)
        self_hit = (x == result).to(g.dtype)
        src_hit = (src == value).to(g.dtype)
        n = scatter_reduce(self_hit, dim, index, src_hit, "sum")
        gd = g / n
        gx, gs = self_hit * gd, src_hit * gather(gd, dim, index)
    else:  # prod: the product of the others, also where some factors are zero
        result = scatter_reduce(x, dim, index, src, "prod", include_self=include_self)
        xz = x == 0
        masked_x = where(xz, 1.0, x)
        gx = g * scatter_reduce(masked_x, dim, index, src, "prod",
                                include_self=include_self) / masked_x
        sz = src == 0
        zeros_at = scatter_reduce(g.new_zeros(g.shape), dim, index, sz.to(g.dtype), "sum")
        single = sz.logical_and(gather(zeros_at, dim, index) == 1)
        others = scatter_reduce(x, dim, index, where(single, 1.0, src), "prod",
                                include_self=include_self)
        gs = where(single, gather(g * others, dim, index),
                   gather(g * result, dim, index) / where(sz, 1.0, src))
    if not include_self:  # self is overwritten where anything was scattered
        gx = scatter(gx, dim, index, 0.0)
    return (gx if nx else None), None, (gs if ns else None)


@tensor_method()
def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """Reduce ``src`` into ``input`` at ``index`` along ``dim`` (``scatter`` with a reduction).

    Args:
        input: the tensor reduced into.
        dim: the dimension indexed.
        index: int tensor, of ``src``'s rank, no larger than ``src``.
        src: the values reduced.
        reduce: ``"sum"``, ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``.
        include_self: whether ``input``'s values take part in the reduction where
            something is scattered (else they are replaced).
    """
    if reduce not in _REDUCES:
        raise ValueError(f"scatter_reduce: reduce argument must be one of {_REDUCES}, got "
                         f"{reduce!r}")
    if type(src) is not Tensor:
        raise TypeError(f"scatter_reduce: src must be a Tensor, got {type(src).__name__}")
    if src.dtype is not input.dtype:
        raise DTypeError(f"scatter_reduce: src dtype {src.dtype.name} must match the "
                         f"input's {input.dtype.name}; convert it with .to()")
    if input.ndim == 0:
        out = scatter_reduce(reshape(input, (1,)), 0, reshape(index, (-1,)),
                             reshape(src, (-1,)), reduce, include_self=include_self)
        return reshape(out, ())
    from .indexing import _scatter_args

    d, index, src = _scatter_args("scatter_reduce", input, dim, index, src)
    if input.dtype.name == "bfloat16":
        out = ScatterReduce.apply(input.float(), index, src.float(), dim=d, reduce=reduce,
                                  include_self=bool(include_self))
        return out.to("bfloat16")
    return ScatterReduce.apply(input, index, src, dim=d, reduce=reduce,
                               include_self=bool(include_self))


_INDEX_REDUCES = ("prod", "mean", "amax", "amin")


@tensor_method()
def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """``input`` with slice ``i`` of ``source`` along ``dim`` reduced into slice
    ``index[i]`` (duplicates reduce together): :func:`scatter_reduce` with the index
    repeated across the other dims, so values and gradients are its.

    Args:
        input: the tensor reduced into.
        dim: the dimension indexed.
        index: 1-D int tensor of destinations.
        source: ``input``'s shape with ``len(index)`` along ``dim``.
        reduce: ``"prod"``, ``"mean"``, ``"amax"`` or ``"amin"``.
        include_self: whether ``input``'s values take part where something is reduced
            (else they are replaced).
    """
    if reduce not in _INDEX_REDUCES:
        raise ValueError(f"index_reduce: reduce must be one of prod, mean, amax or amin, "
                         f"got {reduce!r}")
    if input.ndim == 0:
        out = index_reduce(reshape(input, (1,)), dim, reshape(index, (-1,)),
                           reshape(source, (-1,)), reduce, include_self=include_self)
        return reshape(out, ())
    d, idx = _along("index_reduce", input, dim, index, negative=False)
    want = _source_shape("index_reduce", input, dim, d, idx, source)
    lay = tuple(-1 if k == d else 1 for k in range(input.ndim))
    return scatter_reduce(input, d, expand(reshape(idx, lay), want), source, reduce,
                          include_self=include_self)


# -- in place -----------------------------------------------------------------------------

def index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """In-place :func:`index_copy`."""
    return inplace(self, "index_copy_", lambda s: index_copy(s, dim, index, source), source)


def index_fill_(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """In-place :func:`index_fill`."""
    return inplace(self, "index_fill_", lambda s: index_fill(s, dim, index, value), value)


def index_put_(self: Tensor, indices: Sequence[Tensor], values: Any,
               accumulate: bool = False) -> Tensor:
    """In-place :func:`index_put`."""
    return inplace(self, "index_put_", lambda s: index_put(s, indices, values, accumulate),
                   values)


def put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """In-place :func:`put`."""
    return inplace(self, "put_", lambda s: put(s, index, source, accumulate), source)


def scatter_reduce_(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    """In-place :func:`scatter_reduce`."""
    return inplace(self, "scatter_reduce_", lambda s: scatter_reduce(
        s, dim, index, src, reduce, include_self=include_self), src)


def index_reduce_(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                  include_self: bool = True) -> Tensor:
    """In-place :func:`index_reduce`."""
    return inplace(self, "index_reduce_", lambda s: index_reduce(
        s, dim, index, source, reduce, include_self=include_self), source)


for _f in (index_copy_, index_fill_, index_put_, put_, scatter_reduce_, index_reduce_):
    setattr(Tensor, _f.__name__, _f)

__all__ = ["take", "put", "index_copy", "index_fill", "index_put", "index_put_",
           "scatter_reduce", "index_reduce"]
