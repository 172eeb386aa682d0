"""Coordinate grids and products: ``meshgrid``, ``cartesian_prod``, ``logspace``."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..errors import DTypeError, ShapeError
from ..tensor import Tensor


def _tensors(op: str, tensors: tuple) -> list[Tensor]:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise ValueError(f"{op}: expects a non-empty list of tensors")
    for t in tensors:
        if not isinstance(t, Tensor) or t.ndim > 1:
            raise ShapeError(f"{op}: expects 0-d or 1-d tensors, got "
                             f"{[getattr(t, 'shape', type(t).__name__) for t in tensors]}")
    if len({t.dtype for t in tensors}) > 1:
        raise DTypeError(f"{op}: expects all tensors to have the same dtype, got "
                         f"{[t.dtype.name for t in tensors]}")
    return list(tensors)


def meshgrid(*tensors: Tensor | Sequence[Tensor], indexing: str = "ij") -> tuple[Tensor, ...]:
    """Coordinate grids from 1-d tensors (differentiable; the results are expanded views).

    Args:
        tensors: 0-d or 1-d tensors, or one list of them.
        indexing: ``"ij"`` (matrix indexing, PyTorch's default) or ``"xy"`` (Cartesian:
            the first two dimensions are swapped).
    """
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    ts = [t.reshape(-1) for t in _tensors("meshgrid", tensors)]
    sizes = [t.shape[0] for t in ts]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, t in enumerate(ts):
        axis = {0: 1, 1: 0}.get(i, i) if swap else i
        shape = [1] * len(ts)
        shape[axis] = t.shape[0]
        out.append(t.reshape(shape).expand(*sizes))
    return tuple(out)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """All combinations of the elements of 1-d tensors, as rows (``itertools.product``)."""
    ts = _tensors("cartesian_prod", tensors)
    if len(ts) == 1:
        return ts[0].reshape(-1)
    from .joining import stack

    return stack([g.reshape(-1) for g in meshgrid(*ts, indexing="ij")], dim=1)


def logspace(start: float, end: float, steps: int, base: float = 10.0, *, dtype=None,
             device=None, requires_grad: bool = False) -> Tensor:
    """``steps`` values ``base ** x`` for ``x`` evenly spaced from ``start`` to ``end``."""
    from ..creation import linspace

    exps = linspace(start, end, steps, dtype="float64", device=device)
    out = (exps * math.log(base)).exp() if base > 0 else exps.new_full((), base) ** exps
    from ..dtypes import get_default_dtype

    out = out.to(dtype or get_default_dtype())
    return out.requires_grad_(True) if requires_grad else out


__all__ = ["meshgrid", "cartesian_prod", "logspace"]
