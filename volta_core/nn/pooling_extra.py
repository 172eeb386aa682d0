"""1-D average pooling, adaptive max pooling and zero padding, functional and modules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..creation import arange
from ..ops.indexing import index_select
from ..ops.joining import cat, stack
from ..ops.movement import narrow, pad
from ..tensor import Tensor
from .functional_core import _check_floating, _check_rank, _check_tensor, _ntuple
from .module import Module
from .pooling import _batched, avg_pool2d, max_pool2d


def _single(op: str, value: int | Sequence[int], name: str) -> int:
    return _ntuple(op, value, 1, name)[0]


def avg_pool1d(input: Tensor, kernel_size: int | Sequence[int],
               stride: int | Sequence[int] | None = None, padding: int | Sequence[int] = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """1-D average pooling over ``(N, C, L)`` (or ``(C, L)``) inputs.

    Args:
        input: ``(N, C, L)`` or ``(C, L)``.
        kernel_size: window size; stride defaults to it.
        padding: implicit zero padding on both sides (at most half the window).
        ceil_mode: use ceil instead of floor for the output size.
        count_include_pad: count padded zeros in the divisor.

    Shape:
        Output ``(N, C, L_out)``.
    """
    _check_tensor("avg_pool1d", input)
    _check_rank("avg_pool1d", input, (2, 3), "(N, C, L)")
    k = _single("avg_pool1d", kernel_size, "kernel_size")
    s = k if stride is None or stride == () else _single("avg_pool1d", stride, "stride")
    p = _single("avg_pool1d", padding, "padding")
    y = avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad)
    return y.squeeze(-2)


def _windows(n_in: int, n_out: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive windows ``[floor(i n / m), ceil((i + 1) n / m))``."""
    return [((i * n_in) // n_out, -(-((i + 1) * n_in) // n_out)) for i in range(n_out)]


def _adaptive_size(op: str, x: Tensor, output_size: Any) -> tuple[int, int]:
    if isinstance(output_size, int):
        output_size = (output_size, output_size)
    h, w = x.shape[2:]
    oh = h if output_size[0] is None else int(output_size[0])
    ow = w if output_size[1] is None else int(output_size[1])
    if oh < 1 or ow < 1:
        raise ValueError(f"{op}: output_size must be positive, got {output_size}")
    if h == 0 or w == 0:
        raise ValueError(f"{op}: input of shape {x.shape} has an empty spatial dim")
    return oh, ow


def _window_max(x: Tensor, dim: int, windows: list[tuple[int, int]]) -> Tensor:
    """The max of ``x`` over each window of ``dim`` (the windows become that dim)."""
    parts = [narrow(x, dim, a, b - a).amax(dim, keepdim=True) for a, b in windows]
    return cat(parts, dim)


def _adaptive_indices(x: Tensor, rows: list, cols: list) -> Tensor:
    """Flat ``H * W`` input positions of each window's maximum."""
    w = x.shape[3]
    out = []
    for r0, r1 in rows:
        line = []
        for c0, c1 in cols:
            win = narrow(narrow(x, 2, r0, r1 - r0), 3, c0, c1 - c0).detach()
            local = win.reshape(*x.shape[:2], -1).argmax(-1)
            pos = (arange(r0, r1, device=x.device).unsqueeze(1) * w
                   + arange(c0, c1, device=x.device)).reshape(-1)
            line.append(index_select(pos, 0, local.reshape(-1)).reshape(local.shape))
        out.append(stack(line, -1))
    return stack(out, -2)


def adaptive_max_pool2d(input: Tensor, output_size: int | Sequence[int | None],
                        return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """2-D max pooling to a fixed output size, windows chosen as in PyTorch.

    Args:
        input: ``(N, C, H, W)`` or ``(C, H, W)``.
        output_size: ``(H_out, W_out)`` or one int; None keeps that input size.
        return_indices: also return the flat ``H * W`` index of each maximum.

    Shape:
        Output ``(N, C, H_out, W_out)``.
    """
    x, unbatched = _batched("adaptive_max_pool2d", input)
    _check_floating("adaptive_max_pool2d", x)
    oh, ow = _adaptive_size("adaptive_max_pool2d", x, output_size)
    h, w = x.shape[2:]
    if h % oh == 0 and w % ow == 0:
        res = max_pool2d(x, (h // oh, w // ow), return_indices=return_indices)
        y, idx = res if return_indices else (res, None)
    else:
        rows, cols = _windows(h, oh), _windows(w, ow)
        y = _window_max(_window_max(x, 3, cols), 2, rows)  # max is separable
        idx = _adaptive_indices(x, rows, cols) if return_indices else None
    if unbatched:
        y = y.squeeze(0)
        idx = None if idx is None else idx.squeeze(0)
    return (y, idx) if return_indices else y


class AvgPool1d(Module):
    """1-D average pooling; see :func:`avg_pool1d`.

    Shape:
        Input ``(N, C, L)``, output ``(N, C, L_out)``.
    """

    def __init__(self, kernel_size: int | Sequence[int],
                 stride: int | Sequence[int] | None = None, padding: int | Sequence[int] = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _ntuple("AvgPool1d", kernel_size, 1, "kernel_size")
        self.stride = self.kernel_size if stride is None else \
            _ntuple("AvgPool1d", stride, 1, "stride")
        self.padding = _ntuple("AvgPool1d", padding, 1, "padding")
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveMaxPool2d(Module):
    """Max pooling to a fixed output size; see :func:`adaptive_max_pool2d`.

    Args:
        output_size: ``(H_out, W_out)`` or one int; None keeps that input size.
        return_indices: also return the indices of the maxima.

    Shape:
        Input ``(N, C, H, W)``, output ``(N, C, *output_size)``.
    """

    def __init__(self, output_size: int | Sequence[int | None],
                 return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input: Tensor) -> Any:
        return adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class ZeroPad2d(Module):
    """Pad the last two dims with zeros.

    Args:
        padding: one int for all sides, or ``(left, right, top, bottom)``; negative
            amounts crop.

    Shape:
        Input ``(N, C, H, W)`` or ``(C, H, W)``; output
        ``(N, C, H + top + bottom, W + left + right)``.
    """

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__()
        self.padding = _ntuple("ZeroPad2d", padding, 4, "padding")

    def forward(self, input: Tensor) -> Tensor:
        _check_tensor("ZeroPad2d", input)
        _check_rank("ZeroPad2d", input, (3, 4), "(N, C, H, W)")
        return pad(input, self.padding, value=0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


__all__ = ["AvgPool1d", "AdaptiveMaxPool2d", "ZeroPad2d"]
