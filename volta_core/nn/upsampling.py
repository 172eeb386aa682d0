"""Resizing: ``interpolate``, ``pixel_shuffle``/``pixel_unshuffle`` and their layers
(``Upsample`` and its 2-D shorthands, ``PixelShuffle``, ``PixelUnshuffle``)."""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import Any

from ..errors import DTypeError, ShapeError
from ..ops.indexing import index_select
from ..tensor import Tensor
from .module import Module


def _along(x: Tensor, dim: int, matrix: Tensor) -> Tensor:
    """Apply ``matrix`` (out, in) to dimension ``dim`` of ``x`` (size in -> out)."""
    moved = x.transpose(dim, -1)
    return (moved @ matrix.t()).transpose(dim, -1)


# -- pixel shuffle --------------------------------------------------------------------------


def _shuffle_factor(op: str, input: Tensor, factor: int, what: str) -> int:
    """Check the input rank and the factor shared by pixel_shuffle and pixel_unshuffle."""
    r = int(factor)
    if input.ndim < 3:
        raise ShapeError(f"{op}: expected an input with at least 3 dims (*, C, H, W), "
                         f"got shape {input.shape}")
    if r <= 0:
        raise ValueError(f"{op}: {what} must be positive, got {r}")
    return r


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearrange ``(*, C*r*r, H, W)`` into ``(*, C, H*r, W*r)``.

    Args:
        input: the tensor, with at least 3 dims.
        upscale_factor: the factor ``r`` by which to increase the spatial size.
    """
    r = _shuffle_factor("pixel_shuffle", input, upscale_factor, "upscale_factor")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise ShapeError(f"pixel_shuffle: the channel count {c} of input {input.shape} must be "
                         f"divisible by upscale_factor**2 = {r * r}")
    b = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.permute(*range(b), b, b + 3, b + 1, b + 4, b + 2)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Rearrange ``(*, C, H*r, W*r)`` into ``(*, C*r*r, H, W)`` (inverse of pixel_shuffle).

    Args:
        input: the tensor, with at least 3 dims.
        downscale_factor: the factor ``r`` by which to reduce the spatial size.
    """
    r = _shuffle_factor("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    *batch, c, h, w = input.shape
    if h % r or w % r:
        raise ShapeError(f"pixel_unshuffle: the spatial size {(h, w)} of input {input.shape} "
                         f"must be divisible by downscale_factor = {r}")
    b = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.permute(*range(b), b, b + 2, b + 4, b + 1, b + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)


# -- interpolate ----------------------------------------------------------------------------

_MODES = {"nearest": None, "nearest-exact": None, "area": None, "linear": 1, "bilinear": 2,
          "trilinear": 3, "bicubic": 2}


def _f32(x: float) -> float:
    """``x`` rounded to float32 (PyTorch computes source indices in float32)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _nearest_indices(n_in: int, n_out: int, f: float | None, exact: bool,
                     shortcuts: bool) -> list[int]:
    """Source index of every output: PyTorch's ``floorf((i [+ 0.5]) * scale)`` in float32,
    ``scale`` being ``1 / scale_factor`` (if given) or ``n_in / n_out``. ``shortcuts``
    (PyTorch's 2-D nearest kernel): an unchanged size copies, a doubled one halves."""
    if shortcuts and n_out == n_in:
        return list(range(n_out))
    if shortcuts and n_out == 2 * n_in:
        return [i >> 1 for i in range(n_out)]
    scale = _f32(1.0 / f) if f is not None else _f32(_f32(n_in) / n_out)
    off = 0.5 if exact else 0.0
    return [min(int(math.floor(_f32((i + off) * scale))), n_in - 1) for i in range(n_out)]


def _area_matrix(n_in: int, n_out: int) -> list[list[float]]:
    """Adaptive average pooling: output ``i`` averages its window of the input."""
    rows = []
    for i in range(n_out):
        start, end = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
        rows.append([1.0 / (end - start) if start <= j < end else 0.0 for j in range(n_in)])
    return rows


def _source(i: int, n_in: int, n_out: int, scale: float, align_corners: bool,
            cubic: bool) -> float:
    if align_corners:
        return i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    src = (i + 0.5) * scale - 0.5
    return src if cubic or src > 0 else 0.0


def _cubic_weights(t: float) -> list[float]:
    a = -0.75  # PyTorch's cubic convolution coefficient

    def near(x: float) -> float:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: float) -> float:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _antialias_matrix(n_in: int, n_out: int, scale: float, cubic: bool) -> list[list[float]]:
    """PyTorch's (and PIL's) antialiased resampling: each output averages the inputs under
    a triangle (bilinear) or Keys cubic (a = -0.5) filter stretched by the downscale
    factor, the weights normalised to sum to 1."""
    def tent(x: float) -> float:
        return max(0.0, 1.0 - abs(x))

    def keys(x: float) -> float:
        a, x = -0.5, abs(x)
        if x < 1.0:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2.0:
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return 0.0

    kernel, half = (keys, 2.0) if cubic else (tent, 1.0)
    support = half * scale if scale >= 1.0 else half
    inv = 1.0 / scale if scale >= 1.0 else 1.0
    rows = []
    for i in range(n_out):
        center = scale * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n_in)
        w = [kernel((j - center + 0.5) * inv) for j in range(lo, hi)]
        total = sum(w)
        row = [0.0] * n_in
        for j, wj in zip(range(lo, hi), w):
            row[j] = wj / total if total else wj
        rows.append(row)
    return rows


