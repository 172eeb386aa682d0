"""Adaptive pooling in 1-D and 3-D (``adaptive_{avg,max}_pool{1,3}d`` and their modules);
the 2-D forms live in :mod:`volta_core.nn.pooling`. Windows are PyTorch's:
``[floor(i * n / m), ceil((i + 1) * n / m))``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ops.indexing import gather
from ..tensor import Tensor
from ._checks import _check_floating, _check_rank, _check_tensor
from .module import Module
from .pooling import (
    _adaptive_matrix,
    _window_max,
    _windows,
    adaptive_avg_pool2d,
    adaptive_max_pool2d,
)
from .pooling3d import _over_planes


def _sizes(op: str, x: Tensor, output_size: Any, n: int) -> tuple[int, ...]:
    if isinstance(output_size, int):
        output_size = (output_size,) * n
    if len(output_size) != n:
        raise ValueError(f"{op}: output_size must be an int or {n} values, got {output_size}")
    spatial = x.shape[-n:]
    out = tuple(s if o is None else int(o) for s, o in zip(spatial, output_size))
    if min(out) < 1:
        raise ValueError(f"{op}: output_size must be positive, got {output_size}")
    if min(spatial) == 0:
        raise ValueError(f"{op}: input of shape {x.shape} has an empty spatial dim")
    return out


def adaptive_avg_pool1d(input: Tensor, output_size: int | Sequence[int]) -> Tensor:
    """1-D average pooling of ``(N, C, L)`` (or ``(C, L)``) to ``L_out = output_size``."""
    op = "adaptive_avg_pool1d"
    _check_tensor(op, input)
    _check_rank(op, input, (2, 3), "(N, C, L)")
    (out,) = _sizes(op, input, output_size, 1)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, out)).squeeze(-2)


def adaptive_max_pool1d(input: Tensor, output_size: int | Sequence[int],
                        return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """1-D max pooling of ``(N, C, L)`` (or ``(C, L)``) to ``L_out = output_size``;
    ``return_indices`` also returns the position of each maximum."""
    op = "adaptive_max_pool1d"
    _check_tensor(op, input)
    _check_rank(op, input, (2, 3), "(N, C, L)")
    (out,) = _sizes(op, input, output_size, 1)
    res = adaptive_max_pool2d(input.unsqueeze(-2), (1, out), return_indices)
    if return_indices:
        return res[0].squeeze(-2), res[1].squeeze(-2)
    return res.squeeze(-2)


def _batched3(op: str, input: Tensor) -> tuple[Tensor, bool]:
    _check_tensor(op, input)
    _check_rank(op, input, (4, 5), "(N, C, D, H, W)")
    _check_floating(op, input)
    return (input.unsqueeze(0), True) if input.ndim == 4 else (input, False)


def adaptive_avg_pool3d(input: Tensor, output_size: int | Sequence[int | None]) -> Tensor:
    """3-D average pooling of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) to a fixed size;
    None in ``output_size`` keeps that input size."""
    op = "adaptive_avg_pool3d"
    x, unbatched = _batched3(op, input)
    od, oh, ow = _sizes(op, x, output_size, 3)
    n, c, d, h, w = x.shape
    y = adaptive_avg_pool2d(x.reshape(n, c * d, h, w), (oh, ow)).reshape(n, c, d, oh * ow)
    y = (_adaptive_matrix(d, od, x) @ y).reshape(n, c, od, oh, ow)
    return y.squeeze(0) if unbatched else y


def adaptive_max_pool3d(input: Tensor, output_size: int | Sequence[int | None],
                        return_indices: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """3-D max pooling of ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) to a fixed size;
    ``return_indices`` also returns the flat ``D * H * W`` index of each maximum."""
    op = "adaptive_max_pool3d"
    x, unbatched = _batched3(op, input)
    od, oh, ow = _sizes(op, x, output_size, 3)
    d, h, w = x.shape[2:]
    res = _over_planes(x, lambda t: adaptive_max_pool2d(t, (oh, ow), return_indices))
    y, plane_idx = res if return_indices else (res, None)
    res = _window_max(y, 2, _windows(d, od), return_indices)  # max is separable
    if not return_indices:
        return res.squeeze(0) if unbatched else res
    y, at = res  # the plane's own index at the winning depth, made flat
    idx = at * (h * w) + gather(plane_idx, 2, at)
    return (y.squeeze(0), idx.squeeze(0)) if unbatched else (y, idx)


class _Adaptive(Module):
    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_Adaptive):
    """Average pooling of ``(N, C, L)`` to ``output_size``; see :func:`adaptive_avg_pool1d`."""

    def __init__(self, output_size: int) -> None:
        super().__init__(output_size)

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool3d(_Adaptive):
    """Average pooling of ``(N, C, D, H, W)`` to ``output_size``; see
    :func:`adaptive_avg_pool3d`."""

    def __init__(self, output_size: Any) -> None:
        super().__init__(output_size)

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool1d(_Adaptive):
    """Max pooling of ``(N, C, L)`` to ``output_size``; see :func:`adaptive_max_pool1d`."""

    def forward(self, input: Tensor) -> Any:
        return adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_Adaptive):
    """Max pooling of ``(N, C, D, H, W)`` to ``output_size``; see
    :func:`adaptive_max_pool3d`."""

    def forward(self, input: Tensor) -> Any:
        return adaptive_max_pool3d(input, self.output_size, self.return_indices)


__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool3d"]
