"""Generic Array-API fallbacks of the scatter kernels (sorting based, no element loops).

Each returns a new array and never writes through integer-array indices (the standard
has no such ``__setitem__``): writes are sorted by destination, runs of equal
destinations are reduced, and the results are laid out densely with one ``repeat``.

* ``scatter_add(xp, target, dim, index, src)``: ``torch.scatter_add`` semantics.
* ``scatter(xp, target, dim, index, src)``: ``torch.scatter``; the last duplicate wins.
* ``index_add(xp, target, dim, index, src)``: ``torch.index_add`` (``index`` 1-D).

A backend overrides any of them by name in ``Backend.kernels``.
"""

from __future__ import annotations

import math

from ..backend.kernels import fallback


def _flat_positions(xp, shape: tuple, dim: int, index):
    """Flat (row-major) positions in an array of ``shape`` that ``index`` points at."""
    nd = len(shape)
    strides = [1] * nd
    for d in range(nd - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    i64 = xp.int64
    pos = xp.astype(index, i64) * strides[dim]
    for d in range(nd):
        n = index.shape[d]
        if d != dim and n > 1:
            coord = xp.arange(n, dtype=i64, device=index.device) * strides[d]
            pos = pos + xp.reshape(coord, tuple(n if k == d else 1 for k in range(nd)))
    return xp.reshape(pos, (-1,))


def _runs(xp, keys):
    """Positions of the last element of each run of equal values in the sorted ``keys``."""
    last = xp.concat([keys[1:] != keys[:-1], xp.ones((1,), dtype=xp.bool, device=keys.device)])
    return xp.nonzero(last)[0]


def _is_integral(xp, dtype) -> bool:
    try:
        return xp.isdtype(dtype, ("integral", "bool"))
    except TypeError:  # a float type the namespace does not know (NumPy's bfloat16)
        return False


def _run_sums(xp, keys, vals, ends):
    """Sums of ``vals`` (along axis 0) over the runs of equal sorted ``keys`` ending at
    ``ends``.

    A segmented scan by doubling (each element adds the partial sum ``2**k`` places back
    while that is in its own run), so a NaN, an infinity or a huge value never leaks into
    another run, as it would through differences of one prefix sum. Floats add in float64.
    """
    if _is_integral(xp, vals.dtype):
        acc = xp.astype(vals, xp.int64)
    else:
        try:
            acc = xp.astype(vals, xp.float64)
        except Exception:  # a backend without float64 accumulates in float32
            acc = xp.astype(vals, xp.float32)
    starts = xp.concat([xp.full((1,), -1, dtype=ends.dtype, device=ends.device), ends[:-1]])
    longest = int(xp.max(ends - starts))
    rest = (1,) * (acc.ndim - 1)
    step = 1
    while step < longest:
        same = xp.reshape(keys[step:] == keys[:-step], (-1, *rest))
        back = xp.where(same, acc[:-step, ...], xp.zeros_like(acc[:-step, ...]))
        acc = xp.concat([acc[:step, ...], acc[step:, ...] + back], axis=0)
        step *= 2
    return xp.take(acc, ends, axis=0)


def _place(xp, keys, rows, n: int):
    """An ``(n, ...)`` array holding ``rows[k]`` at the sorted unique ``keys[k]``, else 0.

    Built with one ``repeat`` of interleaved zero and data rows: no scatter needed.
    """
    k = keys.shape[0]
    rest = tuple(rows.shape[1:])
    if k == 0:
        return xp.zeros((n,) + rest, dtype=rows.dtype, device=rows.device)
    before = xp.concat([xp.full((1,), -1, dtype=keys.dtype, device=keys.device), keys[:-1]])
    counts = xp.reshape(xp.stack([keys - before - 1, xp.ones_like(keys)], axis=1), (-1,))
    counts = xp.concat([counts, (n - 1) - keys[-1:]])
    both = xp.reshape(xp.stack([xp.zeros_like(rows), rows], axis=1), (2 * k,) + rest)
    zero = xp.zeros((1,) + rest, dtype=rows.dtype, device=rows.device)
    return xp.repeat(xp.concat([both, zero], axis=0), counts, axis=0)


def _sorted_writes(xp, target, dim: int, index, src):
    """The flat destinations of a scatter, sorted, with their values in the same order."""
    if tuple(src.shape) != tuple(index.shape):
        src = src[tuple(slice(0, n) for n in index.shape)]
    pos = _flat_positions(xp, tuple(target.shape), dim, index)
    order = xp.argsort(pos, stable=True)
    return xp.take(pos, order), xp.take(xp.reshape(src, (-1,)), order)


@fallback("scatter_add")
def _scatter_add_kernel(xp, target, dim: int, index, src):
    """``out = target.copy(); out[index[i][j]][j] += src[i][j]`` (for dim 0), generically."""
    flat = xp.reshape(target, (-1,))
    if not math.prod(index.shape):
        return xp.asarray(target, copy=True)
    keys, vals = _sorted_writes(xp, target, dim, index, src)
    ends = _runs(xp, keys)
    dense = _place(xp, xp.take(keys, ends), _run_sums(xp, keys, vals, ends), flat.shape[0])
    out = xp.astype(xp.astype(flat, dense.dtype) + dense, target.dtype)
    return xp.reshape(out, target.shape)


@fallback("scatter")
def _scatter_kernel(xp, target, dim: int, index, src):
    """``out = target.copy(); out[index[i][j]][j] = src[i][j]`` (for dim 0); last one wins."""
    flat = xp.reshape(target, (-1,))
    if not math.prod(index.shape):
        return xp.asarray(target, copy=True)
    keys, vals = _sorted_writes(xp, target, dim, index, src)
    ends = _runs(xp, keys)
    at = xp.take(keys, ends)
    n = flat.shape[0]
    dense = _place(xp, at, xp.astype(xp.take(vals, ends), flat.dtype), n)
    written = _place(xp, at, xp.ones(at.shape, dtype=xp.bool, device=at.device), n)
    return xp.reshape(xp.where(written, dense, flat), target.shape)


@fallback("index_add")
def _index_add_kernel(xp, target, dim: int, index, src):
    """``out = target.copy(); out[..., index[i], ...] += src[..., i, ...]`` along ``dim``.

    Sorts only ``index`` and sums whole slices, so it is cheap for embedding-style
    gradients (few indices, long rows).
    """
    if not index.shape[0]:
        return xp.asarray(target, copy=True)
    index = xp.astype(index, xp.int64)
    order = xp.argsort(index, stable=True)
    keys = xp.take(index, order)
    vals = xp.moveaxis(xp.take(src, order, axis=dim), dim, 0)
    ends = _runs(xp, keys)
    dense = _place(xp, xp.take(keys, ends), _run_sums(xp, keys, vals, ends),
                   target.shape[dim])
    out = xp.astype(target, dense.dtype) + xp.moveaxis(dense, 0, dim)
    return xp.astype(out, target.dtype)
