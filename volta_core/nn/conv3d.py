"""3-D convolutions: ``conv3d``, ``conv_transpose3d``, ``Conv3d``, ``ConvTranspose3d``.

Both run as 2-D convolutions (the ``conv2d`` kernel) with the depth folded into the
batch, one per depth tap of the kernel, summed: no new kernel is needed, so every backend
gets them, with autograd through the 2-D ops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import ShapeError
from ..ops.movement import pad
from ..tensor import Tensor
from ._checks import _check_rank, _check_same, _check_tensor, _ntuple
from .conv import _ConvNd, conv2d, conv_transpose2d


def _check(op: str, input: Tensor, weight: Tensor, bias: Tensor | None, layout: str
           ) -> tuple[Tensor, bool]:
    _check_tensor(op, input)
    _check_rank(op, input, (4, 5), "(N, C, D, H, W)")
    if weight.ndim != 5:
        raise ShapeError(f"{op}: weight must be 5-D {layout}, got shape {weight.shape}")
    unbatched = input.ndim == 4
    x = input.unsqueeze(0) if unbatched else input
    _check_same(op, x, weight, bias)
    return x, unbatched


def _same_pads(op: str, padding: Any, kernel: tuple, dilation: tuple, stride: tuple) -> list:
    """``(lo, hi)`` per spatial dim for padding ints, ``'valid'`` or ``'same'``."""
    if isinstance(padding, str):
        if padding == "valid":
            return [(0, 0)] * 3
        if padding != "same":
            raise ValueError(f"{op}: padding must be 'valid', 'same', an int or a tuple, "
                             f"got {padding!r}")
        if any(s != 1 for s in stride):
            raise ValueError(f"{op}: padding='same' is not supported for strided "
                             f"convolutions (stride={stride}); pass explicit padding")
        return [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2)
                for k, d in zip(kernel, dilation)]
    p = _ntuple(op, padding, 3, "padding")
    if min(p) < 0:
        raise ValueError(f"{op}: padding must be non-negative, got {padding!r}")
    return [(v, v) for v in p]


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
           stride: int | Sequence[int] = 1, padding: int | Sequence[int] | str = 0,
           dilation: int | Sequence[int] = 1, groups: int = 1) -> Tensor:
    """3-D convolution (cross-correlation) over an ``(N, C, D, H, W)`` input.

    Args:
        input: ``(N, C_in, D, H, W)`` or unbatched ``(C_in, D, H, W)``.
        weight: ``(C_out, C_in / groups, kD, kH, kW)``.
        bias: optional ``(C_out,)``.
        stride, padding, dilation: ints or triples; padding may be ``'valid'``/``'same'``.
        groups: split channels into this many independent groups.

    Shape:
        Output ``(N, C_out, D_out, H_out, W_out)``, each
        ``(size + 2 * pad - dilation * (k - 1) - 1) // stride + 1``.
    """
    op = "conv3d"
    x, unbatched = _check(op, input, weight, bias, "(C_out, C_in/groups, kD, kH, kW)")
    s, d = _ntuple(op, stride, 3, "stride"), _ntuple(op, dilation, 3, "dilation")
    if min(s) < 1 or min(d) < 1:
        raise ValueError(f"{op}: stride and dilation must be >= 1, got {s}, {d}")
    if groups < 1 or x.shape[1] != weight.shape[1] * groups:
        raise ShapeError(f"{op}: input of shape {input.shape} has {x.shape[1]} channels but "
                         f"weight {weight.shape} with groups={groups} expects "
                         f"{weight.shape[1] * groups}")
    kernel = tuple(weight.shape[2:])
    pads = _same_pads(op, padding, kernel, d, s)
    flat = [a for lo_hi in reversed(pads) for a in lo_hi]
    if any(flat):
        x = pad(x, flat)
    n, c, depth, h, w = x.shape
    for size, k, dd, axis in zip(x.shape[2:], kernel, d, "DHW"):
        if size < dd * (k - 1) + 1:
            raise ShapeError(f"{op}: padded input size {tuple(x.shape[2:])} is smaller than "
                             f"the dilated kernel {kernel} along {axis}; use a larger input "
                             "or more padding")
    d_out = (depth - d[0] * (kernel[0] - 1) - 1) // s[0] + 1
    out = None
    for kd in range(kernel[0]):
        start = kd * d[0]
        xs = x[:, :, start:start + s[0] * (d_out - 1) + 1:s[0]]
        xs = xs.permute(0, 2, 1, 3, 4).reshape(n * d_out, c, h, w)
        y = conv2d(xs, weight[:, :, kd], None, s[1:], 0, d[1:], groups)
        out = y if out is None else out + y
    out = out.reshape(n, d_out, *out.shape[1:]).permute(0, 2, 1, 3, 4)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
                     output_padding: int | Sequence[int] = 0, groups: int = 1,
                     dilation: int | Sequence[int] = 1) -> Tensor:
    """3-D transposed convolution (the gradient of ``conv3d`` w.r.t. its input).

    Args:
        input: ``(N, C_in, D, H, W)`` or unbatched ``(C_in, D, H, W)``.
        weight: ``(C_in, C_out / groups, kD, kH, kW)``.
        bias: optional ``(C_out,)``.
        output_padding: extra size added to one side of each output dim.

    Shape:
        ``D_out = (D - 1) * stride - 2 * padding + dilation * (kD - 1) + output_padding + 1``
        (and likewise for H and W).
    """
    op = "conv_transpose3d"
    x, unbatched = _check(op, input, weight, bias, "(C_in, C_out/groups, kD, kH, kW)")
    s, d = _ntuple(op, stride, 3, "stride"), _ntuple(op, dilation, 3, "dilation")
    p = _ntuple(op, padding, 3, "padding")
    op_ = _ntuple(op, output_padding, 3, "output_padding")
    if op_[0] >= max(s[0], d[0]):
        raise ValueError(f"{op}: output_padding {op_} must be smaller than stride {s} or "
                         f"dilation {d}")
    n, c, depth, h, w = x.shape
    kd_size = weight.shape[2]
    full = (depth - 1) * s[0] + d[0] * (kd_size - 1) + 1 + op_[0]
    d_out = full - 2 * p[0]
    if d_out < 1:
        raise ShapeError(f"{op}: input of shape {input.shape} gives an empty output depth "
                         f"{d_out}; reduce padding")
    xs = x.permute(0, 2, 1, 3, 4).reshape(n * depth, c, h, w)
    total = None
    for kd in range(kd_size):
        y = conv_transpose2d(xs, weight[:, :, kd], None, s[1:], p[1:], op_[1:], groups, d[1:])
        o, h2, w2 = y.shape[1:]
        y = y.reshape(n, depth, o, h2, w2).permute(0, 2, 1, 3, 4)
        if s[0] > 1:  # the taps land every stride-th output plane: interleave zero planes
            y = pad(y.unsqueeze(3), (0, 0, 0, 0, 0, s[0] - 1))
            y = y.reshape(n, o, depth * s[0], h2, w2)[:, :, :(depth - 1) * s[0] + 1]
        front = kd * d[0]
        y = pad(y, (0, 0, 0, 0, front, full - front - y.shape[2]))
        total = y if total is None else total + y
    out = total[:, :, p[0]:p[0] + d_out]
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return out.squeeze(0) if unbatched else out


class Conv3d(_ConvNd):
    """3-D convolution over ``(N, C_in, D, H, W)`` inputs.

    Args:
        in_channels, out_channels: channel counts.
        kernel_size, stride, padding, dilation: ints or triples (padding also
            ``'same'``/``'valid'``).
        groups: independent channel groups.
        bias: add a learnable bias.
        padding_mode: ``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.

    Shape:
        Input ``(N, C_in, D, H, W)``, output ``(N, C_out, D_out, H_out, W_out)``.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(3, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, False, device=device, dtype=dtype)

    def forward(self, input: Tensor) -> Tensor:
        input, padding = self._padded(input)
        return conv3d(input, self.weight, self.bias, self.stride, padding, self.dilation,
                      self.groups)


class ConvTranspose3d(_ConvNd):
    """3-D transposed convolution over ``(N, C_in, D, H, W)`` inputs.

    Args:
        in_channels, out_channels: channel counts.
        kernel_size, stride, padding, output_padding, dilation: ints or triples.
        groups: independent channel groups.
        bias: add a learnable bias.

    Shape:
        Input ``(N, C_in, D, H, W)``, output ``(N, C_out, D_out, H_out, W_out)``.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(3, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, True, output_padding, device, dtype)

    def forward(self, input: Tensor) -> Tensor:
        return conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                self.output_padding, self.groups, self.dilation)


__all__ = ["Conv3d", "ConvTranspose3d"]
