"""Finite differences: ``diff`` along a dimension, and ``gradient``, the derivative
estimated from samples (NumPy's and PyTorch's ``gradient``).

Composed of slices and ``cat``, so their backward (and double backward) needs no code of
their own.
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


def _axis_gradient(f: Tensor, d: int, h: Any, edge_order: int) -> Tensor:
    """The derivative of ``f`` along dim ``d``: second-order central differences inside,
    one-sided ones of order ``edge_order`` at the two ends. ``h``: the spacing (a number)
    or the 1-D tensor of coordinates along ``d``."""
    from .joining import cat

    n = f.shape[d]

    def part(start: int, length: int) -> Tensor:
        return narrow(f, d, start, length)

    if isinstance(h, Tensor):  # coordinates: the non-uniform formulas, NumPy's
        shape = [1] * f.ndim
        shape[d] = -1

        def along(t: Tensor) -> Tensor:
            return t.reshape(shape)

        dx = h[1:] - h[:-1]
        dx1, dx2 = along(dx[:-1]), along(dx[1:])
        inner = (-dx2 / (dx1 * (dx1 + dx2)) * part(0, n - 2)
                 + (dx2 - dx1) / (dx1 * dx2) * part(1, n - 2)
                 + dx1 / (dx2 * (dx1 + dx2)) * part(2, n - 2))
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / along(dx[:1])
            last = (part(n - 1, 1) - part(n - 2, 1)) / along(dx[-1:])
        else:
            a, b = along(dx[:1]), along(dx[1:2])
            first = (-(2 * a + b) / (a * (a + b)) * part(0, 1) + (a + b) / (a * b) * part(1, 1)
                     - a / (b * (a + b)) * part(2, 1))
            a, b = along(dx[-2:-1]), along(dx[-1:])
            last = (b / (a * (a + b)) * part(n - 3, 1) - (a + b) / (a * b) * part(n - 2, 1)
                    + (2 * b + a) / (b * (a + b)) * part(n - 1, 1))
    else:
        inner = (part(2, n - 2) - part(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / h
            last = (part(n - 1, 1) - part(n - 2, 1)) / h
        else:
            first = (-1.5 * part(0, 1) + 2 * part(1, 1) - 0.5 * part(2, 1)) / h
            last = (0.5 * part(n - 3, 1) - 2 * part(n - 2, 1) + 1.5 * part(n - 1, 1)) / h
    return cat([first, inner, last], d)


def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None,
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """Estimate the derivative of a function sampled in ``input`` along each of ``dim``,
    as ``torch.gradient`` (and NumPy's): second-order accurate central differences inside,
    one-sided differences of order ``edge_order`` at the boundaries.

    Args:
        input: the samples (integer samples give the default float dtype).
        spacing: the distance between samples: a number for every dim, a sequence of
            numbers (one per dim of ``dim``), or a sequence of 1-D tensors holding the
            coordinates of the samples along each dim (non-uniform spacing).
        dim: a dim, a sequence of dims, or None for all of them.
        edge_order: 1 or 2, the accuracy of the differences at the boundaries.

    Returns:
        A tuple with one tensor of ``input``'s shape per dim of ``dim``.
    """
    from ..dtypes import get_default_dtype

    _check("gradient", input)
    if edge_order not in (1, 2):
        raise ValueError(f"torch.gradient only supports edge_order=1 and edge_order=2, got "
                         f"{edge_order}")
    if dim is None:
        dims = list(range(input.ndim))
    elif isinstance(dim, int):
        dims = [normalize_dim("gradient", dim, input.ndim)]
    else:
        dims = [normalize_dim("gradient", d, input.ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise ValueError(f"gradient: dim {tuple(dim)} appears multiple times in the list "
                             "of dims")
    if isinstance(spacing, (int, float)) and not isinstance(spacing, bool):
        steps: list = [spacing] * len(dims)
    else:
        steps = list(spacing)
        if len(steps) != len(dims):
            raise ShapeError(
                f"torch.gradient expected spacing to be unspecified, a scalar or it's "
                f"spacing and dim arguments to have the same length, but got a spacing "
                f"argument of length {len(steps)} and a dim argument of length {len(dims)}.")
        if any(isinstance(h, Tensor) for h in steps) and not all(
                isinstance(h, Tensor) and h.ndim == 1 for h in steps):
            raise ShapeError("torch.gradient expected each element of spacing to have one "
                             "dimension, but got an element with 0 dimensions!")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise ShapeError(f"torch.gradient expected each dimension size to be at least "
                             f"edge_order+1 (input shape {tuple(input.shape)}, dim {d}, "
                             f"edge_order {edge_order})")
    f = input if input.dtype.is_floating_point else input.to(get_default_dtype())
    out = []
    for d, h in zip(dims, steps):
        if isinstance(h, Tensor):
            if h.shape[0] != input.shape[d]:
                raise ShapeError(f"gradient: the coordinates along dim {d} must have "
                                 f"{input.shape[d]} entries, got {h.shape[0]}")
            h = h.to(f.dtype)
        out.append(_axis_gradient(f, d, h, edge_order))
    return tuple(out)


__all__ = ["diff", "gradient"]