def _interp_matrix(n_in: int, n_out: int, scale: float, align_corners: bool,
                   cubic: bool) -> list[list[float]]:
    rows = []
    for i in range(n_out):
        row = [0.0] * n_in
        src = _source(i, n_in, n_out, scale, align_corners, cubic)
        i0 = int(math.floor(src))
        t = src - i0
        if cubic:
            for k, wk in enumerate(_cubic_weights(t)):
                row[min(max(i0 - 1 + k, 0), n_in - 1)] += wk
        else:
            i1 = min(i0 + 1, n_in - 1)
            row[i0] += 1.0 - t
            row[i1] += t
        rows.append(row)
    return rows


def _out_sizes(op: str, spatial: tuple, size: Any, scale_factor: Any,
               recompute: bool | None) -> tuple[list[int], list[float | None]]:
    n = len(spatial)
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{op}: give exactly one of size and scale_factor")
    if size is not None:
        sizes = [int(size)] * n if isinstance(size, int) else [int(s) for s in size]
        if len(sizes) != n:
            raise ShapeError(f"{op}: size {size} has {len(sizes)} entries but the input has "
                             f"{n} spatial dims {spatial}")
        return sizes, [None] * n
    factors = ([float(scale_factor)] * n if isinstance(scale_factor, (int, float))
               else [float(f) for f in scale_factor])
    if len(factors) != n:
        raise ShapeError(f"{op}: scale_factor {scale_factor} has {len(factors)} entries but "
                         f"the input has {n} spatial dims {spatial}")
    sizes = [int(math.floor(s * f)) for s, f in zip(spatial, factors)]
    return sizes, [None] * n if recompute else factors


