"""Manipulation functions. Most return views (new shape/strides over the same buffer)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import dtypes as D
from .._errors import ShapeError
from ..array import Array, new_array
from ..layout import broadcast_shapes as broadcast_shapes_
from ..layout import broadcast_strides, normalize_axes, normalize_axis, prod
from .elementwise import contiguous_copy, copy_into


def _view(x: Array, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Array:
    return Array(x._st, tuple(shape), x.dtype, tuple(strides), offset)


def _reshape_strides(x: Array, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """Strides viewing ``x`` as ``shape`` without a copy, or None when impossible."""
    if prod(shape) == 0:
        return _contig(shape)
    old = [(n, s) for n, s in zip(x.shape, x.strides) if n != 1]
    new_strides = [0] * len(shape)
    i = 0  # index into old
    j = 0  # index into new
    while j < len(shape):
        if shape[j] == 1:
            new_strides[j] = 0
            j += 1
            continue
        if i >= len(old):
            return None
        # group old dims [i, i2) and new dims [j, j2) with equal products
        pn, po = shape[j], old[i][0]
        i2, j2 = i + 1, j + 1
        while pn != po:
            if pn < po:
                while j2 < len(shape) and shape[j2] == 1:
                    j2 += 1
                if j2 >= len(shape):
                    return None
                pn *= shape[j2]
                j2 += 1
            else:
                if i2 >= len(old):
                    return None
                po *= old[i2][0]
                i2 += 1
        for k in range(i, i2 - 1):  # old dims of a group must be contiguous
            if old[k][1] != old[k + 1][1] * old[k + 1][0]:
                return None
        st = old[i2 - 1][1]
        for k in range(j2 - 1, j - 1, -1):
            new_strides[k] = st if shape[k] != 1 else 0
            st *= shape[k]
        i, j = i2, j2
    return tuple(new_strides)


def reshape(x: Array, /, shape: Sequence[int], *, copy: bool | None = None) -> Array:
    """A view of ``x`` with a new shape when the layout allows, else a copy."""
    shape = (shape,) if isinstance(shape, int) else tuple(int(n) for n in shape)
    if shape.count(-1) > 1:
        raise ShapeError(f"reshape: at most one -1 allowed in {shape}")
    if -1 in shape:
        known = prod(tuple(n for n in shape if n != -1))
        if known == 0 or x.size % known:
            raise ShapeError(f"reshape: cannot reshape array of shape {x.shape} into {shape}")
        shape = tuple(x.size // known if n == -1 else n for n in shape)
    if prod(shape) != x.size:
        raise ShapeError(f"reshape: cannot reshape array of size {x.size} (shape {x.shape}) "
                         f"into shape {shape}")
    strides = None if copy else _reshape_strides(x, shape)
    if strides is None:
        if copy is False:
            raise ValueError(f"reshape: copy=False but shape {x.shape} with strides "
                             f"{x.strides} cannot be viewed as {shape}")
        x = contiguous_copy(x)
        return _view(x, shape, _contig(shape), x.offset)
    return _view(x, shape, strides, x.offset)


def _contig(shape: tuple[int, ...]) -> tuple[int, ...]:
    from ..layout import contiguous_strides
    return contiguous_strides(shape)


def permute_dims(x: Array, /, axes: Sequence[int]) -> Array:
    """A view with the dims reordered."""
    axes = tuple(normalize_axis(a, x.ndim, "permute_dims") for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ShapeError(f"permute_dims: axes {axes} are not a permutation of "
                         f"{tuple(range(x.ndim))}")
    return _view(x, tuple(x.shape[a] for a in axes), tuple(x.strides[a] for a in axes),
                 x.offset)


def matrix_transpose(x: Array, /) -> Array:
    """Swap the last two dims (a view)."""
    if x.ndim < 2:
        raise ShapeError(f"matrix_transpose: needs ndim >= 2, got shape {x.shape}")
    axes = list(range(x.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return permute_dims(x, axes)


def swapaxes(x: Array, axis1: int, axis2: int, /) -> Array:
    """Swap two dims (a view)."""
    axes = list(range(x.ndim))
    a, b = normalize_axis(axis1, x.ndim, "swapaxes"), normalize_axis(axis2, x.ndim, "swapaxes")
    axes[a], axes[b] = axes[b], axes[a]
    return permute_dims(x, axes)


def moveaxis(x: Array, source: Any, destination: Any, /) -> Array:
    """Move dims to new positions (a view)."""
    src = normalize_axes(source, x.ndim, "moveaxis") if not isinstance(source, int) else (
        normalize_axis(source, x.ndim, "moveaxis"),)
    if isinstance(source, int):
        dst: tuple[int, ...] = (normalize_axis(destination, x.ndim, "moveaxis"),)
    else:
        src = tuple(normalize_axis(a, x.ndim, "moveaxis") for a in source)
        dst = tuple(normalize_axis(a, x.ndim, "moveaxis") for a in destination)
    if len(src) != len(dst):
        raise ShapeError("moveaxis: source and destination need the same number of axes")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, order)


def broadcast_to(x: Array, /, shape: Sequence[int]) -> Array:
    """A view of ``x`` broadcast to ``shape`` (stride 0 on repeated dims)."""
    shape = tuple(shape)
    if broadcast_shapes_(x.shape, shape, op="broadcast_to") != shape:
        raise ShapeError(f"broadcast_to: cannot broadcast shape {x.shape} to {shape}")
    return _view(x, shape, broadcast_strides(x.shape, x.strides, shape), x.offset)


def broadcast_arrays(*arrays: Array) -> list[Array]:
    """Views of the arrays broadcast to a common shape."""
    shape = broadcast_shapes_(*[a.shape for a in arrays], op="broadcast_arrays")
    return [broadcast_to(a, shape) for a in arrays]


def expand_dims(x: Array, /, axis: int = 0) -> Array:
    """Insert a size-1 dim at ``axis`` (a view)."""
    ax = normalize_axis(axis, x.ndim + 1, "expand_dims")
    return _view(x, x.shape[:ax] + (1,) + x.shape[ax:], x.strides[:ax] + (0,) + x.strides[ax:],
                 x.offset)


def squeeze(x: Array, /, axis: Any = None) -> Array:
    """Remove size-1 dims (all of them, or those in ``axis``)."""
    if axis is None:
        axes = tuple(i for i, n in enumerate(x.shape) if n == 1)
    else:
        axes = normalize_axes(axis, x.ndim, "squeeze")
        for a in axes:
            if x.shape[a] != 1:
                raise ShapeError(f"squeeze: axis {a} of shape {x.shape} has size "
                                 f"{x.shape[a]}, not 1")
    keep = [i for i in range(x.ndim) if i not in axes]
    return _view(x, tuple(x.shape[i] for i in keep), tuple(x.strides[i] for i in keep),
                 x.offset)


def flip(x: Array, /, *, axis: Any = None) -> Array:
    """Reverse the order of elements along ``axis`` (a view with negative strides)."""
    axes = normalize_axes(axis, x.ndim, "flip")
    off = x.offset
    strides = list(x.strides)
    for a in axes:
        if x.shape[a] > 0:
            off += (x.shape[a] - 1) * strides[a]
        strides[a] = -strides[a]
    return _view(x, x.shape, tuple(strides), off)


def concat(arrays: Sequence[Array], /, *, axis: int | None = 0) -> Array:
    """Join arrays along an existing axis (``axis=None`` flattens first)."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("concat: need at least one array")
    if axis is None:
        arrays = [reshape(a, (-1,)) for a in arrays]
        axis = 0
    nd = arrays[0].ndim
    ax = normalize_axis(axis, nd, "concat")
    t = arrays[0].dtype
    for a in arrays[1:]:
        t = D.promote(t, a.dtype)
        if a.ndim != nd or a.shape[:ax] + a.shape[ax + 1:] != \
                arrays[0].shape[:ax] + arrays[0].shape[ax + 1:]:
            raise ShapeError(f"concat: shapes {[b.shape for b in arrays]} do not match "
                             f"except along axis {ax}")
    total = sum(a.shape[ax] for a in arrays)
    shape = arrays[0].shape[:ax] + (total,) + arrays[0].shape[ax + 1:]
    out = new_array(shape, t, arrays[0].engine)
    start = 0
    for a in arrays:
        n = a.shape[ax]
        if n:
            dst = _view(out, a.shape, out.strides, out.offset + start * out.strides[ax])
            copy_into(dst, a)
        start += n
    return out


