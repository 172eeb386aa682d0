"""Lazy layers: convolutions and norms whose input channel count is taken from the first
input (``LazyConv{1,2,3}d``, ``LazyConvTranspose{1,2,3}d``, ``LazyBatchNorm{1,2,3}d``,
``LazyInstanceNorm{1,2,3}d``; ``LazyLinear`` lives with ``Linear``).

Until the first call the parameters are empty. That call builds the layer it stands for
with the inferred channel count, moves the fresh values into the *same* parameter and
buffer objects (so an optimizer built before keeps working), and the module becomes that
layer's class, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from ..errors import ShapeError
from ..tensor import Tensor
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .conv3d import Conv3d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d


class _LazyMixin:
    """Shared first-call materialisation; ``cls_to_become`` is the real layer."""

    cls_to_become: type
    _spatial = 1
    _kwargs: dict

    def has_uninitialized_params(self) -> bool:
        """True until the first call gives the parameters their shapes."""
        return True

    def reset_parameters(self) -> None:  # nothing to initialise while empty
        pass

    def reset_running_stats(self) -> None:
        pass

    def _channels(self, input: Tensor) -> int:
        if not isinstance(input, Tensor) or input.ndim not in (self._spatial + 1,
                                                               self._spatial + 2):
            raise ShapeError(f"{type(self).__name__}: expected a {self._spatial + 1}-D or "
                             f"{self._spatial + 2}-D input, got "
                             f"{getattr(input, 'shape', type(input).__name__)}")
        return input.shape[1] if input.ndim == self._spatial + 2 else input.shape[0]

    def forward(self, input: Tensor) -> Any:
        fresh = self.cls_to_become(self._channels(input), **self._kwargs)
        for store in ("_parameters", "_buffers"):
            mine, new = getattr(self, store), getattr(fresh, store)
            for name, t in new.items():
                old = mine.get(name)
                if old is None or t is None:
                    mine[name] = t
                else:  # same object, new values: optimizers keep their references
                    old.array = t.to(old.device).array
                    old._version[0] += 1
        keep = {"_parameters", "_buffers", "_modules", "_forward_pre_hooks",
                "_forward_hooks", "_forward_hooks_with_kwargs", "_backward_pre_hooks",
                "_backward_hooks", "training", "_non_persistent_buffers_set"}
        for k, v in fresh.__dict__.items():
            if k not in keep:
                object.__setattr__(self, k, v)
        object.__setattr__(self, "__class__", self.cls_to_become)
        return self.forward(input)


def _conv_kwargs(out_channels: int, kernel_size: Any, stride: Any, padding: Any,
                 dilation: Any, groups: int, bias: bool, padding_mode: str, device: Any,
                 dtype: Any, **extra: Any) -> dict:
    return dict(out_channels=out_channels, kernel_size=kernel_size, stride=stride,
                padding=padding, dilation=dilation, groups=groups, bias=bias,
                padding_mode=padding_mode, device=device, dtype=dtype, **extra)


class _LazyConv(_LazyMixin):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        self._kwargs = _conv_kwargs(out_channels, kernel_size, stride, padding, dilation,
                                    groups, bias, padding_mode, device, dtype)
        self.cls_to_become.__init__(self, 0, **self._kwargs)
        object.__setattr__(self, "_kwargs", self._kwargs)


class _LazyConvTranspose(_LazyMixin):
    def __init__(self, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        kwargs = _conv_kwargs(out_channels, kernel_size, stride, padding, dilation, groups,
                              bias, padding_mode, device, dtype, output_padding=output_padding)
        self.cls_to_become.__init__(self, 0, **kwargs)
        object.__setattr__(self, "_kwargs", kwargs)


class _LazyNorm(_LazyMixin):
    # PyTorch's lazy norms (instance norms included) default to affine and tracked stats
    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None
                 ) -> None:
        kwargs = dict(eps=eps, momentum=momentum, affine=affine,
                      track_running_stats=track_running_stats, device=device, dtype=dtype)
        self.cls_to_become.__init__(self, 0, **kwargs)
        object.__setattr__(self, "_kwargs", kwargs)


def _norm_channels(self: _LazyMixin, input: Tensor) -> int:
    """BatchNorm's channels are dim 1 (dim 0 of no input)."""
    if not isinstance(input, Tensor) or input.ndim < 2:
        raise ShapeError(f"{type(self).__name__}: expected an input with at least 2 dims, "
                         f"got {getattr(input, 'shape', type(input).__name__)}")
    return input.shape[1]


class LazyConv1d(_LazyConv, Conv1d):
    """:class:`Conv1d` with ``in_channels`` taken from the first input."""

    cls_to_become, _spatial = Conv1d, 1


class LazyConv2d(_LazyConv, Conv2d):
    """:class:`Conv2d` with ``in_channels`` taken from the first input."""

    cls_to_become, _spatial = Conv2d, 2


class LazyConv3d(_LazyConv, Conv3d):
    """:class:`Conv3d` with ``in_channels`` taken from the first input."""

    cls_to_become, _spatial = Conv3d, 3


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """:class:`ConvTranspose1d` with ``in_channels`` taken from the first input."""

    cls_to_become, _spatial = ConvTranspose1d, 1


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """:class:`ConvTranspose2d` with ``in_channels`` taken from the first input."""

    cls_to_become, _spatial = ConvTranspose2d, 2


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """:class:`ConvTranspose3d` with ``in_channels`` taken from the first input."""

    cls_to_become, _spatial = ConvTranspose3d, 3


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    """:class:`BatchNorm1d` with ``num_features`` taken from the first input."""

    cls_to_become = BatchNorm1d
    _channels = _norm_channels


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    """:class:`BatchNorm2d` with ``num_features`` taken from the first input."""

    cls_to_become = BatchNorm2d
    _channels = _norm_channels


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    """:class:`BatchNorm3d` with ``num_features`` taken from the first input."""

    cls_to_become = BatchNorm3d
    _channels = _norm_channels


class LazyInstanceNorm1d(_LazyNorm, InstanceNorm1d):
    """:class:`InstanceNorm1d` with ``num_features`` taken from the first input."""

    cls_to_become, _spatial = InstanceNorm1d, 1


class LazyInstanceNorm2d(_LazyNorm, InstanceNorm2d):
    """:class:`InstanceNorm2d` with ``num_features`` taken from the first input."""

    cls_to_become, _spatial = InstanceNorm2d, 2


class LazyInstanceNorm3d(_LazyNorm, InstanceNorm3d):
    """:class:`InstanceNorm3d` with ``num_features`` taken from the first input."""

    cls_to_become, _spatial = InstanceNorm3d, 3


__all__ = ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
