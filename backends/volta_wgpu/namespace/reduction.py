"""Reductions: ``sum``, ``prod``, ``max``, ``min``, ``mean``, ``argmax``, ``any``, ... and scans."""

from __future__ import annotations

import builtins
from typing import Any

from .. import dtypes as D
from .._errors import DTypeError
from ..array import Array
from ..dtypes import DType
from ..kernels import reduce as R
from ..layout import normalize_axes, normalize_axis


def _keep(out: Array, x: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
    if not keepdims:
        return out
    from .manipulation import reshape
    shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape))
    return reshape(out, shape)


def _sum_dtype(x: Array, dtype: Any) -> DType:
    if dtype is not None:
        return D.check_supported(D.as_dtype(dtype), "sum")
    if x.dtype.kind in "bi":
        return D.default_int()
    return x.dtype


def _acc(t: DType) -> DType:
    return D.float32 if t is D.float16 else t


def sum(x: Array, /, *, axis: Any = None, dtype: Any = None,  # noqa: A001
        keepdims: bool = False) -> Array:
    """Sum over ``axis`` (ints and bools sum in the default integer dtype)."""
    axes = normalize_axes(axis, x.ndim, "sum")
    t = _sum_dtype(x, dtype)
    return _keep(R.reduce("sum", x, axes, _acc(t), t), x, axes, keepdims)


def prod(x: Array, /, *, axis: Any = None, dtype: Any = None,
         keepdims: bool = False) -> Array:
    """Product over ``axis``."""
    axes = normalize_axes(axis, x.ndim, "prod")
    t = _sum_dtype(x, dtype)
    return _keep(R.reduce("prod", x, axes, _acc(t), t), x, axes, keepdims)


def mean(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:
    """Mean over ``axis`` (floating arrays only, as the standard says; ints give float32)."""
    axes = normalize_axes(axis, x.ndim, "mean")
    t = x.dtype if x.dtype.kind == "f" else D.float32
    return _keep(R.reduce("mean", x, axes, _acc(t), t), x, axes, keepdims)


def _nonempty(x: Array, axes: tuple[int, ...], op: str) -> None:
    if builtins.any(x.shape[a] == 0 for a in axes) or (not axes and x.size == 0):
        raise ValueError(f"{op}: zero-size reduction over axes {axes} of shape {x.shape} has "
                         f"no identity")


def max(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Maximum over ``axis`` (NaN propagates)."""
    axes = normalize_axes(axis, x.ndim, "max")
    _nonempty(x, axes, "max")
    if x.dtype is D.bool:
        return any(x, axis=axis, keepdims=keepdims)
    return _keep(R.reduce("max", x, axes, _acc(x.dtype), x.dtype), x, axes, keepdims)


def min(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Minimum over ``axis`` (NaN propagates)."""
    axes = normalize_axes(axis, x.ndim, "min")
    _nonempty(x, axes, "min")
    if x.dtype is D.bool:
        return all(x, axis=axis, keepdims=keepdims)
    return _keep(R.reduce("min", x, axes, _acc(x.dtype), x.dtype), x, axes, keepdims)


def any(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Whether any element along ``axis`` is non-zero."""
    axes = normalize_axes(axis, x.ndim, "any")
    return _keep(R.reduce("any", x, axes, D.uint32, D.bool), x, axes, keepdims)


def all(x: Array, /, *, axis: Any = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Whether every element along ``axis`` is non-zero."""
    axes = normalize_axes(axis, x.ndim, "all")
    return _keep(R.reduce("all", x, axes, D.uint32, D.bool), x, axes, keepdims)


def _arg(op: str, x: Array, axis: int | None, keepdims: bool) -> Array:
    from .manipulation import reshape
    if axis is None:
        flat = reshape(x, (-1,))
        out = _arg(op, flat, 0, False)
        return reshape(out, (1,) * x.ndim) if keepdims else out
    ax = normalize_axis(axis, x.ndim, op)
    axes = (ax,) if x.ndim else ()
    _nonempty(x, axes, op)
    acc = D.uint32 if x.dtype is D.bool else _acc(x.dtype)
    if x.dtype is D.bool:
        from .elementwise import astype
        x = astype(x, D.uint32)
    return _keep(R.reduce(op, x, axes, acc, D.default_int()), x, axes, keepdims)


def argmax(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the (first) maximum along ``axis``."""
    return _arg("argmax", x, axis, keepdims)


def argmin(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the (first) minimum along ``axis``."""
    return _arg("argmin", x, axis, keepdims)


def _scan(op: str, x: Array, axis: int | None, dtype: Any, include_initial: bool) -> Array:
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"cumulative_{op}: axis is required for arrays of ndim > 1")
        axis = 0
    if x.ndim == 0:
        raise ValueError(f"cumulative_{op}: not defined for 0-d arrays")
    ax = normalize_axis(axis, x.ndim, f"cumulative_{op}")
    t = _sum_dtype(x, dtype)
    if t is D.bool:
        raise DTypeError(f"cumulative_{op}: bool output is not supported")
    return R.scan(op, x, ax, t, include_initial)


def cumulative_sum(x: Array, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Array:
    """Running sum along ``axis``."""
    return _scan("sum", x, axis, dtype, include_initial)


def cumulative_prod(x: Array, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Array:
    """Running product along ``axis``."""
    return _scan("prod", x, axis, dtype, include_initial)


def var(x: Array, /, *, axis: Any = None, correction: float = 0.0,
        keepdims: bool = False) -> Array:
    """Variance over ``axis`` with ``correction`` degrees of freedom removed."""
    from .elementwise import divide, multiply, subtract
    axes = normalize_axes(axis, x.ndim, "var")
    m = mean(x, axis=axes, keepdims=True)
    d = subtract(x, m)
    n = 1
    for a in axes:
        n *= x.shape[a]
    s = sum(multiply(d, d), axis=axes, keepdims=keepdims)
    return divide(s, float(n - correction) if n - correction > 0 else 0.0)


def std(x: Array, /, *, axis: Any = None, correction: float = 0.0,
        keepdims: bool = False) -> Array:
    """Standard deviation over ``axis``."""
    from .elementwise import sqrt
    return sqrt(var(x, axis=axis, correction=correction, keepdims=keepdims))
