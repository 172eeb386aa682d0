"""Finite differences along a dimension: ``diff``.

Composed of slices and ``cat``, so its backward (and double backward) needs no code of
its own.
"""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from ..tensor import Tensor, tensor_method
from ._util import normalize_dim
from .movement import narrow


def _check(op: str, x: Any) -> Tensor:
    if type(x) is not Tensor:
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    return x


@tensor_method()
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference ``out[i] = x[i + 1] - x[i]`` along ``dim``.

    Args:
        input: the tensor (at least 1-D).
        n: how many times to take the difference.
        dim: the dimension along which to take it.
        prepend, append: tensors joined to ``input`` along ``dim`` before differencing
            (their other dims must match ``input``'s).

    Shape:
        Output: ``input``'s shape with ``dim`` shrunk by ``n`` (grown by the sizes of
        ``prepend``/``append`` first).
    """
    _check("diff", input)
    if input.ndim == 0:
        raise ShapeError("diff: expected at least a 1-D input, got a 0-d tensor")
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    from .joining import cat  # here: joining and movement import each other

    d = normalize_dim("diff", dim, input.ndim)
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    bool_input = x.dtype.name == "bool"
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        hi, lo = narrow(x, d, 1, size - 1), narrow(x, d, 0, size - 1)
        x = hi.logical_xor(lo) if bool_input else hi - lo
    return x


__all__ = ["diff"]
