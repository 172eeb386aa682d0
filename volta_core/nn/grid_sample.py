"""Sampling an image at given points: ``affine_grid`` (the points of an affine map) and
``grid_sample`` (bilinear, nearest or bicubic reads at those points), as in spatial
transformer networks and flow warping.

Written with Tensor ops: each corner (or cubic tap) is a ``gather`` from the flattened
image, weighted by its interpolation weight, so the gradients to the image (a scatter of
the weights) and to the grid (through the weights) are autograd's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..autograd.zero_gradient import zero_grad_to
from ..creation import arange
from ..errors import DTypeError, ShapeError
from ..ops.elementwise import where
from ..ops.movement import stack
from ..tensor import Tensor
from ._checks import _check_tensor

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def _base_coords(n: int, align_corners: bool, like: Tensor) -> Tensor:
    """The ``n`` pixel centres of one dim in [-1, 1] (its corner pixels' centres at -1 and 1
    with ``align_corners``, else its edges)."""
    i = arange(n, dtype=like.dtype, device=like.device)
    if align_corners:
        return i * (2.0 / (n - 1)) - 1.0 if n > 1 else i * 0.0
    return (i * 2.0 + 1.0) / n - 1.0


def affine_grid(theta: Tensor, size: Sequence[int], align_corners: bool = False) -> Tensor:
    """The sampling grid of the affine maps ``theta`` for outputs of ``size``.

    Args:
        theta: ``(N, 2, 3)`` for 2-D outputs, ``(N, 3, 4)`` for 3-D.
        size: the output size ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
        align_corners: as in :func:`grid_sample`.

    Returns:
        ``(N, H, W, 2)`` or ``(N, D, H, W, 3)`` points (x, y[, z]) in [-1, 1] coordinates.
    """
    _check_tensor("affine_grid", theta)
    size = tuple(int(s) for s in size)
    if not theta.dtype.is_floating_point:
        raise DTypeError(f"affine_grid: expected a floating point theta, got {theta.dtype.name}")
    nd = len(size) - 2
    if nd not in (2, 3) or tuple(theta.shape) != (size[0], nd, nd + 1):
        raise ShapeError(f"affine_grid: expected theta of shape (N, 2, 3) for a 4-D size or "
                         f"(N, 3, 4) for a 5-D size, got theta {theta.shape} and size {size}")
    if min(size[2:]) <= 0:
        raise ShapeError(f"affine_grid: expected a positive output size, got {size}")
    spatial = size[2:]
    # coordinates x (last dim), y, z, then a 1 for the translation
    axes = [_base_coords(n, align_corners, theta) for n in reversed(spatial)]
    shape = spatial
    parts = []
    for k, ax in enumerate(axes):  # ax runs along spatial dim nd - 1 - k
        view = [1] * nd
        view[nd - 1 - k] = shape[nd - 1 - k]
        parts.append(ax.reshape(*view).expand(*shape))
    parts.append(theta.new_ones(shape))
    base = stack(parts, -1).reshape(1, -1, nd + 1)  # (1, prod(spatial), nd + 1)
    grid = base @ theta.transpose(1, 2)  # (N, prod(spatial), nd)
    return grid.reshape(size[0], *spatial, nd)


def _unnormalize(coord: Tensor, n: int, align_corners: bool) -> Tensor:
    if align_corners:
        return (coord + 1.0) * ((n - 1) / 2.0)
    return ((coord + 1.0) * n - 1.0) / 2.0


def _reflect(x: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """Reflect ``x`` into [twice_low / 2, twice_high / 2] (PyTorch's reflect_coordinates)."""
    if twice_low == twice_high:
        return x * 0.0
    low, span = twice_low / 2.0, (twice_high - twice_low) / 2.0
    x = (x - low).abs()
    extra = x.fmod(span)
    flips = (x / span).floor()
    return where(flips.fmod(2.0) == 0.0, extra + low, span - extra + low)


def _pad_coord(x: Tensor, n: int, padding_mode: str, align_corners: bool) -> Tensor:
    """Apply ``border``/``reflection`` to an unnormalised coordinate (``zeros``: as is)."""
    if padding_mode == "zeros":
        return x
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (n - 1)) if align_corners else _reflect(x, -1, 2 * n - 1)
    # clipped, with PyTorch's gradient: none on the edges themselves either
    return where((x > 0.0) & (x < n - 1.0), x, x.clamp(0.0, n - 1.0).detach())


