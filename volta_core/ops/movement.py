"""Movement ops: views (reshape, permute, expand, slicing), padding, joining and splitting.

The ops PyTorch documents as views return views here too: they share their base's values
and version counter, and in-place changes through any of them reach the base and every
other view (see :mod:`volta_core.views`). Each view op computes the view's strides from
its input's, so ``is_contiguous()``, ``contiguous()`` and ``view()`` behave as PyTorch's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..autograd.function import Function, saved_by_pytorch
from ..errors import DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor, tensor_method
from ..views import (
    contiguous_strides,
    layout,
    make_view,
    strided_positions,
    view_base,
    view_strides,
)
from ..views import is_contiguous as _contiguous_layout
from ._util import broadcast_shapes, normalize_dim


def _shape_arg(op: str, shape: tuple) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    try:
        return tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise ShapeError(f"{op}: expected a shape of ints, got {shape!r}") from None


class Reshape(Function):
    def forward(ctx, x, shape=()):
        ctx.in_shape = x.shape
        return ctx.xp.reshape(x, shape)

    def backward(ctx, g):
        return reshape(g, ctx.in_shape)


def _target_shape(op: str, x: Tensor, shape: tuple) -> tuple[int, ...]:
    """``shape`` with its -1 resolved, checked against the number of elements of ``x``."""
    shape = _shape_arg(op, shape)
    n = x.numel()
    if shape.count(-1) > 1:
        raise ShapeError(f"{op}: only one dimension can be -1, got {shape}")
    if -1 in shape:
        known = 1
        for s in shape:
            known *= s if s != -1 else 1
        if known == 0 or n % known:
            raise ShapeError(f"{op}: shape {shape} is invalid for input of size {n} "
                             f"(shape {x.shape})")
        shape = tuple(n // known if s == -1 else s for s in shape)
    total = 1
    for s in shape:
        total *= s
    if total != n or any(s < 0 for s in shape):
        raise ShapeError(f"{op}: shape {shape} is invalid for input of size {n} "
                         f"(shape {x.shape})")
    return shape


@tensor_method()
def reshape(x: Tensor, *shape: int) -> Tensor:
    """Return ``x`` with a new shape of the same number of elements (one dim may be -1).

    A view of ``x`` when its strides allow one, else a copy (as in PyTorch).

    Args:
        x: the tensor.
        shape: the new shape, as ints or one tuple.
    """
    shape = _target_shape("reshape", x, shape)
    if shape == tuple(x.array.shape):
        return x
    if x._owner is None:  # no view: laid out row-major from 0, so always a view
        new, offset = contiguous_strides(shape), 0
    else:
        strides, offset = layout(x)
        new = view_strides(x.shape, strides, shape)
    out = Reshape.apply(x, shape=shape)
    return out if new is None else make_view(out, x, new, offset)


@tensor_method()
def view(x: Tensor, *shape: Any) -> Tensor:
    """Return a view of ``x`` with a new shape (one dim may be -1); never copies.

    Raises:
        ShapeError: if ``x``'s strides don't allow the view (use :func:`reshape`).
    """
    from ..dtypes import DType

    if len(shape) == 1 and isinstance(shape[0], DType):
        if shape[0] is x.dtype:
            return x
        raise DTypeError(f"view: reinterpreting {x.dtype.name} as {shape[0].name} is not "
                         "supported; use .to(dtype) to convert the values")
    shape = _target_shape("view", x, shape)
    if shape == tuple(x.array.shape):
        return x
    strides, offset = layout(x)
    new = view_strides(x.shape, strides, shape)
    if new is None:
        raise ShapeError(f"view: view size {shape} is not compatible with the input's size "
                         f"{x.shape} and stride {strides} (at least one dimension spans "
                         "across two contiguous subspaces); use .reshape(...) instead")
    return make_view(Reshape.apply(x, shape=shape), x, new, offset)


class Permute(Function):
    def forward(ctx, x, dims=()):
        ctx.dims = dims
        return ctx.xp.permute_dims(x, dims)

    def backward(ctx, g):
        inverse = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inverse[d] = i
        return permute(g, tuple(inverse))


@tensor_method()
def permute(x: Tensor, *dims: int) -> Tensor:
    """Return a view of ``x`` with its dimensions reordered as ``dims``."""
    if not dims:
        raise TypeError("permute() missing 1 required positional argument: 'dims' (pass () "
                        "for a 0-d tensor)")
    dims = _shape_arg("permute", dims)
    nd = x.ndim
    if len(dims) != nd:
        raise ShapeError(f"permute: got {len(dims)} dims {dims} for a tensor with {nd} dims")
    dims = tuple(normalize_dim("permute", d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise ShapeError(f"permute: dims {dims} repeat a dimension")
    if dims == tuple(range(nd)):
        return x
    strides, offset = layout(x)
    return make_view(Permute.apply(x, dims=dims), x, tuple(strides[d] for d in dims), offset)


@tensor_method("transpose", "swapaxes", "swapdims")
def transpose(x: Tensor, dim0: int = -2, dim1: int = -1) -> Tensor:
    """Return ``x`` with dimensions ``dim0`` and ``dim1`` swapped."""
    nd = x.ndim
    if nd < 2 and (dim0, dim1) == (-2, -1):
        return x
    d0, d1 = normalize_dim("transpose", dim0, nd), normalize_dim("transpose", dim1, nd)
    if nd == 0:  # dims 0 and -1 of a 0-d tensor name the tensor itself, as in PyTorch
        return x
    dims = list(range(nd))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return permute(x, tuple(dims))


def _mT(x: Tensor) -> Tensor:
    if x.ndim < 2:
        if x.ndim == 0:  # PyTorch: the identity on 0-d (deprecated there)
            return x
        raise ShapeError(f"mT: only supported on matrices or batches of matrices, got a "
                         f"1-d tensor of shape {x.shape}; use unsqueeze first")
    return transpose(x, -2, -1)


Tensor.mT = property(_mT, doc="The last two dims swapped (not on a 1-d tensor).")
Tensor.T = property(lambda self: permute(self, tuple(range(self.ndim - 1, -1, -1))),
                    doc="All dims reversed.")


def t(x: Tensor) -> Tensor:
    """Transpose of a tensor of at most 2 dims."""
    if x.ndim > 2:
        raise ShapeError(f"t: expected a tensor with <= 2 dims, got {x.ndim}")
    return transpose(x, 0, 1) if x.ndim == 2 else x


Tensor.t = t


class Expand(Function):
    def forward(ctx, x, shape=()):
        ctx.in_shape = x.shape
        return ctx.xp.broadcast_to(x, shape)

    def backward(ctx, g):
        return sum_to(g, ctx.in_shape)


@tensor_method("expand", "broadcast_to")
def expand(x: Tensor, *shape: int) -> Tensor:
    """Return ``x`` broadcast to ``shape`` (-1 keeps a dimension), without copying."""
    shape = _shape_arg("expand", shape)
    lead = len(shape) - x.ndim
    if lead < 0:
        raise ShapeError(f"expand: cannot expand shape {x.shape} to fewer dims {shape}")
    shape = tuple(x.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(shape))
    if broadcast_shapes("expand", x.shape, shape) != shape:
        raise ShapeError(f"expand: shape {x.shape} cannot be expanded to {shape}")
    if shape == x.shape:
        return x
    strides, offset = layout(x)
    return make_view(Expand.apply(x, shape=shape), x, expand_strides(x.shape, strides, shape),
                     offset)


def expand_strides(shape: tuple, strides: tuple, target: tuple) -> tuple:
    """PyTorch's strides of a ``shape`` layout expanded to ``target``: 0 where a dim grows
    from 1; a new leading dim of size 1 takes ``size * stride`` of the dim after it (0 for
    a 0-d source), as its ``.stride()`` shows and its overlap checks compare."""
    lead = len(target) - len(shape)
    out = [0] * len(target)
    for i in range(len(target) - 1, -1, -1):
        d = i - lead
        if d >= 0:
            n, st = shape[d], strides[d]
        else:
            n, st = 1, (target[i + 1] * out[i + 1] if i + 1 < len(target) and shape else 0)
        out[i] = 0 if n != target[i] else st
    return tuple(out)


broadcast_to = expand


def sum_to(x: Tensor, shape: Sequence[int]) -> Tensor:
    """Sum ``x`` over broadcast dimensions so that it has ``shape`` (the reverse of expand)."""
    if x._data.shape == shape:  # the common case (nothing was broadcast), before any copy
        return x
    shape = tuple(shape)
    xs = tuple(x._data.shape)
    if xs == shape:
        return x
    lead = len(xs) - len(shape)
    dims = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and xs[i + lead] != 1)
    from .reduce import sum as _sum

    out = _sum(x, dims, keepdim=True) if dims else x
    return reshape(out, shape)


@tensor_method()
def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at ``dim``."""
    d = normalize_dim("unsqueeze", dim, x.ndim + 1)
    shape = list(x.shape)
    shape.insert(d, 1)
    strides, offset = layout(x)
    strides = list(strides)
    strides.insert(d, unsqueeze_stride(x.shape, strides, d))
    return make_view(Reshape.apply(x, shape=tuple(shape)), x, tuple(strides), offset)


