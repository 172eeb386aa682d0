"""``__getitem__``/``__setitem__``, ``take``, ``nonzero``.

Ints, slices (any step), ``None`` and ``Ellipsis`` produce views; integer arrays gather
(``take``); a bool mask syncs once to find its true positions (its result shape
depends on the data).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as D
from .._errors import IndexOutOfRangeError
from ..array import Array, to_numpy
from ..kernels import gather as G
from ..layout import normalize_axis

_EMPTY_AXIS = object()  # where a false 0-d mask puts a dim of size 0


def _as_index_array(k: Any, x: Array) -> Array:
    from .creation import asarray
    if isinstance(k, Array):
        return k
    a = np.asarray(k)
    if a.dtype == bool:
        return asarray(a, device=x.device)
    return asarray(a.astype(np.int32), device=x.device)


def _parse(x: Array, key: Any) -> tuple[Array, list[tuple[int, Array]], bool]:
    """Apply the basic part of ``key`` as a view.

    Returns the view, the advanced indices ``(view dim, index)`` and whether their dims
    go first in the result: as in NumPy, when the advanced indices (ints count as
    advanced here) are separated by a slice, ``None`` or ``...``.
    """
    if not isinstance(key, tuple):
        key = (key,)
    items = []
    for k in key:
        if isinstance(k, (bool, np.bool_)) or (isinstance(k, Array) and k.ndim == 0
                                               and k.dtype is D.bool):
            # a 0-d mask adds a dim: of size 1 when true, else 0 (as in NumPy)
            items.append(None if bool(k) else _EMPTY_AXIS)
            continue
        if isinstance(k, (list, np.ndarray)) or (isinstance(k, Array) and k.ndim > 0) or \
                (isinstance(k, Array) and k.dtype is D.bool):
            k = _as_index_array(k, x)
            if k.dtype is D.bool:  # a mask: its true positions index k.ndim dims
                nz = nonzero(k)
                items.extend(nz)
                continue
        items.append(k)
    n_used = sum(1 for k in items if k is not None and k is not Ellipsis
                 and k is not _EMPTY_AXIS)
    if sum(1 for k in items if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_used > x.ndim:
        raise IndexOutOfRangeError(f"too many indices for array of shape {x.shape}: "
                                   f"{n_used} given")
    if Ellipsis in [k for k in items if not isinstance(k, Array)]:
        i = next(i for i, k in enumerate(items) if k is Ellipsis)
        items = items[:i] + [slice(None)] * (x.ndim - n_used) + items[i + 1:]
    else:
        items = items + [slice(None)] * (x.ndim - n_used)
    shape, strides, off = [], [], x.offset
    adv: list[tuple[int, Array]] = []
    front = False
    if any(isinstance(k, Array) for k in items):
        pos = [i for i, k in enumerate(items) if k is not None and k is not Ellipsis
               and k is not _EMPTY_AXIS and not isinstance(k, slice)]
        front = pos[-1] - pos[0] + 1 != len(pos)
    d = 0
    for k in items:
        if k is None or k is _EMPTY_AXIS:
            shape.append(1 if k is None else 0)
            strides.append(0)
            continue
        n, st = x.shape[d], x.strides[d]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            length = len(range(start, stop, step))
            if length:
                off += start * st
            shape.append(length)
            strides.append(st * step)
        elif isinstance(k, Array):
            if k.dtype.kind not in "iu":
                raise IndexError(f"arrays used as indices must be integer or bool, got "
                                 f"{k.dtype.name}")
            adv.append((len(shape), k))
            shape.append(n)
            strides.append(st)
        else:
            try:
                i = int(k.__index__())
            except (AttributeError, TypeError):
                raise IndexError(f"invalid index {k!r} of type {type(k).__name__}; use ints, "
                                 f"slices, None, ..., or integer/bool arrays") from None
            if not -n <= i < n:
                raise IndexOutOfRangeError(f"index {i} is out of bounds for axis {d} with "
                                           f"size {n}")
            off += (i % n) * st
        d += 1
    return Array(x._st, tuple(shape), x.dtype, tuple(strides), off), adv, front


def _combine(view: Array, adv: list[tuple[int, Array]]) -> tuple[Array, Array, int, bool]:
    """Reduce several advanced indices to one flat index over their (moved-front) dims."""
    from .elementwise import add, multiply, remainder
    from .manipulation import broadcast_arrays, permute_dims, reshape
    dims = [d for d, _ in adv]
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    order = dims + [i for i in range(view.ndim) if i not in dims]
    v = permute_dims(view, order)
    sizes = [view.shape[d] for d in dims]
    v = reshape(v, (int(np.prod(sizes)),) + v.shape[len(dims):])
    idx = broadcast_arrays(*[a for _, a in adv])
    flat = None
    for a, n in zip(idx, sizes):
        a = remainder(a, n) if a.dtype.kind == "i" else a
        flat = a if flat is None else add(multiply(flat, n), a)
    return v, flat, dims[0], adjacent


def _strided_flat(view: Array, adv: list[tuple[int, Array]]) -> tuple[Array, Array]:
    """Like :func:`_combine` without a copy: a flat element offset into the buffer."""
    from .elementwise import add, multiply, remainder
    from .manipulation import broadcast_arrays
    dims = [d for d, _ in adv]
    if any(view.strides[d] < 0 for d in dims):
        raise IndexError("setitem: several advanced indices over a reversed view are not "
                         "supported; index a contiguous array")
    rest = [i for i in range(view.ndim) if i not in dims]
    n = view._st.nbytes // view.dtype.itemsize - view.offset
    v = Array(view._st, (n,) + tuple(view.shape[i] for i in rest), view.dtype,
              (1,) + tuple(view.strides[i] for i in rest), view.offset)
    flat = None
    for (d, _), a in zip(adv, broadcast_arrays(*[a for _, a in adv])):
        a = remainder(a, view.shape[d]) if a.dtype.kind == "i" else a
        term = multiply(a, view.strides[d])
        flat = term if flat is None else add(flat, term)
    return v, flat


def getitem(x: Array, key: Any) -> Array:
    """``x[key]``: a view for basic indices, a gather for integer/bool arrays."""
    from .manipulation import moveaxis
    view, adv, front = _parse(x, key)
    if not adv:
        return view
    if len(adv) == 1:
        d, idx = adv[0]
        out = G.take(view, idx, d)
        if front and d > 0:
            k = idx.ndim
            out = moveaxis(out, tuple(range(d, d + k)), tuple(range(k)))
        return out
    v, flat, first, _ = _combine(view, adv)
    out = G.take(v, flat, 0)
    if not front and first > 0:
        k = flat.ndim
        out = moveaxis(out, tuple(range(k)), tuple(range(first, first + k)))
    return out


def setitem(x: Array, key: Any, value: Any) -> None:
    """``x[key] = value`` in place (value broadcast and cast to ``x.dtype``)."""
    from .elementwise import copy_into, where
    if isinstance(key, Array) and key.dtype is D.bool and key.shape == x.shape:
        copy_into(x, where(key, value, x))
        return
    from .manipulation import broadcast_to, moveaxis
    view, adv, front = _parse(x, key)
    if not adv:
        copy_into(view, value)
        return
    from .creation import asarray
    if not isinstance(value, Array):
        value = asarray(value, dtype=x.dtype, device=x.device)
    elif value.dtype is not x.dtype:
        from .elementwise import astype
        value = astype(value, x.dtype)
    if len(adv) == 1:
        d, idx = adv[0]
        if front and d > 0:
            k = idx.ndim
            res_shape = idx.shape + view.shape[:d] + view.shape[d + 1:]
            value = moveaxis(broadcast_to(value, res_shape), tuple(range(k)),
                             tuple(range(d, d + k)))
        G.put(view, idx, d, value)
        return
    v, flat, first, _ = _combine(view, adv)
    if v._st is not x._st:  # the view was copied: index the buffer through its strides
        v, flat = _strided_flat(view, adv)
    if not front and first > 0:
        k = flat.ndim
        res_shape = view.shape[:first] + flat.shape + view.shape[first + len(adv):]
        value = moveaxis(broadcast_to(value, res_shape), tuple(range(first, first + k)),
                         tuple(range(k)))
    G.put(v, flat, 0, value)


def take(x: Array, indices: Array, /, *, axis: int | None = None) -> Array:
    """Elements of ``x`` at ``indices`` along ``axis`` (negative indices wrap)."""
    from .manipulation import reshape
    if axis is None:
        if x.ndim != 1:
            x = reshape(x, (-1,))
        axis = 0
    ax = normalize_axis(axis, x.ndim, "take")
    if not isinstance(indices, Array):
        indices = _as_index_array(indices, x)
    return G.take(x, indices, ax)


def take_along_axis(x: Array, indices: Array, /, *, axis: int = -1) -> Array:
    """``x`` gathered with an index array of the same rank along ``axis``."""
    from .creation import arange
    from .elementwise import add, multiply, remainder
    from .manipulation import broadcast_to, reshape
    ax = normalize_axis(axis, x.ndim, "take_along_axis")
    from ..layout import broadcast_shapes
    shp = list(broadcast_shapes(x.shape[:ax] + (1,) + x.shape[ax + 1:],
                                indices.shape[:ax] + (1,) + indices.shape[ax + 1:]))
    shp[ax] = indices.shape[ax]
    idx = broadcast_to(indices, tuple(shp))
    flat = None
    it = D.int64 if idx.dtype is D.int64 else D.int32
    for d in range(x.ndim):
        if d == ax:
            c = remainder(idx, x.shape[d]) if idx.dtype.kind == "i" else idx
        else:
            s = [1] * x.ndim
            s[d] = shp[d]
            c = reshape(arange(shp[d], dtype=it, device=x.device), tuple(s))
        flat = c if flat is None else add(multiply(flat, x.shape[d]), c)
    from .elementwise import contiguous_copy
    xf = reshape(x if x.is_contiguous else contiguous_copy(x), (-1,))
    return G.take(xf, flat, 0)


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """Indices of the non-zero elements, one array per dim (a sync point)."""
    from .creation import asarray
    if x.ndim == 0:
        raise ValueError("nonzero: not defined for 0-d arrays; use expand_dims first")
    it = D.default_int()
    return tuple(asarray(i.astype(it.np), device=x.device) for i in np.nonzero(to_numpy(x)))


def count_nonzero(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:
    """Number of non-zero elements along ``axis``."""
    from .elementwise import astype, not_equal
    from .reduction import sum as _sum
    return _sum(astype(not_equal(x, 0), D.default_int()), axis=axis, keepdims=keepdims)
