"""Stacking and splitting by layout: ``hstack``/``vstack``/``dstack``/``column_stack``,
``tensor_split``, ``rot90`` and ``repeat_interleave``.

All are compositions of differentiable movement ops (``cat``, ``narrow``, ``flip``,
``transpose``, ``index_select``), so their gradients come from those.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from ..errors import DTypeError, ShapeError
from ..tensor import Tensor, tensor_method
from ._util import normalize_dim
from .indexing import index_select
from .joining import _common, cat, flip
from .movement import narrow, reshape, transpose


def _at_least(x: Tensor, n: int) -> Tensor:
    """``x`` with size-1 dims added as ``torch.atleast_{n}d`` does."""
    if x.ndim >= n:
        return x
    if n == 3 and x.ndim == 2:
        return reshape(x, x.shape + (1,))
    if n == 3:  # 0-d -> (1, 1, 1), 1-D (k) -> (1, k, 1)
        return reshape(x, (1, x.numel(), 1))
    return reshape(x, (1,) * (n - x.ndim) + x.shape)


def _tensors(op: str, tensors: Sequence[Tensor]) -> list[Tensor]:
    if isinstance(tensors, Tensor):
        raise TypeError(f"{op}: expected a sequence of tensors, got a single Tensor")
    return _common(op, tensors)


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join tensors column-wise: along dim 0 for 1-D (and 0-d) inputs, else along dim 1."""
    ts = [_at_least(t, 1) for t in _tensors("hstack", tensors)]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join tensors row-wise (along dim 0), 0-d and 1-D inputs first made ``(1, n)``."""
    return cat([_at_least(t, 2) for t in _tensors("vstack", tensors)], 0)


row_stack = vstack


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join tensors depth-wise (along dim 2), inputs first made at least 3-D."""
    return cat([_at_least(t, 3) for t in _tensors("dstack", tensors)], 2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Join tensors as columns (dim 1): 0-d and 1-D inputs become ``(n, 1)`` columns."""
    ts = _tensors("column_stack", tensors)
    return cat([reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in ts], 1)


@tensor_method()
def tensor_split(input: Tensor, indices_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """Split ``input`` into views along ``dim``, like ``numpy.array_split``.

    Args:
        input: a tensor of at least 1 dim.
        indices_or_sections: an int ``n`` (``n`` parts, the first ``size % n`` one longer),
            or a list of split points (Python slice rules: negatives count from the end,
            out-of-order points give empty parts); a 0-d or 1-D int tensor is read as
            the same.
        dim: the dimension to split.
    """
    if input.ndim == 0:
        raise ShapeError("tensor_split: expected at least a 1-dimensional tensor, but got a "
                         "tensor with 0 dims")
    d = normalize_dim("tensor_split", dim, input.ndim)
    n = input.shape[d]
    spec = indices_or_sections
    if type(spec) is Tensor:
        if spec.dtype.kind not in "iu" or spec.ndim > 1:
            raise DTypeError(f"tensor_split: a tensor indices_or_sections must be a 0-d or "
                             f"1-D integer tensor, got {spec.dtype.name} of shape {spec.shape}")
        spec = spec.item() if spec.ndim == 0 else [int(v) for v in spec.tolist()]
    if isinstance(spec, (list, tuple)):
        points = [operator.index(p) for p in spec]
    else:
        k = operator.index(spec)
        if k <= 0:
            raise ShapeError(f"tensor_split: number of sections must be larger than 0, got {k}")
        size, extra = divmod(n, k)
        points, at = [], 0
        for i in range(k - 1):
            at += size + (1 if i < extra else 0)
            points.append(at)
    out = []
    for lo, hi in zip([0] + points, points + [None]):
        start, stop, _ = slice(lo, hi).indices(n)
        out.append(narrow(input, d, start, max(stop - start, 0)))
    return tuple(out)


@tensor_method()
def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``dims``, from the first dim
    toward the second.

    Args:
        input: a tensor of at least 2 dims.
        k: the number of quarter turns (negative turns the other way).
        dims: the two dims of the plane.
    """
    dims = tuple(dims)
    if len(dims) != 2:
        raise ShapeError(f"rot90: expected 2 rotation dims, got {len(dims)}")
    if input.ndim < 2:
        raise ShapeError(f"rot90: expected a tensor with at least 2 dims, got shape "
                         f"{input.shape}")
    d0, d1 = (normalize_dim("rot90", d, input.ndim) for d in dims)
    if d0 == d1:
        raise ShapeError(f"rot90: expected rotation dims to be different, got {dims}")
    k %= 4
    if k == 1:
        return transpose(flip(input, (d1,)), d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return flip(transpose(input, d0, d1), (d1,))
    return input.clone()


def _repeat_index(repeats: Tensor, n: int, op: str) -> Tensor:
    """``[0]*r0 + [1]*r1 + ...``: the source index of each output entry."""
    xp, dev = repeats.device.xp, repeats.device
    r = xp.reshape(repeats.array, (-1,))
    if r.shape[0] == 1 and n != 1:
        r = xp.broadcast_to(r, (n,))
    if r.shape[0] != n:
        raise ShapeError(f"{op}: repeats must have the same size as input along dim, got "
                         f"{r.shape[0]} repeats for size {n}")
    if r.shape[0] and bool(xp.any(r < 0)):
        raise ShapeError(f"{op}: repeats must be non-negative")
    i64 = dev.native_dtype("int64")
    src = xp.arange(n, dtype=i64, device=dev.native)
    return Tensor._make(xp.repeat(src, xp.astype(r, i64)), dev)


@tensor_method()
def repeat_interleave(input: Tensor, repeats: Any = None, dim: int | None = None, *,
                      output_size: int | None = None) -> Tensor:
    """Repeat each element (or slice along ``dim``) ``repeats`` times, in place of it.

    ``repeat_interleave(repeats)`` with one int tensor gives ``[0]*r0 + [1]*r1 + ...``.

    Args:
        input: the tensor (flattened first when ``dim`` is None).
        repeats: an int, or an int tensor with one count per element along ``dim``.
        dim: the dimension to repeat along.
        output_size: the total length along ``dim``, if known (checked).
    """
    if repeats is None:  # the one-argument form
        if type(input) is not Tensor or input.dtype.kind not in "iu" or input.ndim > 1:
            raise DTypeError("repeat_interleave: the one-argument form takes a 0-d or 1-D "
                             "integer tensor of repeats")
        n = input.numel()
        return _repeat_index(input, n, "repeat_interleave")
    x = reshape(input, (-1,)) if dim is None else input
    d = 0 if dim is None else normalize_dim("repeat_interleave", dim, x.ndim)
    if x.ndim == 0:
        x = reshape(x, (1,))
    n = x.shape[d]
    if type(repeats) is not Tensor:
        r = operator.index(repeats)
        if r < 0:
            raise ShapeError(f"repeat_interleave: repeats must be non-negative, got {r}")
        repeats = Tensor([r], device=x.device)
    elif repeats.dtype.kind not in "iu" or repeats.ndim > 1:
        raise DTypeError(f"repeat_interleave: repeats must be a 0-d or 1-D integer tensor, "
                         f"got {repeats.dtype.name} of shape {repeats.shape}")
    index = _repeat_index(repeats, n, "repeat_interleave")
    if output_size is not None and index.shape[0] != output_size:
        raise ShapeError(f"repeat_interleave: output_size={output_size} does not match the "
                         f"total of repeats {index.shape[0]}")
    return index_select(x, d, index)


__all__ = ["hstack", "vstack", "row_stack", "dstack", "column_stack", "tensor_split", "rot90",
           "repeat_interleave"]
