"""Reordering, repeating, joining and splitting: flip, roll, repeat/tile, cat, stack, split.

Re-exported by ``movement`` (``from volta_core.ops.movement import cat`` keeps working).
``split``, ``chunk`` and ``unbind`` return views; the others return copies.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..amp.dispatch import autocast_op
from ..autograd.function import Function
from ..dtypes import promote_types
from ..errors import ShapeError
from ..tensor import Tensor, tensor_method
from ..views import layout, make_view, mark_multi
from ._util import normalize_dim
from .movement import Reshape, _shape_arg, clone, narrow, reshape, select

# -- reordering and repeating -------------------------------------------------------------

class Flip(Function):
    def forward(ctx, x, dims=()):
        ctx.dims = dims
        return ctx.xp.asarray(ctx.xp.flip(x, axis=dims), copy=True)  # a copy, as in PyTorch

    def backward(ctx, g):
        return Flip.apply(g, dims=ctx.dims)


@tensor_method()
def flip(x: Tensor, dims: int | Sequence[int]) -> Tensor:
    """Reverse the order of elements along ``dims`` (a copy)."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    dims = tuple(sorted({normalize_dim("flip", d, x.ndim) for d in dims}))
    if not dims or x.ndim == 0:
        return clone(x)
    return Flip.apply(x, dims=dims)


class Roll(Function):
    def forward(ctx, x, shifts=(), dims=None):
        ctx.shifts, ctx.dims = shifts, dims
        return ctx.xp.roll(x, shifts, axis=dims)

    def backward(ctx, g):
        return Roll.apply(g, shifts=tuple(-s for s in ctx.shifts), dims=ctx.dims)


@tensor_method()
def roll(x: Tensor, shifts: int | Sequence[int],
         dims: int | Sequence[int] | None = None) -> Tensor:
    """Shift elements along ``dims`` cyclically (over the flattened tensor when None)."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if not shifts:
        raise ShapeError("roll: shifts required (got an empty sequence), as in PyTorch")
    if dims is None:
        if len(shifts) != 1:
            raise ShapeError(f"roll: {len(shifts)} shifts need as many dims, got dims=None")
        return Roll.apply(x, shifts=shifts, dims=None)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise ShapeError(f"roll: got {len(shifts)} shifts for {len(dims)} dims")
    if x.numel() == 0:  # PyTorch returns a copy before it looks at the dims
        return clone(x)
    dims = tuple(normalize_dim("roll", d, x.ndim) for d in dims)
    return Roll.apply(x, shifts=shifts, dims=dims)


class Repeat(Function):
    def forward(ctx, x, reps=()):
        ctx.in_shape, ctx.reps = x.shape, reps
        return ctx.xp.tile(x, reps)

    def backward(ctx, g):
        inter = []
        for r, s in zip(ctx.reps, ctx.in_shape):
            inter += [r, s]
        return g.reshape(tuple(inter)).sum(tuple(range(0, len(inter), 2)))


@tensor_method()
def repeat(x: Tensor, *sizes: int) -> Tensor:
    """Tile ``x`` ``sizes[d]`` times along each dim (``sizes`` may add leading dims)."""
    if not sizes:
        raise TypeError("repeat() missing 1 required positional argument: 'repeats' (pass () "
                        "for a 0-d tensor)")
    reps = _shape_arg("repeat", sizes)
    if len(reps) < x.ndim or any(r < 0 for r in reps):
        raise ShapeError(f"repeat: expected at least {x.ndim} non-negative repeats for "
                         f"shape {x.shape}, got {reps}")
    x = reshape(x, (1,) * (len(reps) - x.ndim) + x.shape)
    if all(r == 1 for r in reps):
        return clone(x)
    return Repeat.apply(x, reps=reps)


@tensor_method()
def tile(x: Tensor, dims: Sequence[int]) -> Tensor:
    """Like :func:`repeat`, but ``dims`` shorter than ``x.ndim`` is padded with ones."""
    dims = _shape_arg("tile", tuple(dims))
    return repeat(x, (1,) * (x.ndim - len(dims)) + dims)


# -- joining and splitting ----------------------------------------------------------------

class Cat(Function):
    def forward(ctx, *xs, dim=0):
        ctx.dim, ctx.sizes = dim, [x.shape[dim] for x in xs]
        return ctx.xp.concat(xs, axis=dim)

    def backward(ctx, g):
        out, start = [], 0
        for size, need in zip(ctx.sizes, ctx.needs_input_grad):
            out.append(narrow(g, ctx.dim, start, size) if need else None)
            start += size
        return tuple(out)


def _common(op: str, tensors: Sequence[Tensor]) -> list[Tensor]:
    tensors = list(tensors)
    if not tensors:
        raise ShapeError(f"{op}: expected a non-empty sequence of tensors")
    for i, t in enumerate(tensors):
        if type(t) is not Tensor:
            raise TypeError(f"{op}: element {i} is a {type(t).__name__}, not a Tensor")
    dt = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not dt:
            dt = promote_types(dt, t.dtype)
    return [t if t.dtype is dt else t.to(dt) for t in tensors]


@autocast_op("cat")
def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension ``dim``.

    Args:
        tensors: tensors of the same shape except in ``dim`` (1-D empty ones are skipped).
        dim: the dimension to join along.
    """
    tensors = _common("cat", tensors)
    full = [t for t in tensors if t.shape != (0,)]
    if not full:  # a new tensor, as PyTorch's (never an input itself: writes would alias)
        return Cat.apply(*tensors, dim=0)
    ref = full[0]
    if ref.ndim == 0:
        raise ShapeError("cat: zero-dimensional tensors cannot be concatenated; use stack")
    d = normalize_dim("cat", dim, ref.ndim)
    for i, t in enumerate(full):
        if t.ndim != ref.ndim or any(a != b for k, (a, b) in enumerate(zip(t.shape, ref.shape))
                                     if k != d):
            raise ShapeError(f"cat: sizes of tensors must match except in dimension {dim}; "
                             f"got shapes {ref.shape} and {t.shape} (tensor {i})")
    return Cat.apply(*full, dim=d)  # one part too: a copy, as PyTorch's


