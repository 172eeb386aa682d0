"""Binning values: ``searchsorted``, ``bucketize``, ``histc``.

Composed of comparisons and sums, so they run on every backend.
"""

from __future__ import annotations

import math
from collections import namedtuple
from typing import Any

from ..autograd.grad_mode import no_grad
from ..errors import DTypeError, ShapeError
from ..tensor import Tensor, tensor_method


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None,
                 sorter: Tensor | None = None) -> Tensor:
    """Where each value of ``input`` would be inserted into ``sorted_sequence`` (sorted
    along its last dimension) to keep it sorted.

    Args:
        sorted_sequence: 1-d, or with leading dimensions matching ``input``'s.
        input: the values (a tensor or a Python number).
        out_int32: return int32 instead of int64.
        right: insert after equal values (the index of the first larger one).
        side: ``"left"`` or ``"right"``, the same as ``right`` (they must agree).
        sorter: indices that sort ``sorted_sequence`` along its last dimension.
    """
    if side is not None:
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side can only be 'left' or 'right' but got "
                             f"{side!r}")
        if right and side == "left":
            raise ValueError("searchsorted: side and right can't be set to opposites, got "
                             "side of left while right was True")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    with no_grad():
        seq = sorted_sequence.detach()
        if sorter is not None:
            if sorter.shape != seq.shape:
                raise ShapeError(f"searchsorted: sorter {sorter.shape} must have the shape "
                                 f"of sorted_sequence {seq.shape}")
            seq = seq.gather(-1, sorter)
        values = seq.new_tensor(input) if scalar else input.detach()
        if seq.ndim > 1 and (values.ndim != seq.ndim or
                             values.shape[:-1] != seq.shape[:-1]):
            raise ShapeError(f"searchsorted: boundaries {sorted_sequence.shape} and input "
                             f"{values.shape} must have the same leading dimensions (or "
                             "boundaries must be 1-d)")
        if values.dtype is not seq.dtype:
            from ..dtypes import promote_types

            common = promote_types(values.dtype, seq.dtype)
            values, seq = values.to(common), seq.to(common)
        out = _binary_search(seq, values, right)
        return out.to("int32") if out_int32 else out


def _binary_search(seq: Tensor, values: Tensor, right: bool) -> Tensor:
    """PyTorch's search, run for all values at once: the first index ``i`` where
    ``seq[i] >= v`` (``> v`` with ``right``), halving ``[start, end)`` while it is not
    empty. A NaN compares false, so a NaN value goes past every element and NaNs in
    ``seq`` steer the search exactly as in PyTorch (also for an unsorted ``seq``)."""
    from .elementwise import where

    n = seq.shape[-1]
    start = values.new_zeros(values.shape, dtype="int64")
    end = start + n
    one_d = seq.ndim == 1
    for _ in range(n.bit_length()):
        mid = (start + end) // 2
        at = mid.clamp(max=max(n - 1, 0))
        mid_val = seq[at] if one_d else seq.gather(-1, at)
        go_right = ~(mid_val > values) if right else ~(mid_val >= values)
        open_ = start < end
        start = where(open_ & go_right, mid + 1, start)
        end = where(open_ & ~go_right, mid, end)
    return start


@tensor_method()
def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False,
              right: bool = False) -> Tensor:
    """The bucket of each value of ``input`` given 1-d sorted ``boundaries``.

    ``right=False``: ``boundaries[i-1] < x <= boundaries[i]``; ``right=True``:
    ``boundaries[i-1] <= x < boundaries[i]``.
    """
    if boundaries.ndim != 1:
        raise ShapeError(f"bucketize: boundaries must be 1-d, got shape {boundaries.shape}")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


@tensor_method()
def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:  # noqa: A002
    """A histogram of ``input`` with ``bins`` equal-width bins over ``[min, max]``.

    With ``min == max`` (the default), the data's own minimum and maximum are used.
    Values outside the range are ignored. The result has ``input``'s dtype.
    """
    if not input.dtype.is_floating_point:
        raise DTypeError(f"histc: expected a floating-point input, got {input.dtype.name}")
    if bins <= 0:
        raise ValueError(f"histc: bins must be > 0, but got {bins}")
    if min > max:
        raise ValueError(f"histc: max must be larger than min, got min={min}, max={max}")
    with no_grad():
        x = input.detach().reshape(-1)
        lo, hi = float(min), float(max)
        if lo == hi and x.numel():
            lo, hi = float(x.min()), float(x.max())
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(f"histc: range of [{lo}, {hi}] is not finite; pass finite min "
                             "and max, or filter the input's NaN and infinite values")
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        keep = (x >= lo) & (x <= hi)
        x = x[keep]
        idx = ((x - lo) * (bins / (hi - lo))).floor().to("int64").clamp(0, bins - 1)
        return x.new_zeros((bins,)).scatter_add(0, idx, x.new_ones(x.shape))


HistogramResult = namedtuple("histogram", ["hist", "bin_edges"])


def histogram(input: Tensor, bins: Any = 100, *, range: Any = None,  # noqa: A002
              weight: Tensor | None = None, density: bool = False) -> tuple[Tensor, Tensor]:
    """A histogram of ``input``: ``(hist, bin_edges)``.

    Args:
        bins: the number of equal-width bins, or a 1-d tensor of increasing edges.
        range: ``(min, max)`` of the equal-width bins; the data's range by default.
        weight: a weight per element (each counts 1 by default).
        density: normalise so that the histogram integrates to one.
    """
    from ..creation import linspace

    if not input.dtype.is_floating_point:
        raise DTypeError(f"torch.histogram: input tensor and bins tensors should have the "
                         f"same dtype, but got input {input.dtype.name}")
    with no_grad():
        x = input.detach().reshape(-1)
        if isinstance(bins, Tensor):
            edges = bins.to(x.dtype)
        else:
            lo, hi = (float(range[0]), float(range[1])) if range is not None else (
                (float(x.min()), float(x.max())) if x.numel() else (0.0, 0.0))
            if lo == hi:
                lo, hi = lo - 0.5, hi + 0.5
            edges = linspace(lo, hi, int(bins) + 1, dtype=x.dtype, device=x.device)
        n = edges.shape[0] - 1
        keep = (x >= edges[0]) & (x <= edges[-1])
        w = (weight.detach().reshape(-1).to(x.dtype) if weight is not None
             else x.new_ones(x.shape))[keep]
        x = x[keep]
        idx = (searchsorted(edges, x, right=True) - 1).clamp(0, n - 1)
        hist = x.new_zeros((n,)).scatter_add(0, idx, w)
        if density:
            hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
        return HistogramResult(hist, edges)


__all__ = ["searchsorted", "bucketize", "histc", "histogram"]
