"""Normalisation layers: batch, layer, group and RMS norm (functional and modules)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..amp.dispatch import autocast_call, autocast_op
from ..amp.state import state as _autocast_state
from ..autograd.function import Function, saved_by_pytorch
from ..autograd.grad_mode import state as _grad_state
from ..backend.kernels import get_fallback, get_kernel
from ..creation import empty, ones, tensor, zeros
from ..cuda_graphs import write_state
from ..errors import ShapeError
from ..ops import nn as _kernels  # noqa: F401 - registers the kernels' fallbacks
from ..ops.math import rsqrt
from ..ops.movement import narrow, pad
from ..tensor import Tensor
from . import init
from ._checks import _check_floating, _check_same, _check_tensor
from .module import Module
from .parameter import Parameter

_FINFO_EPS = {"float16": 0.0009765625, "bfloat16": 0.0078125, "float32": 1.1920928955078125e-07,
              "float64": 2.220446049250313e-16}


def _assign(buf: Tensor, value: Tensor) -> None:
    """Overwrite a buffer's values (running statistics; see ``write_state``)."""
    write_state(buf, value.array if value.dtype is buf.dtype else value.to(buf.dtype).array)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) over the batch and spatial dims.

    In training, batch statistics are used and the running statistics (if given) are
    updated in place: ``running = (1 - momentum) * running + momentum * batch_stat`` (the
    variance unbiased). In evaluation, the running statistics are used.

    Shape:
        Input ``(N, C, *)``; output the same.
    """
    if _autocast_state.active:  # the autocast hook: one thread-local read when off
        return autocast_call(
            "batch_norm", batch_norm, input, running_mean, running_var, weight, bias, training,
            momentum, eps)
    op = "batch_norm"
    # float16/bfloat16 input: float32 parameters and statistics, the output in the input's
    # dtype (PyTorch's mixed-dtype batch norm; the kernels read the low-precision input)
    half = input.dtype.itemsize == 2
    c = _check_per_channel(op, input, 2, running_mean, running_var, weight, bias,
                           float32_params=half)
    shape = (1, c) + (1,) * (input.ndim - 2)
    if half:
        weight, bias = (None if t is None else t.float() for t in (weight, bias))
    if training:
        n = input.numel() // max(c, 1)
        if n == 1:
            raise ValueError(f"{op}: expected more than 1 value per channel when training, "
                             f"got input of shape {input.shape}; use a larger batch or eval()")
        if n == 0:  # an empty batch, as PyTorch: the running statistics stay
            out = _scale_shift(input.clone(), weight, bias, shape)
            return out.to(input.dtype) if half else out
        running = None
        if running_mean is not None or running_var is not None:
            running = (running_mean, running_var, momentum)
        if _grad_state.enabled and (input.requires_grad
                                    or (weight is not None and weight.requires_grad)
                                    or (bias is not None and bias.requires_grad)):
            out = _BatchNormTrain.apply(input, weight, bias, eps=eps, running=running)
            stats, new = out.grad_fn.stats, out.grad_fn.new_running
        else:
            y, mean, var, _, new = _train_kernel(
                input.device, input.array, None if weight is None else weight.array,
                None if bias is None else bias.array, eps, running)
            out, stats = Tensor._make(y, input.device), (mean, var)
        if new is not None:
            for buf, value in zip((running_mean, running_var), new):
                if buf is not None:
                    write_state(buf, value)
        elif running is not None:
            _update_running(running_mean, running_var, stats, momentum, n)
        return out
    if running_mean is None or running_var is None:
        raise ValueError(f"{op}: running_mean and running_var are required when not "
                         "training")
    y = (input - running_mean.reshape(shape)) * rsqrt(running_var.reshape(shape) + eps)
    out = _scale_shift(y, weight, bias, shape)
    out = out.to(input.dtype) if half else out
    saved_by_pytorch(out, input, weight, running_mean, running_var, op=op)  # as PyTorch
    return out


def _check_per_channel(op: str, input: Tensor, min_ndim: int, running_mean: Tensor | None,
                       running_var: Tensor | None, weight: Tensor | None,
                       bias: Tensor | None, float32_params: bool = False) -> int:
    """Check a floating ``(N, C, *)`` input of at least ``min_ndim`` dims and that every
    given statistic or affine tensor has shape ``(C,)``; returns ``C``. With
    ``float32_params`` the affine tensors may also be float32."""
    _check_tensor(op, input)
    _check_floating(op, input)
    if input.ndim < min_ndim:
        raise ShapeError(f"{op}: expected an input of at least {min_ndim} dims (N, C, *), got "
                         f"shape {input.shape}")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise ShapeError(f"{op}: expected {name} of shape ({c},) for an input with {c} "
                             f"channels (shape {input.shape}), got {t.shape}; check "
                             "num_features")
    _check_same(op, input, *(t for t in (weight, bias)
                             if not (float32_params and t is not None
                                     and t.dtype.name == "float32")))
    return c


def _scale_shift(y: Tensor, weight: Tensor | None, bias: Tensor | None,
                 shape: tuple[int, ...]) -> Tensor:
    """``y * weight + bias`` with the per-channel ``weight`` and ``bias`` (each optional)
    reshaped to ``shape``."""
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def _update_running(running_mean: Tensor | None, running_var: Tensor | None, stats: tuple,
                    momentum: float, n: int) -> None:
    """``running = (1 - momentum) * running + momentum * batch_stat`` (variance unbiased)."""
    bufs = (running_mean, running_var)
    some = running_mean if running_mean is not None else running_var
    kern = get_kernel(some.device.backend, "batch_norm_running")
    new = kern(some.device.xp, *(None if b is None else b.array for b in bufs), *stats,
               momentum=momentum, n=n)
    for buf, value in zip(bufs, new):
        if buf is not None:
            write_state(buf, value)


class _LayerNorm(Function):
    """Fused forward (the ``layer_norm`` kernel) and plain backward (its backward kernel);
    a ``create_graph`` backward recomputes with Tensor ops."""

    pytorch_saves = ((0, 1, 2),) * 3  # input, weight and bias, for every gradient

    def forward(ctx, x, w=None, b=None, ndim=1, eps=1e-5):
        ctx.ndim, ctx.eps = ndim, eps
        kern = get_kernel(ctx.device.backend, "layer_norm")
        y, mean, rstd = kern(ctx.xp, x, w, b, ndim=ndim, eps=eps)
        ctx.save_for_backward(x, w, mean, rstd)
        return y

    def backward(ctx, g):
        x, w, mean, rstd = ctx.saved_tensors
        nx, nw, nb = ctx.needs_input_grad
        if not _grad_state.enabled:  # plain backward: the fused kernel, saved statistics
            kern = get_kernel(ctx.device.backend, "layer_norm_backward")
            out = kern(ctx.xp, g.array, x.array, None if w is None else w.array, mean.array,
                       rstd.array, ndim=ctx.ndim, needs=(nx, nw, nb))
            return tuple(None if a is None else Tensor._make(a, ctx.device) for a in out)
        axes = tuple(range(x.ndim - ctx.ndim, x.ndim))
        lead = tuple(range(x.ndim - ctx.ndim))
        mean = x.mean(axes, keepdim=True)
        xc = x - mean
        rstd = rsqrt((xc * xc).mean(axes, keepdim=True) + ctx.eps)
        xhat = xc * rstd
        gx = gw = gb = None
        if nx:
            gh = g * w if w is not None else g
            gx = rstd * (gh - gh.mean(axes, keepdim=True)
                         - xhat * (gh * xhat).mean(axes, keepdim=True))
        if nw:
            gw = (g * xhat).sum(lead) if lead else g * xhat
        if nb:
            gb = g.sum(lead) if lead else g
        return gx, gw, gb


def _train_kernel(device: Any, x: Any, w: Any, b: Any, eps: float,
                  running: tuple | None) -> tuple:
    """``(y, mean, var, rstd, new running statistics)`` of training batch norm on backend
    arrays. ``running``: ``(running_mean, running_var, momentum)`` tensors (either may be
    None) when they are updated; the backend's own ``batch_norm_train`` then updates them
    in the same call, else the new statistics are None and the caller updates them (the
    generic one would only repeat ``batch_norm`` and ``batch_norm_running``)."""
    backend = device.backend
    if running is not None:
        kern = get_kernel(backend, "batch_norm_train")
        if kern is not get_fallback("batch_norm_train"):
            rm, rv, momentum = running
            y, mean, var, rstd, nm, nv = kern(
                device.xp, x, w, b, None if rm is None else rm.array,
                None if rv is None else rv.array, eps=eps, momentum=momentum)
            return y, mean, var, rstd, (nm, nv)
    y, mean, var, rstd = get_kernel(backend, "batch_norm")(device.xp, x, w, b, eps=eps)
    return y, mean, var, rstd, None


class _BatchNormTrain(Function):
    """Training batch norm as one node: the ``batch_norm`` kernel forward, its backward
    kernel for a plain backward (Tensor ops under ``create_graph``)."""

    def forward(ctx, x, w=None, b=None, eps=1e-5, running=None):
        ctx.eps = eps
        y, mean, var, rstd, ctx.new_running = _train_kernel(ctx.device, x, w, b, eps, running)
        ctx.stats = (mean, var)
        ctx.save_for_backward(x, w, mean, rstd)
        return y

    def backward(ctx, g):
        x, w, mean, rstd = ctx.saved_tensors
        nx, nw, nb = ctx.needs_input_grad
        if not _grad_state.enabled:
            kern = get_kernel(ctx.device.backend, "batch_norm_backward")
            out = kern(ctx.xp, g.array, x.array, None if w is None else w.array, mean.array,
                       rstd.array, needs=(nx, nw, nb))
            return tuple(None if a is None else Tensor._make(a, ctx.device) for a in out)
        low = x.dtype if x.dtype.itemsize == 2 else None
        if low is not None:  # float16/bfloat16: in float32, the input gradient cast back
            x, g = x.float(), g.float()
        dims = (0,) + tuple(range(2, x.ndim))
        shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        mean_t = x.mean(dims, keepdim=True)
        xc = x - mean_t
        r = rsqrt((xc * xc).mean(dims, keepdim=True) + ctx.eps)
        xhat = xc * r
        gx = gw = gb = None
        if nx:
            gh = g * w.reshape(shape) if w is not None else g
            gx = r * (gh - gh.mean(dims, keepdim=True)
                      - xhat * (gh * xhat).mean(dims, keepdim=True))
        if nw:
            gw = (g * xhat).sum(dims)
        if nb:
            gb = g.sum(dims)
        return (gx if low is None or gx is None else gx.to(low)), gw, gb


def _as_shape(normalized_shape: int | Sequence[int]) -> tuple[int, ...]:
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


def _normalized(op: str, x: Tensor, normalized_shape: Sequence[int]) -> tuple[int, ...]:
    ns = _as_shape(normalized_shape)
    if not ns or x.shape[x.ndim - len(ns):] != ns or x.ndim < len(ns):
        raise ShapeError(f"{op}: input of shape {x.shape} does not end with normalized_shape "
                         f"{ns}; check the layer's size or the input's layout")
    return ns


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dims, then scale and shift.

    Shape:
        Input ``(*, *normalized_shape)``; output the same.
    """
    if _autocast_state.active:  # the autocast hook: one thread-local read when off
        return autocast_call("layer_norm", layer_norm, input, normalized_shape, weight, bias, eps)
    _check_tensor("layer_norm", input)
    _check_floating("layer_norm", input)
    ns = _normalized("layer_norm", input, normalized_shape)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise ShapeError(f"layer_norm: {name} must have shape {ns}, got {t.shape}")
    _check_same("layer_norm", input, weight, bias)
    if input.dtype.itemsize == 2:  # float16/bfloat16: statistics in float32, as in PyTorch
        w, b = (None if t is None else t.float() for t in (weight, bias))
        return _LayerNorm.apply(input.float(), w, b, ndim=len(ns), eps=eps).to(input.dtype)
    return _LayerNorm.apply(input, weight, bias, ndim=len(ns), eps=eps)


