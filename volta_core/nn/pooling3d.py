"""3-D pooling: ``max_pool3d``, ``avg_pool3d``, ``MaxPool3d``, ``AvgPool3d``.

A pool over a box is separable: the maximum (or the sum, and the divisor, a product of
per-dim counts) over ``kD x kH x kW`` is the one over ``kD`` of the ones over ``kH x kW``.
So both run as a 2-D pool over ``(H, W)`` with the depth folded into the channels, then
a ``(1, kD)`` 2-D pool over the depth: the existing pooling kernels, on every backend.
"""

from __future__ import annotations

from typing import Any

from ..ops.indexing import gather
from ..tensor import Tensor
from ._checks import _check_floating, _check_rank, _check_tensor, _ntuple
from .module import Module
from .pooling import avg_pool2d, max_pool2d


def _geometry(op: str, input: Tensor, kernel_size: Any, stride: Any, padding: Any,
              dilation: Any) -> tuple:
    _check_tensor(op, input)
    _check_rank(op, input, (4, 5), "(N, C, D, H, W)")
    k = _ntuple(op, kernel_size, 3, "kernel_size")
    s = k if stride is None or stride == () else _ntuple(op, stride, 3, "stride")
    return k, s, _ntuple(op, padding, 3, "padding"), _ntuple(op, dilation, 3, "dilation")


def _each(res: Any, fn: Any) -> Any:
    """``fn`` of a pool's result, or of each of its ``(values, indices)``."""
    return tuple(map(fn, res)) if isinstance(res, tuple) else fn(res)


def _over_depth(x: Tensor, pool: Any) -> Any:
    """Apply the 2-D ``pool`` over the depth of ``(N, C, D, H, W)`` (as a (1, D) plane);
    a pool that returns ``(values, indices)`` gives both back in that layout."""
    n, c, d, h, w = x.shape
    res = pool(x.permute(0, 1, 3, 4, 2).reshape(n, c * h * w, 1, d))
    return _each(res, lambda t: t.reshape(n, c, h, w, t.shape[-1]).permute(0, 1, 4, 2, 3))


def _over_planes(x: Tensor, pool: Any) -> Any:
    """Apply the 2-D ``pool`` to every ``(H, W)`` plane of ``(N, C, D, H, W)`` (both of
    ``(values, indices)`` where it returns them)."""
    n, c, d, h, w = x.shape
    return _each(pool(x.reshape(n, c * d, h, w)), lambda t: t.reshape(n, c, d, *t.shape[2:]))


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """3-D max pooling over ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) inputs.

    Args:
        input: the tensor.
        kernel_size: window size (int or triple); stride defaults to it.
        padding: implicit ``-inf`` padding on both sides (at most half the window).
        dilation: spacing of the window's taps.
        ceil_mode: use ceil instead of floor for the output size.
        return_indices: also return the flat ``D * H * W`` index of each maximum.

    Shape:
        Output ``(N, C, D_out, H_out, W_out)``.
    """
    op = "max_pool3d"
    k, s, p, d = _geometry(op, input, kernel_size, stride, padding, dilation)
    unbatched = input.ndim == 4
    x = input.unsqueeze(0) if unbatched else input
    h, w = x.shape[3:]
    res = _over_planes(x, lambda t: max_pool2d(t, k[1:], s[1:], p[1:], d[1:], ceil_mode,
                                               return_indices))
    y, plane_idx = res if return_indices else (res, None)
    # over the depth: the winning plane of each box (the first maximum or the last NaN
    # of the plane winners is the box's, in D, H, W order)
    res = _over_depth(y, lambda t: max_pool2d(t, (1, k[0]), (1, s[0]), (0, p[0]),
                                              (1, d[0]), ceil_mode, return_indices))
    if not return_indices:
        return res.squeeze(0) if unbatched else res
    y, at = res  # the plane's own index at the winning depth, made flat
    idx = at * (h * w) + gather(plane_idx, 2, at)
    return (y.squeeze(0), idx.squeeze(0)) if unbatched else (y, idx)


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """3-D average pooling over ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) inputs.

    Args:
        input: the tensor.
        kernel_size: window size (int or triple); stride defaults to it.
        padding: implicit zero padding on both sides (at most half the window).
        ceil_mode: use ceil instead of floor for the output size.
        count_include_pad: count padded zeros in the divisor.
        divisor_override: divide by this instead of the window size.

    Shape:
        Output ``(N, C, D_out, H_out, W_out)``.
    """
    op = "avg_pool3d"
    k, s, p, _ = _geometry(op, input, kernel_size, stride, padding, 1)
    _check_floating(op, input)
    if divisor_override is not None and divisor_override <= 0:
        raise ValueError(f"{op}: divisor_override must be positive, got {divisor_override}")
    unbatched = input.ndim == 4
    x = input.unsqueeze(0) if unbatched else input
    div = None if divisor_override is None else 1  # sums, divided once at the end
    y = _over_planes(x, lambda t: avg_pool2d(t, k[1:], s[1:], p[1:], ceil_mode,
                                             count_include_pad, div))
    y = _over_depth(y, lambda t: avg_pool2d(t, (1, k[0]), (1, s[0]), (0, p[0]), ceil_mode,
                                            count_include_pad, div))
    if divisor_override is not None:
        y = y / divisor_override
    return y.squeeze(0) if unbatched else y


class MaxPool3d(Module):
    """3-D max pooling; see :func:`max_pool3d`.

    Shape:
        Input ``(N, C, D, H, W)``, output ``(N, C, D_out, H_out, W_out)``.
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, "
                f"ceil_mode={self.ceil_mode}")


class AvgPool3d(Module):
    """3-D average pooling; see :func:`avg_pool3d`.

    Shape:
        Input ``(N, C, D, H, W)``, output ``(N, C, D_out, H_out, W_out)``.
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


__all__ = ["MaxPool3d", "AvgPool3d"]
