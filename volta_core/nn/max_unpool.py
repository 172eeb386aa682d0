"""Max unpooling: ``max_unpool{1,2,3}d`` and ``MaxUnpool{1,2,3}d``, the partial inverse
of max pooling: each value goes back to the position its ``return_indices`` index names,
every other position is zero."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import ShapeError
from ..ops.indexing import scatter, scatter_add
from ..tensor import Tensor
from ._checks import _check_tensor, _ntuple
from .module import Module


def _max_unpool(n: int, input: Tensor, indices: Tensor, kernel_size: Any, stride: Any,
                padding: Any, output_size: Sequence[int] | None) -> Tensor:
    op = f"max_unpool{n}d"
    _check_tensor(op, input)
    _check_tensor(op, indices, "indices")
    if input.ndim not in (n + 1, n + 2):
        raise ShapeError(f"{op}: expected a {n + 1}-D or {n + 2}-D input, got shape "
                         f"{input.shape}")
    if tuple(indices.shape) != tuple(input.shape):
        raise ShapeError(f"{op}: indices of shape {indices.shape} must match the input's "
                         f"{input.shape}")
    k = _ntuple(op, kernel_size, n, "kernel_size")
    s = k if stride is None else _ntuple(op, stride, n, "stride")
    p = _ntuple(op, padding, n, "padding")
    spatial_in = input.shape[-n:]
    if output_size is None:
        size = tuple((spatial_in[i] - 1) * s[i] - 2 * p[i] + k[i] for i in range(n))
    else:
        size = tuple(int(v) for v in output_size)[-n:]
        if len(size) != n:
            raise ValueError(f"{op}: output_size must have {n} (or {n + 2}) entries, got "
                             f"{output_size}")
    lead = input.shape[:-n]
    flat_in = input.reshape(*lead, -1)
    total = 1
    for v in size:
        total *= v
    zeros = flat_in.new_zeros(*lead, total)
    idx = indices.reshape(*lead, -1)
    out = scatter(zeros, -1, idx, flat_in.detach())
    if flat_in.requires_grad:
        # overlapping windows can name one position twice: PyTorch's gradient gathers it
        # for each of them, which is scatter_add's backward (its forward here adds 0)
        out = out + (scatter_add(zeros, -1, idx, flat_in)
                     - scatter_add(zeros, -1, idx, flat_in.detach()))
    return out.reshape(*lead, *size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Sequence[int] | None = None) -> Tensor:
    """Undo ``max_pool1d``: ``(N, C, L_in)`` values to ``(N, C, L_out)`` by their indices."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Sequence[int] | None = None) -> Tensor:
    """Undo ``max_pool2d``: values to their flat ``H * W`` positions ``indices``.

    Shape:
        Output ``(N, C, H_out, W_out)``, ``H_out = (H_in - 1) * stride - 2 * padding +
        kernel_size`` unless ``output_size`` is given.
    """
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Sequence[int] | None = None) -> Tensor:
    """Undo ``max_pool3d``: values to their flat ``D * H * W`` positions ``indices``."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


class _MaxUnpoolNd(Module):
    _n = 2

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        name = type(self).__name__
        self.kernel_size = _ntuple(name, kernel_size, self._n, "kernel_size")
        self.stride = self.kernel_size if stride is None else _ntuple(name, stride, self._n,
                                                                      "stride")
        self.padding = _ntuple(name, padding, self._n, "padding")

    def forward(self, input: Tensor, indices: Tensor,
                output_size: Sequence[int] | None = None) -> Tensor:
        return _max_unpool(self._n, input, indices, self.kernel_size, self.stride,
                           self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Undo ``MaxPool1d``; see :func:`max_unpool1d`."""

    _n = 1


class MaxUnpool2d(_MaxUnpoolNd):
    """Undo ``MaxPool2d``; see :func:`max_unpool2d`."""

    _n = 2


class MaxUnpool3d(_MaxUnpoolNd):
    """Undo ``MaxPool3d``; see :func:`max_unpool3d`."""

    _n = 3


__all__ = ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]