def interpolate(input: Tensor, size: int | Sequence[int] | None = None,
                scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize the spatial dims of ``input`` (up or down sampling).

    Args:
        input: a tensor of shape ``(N, C, *spatial)`` with 1 to 3 spatial dims.
        size: the output spatial size (an int for all dims, or one per dim).
        scale_factor: multiplier of the spatial size (instead of ``size``).
        mode: ``'nearest'``, ``'nearest-exact'``, ``'area'``, ``'linear'`` (3-D input),
            ``'bilinear'`` / ``'bicubic'`` (4-D) or ``'trilinear'`` (5-D).
        align_corners: for the linear and cubic modes, map the corner pixels' centres onto
            each other (True) or their edges (False, the default).
        recompute_scale_factor: compute the coordinate scale from the output size instead
            of using ``scale_factor`` directly.
        antialias: for ``'bilinear'`` and ``'bicubic'``, low-pass filter as PIL does when
            downsampling (each output averages every input its stretched filter covers).

    Shape:
        - Input: ``(N, C, *spatial_in)``.
        - Output: ``(N, C, *spatial_out)``.
    """
    op = "interpolate"
    if mode not in _MODES:
        raise ValueError(f"{op}: unknown mode {mode!r}; expected one of {sorted(_MODES)}")
    if input.ndim not in (3, 4, 5):
        raise ShapeError(f"{op}: expected a 3-D, 4-D or 5-D input (N, C, *spatial), got shape "
                         f"{input.shape}")
    dims = _MODES[mode]
    if dims is not None and input.ndim - 2 != dims:
        raise ShapeError(f"{op}: mode {mode!r} expects {dims} spatial dim(s) "
                         f"(a {dims + 2}-D input), got shape {input.shape}")
    if dims is None and align_corners is not None:
        raise ValueError(f"{op}: align_corners only applies to the linear and cubic modes, "
                         f"not {mode!r}; leave it as None")
    if antialias and mode not in ("bilinear", "bicubic"):
        raise ValueError(f"{op}: antialias only applies to the 'bilinear' and 'bicubic' "
                         f"modes, not {mode!r}")
    if not input.dtype.is_floating_point:
        raise DTypeError(f"{op}: expected a floating point input, got {input.dtype.name}")
    if input.dtype.itemsize == 2 and mode not in ("nearest", "nearest-exact"):
        # weighted sums in float32 (the weights too), rounded once, as PyTorch's kernels
        return interpolate(input.float(), size, scale_factor, mode, align_corners,
                           recompute_scale_factor, antialias).to(input.dtype)
    spatial = input.shape[2:]
    sizes, factors = _out_sizes(op, spatial, size, scale_factor, recompute_scale_factor)
    if any(s < 0 or s == 0 and mode != "area" for s in sizes):  # area gives empty outputs
        raise ShapeError(f"{op}: output size {tuple(sizes)} must be positive (input {spatial})")
    # PyTorch's CPU kernels copy a dim whose size is unchanged, whatever the scale factor,
    # in the linear modes, with antialias and in the 2-D nearest mode (not bicubic's)
    copies = mode in ("linear", "bilinear", "trilinear") or antialias or (
        mode == "nearest" and len(spatial) == 2)
    out = input
    for d, (n_in, n_out, f) in enumerate(zip(spatial, sizes, factors)):
        if n_in == n_out and (f is None or f == 1.0 or copies):
            continue
        if mode == "area":
            matrix = out.new_tensor(_area_matrix(n_in, n_out)).reshape(n_out, n_in)
            out = _along(out, d + 2, matrix)
            continue
        scale = 1.0 / f if f is not None else n_in / n_out
        if dims is None:
            idx = _nearest_indices(n_in, n_out, f, mode == "nearest-exact", copies)
            index = out.new_tensor(idx, dtype="int64")
            out = index_select(out, d + 2, index)
        elif antialias:
            if align_corners:
                scale = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
            rows = _antialias_matrix(n_in, n_out, scale, mode == "bicubic")
            out = _along(out, d + 2, out.new_tensor(rows))
        else:
            rows = _interp_matrix(n_in, n_out, scale, bool(align_corners), mode == "bicubic")
            out = _along(out, d + 2, out.new_tensor(rows))
    return out


# -- layers -------------------------------------------------------------------------------

class PixelShuffle(Module):
    """Rearrange ``(*, C*r*r, H, W)`` into ``(*, C, H*r, W*r)`` (sub-pixel convolution).

    Args:
        upscale_factor: the factor ``r`` by which to increase the spatial size.

    Shape:
        - Input: ``(*, C * r^2, H, W)``.
        - Output: ``(*, C, H * r, W * r)``.
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """Rearrange ``(*, C, H*r, W*r)`` into ``(*, C*r*r, H, W)``, reversing PixelShuffle.

    Args:
        downscale_factor: the factor ``r`` by which to reduce the spatial size.

    Shape:
        - Input: ``(*, C, H * r, W * r)``.
        - Output: ``(*, C * r^2, H, W)``.
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class Upsample(Module):
    """Resize 1-D, 2-D or 3-D data to a given size or by a scale factor.

    Args:
        size: the output spatial size (one int for every dim, or one per dim).
        scale_factor: multiplier of the spatial size (instead of ``size``).
        mode: ``'nearest'``, ``'nearest-exact'``, ``'linear'``, ``'bilinear'``,
            ``'bicubic'`` or ``'trilinear'``.
        align_corners: for the linear and cubic modes, align the corner pixels' centres
            (True) or edges (False when None).
        recompute_scale_factor: derive the coordinate scale from the output size.

    Shape:
        - Input: ``(N, C, W)``, ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
        - Output: the same with resized spatial dims, ``floor(size * scale_factor)``.
    """

    def __init__(self, size: int | Sequence[int] | None = None,
                 scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.size = size
        self.scale_factor = (float(scale_factor) if isinstance(scale_factor, (int, float))
                             else scale_factor)
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        try:
            return interpolate(input, self.size, self.scale_factor, self.mode,
                               self.align_corners, self.recompute_scale_factor)
        except ValueError as err:  # ShapeError included: name the layer, keep the type
            raise type(err)(f"{type(self).__name__}: {err}") from None

    def extra_repr(self) -> str:
        what = (f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None
                else f"size={self.size!r}")
        return f"{what}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """2-D nearest-neighbour upsampling (``Upsample(mode='nearest')`` for 4-D input).

    Args:
        size: the output size ``(H_out, W_out)`` (or one int for both).
        scale_factor: multiplier of the spatial size (instead of ``size``).

    Shape:
        - Input: ``(N, C, H, W)``; Output: ``(N, C, H_out, W_out)``.
    """

    def __init__(self, size: int | Sequence[int] | None = None,
                 scale_factor: float | Sequence[float] | None = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """2-D bilinear upsampling with ``align_corners=True``.

    Args:
        size: the output size ``(H_out, W_out)`` (or one int for both).
        scale_factor: multiplier of the spatial size (instead of ``size``).

    Shape:
        - Input: ``(N, C, H, W)``; Output: ``(N, C, H_out, W_out)``.
    """

    def __init__(self, size: int | Sequence[int] | None = None,
                 scale_factor: float | Sequence[float] | None = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


__all__ = ["interpolate", "pixel_shuffle", "pixel_unshuffle", "PixelShuffle", "PixelUnshuffle",
           "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