concat = concatenate = cat


class Stack(Function):
    def forward(ctx, *xs, dim=0):
        ctx.dim = dim
        return ctx.xp.stack(xs, axis=dim)

    def backward(ctx, g):
        return tuple(select(g, ctx.dim, i) if need else None
                     for i, need in enumerate(ctx.needs_input_grad))


@autocast_op("stack")
def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors of equal shape along a new dimension ``dim``."""
    tensors = _common("stack", tensors)
    ref = tensors[0].shape
    for i, t in enumerate(tensors):
        if t.shape != ref:
            raise ShapeError(f"stack: expects tensors of equal size, got {ref} at entry 0 "
                             f"and {t.shape} at entry {i}")
    return Stack.apply(*tensors, dim=normalize_dim("stack", dim, len(ref) + 1))


@tensor_method()
def split(x: Tensor, split_size_or_sections: int | Sequence[int],
          dim: int = 0) -> tuple[Tensor, ...]:
    """Split ``x`` into views along ``dim``: chunks of a size, or of the sizes listed."""
    d = normalize_dim("split", dim, x.ndim)
    n = x.shape[d]
    if isinstance(split_size_or_sections, int):
        size = split_size_or_sections
        if size < 0 or (size == 0 and n):
            raise ShapeError(f"split: split_size must be positive, got {size}")
        sizes = [min(size, n - s) for s in range(0, n, size)] if n else [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise ShapeError(f"split: sizes {sizes} must be non-negative and sum to {n}, the "
                             f"size of dimension {dim} of shape {x.shape}")
    out, start = [], 0
    for s in sizes:
        piece = narrow(x, d, start, s)
        if piece is x:  # one piece of all of x: still a view, as in PyTorch
            strides, offset = layout(x)
            piece = make_view(Reshape.apply(x, shape=x.shape), x, strides, offset)
        out.append(piece)
        start += s
    return mark_multi(tuple(out))


@tensor_method()
def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """Split ``x`` into at most ``chunks`` views of equal size along ``dim`` (last smaller)."""
    if chunks <= 0:
        raise ShapeError(f"chunk: chunks must be positive, got {chunks}")
    d = normalize_dim("chunk", dim, x.ndim)
    n = x.shape[d]
    if not n:  # as PyTorch: ``chunks`` empty pieces
        return mark_multi(tuple(narrow(x, d, 0, 0) for _ in range(chunks)))
    return split(x, -(-n // chunks), dim)


@tensor_method()
def unbind(x: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """Return the slices of ``x`` along ``dim``, that dim removed."""
    d = normalize_dim("unbind", dim, x.ndim)
    return mark_multi(tuple(select(x, d, i) for i in range(x.shape[d])))


__all__ = ["flip", "roll", "repeat", "tile", "cat", "concat", "concatenate", "stack", "split",
           "chunk", "unbind"]