def unsqueeze_stride(shape: tuple, strides: tuple, d: int) -> int:
    """PyTorch's stride for a size-1 dim inserted before dim ``d`` of a ``shape`` layout:
    ``size * stride`` of that dim, 1 past the last."""
    return shape[d] * strides[d] if d < len(shape) else 1


@tensor_method()
def squeeze(x: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Remove dimensions of size 1 (all of them, or those in ``dim``)."""
    shape = x.shape
    if dim is None:
        dims = {i for i, s in enumerate(shape) if s == 1}
    else:
        dims = {normalize_dim("squeeze", d, x.ndim)
                for d in ((dim,) if isinstance(dim, int) else dim)}
        dims = {d for d in dims if x.ndim and shape[d] == 1}
    return reshape(x, tuple(s for i, s in enumerate(shape) if i not in dims))


@tensor_method()
def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions ``start_dim`` to ``end_dim`` into one."""
    if x.ndim == 0:  # dims -1 and 0 only, as for a 1-d tensor
        normalize_dim("flatten", start_dim, 1)
        normalize_dim("flatten", end_dim, 1)
        return reshape(x, (1,))
    s = normalize_dim("flatten", start_dim, x.ndim)
    e = normalize_dim("flatten", end_dim, x.ndim)
    if s > e:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    shape = x.shape
    n = 1
    for v in shape[s:e + 1]:
        n *= v
    return reshape(x, shape[:s] + (n,) + shape[e + 1:])



@tensor_method()
def unflatten(x: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Split dimension ``dim`` into ``sizes`` (one of them may be -1)."""
    d = normalize_dim("unflatten", dim, x.ndim)
    sizes = tuple(int(s) for s in sizes)
    n = x.shape[d]
    known = 1
    for s in sizes:
        known *= s if s != -1 else 1
    if sizes.count(-1) > 1 or (-1 not in sizes and known != n) or (
            -1 in sizes and (known == 0 or n % known)):
        raise ShapeError(f"unflatten: sizes {sizes} don't multiply up to the size {n} of "
                         f"dimension {dim} of a tensor of shape {x.shape}")
    if -1 in sizes:  # inferred from this dim alone (reshape could not in an empty tensor)
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    return reshape(x, x.shape[:d] + sizes + x.shape[d + 1:])


@tensor_method()
def movedim(x: Tensor, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
    """Move dimensions ``source`` to positions ``destination``, keeping the others in order."""
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise ShapeError(f"movedim: source {src} and destination {dst} must have the same "
                         "number of dims")
    nd = x.ndim
    src = tuple(normalize_dim("movedim", d, nd) for d in src)
    dst = tuple(normalize_dim("movedim", d, nd) for d in dst)
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ShapeError(f"movedim: repeated dim in source {src} or destination {dst}")
    rest = iter(d for d in range(nd) if d not in src)
    where = dict(zip(dst, src))
    return permute(x, tuple(where[i] if i in where else next(rest) for i in range(nd)))


Tensor.moveaxis = movedim
Tensor.expand_as = lambda self, other: expand(self, other.shape)
Tensor.view_as = lambda self, other: view(self, other.shape)
Tensor.reshape_as = lambda self, other: reshape(self, other.shape)


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """Expand every tensor to their common broadcast shape."""
    shape = broadcast_shapes("broadcast_tensors", *(t.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


@tensor_method()
def is_contiguous(x: Tensor, memory_format: Any = None) -> bool:
    """Whether ``x``'s elements sit in row-major order in its memory (views may not).

    With ``memory_format=vt.channels_last`` (``_3d``), whether they also sit channels
    last, as PyTorch answers for a row-major tensor: only where one channel or one pixel
    makes the two orders the same (Volta keeps every tensor row-major)."""
    from .queries import channels_last, channels_last_3d

    plain = x._owner is None or _contiguous_layout(x.shape, x._view.strides)
    if memory_format is not channels_last and memory_format is not channels_last_3d:
        return plain
    rank = 4 if memory_format is channels_last else 5
    if x.ndim != rank:
        raise ShapeError(f"is_contiguous: {memory_format} needs a rank {rank} tensor, got "
                         f"shape {x.shape}")
    return plain and (x.shape[1] == 1 or math.prod(x.shape[2:]) == 1)


@tensor_method()
def contiguous(x: Tensor, memory_format: Any = None) -> Tensor:
    """Return ``x`` if it is contiguous, else a contiguous copy (which is not a view)."""
    return x if is_contiguous(x) else clone(x)


class Clone(Function):
    def forward(ctx, x):
        return ctx.xp.asarray(x, copy=True)

    def backward(ctx, g):
        return g


def clone(x: Tensor, memory_format: Any = None) -> Tensor:
    """Return a copy of ``x`` that stays in the autograd graph."""
    return Clone.apply(x)


# -- slicing ------------------------------------------------------------------------------

class Slice(Function):
    """Basic indexing with a key of ints and positive-step slices, one per dim."""

    def forward(ctx, x, key=()):
        ctx.in_shape, ctx.key = x.shape, key
        return x[key]

    def backward(ctx, g):
        return SliceBackward.apply(g, key=ctx.key, shape=ctx.in_shape)


class SliceBackward(Function):
    """Zeros of ``shape`` with ``g`` written at ``key``: the reverse of :class:`Slice`."""

    def forward(ctx, g, key=(), shape=()):
        ctx.key = key
        out = ctx.xp.zeros(shape, dtype=g.dtype, device=ctx.device.native)
        out[key] = g
        return out

    def backward(ctx, g):
        return Slice.apply(g, key=ctx.key)


def slice_view(x: Tensor, key: tuple) -> Tensor:
    """Index ``x`` with ``key``: one normalised int or slice (step > 0) per dim; a view."""
    for k, n in zip(key, x.array.shape):
        if type(k) is not slice or k.start != 0 or k.stop != n or k.step != 1:
            break
    else:
        return x
    strides, offset = layout(x)
    new = []
    for k, st in zip(key, strides):
        if type(k) is slice:
            offset += k.start * st
            new.append(st * k.step)
        else:
            offset += k * st
    return make_view(Slice.apply(x, key=key), x, new, offset)


def _full(n: int) -> slice:
    return slice(0, n, 1)


@tensor_method()
def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """Return the view of ``x`` holding ``length`` entries of ``dim`` from ``start``."""
    d = normalize_dim("narrow", dim, x.ndim)
    n = x.shape[d]
    if not -n <= start <= n:
        raise IndexOutOfRangeError(f"narrow: start {start} is out of range for dimension "
                                   f"{dim} of size {n}")
    start = start + n if start < 0 else start
    if length < 0 or start + length > n:
        raise ShapeError(f"narrow: start ({start}) + length ({length}) exceeds dimension "
                         f"{dim} of size {n} (shape {x.shape})")
    key = tuple(slice(start, start + length, 1) if i == d else _full(s)
                for i, s in enumerate(x.shape))
    return slice_view(x, key)


@tensor_method()
def select(x: Tensor, dim: int, index: int) -> Tensor:
    """Return the slice of ``x`` at ``index`` along ``dim`` (that dim removed)."""
    if x.ndim == 0:
        raise IndexOutOfRangeError("select: cannot select from a 0-d tensor")
    d = normalize_dim("select", dim, x.ndim)
    n = x.shape[d]
    if not -n <= index < n:
        raise IndexOutOfRangeError(f"select: index {index} is out of range for dimension "
                                   f"{dim} of size {n} (shape {x.shape})")
    key = tuple(index % n if i == d else _full(s) for i, s in enumerate(x.shape))
    return slice_view(x, key)


def shrink(x: Tensor, arg: Sequence[tuple[int, int] | None]) -> Tensor:
    """Keep ``[start, end)`` of each dim; ``arg`` holds one pair (or None for all) per dim."""
    if len(arg) != x.ndim:
        raise ShapeError(f"shrink: got {len(arg)} ranges for a tensor of shape {x.shape}")
    key = []
    for d, (a, n) in enumerate(zip(arg, x.shape)):
        if a is None:
            key.append(_full(n))
            continue
        s, e = a
        if not 0 <= s <= e <= n:
            raise ShapeError(f"shrink: range {a} is invalid for dimension {d} of size {n}; "
                             "expected 0 <= start <= end <= size")
        key.append(slice(s, e, 1))
    return slice_view(x, tuple(key))


def stride(x: Tensor, steps: Sequence[int]) -> Tensor:
    """Take every ``steps[d]``-th element of each dim ``d`` (``x[::s0, ::s1, ...]``)."""
    steps = tuple(steps)
    if len(steps) != x.ndim or any(s <= 0 for s in steps):
        raise ShapeError(f"stride: expected one positive step per dim of shape {x.shape}, "
                         f"got {steps}")
    return slice_view(x, tuple(slice(0, n, s) for s, n in zip(steps, x.shape)))


def _gather_strided(src: Tensor, shape: tuple, strides: tuple, offset: int) -> Tensor:
    """The elements of ``src``'s row-major layout at a strided pattern (differentiable)."""
    from .indexing import IndexSelect

    pos = strided_positions(src.device, shape, strides, offset)
    flat = Reshape.apply(src, shape=(src.numel(),))
    idx = Tensor._make(src.device.xp.reshape(pos, (-1,)), src.device)
    return Reshape.apply(IndexSelect.apply(flat, idx, dim=0), shape=shape)


@tensor_method()
def unfold(x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """A view of every window of ``size`` elements along ``dimension``, ``step`` apart.

    The windows are a new last dim of length ``size``; ``dimension`` becomes the number of
    windows, ``(x.shape[dimension] - size) // step + 1``.
    """
    d = normalize_dim("unfold", dimension, max(x.ndim, 1))
    shape = x.shape or (1,)
    n = shape[d]
    if size < 0 or size > n or step <= 0:
        raise ShapeError(f"unfold: size {size} must be in [0, {n}] (dimension {dimension} of "
                         f"shape {x.shape}) and step {step} positive")
    new_shape = list(shape)
    new_shape[d] = (n - size) // step + 1
    new_shape = tuple(new_shape) + (size,)

    def windows(strides: tuple) -> tuple:
        s = list(strides or (1,))
        return tuple(s[:d]) + (s[d] * step,) + tuple(s[d + 1:]) + (s[d],)

    strides, offset = layout(x)
    src = x if x.ndim else reshape(x, (1,))
    out = _gather_strided(src, new_shape, windows(contiguous_strides(shape)), 0)
    return make_view(out, x, windows(strides), offset)


@tensor_method()
def as_strided(x: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: int | None = None) -> Tensor:
    """A view of ``x``'s memory (its base's, for a view) with the given sizes and strides.

    Strides and offset count elements of the base's row-major layout, as in PyTorch.
    """
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride) or any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise ShapeError(f"as_strided: sizes {size} and strides {stride} must be "
                         "non-negative and of the same length")
    base = view_base(x)
    offset = layout(x)[1] if storage_offset is None else int(storage_offset)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else offset
    if offset < 0 or (all(size) and last >= base.numel()):
        raise ShapeError(f"as_strided: sizes {size}, strides {stride} and offset {offset} "
                         f"reach element {last}, out of bounds for memory of "
                         f"{base.numel()} elements (base shape {base.shape})")
    if base is not x and not x._view.grad:
        from ..autograd.grad_mode import no_grad

        with no_grad():  # an alias made by detach(): no history to follow
            out = _gather_strided(base, size, stride, offset)
    else:
        out = _gather_strided(base, size, stride, offset)
    return make_view(out, x, stride, offset)


# -- padding ------------------------------------------------------------------------------

class ConstantPad(Function):
    def forward(ctx, x, pads=(), value=0):
        xp = ctx.xp
        ctx.pads = pads
        if any(lo < 0 or hi < 0 for lo, hi in pads):
            x = x[tuple(slice(max(-lo, 0), n - max(-hi, 0), 1)
                        for (lo, hi), n in zip(pads, x.shape))]
        shape = tuple(n + max(lo, 0) + max(hi, 0) for (lo, hi), n in zip(pads, x.shape))
        out = xp.full(shape, value, dtype=x.dtype, device=ctx.device.native)
        out[tuple(slice(max(lo, 0), max(lo, 0) + n, 1) for (lo, _), n in zip(pads, x.shape))] = x
        return out

    def backward(ctx, g):
        return ConstantPad.apply(g, pads=tuple((-lo, -hi) for lo, hi in ctx.pads), value=0)


def _circular_span(n: int, lo: int, hi: int) -> tuple[int, int]:
    """Start and size of what a circular pad wraps: the dimension after negative amounts
    crop it (PyTorch crops first)."""
    start = max(-lo, 0)
    return start, n - start - max(-hi, 0)


def _pad_index(xp, dev, mode: str, n: int, lo: int, hi: int):
    """Source positions of a ``reflect``/``replicate``/``circular`` padded dimension."""
    i64 = dev.native_dtype("int64")
    if mode == "circular":
        start, m = _circular_span(n, lo, hi)
        j = xp.arange(-max(lo, 0), m + max(hi, 0), dtype=i64, device=dev.native)
        return Tensor._make(j % max(m, 1) + start, dev)
    j = xp.arange(-lo, n + hi, dtype=i64, device=dev.native)
    if mode == "reflect":
        j = (n - 1) - xp.abs((n - 1) - xp.abs(j))
    else:
        j = xp.clip(j, 0, n - 1)
    return Tensor._make(j, dev)


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",
        value: float | None = None) -> Tensor:
    """Pad ``input``; ``pad`` lists (left, right) amounts from the last dim backwards.

    Args:
        input: the tensor.
        pad: ``(left_last, right_last, left_2nd_last, right_2nd_last, ...)``; negative
            amounts crop (constant mode).
        mode: ``"constant"``, ``"reflect"``, ``"replicate"`` or ``"circular"``.
        value: the fill value of constant padding (0 by default).
    """
    pads = tuple(int(p) for p in pad)
    nd = input.ndim
    if mode in ("reflect", "replicate", "circular") and not (
            len(pads) in (2, 4, 6) and len(pads) // 2 + 1 <= nd <= len(pads) // 2 + 2):
        raise ShapeError(
            f"pad: {len(pads)} padding amounts are not supported for a {nd}-D input in mode "
            f"'{mode}' (shape {input.shape}); as in PyTorch, non-constant padding takes 2 "
            "amounts for a 2-D or 3-D input, 4 for 3-D or 4-D, 6 for 4-D or 5-D (reshape the "
            "input, or use mode='constant')")
    if mode in ("reflect", "replicate") and len(pads) == 2 and nd and (
            input.shape[-1] + pads[0] + pads[1] < 1):
        raise ShapeError(f"pad: input (W: {input.shape[-1]}) is too small for {mode} "
                         f"padding {pads}: the output W would be "
                         f"{input.shape[-1] + pads[0] + pads[1]}")
    return pad_any_layout(input, pads, mode, value)


def pad_any_layout(input: Tensor, pads: tuple, mode: str = "constant",
                   value: float | None = None) -> Tensor:
    """:func:`pad` without PyTorch's limits on the dims non-constant modes may pad (ONNX's
    ``Pad`` pads any dims in any mode)."""
    nd = input.ndim
    if len(pads) % 2 or len(pads) // 2 > nd:
        raise ShapeError(f"pad: expected an even number of amounts, at most 2 per dim of "
                         f"shape {input.shape}, got {pads}")
    per_dim = [(0, 0)] * nd
    for i in range(len(pads) // 2):
        per_dim[nd - 1 - i] = (pads[2 * i], pads[2 * i + 1])
    for d, ((lo, hi), n) in enumerate(zip(per_dim, input.shape)):
        if n + lo + hi < 0:
            raise ShapeError(f"pad: padding {(lo, hi)} makes dimension {d} of size {n} "
                             "negative")
    if mode == "constant":
        v = 0 if value is None else value
        v = {"b": bool, "i": int, "u": int}.get(input.dtype.kind, float)(v)
        return ConstantPad.apply(input, pads=tuple(per_dim), value=v)
    if mode not in ("reflect", "replicate", "circular"):
        raise ShapeError(f"pad: unknown mode {mode!r}; expected 'constant', 'reflect', "
                         "'replicate' or 'circular'")
    if value is not None:
        raise ShapeError(f"pad: mode {mode!r} doesn't take a value argument")
    from .indexing import index_select

    out = input
    for d, ((lo, hi), n) in enumerate(zip(per_dim, input.shape)):
        if not lo and not hi:
            continue
        limit = n - 1 if mode == "reflect" else n
        if mode == "circular":
            limit = _circular_span(n, lo, hi)[1]
        if n == 0 or (mode != "replicate" and max(lo, hi) > limit):
            raise ShapeError(f"pad: {mode} padding {(lo, hi)} of dimension {d} must be at "
                             f"most {limit} for its size {n} (shape {input.shape})")
        out = index_select(out, d, _pad_index(out.device.xp, out.device, mode, n, lo, hi))
    if mode != "circular":  # PyTorch's reflection and replication pads save their input
        saved_by_pytorch(out, input, op=f"pad(mode='{mode}')")
    return out


from .joining import (  # noqa: E402
    cat,
    chunk,
    concat,
    concatenate,
    flip,
    repeat,
    roll,
    split,
    stack,
    tile,
    unbind,
)

__all__ = ["reshape", "view", "permute", "transpose", "t", "expand", "broadcast_to", "sum_to",
           "unsqueeze", "squeeze", "flatten", "unflatten", "movedim", "broadcast_tensors", "clone",
           "slice_view",
           "narrow", "select", "unfold", "as_strided", "shrink", "stride", "pad", "flip", "roll",
           "repeat", "tile",
           "cat", "concat", "concatenate", "stack", "split", "chunk", "unbind"]
