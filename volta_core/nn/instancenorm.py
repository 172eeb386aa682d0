"""Instance normalisation (functional and modules): per sample and channel, over space."""

from __future__ import annotations

import math
from typing import Any

from ..amp.dispatch import autocast_op
from ..autograd.function import saved_by_pytorch
from ..autograd.grad_mode import no_grad
from ..errors import ShapeError
from ..ops.math import rsqrt
from ..tensor import Tensor
from ._checks import _check_tensor
from .normalization import _assign, _BatchNorm, _check_per_channel, _scale_shift


@autocast_op("instance_norm")
def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial dims.

    With ``use_input_stats`` the statistics of every ``(sample, channel)`` are used and
    the running statistics (if given) move towards their batch average (the variance
    unbiased); otherwise the running statistics are used.

    Shape:
        Input ``(N, C, *)`` with at least one spatial dim; output the same.
    """
    op = "instance_norm"
    c = _check_per_channel(op, input, 3, running_mean, running_var, weight, bias)
    if input.dtype.itemsize == 2 and input.numel():  # float16/bfloat16: in float32, rounded
        w, b = (None if t is None else t.float() for t in (weight, bias))  # once (PyTorch)
        out = instance_norm(input.float(), running_mean, running_var, w, b, use_input_stats,
                            momentum, eps).to(input.dtype)
        saved_by_pytorch(out, input, op=op)
        return out
    dims = tuple(range(2, input.ndim))
    shape = (1, c) + (1,) * (input.ndim - 2)
    if use_input_stats:
        n = math.prod(input.shape[2:])
        if n == 1:
            raise ValueError(f"{op}: expected more than 1 spatial element when training, "
                             f"got input of shape {input.shape}")
        if input.numel() == 0:  # as PyTorch: an empty output, the running statistics stay
            return _scale_shift(input.clone(), weight, bias, shape)
        mean = input.mean(dims, keepdim=True)
        xc = input - mean
        var = (xc * xc).mean(dims, keepdim=True)
        y = xc * rsqrt(var + eps)
        with no_grad():
            if running_mean is not None:
                batch = mean.detach().reshape(-1, c).mean(0)
                _assign(running_mean, running_mean * (1.0 - momentum) + batch * momentum)
            if running_var is not None:
                batch = var.detach().reshape(-1, c).mean(0) * (n / (n - 1))
                _assign(running_var, running_var * (1.0 - momentum) + batch * momentum)
    else:
        if running_mean is None or running_var is None:
            raise ValueError(f"{op}: running_mean and running_var are required when "
                             "use_input_stats is False")
        y = (input - running_mean.reshape(shape)) * rsqrt(running_var.reshape(shape) + eps)
    out = _scale_shift(y, weight, bias, shape)
    saved_by_pytorch(out, input, op=op)  # PyTorch's batch norm of the reshaped input
    return out


class _InstanceNorm(_BatchNorm):
    """Instance normalisation over ``(N, C, *spatial)`` inputs; see :func:`instance_norm`.

    Args:
        num_features: ``C``.
        eps: added to the variance.
        momentum: running-statistics factor (None: the running statistics stay as they
            are, as PyTorch's InstanceNorm keeps them).
        affine: learnable per-channel scale and shift (default: False).
        track_running_stats: keep running statistics and use them in evaluation
            (default: False).

    Shape:
        Input ``(N, C, *spatial)`` or ``(C, *spatial)``; output the same.
    """

    _spatial = 2
    _layout = "(N, C, H, W)"

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype)

    def forward(self, input: Tensor) -> Tensor:
        name = type(self).__name__
        _check_tensor(name, input)
        n = self._spatial
        if input.ndim not in (n + 1, n + 2):
            raise ShapeError(f"{name}: expected a {n + 1}-D (unbatched) or {n + 2}-D "
                             f"{self._layout} input, got shape {input.shape}")
        unbatched = input.ndim == n + 1
        x = input.unsqueeze(0) if unbatched else input
        if x.shape[1] != self.num_features:
            raise ShapeError(f"{name}: expected {self.num_features} channels, got input of "
                             f"shape {input.shape}; check num_features")
        use_input = self.training or not self.track_running_stats
        track = self.track_running_stats
        # PyTorch's InstanceNorm has no cumulative average: momentum=None leaves the
        # running statistics as they are (its module passes 0.0)
        momentum = 0.0 if self.momentum is None else self.momentum
        y = instance_norm(x, self.running_mean if track else None,
                          self.running_var if track else None, self.weight, self.bias,
                          use_input, momentum, self.eps)
        return y.squeeze(0) if unbatched else y


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation over ``(N, C, L)`` (or ``(C, L)``) inputs; arguments as
    :class:`InstanceNorm2d`."""

    _spatial = 1
    _layout = "(N, C, L)"


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation over ``(N, C, H, W)`` (or ``(C, H, W)``) inputs.

    Args:
        num_features: ``C``.
        eps: added to the variance.
        momentum: running-statistics factor (None: the running statistics stay as they
            are, as PyTorch's InstanceNorm keeps them).
        affine: learnable per-channel scale and shift (default: False).
        track_running_stats: keep running statistics and use them in evaluation
            (default: False).
    """

    _spatial = 2
    _layout = "(N, C, H, W)"


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation over ``(N, C, D, H, W)`` (or ``(C, D, H, W)``) inputs;
    arguments as :class:`InstanceNorm2d`."""

    _spatial = 3
    _layout = "(N, C, D, H, W)"


__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
