"""Indexing: ``x[key]``, gather/scatter, index_select/index_add, masks, one_hot, nonzero.

Gradients of gathers are scatters, computed by the extension kernels ``scatter_add``,
``scatter`` and ``index_add`` (generic fallbacks in ``_scatter.py``). ``x[key] = v``
lives in ``inplace.py``; sorting and scans in ``sorting.py`` (re-exported here).
"""

from __future__ import annotations

import math
import operator
from typing import Any

from ..amp.dispatch import autocast_op
from ..autograd.function import Function
from ..backend.kernels import get_kernel
from ..dtypes import checked_scalar
from ..errors import DeviceError, DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor, tensor_method
from ..views import layout, make_view
from ._scatter import _flat_positions
from ._util import broadcast_shapes, normalize_dim
from .movement import (
    ConstantPad,
    Reshape,
    _full,
    expand,
    movedim,
    permute,
    reshape,
    slice_view,
    unsqueeze_stride,
)


def _kernel(ctx, name: str):
    return get_kernel(ctx.device.backend, name)


# -- gather / scatter Functions -----------------------------------------------------------

class IndexSelect(Function):
    pytorch_saves = ((1,), ())

    def forward(ctx, x, index, dim=0):
        ctx.in_shape, ctx.dim = x.shape, dim
        ctx.save_for_backward(index)
        return ctx.xp.take(x, index, axis=dim)

    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        return IndexAdd.apply(g.new_zeros(ctx.in_shape), index, g, dim=ctx.dim), None


class IndexAdd(Function):
    pytorch_saves = ((), (), (1, 2))

    def forward(ctx, target, index, src, dim=0):
        ctx.dim = dim
        ctx.save_for_backward(index)
        return _kernel(ctx, "index_add")(ctx.xp, target, dim, index, src)

    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        ns = ctx.needs_input_grad[2]
        return g, None, (IndexSelect.apply(g, index, dim=ctx.dim) if ns else None)


class Gather(Function):
    pytorch_saves = ((0, 1), ())

    def forward(ctx, x, index, dim=0):
        ctx.in_shape, ctx.dim = x.shape, dim
        ctx.save_for_backward(index)
        if any(i != n for k, (i, n) in enumerate(zip(index.shape, x.shape)) if k != dim):
            x = x[tuple(slice(None) if k == dim else slice(0, i)
                        for k, i in enumerate(index.shape))]
        return ctx.xp.take_along_axis(x, index, axis=dim)

    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        return ScatterAdd.apply(g.new_zeros(ctx.in_shape), index, g, dim=ctx.dim), None


class Pick(Gather):
    """A gather of the indices an op chose (sort, topk, median and kthvalue along a dim):
    PyTorch's backward of those ops keeps the indices, not the input."""

    pytorch_saves = ((1,), ())


def last_writes(backend, shape: tuple, dim: int, index: Tensor) -> Tensor:
    """Where a scatter of ``index`` into ``shape`` along ``dim`` is the write that wins."""
    xp, dev = index.device.xp, index.device
    pos = _flat_positions(xp, shape, dim, index.array)
    ids = xp.arange(pos.shape[0], dtype=pos.dtype, device=dev.native)
    blank = xp.full((math.prod(shape),), -1, dtype=pos.dtype, device=dev.native)
    won = get_kernel(backend, "scatter")(xp, blank, 0, pos, ids)
    return Tensor._make(xp.reshape(xp.take(won, pos) == ids, index.shape), dev)


def _gather_src(g: Tensor, index: Tensor, dim: int, src_shape: tuple,
                replace: bool = False) -> Tensor:
    """Gradient of a scatter's ``src``: gathered, zero-padded where index is shorter.

    With ``replace``, only the write that won a duplicated destination gets a gradient.
    """
    gs = Gather.apply(g, index, dim=dim)
    if replace:
        from .elementwise import where

        gs = where(last_writes(g.device.backend, g.shape, dim, index), gs, 0.0)
    if gs.shape != src_shape:
        gs = ConstantPad.apply(gs, pads=tuple((0, s - i) for s, i in zip(src_shape, gs.shape)))
    return gs


