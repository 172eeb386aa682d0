"""Set functions (``unique_*``, ``isin``) and ``searchsorted``, on the device.

``unique_*`` sort the flattened input (a stable argsort), flag where a new value starts,
number the groups with a cumulative sum and scatter each group's first value, first
index and start; one readback learns how many groups there are (the result's shape
depends on it). ``searchsorted`` is a binary search per query; ``isin`` sorts the test
values and searches them. NaNs are distinct in ``unique_*`` and sort last, as the
standard says.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .. import dtypes as D
from .._errors import DTypeError
from ..array import Array, to_numpy
from ..dtypes import DType
from ..kernels import gather as G
from ..kernels.search import search
from .creation import asarray, empty, full


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def _check(x: Any, op: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{op}: expected a volta_wgpu Array, got {type(x).__name__}")
    return x


def _flat(x: Array) -> Array:
    from .elementwise import contiguous_copy
    from .manipulation import reshape
    return reshape(x if x.is_contiguous else contiguous_copy(x), (-1,))


def _groups(x: Array) -> tuple:
    """Sorted values, the sorting permutation, each sorted element's group number, the
    flags of group starts, and the number of groups (a sync point)."""
    from .elementwise import astype, not_equal, subtract
    from .reduction import cumulative_sum
    from .sorting import argsort
    flat = _flat(x)
    perm = argsort(flat, stable=True)
    s = G.take(flat, perm, 0)
    n = flat.size
    it = D.default_int()
    if n == 0:
        return s, perm, perm, perm, 0
    start = full((n,), True, dtype=D.bool, device=x.device)
    if n > 1:  # NaN != NaN: every NaN starts its own group
        start[1:] = not_equal(s[1:], s[:-1])
    gid = subtract(cumulative_sum(astype(start, it)), 1)
    k = int(to_numpy(gid[-1:])[0]) + 1
    return s, perm, gid, start, k


def _at_starts(values: Array, gid: Array, start: Array, k: int) -> Array:
    """``out[gid[i]] = values[i]`` where ``start[i]`` (group starts only)."""
    from .elementwise import where
    out = empty((k + 1,), dtype=values.dtype, device=values.device)
    G.put(out, where(start, gid, k), 0, values)  # the rest write a spare slot
    return out[:k]


def _unique(x: Array, op: str, inverse: bool, counts: bool, indices: bool) -> tuple:
    from .creation import arange
    from .elementwise import subtract
    from .manipulation import concat, reshape
    x = _check(x, op)
    s, perm, gid, start, k = _groups(x)
    it = D.default_int()
    if k == 0:
        e = empty((0,), dtype=it, device=x.device)
        return empty((0,), dtype=x.dtype, device=x.device), e, reshape(e, x.shape), e
    values = _at_starts(s, gid, start, k)
    first = inv = cnt = None
    if counts or indices:
        pos = _at_starts(arange(x.size, dtype=it, device=x.device), gid, start, k)
        if counts:
            ends = concat([pos[1:], full((1,), x.size, dtype=it, device=x.device)])
            cnt = subtract(ends, pos)
        if indices:  # the stable sort puts each value's first occurrence first
            first = G.take(perm, pos, 0)
    if inverse:
        inv = empty((x.size,), dtype=it, device=x.device)
        G.put(inv, perm, 0, gid)
        inv = reshape(inv, x.shape)
    return values, first, inv, cnt


def unique_values(x: Array, /) -> Array:
    """The distinct values of ``x``, sorted (every NaN is distinct)."""
    return _unique(x, "unique_values", False, False, False)[0]


def unique_counts(x: Array, /) -> UniqueCountsResult:
    """The distinct values of ``x`` and how often each occurs."""
    v, _, _, c = _unique(x, "unique_counts", False, True, False)
    return UniqueCountsResult(v, c)


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    """The distinct values of ``x`` and, per element, the index of its value."""
    v, _, inv, _ = _unique(x, "unique_inverse", True, False, False)
    return UniqueInverseResult(v, inv)


def unique_all(x: Array, /) -> UniqueAllResult:
    """Distinct values, first indices, inverse indices and counts."""
    v, first, inv, c = _unique(x, "unique_all", True, True, True)
    return UniqueAllResult(v, first, inv, c)


def _search_type(t: DType) -> DType:
    return D.uint32 if t is D.bool else t  # bools compare as 0/1


def searchsorted(x1: Array, x2: Array, /, *, side: str = "left",
                 sorter: Array | None = None) -> Array:
    """Indices at which to insert ``x2`` into the sorted 1-d ``x1`` to keep it sorted."""
    from .elementwise import astype
    x1, x2 = _check(x1, "searchsorted"), _check(x2, "searchsorted")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be 1-d, got shape {x1.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    t = _search_type(D.promote(x1.dtype, x2.dtype))
    if sorter is not None:
        x1 = G.take(x1, _check(sorter, "searchsorted"), 0)
    a1 = _flat(astype(x1, t, copy=False))
    a2 = astype(x2, t, copy=False)
    from .manipulation import reshape
    return reshape(search(a1, _flat(a2), side == "right"), x2.shape)


def isin(x1: Any, x2: Any, /, *, invert: bool = False) -> Array:
    """Whether each element of ``x1`` is in ``x2`` (NaN is in nothing)."""
    from .elementwise import astype, clip, equal, less, logical_and, logical_not
    from .manipulation import reshape
    from .sorting import sort
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        raise TypeError("isin: needs at least one volta_wgpu Array")
    ref = x1 if isinstance(x1, Array) else x2
    x1 = x1 if isinstance(x1, Array) else asarray(x1, device=ref.device)
    x2 = x2 if isinstance(x2, Array) else asarray(x2, device=ref.device)
    if (x1.dtype is D.bool) != (x2.dtype is D.bool):
        raise DTypeError("isin: cannot compare bool with numeric arrays")
    t = _search_type(D.promote(x1.dtype, x2.dtype))
    q = _flat(astype(x1, t, copy=False))
    if x2.size == 0 or q.size == 0:
        out = full(x1.shape, invert, dtype=D.bool, device=x1.device)
        return out
    table = sort(_flat(astype(x2, t, copy=False)))
    pos = search(table, q, False)
    found = logical_and(less(pos, table.size),
                        equal(G.take(table, clip(pos, 0, table.size - 1), 0), q))
    found = reshape(found, x1.shape)
    return logical_not(found) if invert else found


__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values", "searchsorted",
           "isin"]
