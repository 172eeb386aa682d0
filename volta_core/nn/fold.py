"""Sliding blocks: ``unfold`` (im2col: every ``kH x kW`` block of an image as a column) and
its adjoint ``fold`` (col2im: sum the blocks back into an image), with their modules.

Both are built from strided slices, padding and stacking, so autograd derives their
backward (each is the other's gradient) on every backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import ShapeError
from ..ops.joining import stack
from ..ops.movement import pad
from ..tensor import Tensor
from ._checks import _check_tensor, _pair
from .module import Module


def _args(op: str, kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> tuple:
    k, d = _pair(op, kernel_size, "kernel_size"), _pair(op, dilation, "dilation")
    p, s = _pair(op, padding, "padding"), _pair(op, stride, "stride")
    if min(k) < 1 or min(d) < 1 or min(s) < 1 or min(p) < 0:
        raise ValueError(f"{op}: kernel_size, dilation and stride must be positive and "
                         f"padding non-negative, got {k}, {d}, {p}, {s}")
    return k, d, p, s


def _blocks(op: str, size: tuple, k: tuple, d: tuple, p: tuple, s: tuple) -> tuple[int, int]:
    out = tuple((size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2))
    if min(out) < 1:
        raise ShapeError(f"{op}: the {size} input (padding {p}) holds no {k} block with "
                         f"dilation {d}; use a larger input or more padding")
    return out


def unfold(input: Tensor, kernel_size: int | Sequence[int], dilation: int | Sequence[int] = 1,
           padding: int | Sequence[int] = 0, stride: int | Sequence[int] = 1) -> Tensor:
    """Extract sliding blocks: ``(N, C, H, W)`` -> ``(N, C * kH * kW, L)``.

    Args:
        input: ``(N, C, H, W)`` or unbatched ``(C, H, W)``.
        kernel_size: the block size.
        dilation: spacing of the taps in a block.
        padding: implicit zero padding on both sides.
        stride: step between blocks.

    Shape:
        Output ``(N, C * kH * kW, L)`` with ``L`` the number of blocks; column ``l`` holds
        block ``l`` (row-major over the block grid), channel-major then row-major taps.
    """
    op = "unfold"
    _check_tensor(op, input)
    if input.ndim not in (3, 4):
        raise ShapeError(f"{op}: Input Error: Only 3D or 4D input Tensors are supported "
                         f"(got {input.ndim}D)")
    k, d, p, s = _args(op, kernel_size, dilation, padding, stride)
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    oh, ow = _blocks(op, tuple(x.shape[2:]), k, d, p, s)
    if any(p):
        x = pad(x, (p[1], p[1], p[0], p[0]))
    taps = []
    for i in range(k[0]):
        for j in range(k[1]):
            r, c = i * d[0], j * d[1]
            taps.append(x[:, :, r:r + s[0] * (oh - 1) + 1:s[0], c:c + s[1] * (ow - 1) + 1:s[1]])
    n, ch = x.shape[0], x.shape[1]
    out = stack(taps, 2).reshape(n, ch * k[0] * k[1], oh * ow)
    return out.squeeze(0) if unbatched else out


def _spread(x: Tensor, dim: int, step: int, length: int) -> Tensor:
    """Put the entries of ``x`` along ``dim`` every ``step`` places (zeros between), then
    zero-pad that dim to ``length``."""
    n = x.shape[dim]
    if step > 1 and n > 1:
        x = x.unsqueeze(dim + 1)
        amounts = [0, 0] * (x.ndim - dim - 2) + [0, step - 1]
        x = pad(x, amounts)
        shape = list(x.shape)
        shape[dim:dim + 2] = [n * step]
        x = x.reshape(*shape)
        x = x.narrow(dim, 0, (n - 1) * step + 1)
    extra = length - x.shape[dim]
    return pad(x, [0, 0] * (x.ndim - dim - 1) + [0, extra]) if extra else x


def fold(input: Tensor, output_size: int | Sequence[int], kernel_size: int | Sequence[int],
         dilation: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
         stride: int | Sequence[int] = 1) -> Tensor:
    """Sum sliding blocks back into an image: ``(N, C * kH * kW, L)`` -> ``(N, C, H, W)``
    (the adjoint of :func:`unfold`; overlapping blocks add up).

    Args:
        input: ``(N, C * kH * kW, L)`` or unbatched ``(C * kH * kW, L)``.
        output_size: ``(H, W)`` of the image.
        kernel_size, dilation, padding, stride: as in :func:`unfold`.
    """
    op = "fold"
    _check_tensor(op, input)
    if input.ndim not in (2, 3):
        raise ShapeError(f"{op}: Input Error: Only unbatched (2D) or batched (3D) input "
                         f"Tensors are supported (got {input.ndim}D)")
    size = _pair(op, output_size, "output_size")
    k, d, p, s = _args(op, kernel_size, dilation, padding, stride)
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    n, rows, blocks = x.shape
    if rows % (k[0] * k[1]):
        raise ShapeError(f"{op}: Expected size of input's dimension 1 to be divisible by the "
                         f"product of kernel_size, but got input.size(1)={rows} and "
                         f"kernel_size={k}")
    oh, ow = _blocks(op, size, k, d, p, s)
    if blocks != oh * ow:
        raise ShapeError(f"{op}: Given output_size={size}, kernel_size={k}, dilation={d}, "
                         f"padding={p}, stride={s}, expected size of input's dimension 2 to "
                         f"match the calculated number of sliding blocks {oh} * {ow} = "
                         f"{oh * ow}, but got input.size(2)={blocks}.")
    ch = rows // (k[0] * k[1])
    cols = x.reshape(n, ch, k[0] * k[1], oh, ow)
    ph, pw = size[0] + 2 * p[0], size[1] + 2 * p[1]
    out = None
    for i in range(k[0]):
        for j in range(k[1]):
            tap = cols[:, :, i * k[1] + j]
            tap = _spread(tap, 2, s[0], ph - i * d[0])
            tap = _spread(tap, 3, s[1], pw - j * d[1])
            tap = pad(tap, (j * d[1], 0, i * d[0], 0))
            out = tap if out is None else out + tap
    out = out[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]]
    return out.squeeze(0) if unbatched else out


class Unfold(Module):
    """Extract sliding blocks; see :func:`unfold`."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """Sum sliding blocks back into an image; see :func:`fold`."""

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1,
                 padding: Any = 0, stride: Any = 1) -> None:
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


__all__ = ["Unfold", "Fold"]