class ScatterAdd(Function):
    pytorch_saves = ((), (), (1,))

    def forward(ctx, target, index, src, dim=0):
        ctx.dim, ctx.src_shape = dim, src.shape
        ctx.save_for_backward(index)
        return _kernel(ctx, "scatter_add")(ctx.xp, target, dim, index, src)

    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        ns = ctx.needs_input_grad[2]
        return g, None, (_gather_src(g, index, ctx.dim, ctx.src_shape) if ns else None)


class Scatter(Function):
    pytorch_saves = ((1,), (), (1,))

    def forward(ctx, target, index, src, dim=0):
        ctx.dim, ctx.src_shape = dim, src.shape
        ctx.save_for_backward(index)
        return _kernel(ctx, "scatter")(ctx.xp, target, dim, index, src)

    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        nt, _, ns = ctx.needs_input_grad
        gt = Scatter.apply(g, index, g.new_zeros(index.shape), dim=ctx.dim) if nt else None
        gs = _gather_src(g, index, ctx.dim, ctx.src_shape, replace=True) if ns else None
        return gt, None, gs


# -- argument checks ----------------------------------------------------------------------

def _int_index(op: str, index: Any, device) -> Tensor:
    if type(index) is not Tensor:
        index = Tensor(index, device=device)
    if index.dtype.kind not in "iu":
        raise DTypeError(f"{op}: index must be an integer tensor, got dtype {index.dtype.name}")
    if index.device is not device:
        raise DeviceError(f"{op}: index is on {index.device} but the input on {device}; "
                          f"move it with .to('{device}')")
    return index


def _check_range(op: str, a: Any, n: int, dim: int, xp: Any, negative: bool = False) -> None:
    """Raise ``IndexOutOfRangeError`` unless every index in ``a`` fits a dim of size ``n``."""
    if not math.prod(a.shape):
        return
    bad = (a < (-n if negative else 0)) | (a >= n)
    if bool(xp.any(bad)):
        v = int(xp.reshape(a[bad], (-1,))[0])
        raise IndexOutOfRangeError(f"{op}: index {v} is out of bounds for dimension {dim} "
                                   f"with size {n}")


def _scatter_args(op: str, x: Tensor, dim: int, index: Any, src: Any) -> tuple:
    index = _int_index(op, index, x.device)
    if type(src) is not Tensor:
        src = x.new_full(index.shape, src)
    elif src.dtype is not x.dtype:  # PyTorch does not convert the source
        raise DTypeError(f"{op}: src dtype {src.dtype.name} must equal the input's dtype "
                         f"{x.dtype.name}; convert it with src.to({x.dtype.name})")
    if not (x.ndim == index.ndim == src.ndim):
        raise ShapeError(f"{op}: input {x.shape}, index {index.shape} and src {src.shape} "
                         "must have the same number of dims")
    d = normalize_dim(op, dim, x.ndim)
    for k, (i, n, s) in enumerate(zip(index.shape, x.shape, src.shape)):
        if i > s or (k != d and i > n):
            raise ShapeError(f"{op}: index {index.shape} is larger than src {src.shape} or "
                             f"than input {x.shape} in dimension {k}")
    _check_range(op, index.array, x.shape[d] if x.ndim else 1, dim, x.device.xp)
    return d, index, src


# -- gather / scatter front ends ----------------------------------------------------------

@tensor_method()
def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """Pick the entries ``index`` (1-D) of ``input`` along ``dim``."""
    index = _int_index("index_select", index, input.device)
    if index.ndim > 1:
        raise ShapeError(f"index_select: index must be 1-D, got shape {index.shape}")
    if input.ndim == 0:
        if index.numel() != 1:
            raise ShapeError(f"index_select: a 0-d input takes exactly one index, got "
                             f"{index.numel()}")
        return reshape(index_select(reshape(input, (1,)), 0, index), index.shape)
    d = normalize_dim("index_select", dim, input.ndim)
    _check_range("index_select", index.array, input.shape[d], dim, input.device.xp)
    return IndexSelect.apply(input, reshape(index, (-1,)), dim=d)