def stack(arrays: Sequence[Array], /, *, axis: int = 0) -> Array:
    """Join arrays along a new axis."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError("stack: need at least one array")
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ShapeError(f"stack: all arrays need the same shape, got {sorted(shapes)}")
    ax = normalize_axis(axis, arrays[0].ndim + 1, "stack")
    return concat([expand_dims(a, axis=ax) for a in arrays], axis=ax)


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    """Split into views along ``axis``."""
    ax = normalize_axis(axis, x.ndim, "unstack")
    keep = [i for i in range(x.ndim) if i != ax]
    shape = tuple(x.shape[i] for i in keep)
    strides = tuple(x.strides[i] for i in keep)
    return tuple(_view(x, shape, strides, x.offset + k * x.strides[ax])
                 for k in range(x.shape[ax]))


def roll(x: Array, /, shift: Any, *, axis: Any = None) -> Array:
    """Shift elements cyclically along axes (``axis=None`` rolls the flattened array)."""
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), shift, axis=0), x.shape)
    shifts = (shift,) if isinstance(shift, int) else tuple(shift)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(shifts) != len(axes):
        raise ShapeError("roll: shift and axis need the same length")
    out = x
    for s, a in zip(shifts, axes):
        a = normalize_axis(a, x.ndim, "roll")
        n = x.shape[a]
        if n == 0 or s % n == 0:
            continue
        s %= n
        idx = [slice(None)] * x.ndim
        idx[a] = slice(n - s, None)
        head = out[tuple(idx)]
        idx[a] = slice(0, n - s)
        out = concat([head, out[tuple(idx)]], axis=a)
    return out if out is not x else contiguous_copy(x)


def tile(x: Array, repetitions: Sequence[int], /) -> Array:
    """Repeat the whole array along each axis."""
    reps = tuple(repetitions)
    nd = max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    xs = reshape(x, (1,) * (nd - x.ndim) + x.shape)
    inter = []
    for r, n in zip(reps, xs.shape):
        inter += [r, n]
    v = broadcast_to(reshape(xs, tuple(v for n in xs.shape for v in (1, n))), tuple(inter))
    return reshape(contiguous_copy(v), tuple(r * n for r, n in zip(reps, xs.shape)))


def repeat(x: Array, repeats: Any, /, *, axis: int | None = None) -> Array:
    """Repeat each element ``repeats`` times (an int; array repeats go through take)."""
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    ax = normalize_axis(axis, x.ndim, "repeat")
    if not isinstance(repeats, int):
        import numpy as np

        from ..array import to_numpy
        from .creation import asarray
        from .indexing import take
        r = to_numpy(repeats) if isinstance(repeats, Array) else np.asarray(repeats)
        idx = np.repeat(np.arange(x.shape[ax]), r)
        return take(x, asarray(idx.astype(np.int32)), axis=ax)
    shape = x.shape[:ax + 1] + (repeats,) + x.shape[ax + 1:]
    v = broadcast_to(expand_dims(x, axis=ax + 1), shape)
    n = x.shape[ax] * repeats
    return reshape(contiguous_copy(v), x.shape[:ax] + (n,) + x.shape[ax + 1:])


def diff(x: Array, /, *, axis: int = -1, n: int = 1, prepend: Array | None = None,
         append: Array | None = None) -> Array:
    """The ``n``-th forward difference along ``axis`` (``prepend``/``append`` first)."""
    from .elementwise import not_equal, subtract
    if x.ndim == 0:
        raise ValueError("diff: not defined for 0-d arrays")
    if n < 0:
        raise ValueError(f"diff: n must be non-negative, got {n}")
    ax = normalize_axis(axis, x.ndim, "diff")
    parts = [p for p in (prepend, x, append) if p is not None]
    out = concat(parts, axis=ax) if len(parts) > 1 else x
    for _ in range(n):
        m = out.shape[ax]
        hi = tuple(slice(1, None) if d == ax else slice(None) for d in range(out.ndim))
        lo = tuple(slice(0, max(m - 1, 0)) if d == ax else slice(None) for d in range(out.ndim))
        out = (not_equal if out.dtype is D.bool else subtract)(out[hi], out[lo])
    return out if n else contiguous_copy(out)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape that the given shapes broadcast to."""
    return broadcast_shapes_(*[tuple(s) for s in shapes], op="broadcast_shapes")
