"""Binning values: ``searchsorted``, ``bucketize``, ``histc``.

Composed of comparisons and sums, so they run on every backend.
"""

from __future__ import annotations

import builtins
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
HistogramddResult = namedtuple("histogramdd", ["hist", "bin_edges"])


def _edges(x: Tensor, bins: Any, span: Any) -> Tensor:
    """The bin edges of the 1-d samples ``x``: ``bins`` itself when it is a tensor of
    edges, else ``bins`` equal-width bins over ``span`` (``(min, max)``) or the data's range
    (``(0, 1)`` for no data; a single value ``v`` gets ``(v - 0.5, v + 0.5)``), as
    PyTorch."""
    from ..creation import linspace

    if isinstance(bins, Tensor):
        return bins.to(x.dtype)
    lo, hi = (float(span[0]), float(span[1])) if span is not None else (
        (float(x.min()), float(x.max())) if x.numel() else (0.0, 1.0))
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return linspace(lo, hi, int(bins) + 1, dtype=x.dtype, device=x.device)


def _bin_of(x: Tensor, edges: Tensor) -> tuple[Tensor, Tensor]:
    """``(bin index, inside)`` of each sample: the last edge closes the last bin."""
    n = edges.shape[0] - 1
    inside = (x >= edges[0]) & (x <= edges[-1])
    return (searchsorted(edges, x, right=True) - 1).clamp(0, n - 1), inside


def histogram(input: Tensor, bins: Any = 100, *, range: Any = None,  # noqa: A002
              weight: Tensor | None = None, density: bool = False) -> tuple[Tensor, Tensor]:
    """A histogram of ``input``: ``(hist, bin_edges)``.

    Args:
        bins: the number of equal-width bins, or a 1-d tensor of increasing edges.
        range: ``(min, max)`` of the equal-width bins; the data's range by default.
        weight: a weight per element (each counts 1 by default).
        density: normalise so that the histogram integrates to one.
    """
    if not input.dtype.is_floating_point:
        raise DTypeError(f"torch.histogram: input tensor and bins tensors should have the "
                         f"same dtype, but got input {input.dtype.name}")
    with no_grad():
        x = input.detach().reshape(-1)
        edges = _edges(x, bins, range)
        idx, keep = _bin_of(x, edges)
        w = (weight.detach().reshape(-1).to(x.dtype) if weight is not None
             else x.new_ones(x.shape))[keep]
        hist = x.new_zeros((edges.shape[0] - 1,)).scatter_add(0, idx[keep], w)
        if density:
            hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
        return HistogramResult(hist, edges)


def histogramdd(input: Tensor, bins: Any = 10, *, range: Any = None,  # noqa: A002
                weight: Tensor | None = None, density: bool = False) -> tuple:
    """A multi-dimensional histogram of the points ``input (..., D)``: ``(hist, bin_edges)``
    with ``hist`` of shape ``(bins_0, ..., bins_{D-1})`` and a tuple of ``D`` edge tensors.

    Args:
        bins: an int (every dim), a sequence of ``D`` ints, or of ``D`` 1-d tensors of
            increasing edges.
        range: ``[min_0, max_0, ..., min_{D-1}, max_{D-1}]`` of the equal-width bins; each
            dim's data range by default.
        weight: a weight per point (each counts 1 by default), of shape ``input.shape[:-1]``.
        density: normalise so that the histogram integrates to one over the cells.
    """
    if input.ndim < 2:
        raise ShapeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    if not input.dtype.is_floating_point:
        raise DTypeError(f"torch.histogramdd: input tensor and bins tensors should have the "
                         f"same dtype, but got input {input.dtype.name}")
    d = input.shape[-1]
    per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * d
    if len(per_dim) != d:
        raise ShapeError(f"torch.histogramdd: expected {d} sequences of bin edges for each "
                         f"of the {d} input dimensions, but got {len(per_dim)}")
    if range is not None and len(range) != 2 * d:
        raise ShapeError(f"torch.histogramdd: for a {d}-dimensional histogram, range should "
                         f"have {2 * d} elements, but got {len(range)}")
    with no_grad():
        pts = input.detach().reshape(-1, d)
        edges, flat, keep = [], None, None
        for k in builtins.range(d):  # ``range`` is the argument here
            x = pts[:, k]
            e = _edges(x, per_dim[k], None if range is None else range[2 * k:2 * k + 2])
            idx, inside = _bin_of(x, e)
            edges.append(e)
            n = e.shape[0] - 1
            flat = idx if flat is None else flat * n + idx
            keep = inside if keep is None else keep & inside
        shape = tuple(e.shape[0] - 1 for e in edges)
        w = (weight.detach().reshape(-1).to(pts.dtype) if weight is not None
             else pts.new_ones((pts.shape[0],)))[keep]
        hist = pts.new_zeros((math.prod(shape),)).scatter_add(0, flat[keep], w).reshape(shape)
        if density:
            volume = hist.new_ones(shape)
            for k, e in enumerate(edges):
                lay = [1] * d
                lay[k] = -1
                volume = volume * (e[1:] - e[:-1]).reshape(lay)
            hist = hist / (hist.sum() * volume)
        return HistogramddResult(hist, tuple(edges))


__all__ = ["searchsorted", "bucketize", "histc", "histogram", "histogramdd"]
