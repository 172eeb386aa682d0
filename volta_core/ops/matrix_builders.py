"""Building matrices: ``diag``, ``diag_embed``, ``diagflat``, ``block_diag``, ``kron``,
``inner``, ``tril_indices``/``triu_indices``.

Composed of existing differentiable ops (scatter by flat position, products, ``cat``).
"""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from ..tensor import Tensor, tensor_method


def _positions(rows: int, cols: int, offset: int, length: int, device: Any) -> Tensor:
    from ..creation import arange

    r0, c0 = (0, offset) if offset >= 0 else (-offset, 0)
    return arange(length, device=device) * (cols + 1) + (r0 * cols + c0)


@tensor_method()
def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices whose ``offset`` diagonal (over ``dim1``, ``dim2``) holds the last dim of
    ``input``."""
    from ._util import normalize_dim

    n = input.shape[-1]
    size = n + abs(offset)
    flat = input.new_zeros((*input.shape[:-1], size * size))
    pos = _positions(size, size, offset, n, input.device).expand(*input.shape[:-1], n)
    out = flat.scatter(-1, pos, input).reshape(*input.shape[:-1], size, size)
    nd = out.ndim
    a, b = normalize_dim("diag_embed", dim1, nd), normalize_dim("diag_embed", dim2, nd)
    if a == b:
        raise ValueError(f"diag_embed: dim1 and dim2 cannot be identical, got {dim1}, {dim2}")
    return out.movedim((nd - 2, nd - 1), (a, b))


@tensor_method()
def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """1-d input: a square matrix with it on the ``diagonal``; 2-d: that diagonal."""
    if input.ndim == 1:
        return diag_embed(input, diagonal)
    if input.ndim == 2:
        return input.diagonal(diagonal)
    raise ShapeError(f"diag: expected a 1-d or 2-d input, got shape {input.shape}")


@tensor_method()
def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A square matrix with the flattened ``input`` on diagonal ``offset``."""
    return diag_embed(input.reshape(-1), offset)


def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix of the given 0-, 1- or 2-d tensors."""
    from .joining import cat

    mats = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    if any(m.ndim != 2 for m in mats):
        raise ShapeError(f"block_diag: expected 0-, 1- or 2-d tensors, got "
                         f"{[t.shape for t in tensors]}")
    if not mats:
        from ..creation import zeros

        return zeros(1, 0)
    total = sum(m.shape[1] for m in mats)
    rows, start = [], 0
    for m in mats:
        left = m.new_zeros((m.shape[0], start))
        right = m.new_zeros((m.shape[0], total - start - m.shape[1]))
        rows.append(cat([left, m, right], 1))
        start += m.shape[1]
    return cat(rows, 0)


@tensor_method()
def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product (dims aligned from the right)."""
    nd = max(input.ndim, other.ndim)
    a = input.reshape((1,) * (nd - input.ndim) + input.shape)
    b = other.reshape((1,) * (nd - other.ndim) + other.shape)
    a_ = a.reshape(*[s for d in a.shape for s in (d, 1)])
    b_ = b.reshape(*[s for d in b.shape for s in (1, d)])
    return (a_ * b_).reshape(*[x * y for x, y in zip(a.shape, b.shape)])


@tensor_method()
def inner(input: Tensor, other: Tensor) -> Tensor:
    """The sum over the last dims of ``input`` and ``other`` of their products."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise ShapeError(f"inner: the last dims must match, got {input.shape} and "
                         f"{other.shape}")
    return input.reshape(-1, input.shape[-1]).matmul(
        other.reshape(-1, other.shape[-1]).t()).reshape(*input.shape[:-1],
                                                       *other.shape[:-1])


def _tri_indices(row: int, col: int, offset: int, lower: bool, dtype: Any,
                 device: Any) -> Tensor:
    from ..creation import arange
    from .joining import stack

    r = arange(row, device=device).unsqueeze(1).expand(row, col)
    c = arange(col, device=device).unsqueeze(0).expand(row, col)
    keep = (c - r <= offset) if lower else (c - r >= offset)
    return stack([r[keep], c[keep]]).to(dtype or "int64")


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None) -> Tensor:
    """The ``(2, N)`` row/column indices of the lower triangle (row-major order)."""
    return _tri_indices(row, col, offset, True, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None) -> Tensor:
    """The ``(2, N)`` row/column indices of the upper triangle (row-major order)."""
    return _tri_indices(row, col, offset, False, dtype, device)


__all__ = ["diag", "diag_embed", "diagflat", "block_diag", "kron", "inner", "tril_indices",
           "triu_indices"]
