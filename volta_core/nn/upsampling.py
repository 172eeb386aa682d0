"""Resizing layers: ``Upsample`` and its 2-D shorthands, ``PixelShuffle``, ``PixelUnshuffle``."""

from __future__ import annotations

from collections.abc import Sequence

from ..tensor import Tensor
from .functional_seq import interpolate, pixel_shuffle, pixel_unshuffle
from .module import Module


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


__all__ = ["PixelShuffle", "PixelUnshuffle", "Upsample", "UpsamplingNearest2d",
           "UpsamplingBilinear2d"]
