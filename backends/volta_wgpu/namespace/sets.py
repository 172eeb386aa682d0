"""Set functions (``unique_*``, ``isin``) and ``searchsorted``.

Their result shapes depend on the data (``unique_*``) or they are binary searches that a
GPU gains little from at the sizes they are used at, so they are a host round trip
through NumPy: one sync, exact NumPy semantics (NaNs are distinct in ``unique_*`` and
sort last in ``searchsorted``, as the standard says).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import dtypes as D
from .._errors import DTypeError
from ..array import Array, to_numpy
from .creation import asarray


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


def _up(a: np.ndarray, x: Array, dtype: Any = None) -> Array:
    return asarray(a, dtype=dtype if dtype is not None else x.dtype, device=x.device)


def _idx(a: np.ndarray, x: Array) -> Array:
    return asarray(np.asarray(a, np.int64), dtype=D.default_int(), device=x.device)


def unique_values(x: Array, /) -> Array:
    """The distinct values of ``x``, sorted (every NaN is distinct)."""
    x = _check(x, "unique_values")
    return _up(np.unique_values(to_numpy(x)), x)


def unique_counts(x: Array, /) -> UniqueCountsResult:
    """The distinct values of ``x`` and how often each occurs."""
    x = _check(x, "unique_counts")
    r = np.unique_counts(to_numpy(x))
    return UniqueCountsResult(_up(r.values, x), _idx(r.counts, x))


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    """The distinct values of ``x`` and, per element, the index of its value."""
    x = _check(x, "unique_inverse")
    r = np.unique_inverse(to_numpy(x))
    return UniqueInverseResult(_up(r.values, x), _idx(r.inverse_indices, x))


def unique_all(x: Array, /) -> UniqueAllResult:
    """Distinct values, first indices, inverse indices and counts."""
    x = _check(x, "unique_all")
    r = np.unique_all(to_numpy(x))
    return UniqueAllResult(_up(r.values, x), _idx(r.indices, x), _idx(r.inverse_indices, x),
                           _idx(r.counts, x))


def searchsorted(x1: Array, x2: Array, /, *, side: str = "left",
                 sorter: Array | None = None) -> Array:
    """Indices at which to insert ``x2`` into the sorted 1-d ``x1`` to keep it sorted."""
    x1, x2 = _check(x1, "searchsorted"), _check(x2, "searchsorted")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be 1-d, got shape {x1.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    t = D.promote(x1.dtype, x2.dtype)
    s = None if sorter is None else to_numpy(_check(sorter, "searchsorted"))
    a1, a2 = to_numpy(x1).astype(t.np), to_numpy(x2).astype(t.np)
    return _idx(np.searchsorted(a1, a2, side=side, sorter=s), x1)


def isin(x1: Any, x2: Any, /, *, invert: bool = False) -> Array:
    """Whether each element of ``x1`` is in ``x2``."""
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        raise TypeError("isin: needs at least one volta_wgpu Array")
    ref = x1 if isinstance(x1, Array) else x2
    a1 = to_numpy(x1) if isinstance(x1, Array) else np.asarray(x1)
    a2 = to_numpy(x2) if isinstance(x2, Array) else np.asarray(x2)
    if a1.dtype.kind == "b" != a2.dtype.kind == "b":
        raise DTypeError("isin: cannot compare bool with numeric arrays")
    return asarray(np.isin(a1, a2, invert=invert), dtype=D.bool, device=ref.device)


__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values", "searchsorted",
           "isin"]