@autocast_op("group_norm")
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise groups of channels per sample, then scale and shift per channel.

    Shape:
        Input ``(N, C, *)`` with ``C`` divisible by ``num_groups``; output the same.
    """
    _check_tensor("group_norm", input)
    _check_floating("group_norm", input)
    if input.ndim < 2:
        raise ShapeError(f"group_norm: expected an input of at least 2 dims (N, C, *), got "
                         f"shape {input.shape}")
    n, c = input.shape[:2]
    if c % num_groups:
        raise ShapeError(f"group_norm: {c} channels (input shape {input.shape}) are not "
                         f"divisible by num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise ShapeError(f"group_norm: expected {name} of shape ({c},) for an input with "
                             f"{c} channels, got {t.shape}; check num_channels")
    _check_same("group_norm", input, weight, bias)
    if input.dtype.itemsize == 2:  # float16/bfloat16: in float32, rounded once (PyTorch)
        w, b = (None if t is None else t.float() for t in (weight, bias))
        out = group_norm(input.float(), num_groups, w, b, eps).to(input.dtype)
        saved_by_pytorch(out, input, weight, op="group_norm")
        return out
    x = input.reshape(n, num_groups, input.numel() // max(n * num_groups, 1))
    mean = x.mean(-1, keepdim=True)
    xc = x - mean
    y = (xc * rsqrt((xc * xc).mean(-1, keepdim=True) + eps)).reshape(input.shape)
    out = _scale_shift(y, weight, bias, (1, c) + (1,) * (input.ndim - 2))
    saved_by_pytorch(out, input, weight, op="group_norm")  # as PyTorch's native_group_norm
    return out


@autocast_op("rms_norm")
def rms_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """Divide by the root mean square over the trailing dims, then scale.

    Args:
        eps: added to the mean square; None uses the dtype's machine epsilon (PyTorch).

    Shape:
        Input ``(*, *normalized_shape)``; output the same.
    """
    _check_tensor("rms_norm", input)
    _check_floating("rms_norm", input)
    ns = _normalized("rms_norm", input, normalized_shape)
    if weight is not None and tuple(weight.shape) != ns:
        raise ShapeError(f"rms_norm: weight must have shape {ns}, got {weight.shape}")
    _check_same("rms_norm", input, weight)
    if input.dtype.itemsize == 2:  # float16/bfloat16: in float32 (eps float32's), rounded
        w = None if weight is None else weight.float()  # once, as PyTorch's
        return rms_norm(input.float(), ns, w, eps).to(input.dtype)
    if eps is None:
        eps = _FINFO_EPS.get(input.dtype.name, 1e-6)
    axes = tuple(range(input.ndim - len(ns), input.ndim))
    y = input * rsqrt((input * input).mean(axes, keepdim=True) + eps)
    return y * weight if weight is not None else y


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """Normalise each element by the energy of its ``size`` neighbouring channels.

    ``b_c = a_c / (k + alpha / size * sum_{c'} a_{c'}^2) ^ beta``, the sum over the
    channels ``c - size // 2 .. c + (size - 1) // 2`` (missing ones count as zero).

    Shape:
        Input ``(N, C, *)``; output the same.
    """
    op = "local_response_norm"
    _check_tensor(op, input)
    _check_floating(op, input)
    if input.ndim < 3:
        raise ShapeError(f"{op}: expected an input of at least 3 dims (N, C, *), got shape "
                         f"{input.shape}")
    if size < 1:
        raise ValueError(f"{op}: size must be positive, got {size}")
    c = input.shape[1]
    sq = (input * input).movedim(1, -1)
    sq = pad(sq, (size // 2, (size - 1) // 2))
    total = narrow(sq, -1, 0, c)
    for i in range(1, size):
        total = total + narrow(sq, -1, i, c)
    div = (total.movedim(-1, 1) * (alpha / size) + k) ** beta
    return input / div


class _BatchNorm(Module):
    _ranks: tuple[int, ...] = ()
    _layout = ""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, dtype=dtype, device=device))
            self.bias = Parameter(empty(num_features, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype, device=device))
            self.register_buffer("running_var", ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", tensor(0, dtype="int64",
                                                               device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """Zero the running mean and batch count, set the running variance to one."""
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            _assign(self.num_batches_tracked, self.num_batches_tracked * 0)

    def reset_parameters(self) -> None:
        """Reset the running statistics; weight to ones, bias to zeros."""
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        name = type(self).__name__
        _check_tensor(name, input)
        if input.ndim not in self._ranks:
            want = " or ".join(f"{r}-D" for r in self._ranks)
            raise ShapeError(f"{name}: expected a {want} input {self._layout}, got a "
                             f"{input.ndim}-D input of shape {input.shape}")
        if input.shape[1] != self.num_features:
            raise ShapeError(f"{name}: expected {self.num_features} channels in dim 1, got "
                             f"input of shape {input.shape}; check num_features")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            count = self.num_batches_tracked  # PyTorch's add_(1): one kernel, no autograd
            write_state(count, count.device.xp.add(count.array, 1))
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / int(self.num_batches_tracked.item())
        use_batch = self.training or not self.track_running_stats
        track = not use_batch or self.track_running_stats
        return batch_norm(input, self.running_mean if track else None,
                          self.running_var if track else None, self.weight, self.bias,
                          use_batch, momentum, self.eps)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, missing: list,
                              errors: list) -> None:
        key = prefix + "num_batches_tracked"
        if self.track_running_stats and key not in state_dict and prefix + "running_mean" \
                in state_dict:  # checkpoints from before the counter existed
            state_dict = {**state_dict, key: self.num_batches_tracked.detach()}
        super()._load_from_state_dict(state_dict, prefix, missing, errors)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over ``(N, C)`` or ``(N, C, L)`` inputs.

    Args:
        num_features: ``C``.
        eps: added to the variance.
        momentum: running-statistics factor; None for a cumulative average.
        affine: learnable per-channel scale and shift.
        track_running_stats: keep running statistics for evaluation.

    Shape:
        Input ``(N, C)`` or ``(N, C, L)``; output the same.
    """

    _ranks = (2, 3)
    _layout = "(N, C) or (N, C, L)"


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over ``(N, C, H, W)`` inputs; arguments as :class:`BatchNorm1d`.

    Shape:
        Input ``(N, C, H, W)``; output the same.
    """

    _ranks = (4,)
    _layout = "(N, C, H, W)"


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over ``(N, C, D, H, W)`` inputs; arguments as
    :class:`BatchNorm1d`.

    Shape:
        Input ``(N, C, D, H, W)``; output the same.
    """

    _ranks = (5,)
    _layout = "(N, C, D, H, W)"