@tensor_method()
def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *,
              alpha: float = 1) -> Tensor:
    """``input`` with ``alpha * source`` added at the entries ``index`` along ``dim``."""
    index = _int_index("index_add", index, input.device)
    d = normalize_dim("index_add", dim, input.ndim)
    index = reshape(index, (-1,))
    want = input.shape[:d] + (index.shape[0],) + input.shape[d + 1:]
    if source.shape != want:
        raise ShapeError(f"index_add: source of shape {source.shape} must have shape {want} "
                         f"for input {input.shape} and {index.shape[0]} indices along {dim}")
    if input.numel() or input.ndim <= 1:  # PyTorch skips the check for an empty matrix
        _check_range("index_add", index.array, input.shape[d], dim, input.device.xp)
    if source.dtype is not input.dtype:  # PyTorch does not convert the source
        raise DTypeError(f"index_add: source dtype {source.dtype.name} must equal the "
                         f"input's dtype {input.dtype.name}; convert it with .to()")
    if not input.numel():  # itself (an empty matrix), connected to source for autograd
        return (input * 1 + source.sum() * 0).to(input.dtype)  # bool sums are int64
    source = source.to(input.dtype) if alpha == 1 else (source * alpha).to(input.dtype)
    return IndexAdd.apply(input, index, source, dim=d)


