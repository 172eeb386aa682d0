"""Numerical integration of samples: ``trapezoid`` (``trapz``) and
``cumulative_trapezoid``, differentiable."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from ._util import normalize_dim


def _parts(op: str, y: Tensor, x: Any, dx: Any, dim: int) -> tuple[Tensor, Any]:
    d = normalize_dim(op, dim, y.ndim)
    n = y.shape[d]
    if not y.dtype.is_floating_point:
        from ..dtypes import get_default_dtype

        y = y.to(get_default_dtype())
    mids = (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) / 2 if n > 1 else y.narrow(d, 0, 0)
    if x is None:
        return mids, 1 if dx is None else dx
    if x.ndim == 1:
        widths = x[1:] - x[:-1]
        shape = [1] * y.ndim
        shape[d] = widths.shape[0]
        return mids, widths.reshape(*shape)
    return mids, x.narrow(d, 1, n - 1) - x.narrow(d, 0, n - 1)


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
              dim: int = -1) -> Tensor:
    """The trapezoid rule along ``dim``: sample spacing ``x`` (a tensor), or ``dx``."""
    d = normalize_dim("trapezoid", dim, y.ndim)
    if x is None and y.shape[d] and y.dtype.is_floating_point:
        # PyTorch's formula for even spacing: the sum less half the two ends (so one
        # infinite or NaN sample gives NaN, as there)
        ends = y.select(d, 0) + y.select(d, -1)
        return (y.sum(d) - ends * 0.5) * (1 if dx is None else dx)
    mids, widths = _parts("trapezoid", y, x, dx, dim)
    return (mids * widths).sum(normalize_dim("trapezoid", dim, y.ndim))


def trapz(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
          dim: int = -1) -> Tensor:
    """Alias of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
                         dim: int = -1) -> Tensor:
    """The running trapezoid rule along ``dim`` (one element shorter than ``y``)."""
    mids, widths = _parts("cumulative_trapezoid", y, x, dx, dim)
    return (mids * widths).cumsum(normalize_dim("cumulative_trapezoid", dim, y.ndim))


__all__ = ["trapezoid", "trapz", "cumulative_trapezoid"]
