"""Movement ops: reshape, permute, transpose, expand, squeeze/unsqueeze, and ``sum_to``."""

from __future__ import annotations

from typing import Sequence

from ..autograd.function import Function
from ..errors import ShapeError
from ..tensor import Tensor, tensor_method
from ._util import broadcast_shapes, normalize_dim


def _shape_arg(op: str, shape: tuple) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    try:
        return tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise ShapeError(f"{op}: expected a shape of ints, got {shape!r}") from None


class Reshape(Function):
    def forward(ctx, x, shape=()):
        ctx.in_shape = x.shape
        return ctx.xp.reshape(x, shape)

    def backward(ctx, g):
        return reshape(g, ctx.in_shape)


@tensor_method("reshape", "view")
def reshape(x: Tensor, *shape: int) -> Tensor:
    """Return ``x`` with a new shape of the same number of elements (one dim may be -1).

    Args:
        x: the tensor.
        shape: the new shape, as ints or one tuple.
    """
    shape = _shape_arg("reshape", shape)
    n = x.numel()
    if shape.count(-1) > 1:
        raise ShapeError(f"reshape: only one dimension can be -1, got {shape}")
    if -1 in shape:
        known = 1
        for s in shape:
            known *= s if s != -1 else 1
        if known == 0 or n % known:
            raise ShapeError(f"reshape: shape {shape} is invalid for input of size {n} "
                             f"(shape {x.shape})")
        shape = tuple(n // known if s == -1 else s for s in shape)
    total = 1
    for s in shape:
        total *= s
    if total != n or any(s < 0 for s in shape):
        raise ShapeError(f"reshape: shape {shape} is invalid for input of size {n} "
                         f"(shape {x.shape})")
    if shape == tuple(x.array.shape):
        return x
    return Reshape.apply(x, shape=shape)


class Permute(Function):
    def forward(ctx, x, dims=()):
        ctx.dims = dims
        return ctx.xp.permute_dims(x, dims)

    def backward(ctx, g):
        inverse = [0] * len(ctx.dims)
        for i, d in enumerate(ctx.dims):
            inverse[d] = i
        return permute(g, tuple(inverse))


@tensor_method()
def permute(x: Tensor, *dims: int) -> Tensor:
    """Return a view of ``x`` with its dimensions reordered as ``dims``."""
    dims = _shape_arg("permute", dims)
    nd = x.ndim
    if len(dims) != nd:
        raise ShapeError(f"permute: got {len(dims)} dims {dims} for a tensor with {nd} dims")
    dims = tuple(normalize_dim("permute", d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise ShapeError(f"permute: dims {dims} repeat a dimension")
    if dims == tuple(range(nd)):
        return x
    return Permute.apply(x, dims=dims)


@tensor_method("transpose", "swapaxes")
def transpose(x: Tensor, dim0: int = -2, dim1: int = -1) -> Tensor:
    """Return ``x`` with dimensions ``dim0`` and ``dim1`` swapped."""
    nd = x.ndim
    if nd < 2 and (dim0, dim1) == (-2, -1):
        return x
    d0, d1 = normalize_dim("transpose", dim0, nd), normalize_dim("transpose", dim1, nd)
    dims = list(range(nd))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return permute(x, tuple(dims))


Tensor.mT = property(lambda self: transpose(self, -2, -1), doc="The last two dims swapped.")
Tensor.T = property(lambda self: permute(self, tuple(range(self.ndim - 1, -1, -1))),
                    doc="All dims reversed.")


def t(x: Tensor) -> Tensor:
    """Transpose of a tensor of at most 2 dims."""
    if x.ndim > 2:
        raise ShapeError(f"t: expected a tensor with <= 2 dims, got {x.ndim}")
    return transpose(x, 0, 1) if x.ndim == 2 else x


Tensor.t = t


class Expand(Function):
    def forward(ctx, x, shape=()):
        ctx.in_shape = x.shape
        return ctx.xp.broadcast_to(x, shape)

    def backward(ctx, g):
        return sum_to(g, ctx.in_shape)


@tensor_method("expand", "broadcast_to")
def expand(x: Tensor, *shape: int) -> Tensor:
    """Return ``x`` broadcast to ``shape`` (-1 keeps a dimension), without copying."""
    shape = _shape_arg("expand", shape)
    lead = len(shape) - x.ndim
    if lead < 0:
        raise ShapeError(f"expand: cannot expand shape {x.shape} to fewer dims {shape}")
    shape = tuple(x.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(shape))
    if broadcast_shapes("expand", x.shape, shape) != shape:
        raise ShapeError(f"expand: shape {x.shape} cannot be expanded to {shape}")
    if shape == x.shape:
        return x
    return Expand.apply(x, shape=shape)


def sum_to(x: Tensor, shape: Sequence[int]) -> Tensor:
    """Sum ``x`` over broadcast dimensions so that it has ``shape`` (the reverse of expand)."""
    shape = tuple(shape)
    xs = tuple(x.array.shape)
    if xs == shape:
        return x
    lead = len(xs) - len(shape)
    dims = tuple(range(lead)) + tuple(
        i + lead for i, s in enumerate(shape) if s == 1 and xs[i + lead] != 1)
    from .reduce import sum as _sum

    out = _sum(x, dims, keepdim=True) if dims else x
    return reshape(out, shape)


@tensor_method()
def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """Insert a dimension of size 1 at ``dim``."""
    d = normalize_dim("unsqueeze", dim, x.ndim + 1)
    shape = list(x.shape)
    shape.insert(d, 1)
    return reshape(x, tuple(shape))


@tensor_method()
def squeeze(x: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Remove dimensions of size 1 (all of them, or those in ``dim``)."""
    shape = x.shape
    if dim is None:
        dims = {i for i, s in enumerate(shape) if s == 1}
    else:
        dims = {normalize_dim("squeeze", d, x.ndim)
                for d in ((dim,) if isinstance(dim, int) else dim)}
        dims = {d for d in dims if shape[d] == 1}
    return reshape(x, tuple(s for i, s in enumerate(shape) if i not in dims))


@tensor_method()
def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions ``start_dim`` to ``end_dim`` into one."""
    if x.ndim == 0:
        return reshape(x, (1,))
    s = normalize_dim("flatten", start_dim, x.ndim)
    e = normalize_dim("flatten", end_dim, x.ndim)
    if s > e:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    shape = x.shape
    n = 1
    for v in shape[s:e + 1]:
        n *= v
    return reshape(x, shape[:s] + (n,) + shape[e + 1:])

__all__ = ["reshape", "permute", "transpose", "t", "expand", "sum_to", "unsqueeze", "squeeze",
           "flatten"]
