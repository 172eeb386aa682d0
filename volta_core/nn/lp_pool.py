"""Power-average pooling: ``lp_pool{1,2,3}d`` and ``LPPool{1,2,3}d``,
``(sum over the window of x ** p) ** (1 / p)``, over the average pools."""

from __future__ import annotations

import math
from typing import Any

from ..ops.elementwise import relu
from ..tensor import Tensor
from ._checks import _ntuple
from .module import Module
from .pooling import avg_pool1d, avg_pool2d
from .pooling3d import avg_pool3d

_POOLS = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}


def _lp_pool(n: int, input: Tensor, norm_type: float, kernel_size: Any, stride: Any,
             ceil_mode: bool) -> Tensor:
    k = _ntuple(f"lp_pool{n}d", kernel_size, n, "kernel_size")
    pool = _POOLS[n]
    kernel = k[0] if n == 1 else k
    out = pool(input ** norm_type, kernel, stride if stride is not None else kernel, 0,
               ceil_mode)
    return (out.sign() * relu(out.abs()) * math.prod(k)) ** (1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """1-D power-average pooling over ``(N, C, L)``."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """2-D power-average pooling over ``(N, C, H, W)``."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """3-D power-average pooling over ``(N, C, D, H, W)``."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


class _LPPoolNd(Module):
    _n = 2

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return _lp_pool(self._n, input, self.norm_type, self.kernel_size, self.stride,
                        self.ceil_mode)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """1-D power-average pooling; see :func:`lp_pool1d`."""

    _n = 1


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling; see :func:`lp_pool2d`."""

    _n = 2


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling; see :func:`lp_pool3d`."""

    _n = 3


__all__ = ["LPPool1d", "LPPool2d", "LPPool3d"]
