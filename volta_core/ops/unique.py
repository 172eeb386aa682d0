"""Distinct values: ``unique`` and ``unique_consecutive``.

Both are composed of sort, comparison, cumulative sum and masking, so they run on every
backend (the result's length depends on the data, so they read one size to the host).
"""

from __future__ import annotations

from typing import Any

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor, tensor_method
from ._util import normalize_dim


def _runs(rows: Tensor, return_counts: bool) -> tuple[Tensor, Tensor, Tensor | None]:
    """For ``rows`` (n, k): a mask of the first row of each run of equal rows, the run
    number of each row, and each run's length."""
    from ..creation import arange, ones
    from .joining import cat

    n = rows.shape[0]
    if n == 0:
        empty = rows.new_zeros((0,), dtype="int64")
        return rows.new_zeros((0,), dtype="bool"), empty, empty if return_counts else None
    changed = (rows[1:] != rows[:-1]).any(dim=1)
    first = cat([ones(1, dtype="bool", device=rows.device), changed])
    run = first.to("int64").cumsum(0) - 1
    counts = None
    if return_counts:
        starts = arange(n, device=rows.device)[first]
        ends = cat([starts[1:], starts.new_full((1,), n)])
        counts = ends - starts
    return first, run, counts


def _as_rows(input: Tensor, dim: int | None) -> tuple[Tensor, int | None]:
    if dim is None:
        return input.reshape(-1, 1), None
    d = normalize_dim("unique", dim, input.ndim)
    return input.movedim(d, 0).reshape(input.shape[d], -1), d


def _from_rows(rows: Tensor, input: Tensor, d: int | None) -> Tensor:
    if d is None:
        return rows.reshape(-1)
    moved = [s for i, s in enumerate(input.shape) if i != d]
    return rows.reshape(rows.shape[0], *moved).movedim(0, d)


def _result(values: Tensor, inverse: Tensor | None, counts: Tensor | None,
            return_inverse: bool, return_counts: bool) -> Any:
    out = (values,) + ((inverse,) if return_inverse else ()) + (
        (counts,) if return_counts else ())
    return out[0] if len(out) == 1 else out


@tensor_method()
def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct values of ``input`` (or distinct slices along ``dim``), sorted.

    Args:
        input: the tensor.
        sorted: accepted for PyTorch compatibility; the result is always sorted.
        return_inverse: also return, for each element (slice), the index of its value in
            the result (shaped like ``input``, or ``(input.shape[dim],)``).
        return_counts: also return how often each distinct value occurs.
        dim: the dimension whose slices are compared; None flattens ``input``.

    Returns:
        ``values``, or a tuple ``(values[, inverse][, counts])``.
    """
    with no_grad():
        x = input.detach()
        rows, d = _as_rows(x, dim)
        order = _arange_like(rows)
        # lexicographic order of the rows: stable sorts by each column, the last key first
        for col in range(rows.shape[1] - 1, -1, -1):
            order = order[rows[order, col].argsort(stable=True)]
        sorted_rows = rows[order]
        first, run, counts = _runs(sorted_rows, return_counts)
        inverse = None
        if return_inverse:
            inverse = run.new_zeros(run.shape).scatter(0, order, run)
            inverse = inverse.reshape(x.shape) if d is None else inverse
        values = _from_rows(sorted_rows[first], x, d)
        return _result(values, inverse, counts, return_inverse, return_counts)


def _arange_like(rows: Tensor) -> Tensor:
    from ..creation import arange

    return arange(rows.shape[0], device=rows.device)


@tensor_method()
def unique_consecutive(input: Tensor, return_inverse: bool = False,
                       return_counts: bool = False, dim: int | None = None) -> Any:
    """Collapse each run of equal consecutive values (or slices along ``dim``) to one.

    Returns ``values``, or ``(values[, inverse][, counts])`` as :func:`unique`.
    """
    with no_grad():
        x = input.detach()
        rows, d = _as_rows(x, dim)
        first, run, counts = _runs(rows, return_counts)
        inverse = (run.reshape(x.shape) if d is None else run) if return_inverse else None
        return _result(_from_rows(rows[first], x, d), inverse, counts, return_inverse,
                       return_counts)


__all__ = ["unique", "unique_consecutive"]