class LayerNorm(Module):
    """Layer normalisation over the trailing ``normalized_shape`` dims.

    Args:
        normalized_shape: int or tuple of the trailing dims.
        eps: added to the variance.
        elementwise_affine: learnable per-element scale (and shift if ``bias``).
        bias: learn a shift.

    Shape:
        Input ``(*, *normalized_shape)``; output the same.
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        ns = _as_shape(normalized_shape)
        self.normalized_shape, self.eps = ns, eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(*ns, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(zeros(*ns, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        if isinstance(input, Tensor) and input.shape[input.ndim - len(self.normalized_shape):] \
                != self.normalized_shape:
            raise ShapeError(f"LayerNorm: input of shape {input.shape} does not end with "
                             f"normalized_shape {self.normalized_shape}")
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class GroupNorm(Module):
    """Group normalisation: channels split into ``num_groups``, normalised per sample.

    Args:
        num_groups: groups to split the channels into.
        num_channels: ``C`` (divisible by ``num_groups``).
        eps: added to the variance.
        affine: learnable per-channel scale and shift.

    Shape:
        Input ``(N, C, *)``; output the same.
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        if affine:
            self.weight = Parameter(ones(num_channels, dtype=dtype, device=device))
            self.bias = Parameter(zeros(num_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:
        _check_tensor("GroupNorm", input)
        if input.ndim < 2 or input.shape[1] != self.num_channels:
            raise ShapeError(f"GroupNorm: expected input (N, {self.num_channels}, *), got "
                             f"shape {input.shape}; check num_channels")
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims.

    Args:
        normalized_shape: int or tuple of the trailing dims.
        eps: added to the mean square; None uses the dtype's machine epsilon.
        elementwise_affine: learnable per-element scale.

    Shape:
        Input ``(*, *normalized_shape)``; output the same.
    """

    def __init__(self, normalized_shape: int | Sequence[int], eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        ns = _as_shape(normalized_shape)
        self.normalized_shape, self.eps = ns, eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(*ns, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)

    def forward(self, input: Tensor) -> Tensor:
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Local response normalisation across channels; see :func:`local_response_norm`.

    Args:
        size: how many neighbouring channels to sum over.
        alpha: multiplicative factor.
        beta: exponent.
        k: additive factor.

    Shape:
        Input ``(N, C, *)``; output the same.
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "RMSNorm",
           "LocalResponseNorm"]
