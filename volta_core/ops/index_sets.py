"""Index sets: ``combinations``, ``unravel_index``, ``vander``, ``gcd``, ``lcm``."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ..autograd.grad_mode import no_grad
from ..errors import DTypeError, ShapeError
from ..tensor import Tensor, tensor_method


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of the 1-d ``input``'s elements, as rows
    (``itertools.combinations``; differentiable)."""
    from ..creation import tensor

    if input.ndim != 1:
        raise ShapeError(f"combinations: expect a 1D vector, but got shape {input.shape}")
    if r < 0:
        raise ValueError(f"combinations: expect a non-negative number, but got {r}")
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    if r == 0:
        rows = []
    idx = tensor(rows, dtype="int64", device=input.device).reshape(-1)
    out = input[idx]  # empty too: in the graph, for a zero gradient as PyTorch's
    return out if r == 0 else out.reshape(len(rows), r)


def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """The coordinates in a tensor of ``shape`` of each flat index in ``indices``."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if indices.dtype.kind not in "iu":
        raise DTypeError(f"expected 'indices' to be integer dtype, but got "
                         f"{indices.dtype.name}")
    total = 1
    for s in shape:
        total *= s
    with no_grad():
        if indices.numel() and (int(indices.min()) < -total or int(indices.max()) >= total):
            raise ValueError(f"unravel_index: an index is out of bounds for shape {shape}")
        flat = indices.to("int64") % max(total, 1)
        out = []
        for s in reversed(shape):
            out.append(flat % s)
            flat = flat // s
        return tuple(reversed(out))


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix: columns ``x ** (N-1), ..., x ** 0`` (or increasing)."""
    from ..creation import arange

    if x.ndim != 1:
        raise ShapeError(f"x must be a one-dimensional tensor, got shape {x.shape}")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise ValueError("N must be non-negative.")
    powers = arange(n, device=x.device)
    if not increasing:
        powers = powers.flip(0)
    base = x if x.dtype.is_floating_point or x.dtype.name == "int64" else x.to("int64")
    return base.unsqueeze(1) ** powers.to(base.dtype).unsqueeze(0)


def linalg_vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """The Vandermonde matrix of ``x`` with increasing powers, as ``torch.linalg.vander``:
    ``result[..., i, j] = x[..., i] ** j`` for ``j < N``, from a cumulative product.

    Args:
        x: tensor of shape ``(*, n)`` (a 0-d one is taken as ``(1,)``), floating (float32,
            float64) or integer; integers give int64, as PyTorch's.
        N: the number of columns (``n`` when None); must be greater than 1.

    Returns:
        A tensor of shape ``(*, n, N)``, differentiable in ``x``.
    """
    from .joining import cat
    from .sorting import cumprod

    name = x.dtype.name
    if name in ("bool", "float16", "bfloat16") or (x.dtype.kind not in "iu"
                                                    and not x.dtype.is_floating_point):
        raise DTypeError(f"linalg.vander: supports floating point and integer tensors "
                         f"(float32, float64, integers), got {name}")
    x = x.unsqueeze(-1) if x.ndim == 0 else x
    n = x.shape[-1] if N is None else N
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"linalg.vander: N must be an int, got {type(n).__name__}")
    if n <= 1:
        raise ValueError(f"linalg.vander: N must be greater than 1, got {n}")
    powers = cumprod(x.unsqueeze(-1).expand(*x.shape, n - 1), -1)  # x, x^2, ... x^(N-1)
    return cat([powers.new_ones((*x.shape, 1)), powers], -1)


def _int_pair(op: str, a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    if a.dtype.kind not in "iu" or b.dtype.kind not in "iu":
        raise DTypeError(f"{op}: expected integer tensors, got {a.dtype.name} and "
                         f"{b.dtype.name}")
    from ._util import promote_pair

    return promote_pair(a, b)


@tensor_method()
def gcd(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise greatest common divisor (non-negative) of integer tensors; as
    PyTorch's, Euclid's steps take C's remainder of the absolute values, so the dtype's
    lowest value (whose absolute value wraps to itself) can give a negative result."""
    from .elementwise import fmod, where

    a, b = _int_pair("gcd", input, other)
    with no_grad():
        a, b = a.abs(), b.abs()
        a, b = a + b * 0, b + a * 0  # broadcast
        while bool((b != 0).any()):
            nonzero = b != 0
            a, b = where(nonzero, b, a), where(nonzero, fmod(a, where(nonzero, b, 1)), 0)
        return a


@tensor_method()
def lcm(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise least common multiple (non-negative) of integer tensors; as
    PyTorch's, ``|a / gcd * b|`` wraps to the dtype (8- and 16-bit ones after the absolute
    value, as C computes them in int)."""
    from .elementwise import where

    a, b = _int_pair("lcm", input, other)
    with no_grad():
        g = gcd(a, b)
        q = a // where(g == 0, 1, g)
        if a.dtype.itemsize < 4:
            return where(g == 0, 0, (q.long() * b.long()).abs().to(a.dtype))
        return where(g == 0, 0, (q * b).abs())


__all__ = ["combinations", "unravel_index", "vander", "gcd", "lcm"]