def _read(flat: Tensor, spatial: tuple, idx: list[Tensor]) -> Tensor:
    """``flat`` ``(N, C, prod(spatial))`` at integer float coordinates ``idx`` (one per
    spatial dim, each ``(N, *out)``); 0 where a coordinate is outside."""
    n, c = flat.shape[:2]
    inside = None
    lin = None
    for coord, size in zip(idx, spatial):
        ok = (coord >= 0) & (coord <= size - 1)
        inside = ok if inside is None else inside & ok
        k = coord.clamp(0, size - 1).long()
        lin = k if lin is None else lin * size + k
    out_shape = lin.shape[1:]
    lin = lin.reshape(n, 1, -1).expand(n, c, lin[0].numel())
    vals = flat.gather(2, lin).reshape(n, c, *out_shape)
    return vals * inside.unsqueeze(1).to(flat.dtype)


def _cubic(t: Tensor) -> list[Tensor]:
    """The four cubic-convolution weights (a = -0.75) of taps at -1, 0, 1, 2 from ``t``."""
    a = -0.75

    def near(x: Tensor) -> Tensor:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Tensor) -> Tensor:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` at the points of ``grid``.

    Args:
        input: ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
        grid: ``(N, H_out, W_out, 2)`` or ``(N, D_out, H_out, W_out, 3)`` points (x, y[, z])
            in [-1, 1]: -1 is the left (top, front) edge of the input, 1 the right.
        mode: ``'bilinear'`` (trilinear for 5-D), ``'nearest'`` or ``'bicubic'`` (4-D).
        padding_mode: values outside the input: ``'zeros'``, ``'border'`` (the edge
            value) or ``'reflection'`` (mirrored about the edges).
        align_corners: -1 and 1 are the centres of the corner pixels (True) or their
            outer edges (False, the default).

    Shape:
        Output ``(N, C, H_out, W_out)`` or ``(N, C, D_out, H_out, W_out)``.
    """
    op = "grid_sample"
    _check_tensor(op, input)
    _check_tensor(op, grid)
    if mode not in _MODES:
        raise ValueError(f"{op}: mode must be one of {_MODES}, got {mode!r}")
    if padding_mode not in _PADDINGS:
        raise ValueError(f"{op}: padding_mode must be one of {_PADDINGS}, got {padding_mode!r}")
    if not (input.dtype.is_floating_point and grid.dtype == input.dtype):
        raise DTypeError(f"{op}: expected floating input and grid of one dtype, got "
                         f"{input.dtype.name} and {grid.dtype.name}")
    nd = input.ndim - 2
    if nd not in (2, 3) or grid.ndim != nd + 2 or grid.shape[-1] != nd or \
            grid.shape[0] != input.shape[0]:
        raise ShapeError(f"{op}: expected a 4-D input with an (N, H, W, 2) grid or a 5-D "
                         f"input with an (N, D, H, W, 3) grid, got input {input.shape} and "
                         f"grid {grid.shape}")
    if mode == "bicubic" and nd != 2:
        raise ShapeError(f"{op}: bicubic sampling takes a 4-D input, got {input.shape}")
    if input.device != grid.device:
        from ..errors import DeviceError
        raise DeviceError(f"{op}: input on {input.device} and grid on {grid.device}")
    align = bool(align_corners)
    spatial = tuple(input.shape[2:])
    flat = input.reshape(input.shape[0], input.shape[1], math.prod(spatial))
    # grid component k is the coordinate of spatial dim nd - 1 - k (x is the last dim)
    coords = [_unnormalize(grid[..., nd - 1 - d], spatial[d], align) for d in range(nd)]
    if mode == "bicubic":  # padding applies to every tap, not to the point
        floors = [c.floor() for c in coords]
        weights = [_cubic(c - f) for c, f in zip(coords, floors)]
        out = None
        for i in range(4):
            y = _pad_coord(floors[0] + (i - 1), spatial[0], padding_mode, align)
            for j in range(4):
                x = _pad_coord(floors[1] + (j - 1), spatial[1], padding_mode, align)
                w = (weights[0][i] * weights[1][j]).unsqueeze(1)
                term = _read(flat, spatial, [y, x]) * w
                out = term if out is None else out + term
        return out
    coords = [_pad_coord(c, n, padding_mode, align) for c, n in zip(coords, spatial)]
    if mode == "nearest":
        out = _read(flat, spatial, [c.round() for c in coords])
        # the grid's gradient is zeros (PyTorch's), not None
        return zero_grad_to(out, grid)
    floors = [c.floor() for c in coords]
    fracs = [c - f for c, f in zip(coords, floors)]
    out = None
    for corner in range(2 ** nd):  # every corner of the cell around the point
        idx, w = [], None
        for d in range(nd):
            up = (corner >> (nd - 1 - d)) & 1
            idx.append(floors[d] + up)
            wd = fracs[d] if up else 1.0 - fracs[d]
            w = wd if w is None else w * wd
        term = _read(flat, spatial, idx) * w.unsqueeze(1)
        out = term if out is None else out + term
    return out