@tensor_method()
def gather(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """``out[i][j] = input[index[i][j]][j]`` for dim 0 (and likewise for other dims)."""
    if type(index) is Tensor and index.numel() == 0 and index.dtype.kind not in "iu":
        index = index.to("int64")  # PyTorch takes an empty index of any dtype
    index = _int_index("gather", index, input.device)
    if index.ndim != input.ndim and index.numel() == 0:
        # PyTorch takes an empty index of any shape (the result has its shape)
        normalize_dim("gather", dim, input.ndim)
        empty = Gather.apply(reshape(input, (-1,)), reshape(index, (0,)), dim=0)
        return reshape(empty, index.shape)
    if index.ndim != input.ndim:
        raise ShapeError(f"gather: index {index.shape} must have as many dims as input "
                         f"{input.shape}")
    if input.ndim == 0:
        normalize_dim("gather", dim, 0)
        return reshape(gather(reshape(input, (1,)), 0, reshape(index, (1,))), ())
    d = normalize_dim("gather", dim, input.ndim)
    if any(i > n for k, (i, n) in enumerate(zip(index.shape, input.shape)) if k != d):
        raise ShapeError(f"gather: index {index.shape} is larger than input {input.shape} "
                         f"outside dimension {dim}")
    _check_range("gather", index.array, input.shape[d], dim, input.device.xp)
    return Gather.apply(input, index, dim=d)


@tensor_method()
@autocast_op("scatter_add")
def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """``input`` with ``src[i][j]`` added at ``[index[i][j]][j]`` (dim 0; duplicates sum)."""
    if input.ndim == 0:
        return reshape(scatter_add(reshape(input, (1,)), 0, reshape(index, (1,)),
                                   reshape(src, (1,))), ())
    d, index, src = _scatter_args("scatter_add", input, dim, index, src)
    return ScatterAdd.apply(input, index, src, dim=d)


@tensor_method()
def scatter(input: Tensor, dim: int, index: Tensor, src: Tensor | float = None, *,
            value: float | None = None, reduce: str | None = None) -> Tensor:
    """``input`` with ``src[i][j]`` (or ``value``) written at ``[index[i][j]][j]`` (dim 0);
    ``reduce="add"`` or ``"multiply"`` combines them with ``input``'s values instead (as
    ``scatter_reduce`` with ``"sum"``/``"prod"``, ``include_self=True``)."""
    src = value if src is None else src
    if src is None:
        raise TypeError("scatter: pass src (a tensor) or value (a number)")
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise ValueError(f"scatter: reduce argument must be either add or multiply, got "
                             f"{reduce!r}")
        from .index_update import scatter_reduce

        if type(src) is not Tensor:
            src = input.new_full(tuple(index.shape), src)
        return scatter_reduce(input, dim, index, src, "sum" if reduce == "add" else "prod")
    if input.ndim == 0:
        s = reshape(src, (1,)) if type(src) is Tensor else src
        return reshape(scatter(reshape(input, (1,)), 0, reshape(index, (1,)), s), ())
    d, index, src = _scatter_args("scatter", input, dim, index, src)
    return Scatter.apply(input, index, src, dim=d)


@tensor_method()
def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """Gather ``input`` along ``dim`` at ``indices``, broadcasting the other dims."""
    if type(indices) is Tensor and indices.dtype.kind not in "iu":  # even when empty
        raise DTypeError(f"take_along_dim: indices must be an integer tensor, got "
                         f"{indices.dtype.name}")
    if dim is None:
        return gather(reshape(input, (-1,)), 0, reshape(indices, (-1,)))
    if indices.ndim != input.ndim:
        raise ShapeError(f"take_along_dim: indices {indices.shape} and input {input.shape} "
                         "must have the same number of dims")
    d = normalize_dim("take_along_dim", dim, input.ndim)
    drop = [s for k, s in enumerate(input.shape) if k != d]
    other = [s for k, s in enumerate(indices.shape) if k != d]
    b = list(broadcast_shapes("take_along_dim", drop, other))
    input = expand(input, tuple(b[:d] + [input.shape[d]] + b[d:]))
    indices = expand(indices, tuple(b[:d] + [indices.shape[d]] + b[d:]))
    return gather(input, d, indices)


@tensor_method()
def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:
    """``input`` with ``value`` where the bool ``mask`` is True (the two broadcast together,
    as in PyTorch; ``masked_fill_`` needs a mask that broadcasts to ``input``)."""
    from .elementwise import where

    if type(mask) is not Tensor or mask.dtype.kind != "b":
        raise DTypeError(f"masked_fill: mask must be a bool tensor, got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    broadcast_shapes("masked_fill", input.shape, mask.shape)
    if type(value) is Tensor:
        if value.ndim:
            raise ShapeError(f"masked_fill: value must be 0-d, got shape {value.shape}")
        if value.dtype is not input.dtype:  # PyTorch converts it with a check
            checked_scalar("masked_fill", input.dtype, value.item(), floats=True)
        value = value.to(input.dtype)
    else:
        value = checked_scalar("masked_fill", input.dtype, value, floats=True)
        value = input.new_full((), _as_python(input, value))
    return where(mask, value, input)


def _as_python(x: Tensor, v: Any) -> Any:
    return {"b": bool, "i": int, "u": int}.get(x.dtype.kind, float)(v)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The entries of ``input`` where ``mask`` is True, as a 1-D tensor (both broadcast)."""
    shape = broadcast_shapes("masked_select", input.shape, mask.shape)
    return getitem(expand(input, shape), expand(mask, shape))


Tensor.masked_select = masked_select


@tensor_method()
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``input`` with the entries where ``mask`` (broadcast) is True taken, in row-major
    order, from the consecutive elements of ``source`` (of ``input``'s dtype)."""
    from .elementwise import where
    from .sorting import cumsum

    if type(mask) is not Tensor or mask.dtype.kind != "b":
        raise DTypeError(f"masked_scatter: mask must be a bool tensor, got "
                         f"{getattr(mask, 'dtype', type(mask).__name__)}")
    if type(source) is not Tensor or source.dtype is not input.dtype:
        raise DTypeError(f"masked_scatter: source must be a tensor of the input's dtype "
                         f"{input.dtype.name}, got {getattr(source, 'dtype', type(source))}")
    shape = broadcast_shapes("masked_scatter", input.shape, mask.shape)
    flat = reshape(expand(mask, shape), (-1,))
    taken = cumsum(flat, 0) - 1  # the source element of every True position
    count = int(taken[-1].item()) + 1 if flat.shape[0] else 0
    if count > source.numel():
        raise ShapeError(f"masked_scatter: mask {mask.shape} selects {count} entries but "
                         f"source {source.shape} has {source.numel()}")
    if source.numel() == 0:
        return expand(input, shape).clone()
    picked = IndexSelect.apply(reshape(source, (-1,)), taken.clamp(min=0), dim=0)
    return reshape(where(flat, picked, reshape(expand(input, shape), (-1,))), shape)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor with one more dim of size ``num_classes``: 1 at each class index."""
    if tensor.dtype.kind not in "iu":
        raise DTypeError(f"one_hot: expected an integer tensor of class indices, got "
                         f"{tensor.dtype.name}")
    xp, a = tensor.device.xp, tensor.array
    if tensor.numel() == 0 and num_classes <= 0:  # PyTorch refuses 0 classes here too
        raise ShapeError("one_hot: cannot infer the number of classes from an empty "
                         "tensor; pass num_classes > 0")
    if num_classes == -1:
        num_classes = int(xp.max(a)) + 1
    _check_range("one_hot", a, num_classes, -1, xp)
    classes = xp.arange(num_classes, dtype=a.dtype, device=tensor.device.native)
    out = xp.expand_dims(a, axis=-1) == classes
    return Tensor._make(xp.astype(out, tensor.device.native_dtype("int64")), tensor.device)


@tensor_method()
def nonzero(input: Tensor, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
    """Indices of the non-zero entries: an ``(n, ndim)`` tensor, or one 1-D tensor per dim."""
    xp, dev = input.device.xp, input.device
    a = input.array if input.ndim else xp.reshape(input.array, (1,))
    i64 = dev.native_dtype("int64")
    parts = [xp.astype(p, i64) for p in xp.nonzero(a)]
    if as_tuple:
        return tuple(Tensor._make(p, dev) for p in parts)
    if input.ndim == 0:
        return Tensor._make(xp.zeros((parts[0].shape[0], 0), dtype=i64, device=dev.native), dev)
    return Tensor._make(xp.stack(parts, axis=1), dev)


# -- x[key] -------------------------------------------------------------------------------

_BAD_KEY = ("only ints, slices, None, ..., and integer or bool tensors (or lists) are valid "
            "indices")


def _key_item(x: Tensor, k: Any) -> Any:
    """One index of a key, as None, Ellipsis, slice, int or Tensor."""
    if type(k) is Tensor:
        if k.ndim == 0 and k.dtype.kind in "iu":
            return int(k.item())  # a 0-d integer tensor indexes as an int, as in PyTorch
        return k
    if k is None or k is Ellipsis or type(k) is slice:
        return k
    if isinstance(k, bool):
        return Tensor(k, device=x.device)
    if isinstance(k, (list, tuple, range)):
        return Tensor(list(k), device=x.device, dtype=None if len(k) else "int64")
    if hasattr(k, "shape") and hasattr(k, "dtype") and getattr(k, "ndim", 0):
        return Tensor(k, device=x.device)
    try:
        return operator.index(k)
    except TypeError:
        raise IndexOutOfRangeError(f"__getitem__: {type(k).__name__} is not a valid index; "
                                   + _BAD_KEY) from None


def parse_key(x: Tensor, key: Any) -> tuple[tuple, list, list]:
    """Split ``key`` into a basic key (an int or slice per dim), new axes and tensor indices.

    Returns ``(basic, new_axes, advanced)``: ``new_axes`` are ``(position, dim)`` of the
    size-1 dims to insert in ``x[basic]`` (``dim``: the dim of ``x`` the key reached
    there), and ``advanced`` lists ``(position, int array, size)`` of the
    tensor indices applied afterwards (bool masks become their ``nonzero`` indices).
    """
    items = [_key_item(x, k) for k in (key if type(key) is tuple else (key,))]
    shape, nd = x.shape, x.ndim
    used = sum(1 if type(k) in (int, slice) else k.ndim if type(k) is Tensor
               and k.dtype.kind == "b" else 1 if type(k) is Tensor else 0 for k in items)
    if used > nd:
        raise IndexOutOfRangeError(f"__getitem__: too many indices ({used}) for a tensor of "
                                   f"shape {shape}")
    if sum(k is Ellipsis for k in items) > 1:
        raise IndexOutOfRangeError("__getitem__: an index can only have a single ellipsis")
    xp, basic, new_axes, adv, d, r = x.device.xp, [], [], [], 0, 0
    ranges = []  # the tensor indices' range checks, made unless the result is empty
    for k in items:
        if k is None:  # with the dim it comes before: PyTorch unsqueezes there, in order
            new_axes.append((r, d))
            r += 1
        elif k is Ellipsis:
            basic += [_full(n) for n in shape[d:d + nd - used]]
            d, r = d + nd - used, r + nd - used
        elif type(k) is slice:
            if k.step is not None and k.step <= 0:
                raise ShapeError(f"__getitem__: slice step must be positive, got {k.step}; "
                                 "use .flip(dim) to reverse")
            basic.append(slice(*k.indices(shape[d])))
            d, r = d + 1, r + 1
        elif type(k) is int:
            if not -shape[d] <= k < shape[d]:
                raise IndexOutOfRangeError(f"__getitem__: index {k} is out of bounds for "
                                           f"dimension {d} with size {shape[d]}")
            basic.append(k % shape[d])
            d += 1
        elif k.dtype.kind == "b":
            if k.device is not x.device:
                raise DeviceError(f"__getitem__: mask on {k.device} indexes a tensor on "
                                  f"{x.device}; move it with .to('{x.device}')")
            if k.ndim == 0:  # x[True] adds a dim of size 1, x[False] one of size 0
                new_axes.append((r, d))
                one = xp.arange(1 if bool(k) else 0, dtype=xp.int64, device=x.device.native)
                adv.append((r, one, 1))
                r += 1
                continue
            if k.shape != shape[d:d + k.ndim]:
                raise IndexOutOfRangeError(f"__getitem__: mask of shape {k.shape} does not "
                                           f"match the indexed shape {shape[d:d + k.ndim]} "
                                           f"at dimension {d}")
            for a in xp.nonzero(k.array):
                basic.append(_full(shape[d]))
                adv.append((r, a, shape[d]))
                d, r = d + 1, r + 1
        else:
            i = _int_index("__getitem__", k, x.device)
            basic.append(None)  # the full dim, filled in below
            ranges.append((i.array, shape[d], d))
            adv.append((r, i.array, shape[d]))
            d, r = d + 1, r + 1
    basic += [_full(n) for n in shape[d:]]
    # PyTorch checks tensor indices element by element: none is read when another dim of
    # the result is empty (x[..., tensor([3]), 1:1] of any x is empty, not an error), nor
    # when the indices broadcast to nothing (x[[0], empty_mask])
    if not any(type(s) is slice and len(range(s.start, s.stop, s.step)) == 0 for s in basic) \
            and not _broadcasts_to_nothing([a for _, a, _ in adv]):
        for a, n, dim in ranges:
            _check_range("__getitem__", a, n, dim, xp, negative=True)
    basic = [_full(shape[k]) if s is None else s for k, s in enumerate(basic)]
    return tuple(basic), new_axes, adv


def _broadcasts_to_nothing(arrays: list) -> bool:
    """Whether index arrays of several shapes broadcast to an empty shape."""
    if len(arrays) < 2:
        return False
    try:
        b = broadcast_shapes("__getitem__", *(tuple(a.shape) for a in arrays))
    except ShapeError:  # shapes that do not broadcast: _advanced raises the clear error
        return False
    return math.prod(b) == 0


def _advanced(y: Tensor, adv: list) -> Tensor:
    """Apply tensor indices (PyTorch/NumPy semantics) to ``y`` with ``index_select``."""
    xp, dev = y.device.xp, y.device
    i64 = dev.native_dtype("int64")
    b = broadcast_shapes("__getitem__", *(tuple(a.shape) for _, a, _ in adv))
    pos = [p for p, _, _ in adv]
    idx = []
    empty = 0 in y.shape  # nothing is read: an index out of range picks nothing either
    for _, a, n in adv:
        a = xp.astype(a, i64)
        a = xp.where(a < 0, a + n, a)
        idx.append(xp.clip(a, 0, n - 1) if empty and n else a)
    if len(adv) == 1:
        p = pos[0]
        z = IndexSelect.apply(y, Tensor._make(xp.reshape(idx[0], (-1,)), dev), dim=p)
        return reshape(z, y.shape[:p] + b + y.shape[p + 1:])
    lin, step = 0, 1
    for a, (_, _, n) in zip(reversed(idx), reversed(adv)):
        lin = lin + xp.broadcast_to(a, b) * step
        step *= n
    rest = [k for k in range(y.ndim) if k not in pos]
    yp = reshape(permute(y, tuple(pos + rest)), (step,) + tuple(y.shape[k] for k in rest))
    z = IndexSelect.apply(yp, Tensor._make(xp.reshape(lin, (-1,)), dev), dim=0)
    z = reshape(z, b + yp.shape[1:])
    if pos == list(range(pos[0], pos[0] + len(pos))) and pos[0]:
        z = movedim(z, tuple(range(len(b))), tuple(range(pos[0], pos[0] + len(b))))
    return z


def getitem(x: Tensor, key: Any) -> Tensor:
    """``x[key]`` with ints, slices (step > 0), None, ..., int tensors/lists and bool masks.

    Basic keys give views; tensor indices follow NumPy's rules (with ints applied first,
    as PyTorch does) and give copies. Differentiable.
    """
    if type(key) is int and x.ndim:
        n = x.array.shape[0]
        if not -n <= key < n:
            raise IndexOutOfRangeError(f"__getitem__: index {key} is out of bounds for "
                                       f"dimension 0 with size {n}")
        k = (key % n,) + tuple(_full(s) for s in x.array.shape[1:])
        return slice_view(x, k)
    basic, new_axes, adv = parse_key(x, key)
    y = slice_view(x, basic)
    if new_axes:
        y = _new_axes(x, y, new_axes)
    return _advanced(y, adv) if adv else y


def _new_axes(x: Tensor, y: Tensor, new_axes: list) -> Tensor:
    """``y`` (``x`` sliced) with size-1 dims inserted at the ``(position, dim)`` pairs of
    :func:`parse_key`, strided as PyTorch's in-order unsqueeze makes them: each takes
    ``size * stride`` of the dim of ``x`` it came before (1 past the last), so ``.stride()``
    and the memory-overlap checks that compare strides agree with PyTorch's."""
    x_strides = layout(x)[0]
    strides, offset = layout(y)
    shape, strides = list(y.shape), list(strides)
    for r, d in new_axes:
        shape.insert(r, 1)
        strides.insert(r, unsqueeze_stride(x.shape, x_strides, d))
    return make_view(Reshape.apply(y, shape=tuple(shape)), y, tuple(strides), offset)


Tensor.__getitem__ = getitem

from .sorting import SortResult, TopKResult, argsort, cumprod, cumsum, sort, topk, tril, triu  # noqa: E402

__all__ = ["SortResult", "TopKResult", "index_select", "index_add", "gather", "scatter",
           "scatter_add", "take_along_dim", "masked_fill", "masked_select", "masked_scatter",
           "one_hot",
           "nonzero", "argsort", "sort", "topk", "cumsum", "cumprod", "tril", "triu",
           "getitem"]
