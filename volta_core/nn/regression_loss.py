"""Regression losses (+ functional): mean squared and absolute error, smooth L1 and Huber,
and the Gaussian and Poisson negative log-likelihoods."""

from __future__ import annotations

import math

from ..amp.dispatch import autocast_call, autocast_op
from ..amp.state import state as _autocast_state
from ..autograd.function import saved_by_pytorch
from ..dtypes import bfloat16, float16, get_default_dtype
from ..errors import ShapeError
from ..ops.elementwise import abs as _abs
from ..ops.elementwise import cast, exp, log, rounded_to, where
from ..ops.math import clamp_min
from ..tensor import Tensor
from ._checks import _check_floating, _check_tensor, _reduce
from .loss import _check_reduction, _floats, _legacy, _LegacyLoss, _Loss, _pair_check


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean squared error ``(input - target)^2``. Shape: input and target the same."""
    if _autocast_state.active:  # the autocast hook: one thread-local read when off
        return autocast_call("mse_loss", mse_loss, input, target, reduction)
    _check_reduction("mse_loss", reduction)
    x, t = _pair_check("mse_loss", input, target, "warn")
    d = x - t
    out = _reduce("mse_loss", d * d, reduction)
    saved_by_pytorch(out, input, target, op="mse_loss")  # as PyTorch's mse_loss
    return out


@autocast_op("l1_loss")
def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean absolute error ``|input - target|``. Shape: input and target the same."""
    _check_reduction("l1_loss", reduction)
    x, t = _pair_check("l1_loss", input, target, "warn", dtype="ops")
    return _reduce("l1_loss", _abs(x - t), reduction)


def _in_two_byte(x: Tensor, t: Tensor, per_step_on_cpu: bool, terms, param: float):
    """A loss's elementwise ``terms(x, t, param)`` for float16/bfloat16 inputs as PyTorch
    computes them: in float32 from the inputs, rounded once (``param`` in float32), or,
    where its CPU loop does arithmetic in the dtype (``per_step_on_cpu``), each step
    rounded, with ``param`` rounded to the dtype. None for other dtypes."""
    dt = x.dtype
    if dt.kind != "f" or dt.itemsize != 2:
        return None
    if per_step_on_cpu and x.device.type == "cpu":
        return terms(x, t, rounded_to(dt, param))
    return cast(terms(cast(x, "float32"), cast(t, "float32"), param), dt)


def _smooth_l1_terms(x: Tensor, t: Tensor, beta: float) -> Tensor:
    d = x - t
    a = _abs(d)
    if beta == 0.0:
        return a
    # NaN takes the quadratic branch (NaN gradient, as in PyTorch), never inf
    small = (a >= beta).logical_not()
    q = where(small, d, 0.0)
    return where(small, 0.5 * q * q / beta, a - 0.5 * beta)  # PyTorch's order


@autocast_op("smooth_l1_loss")
def smooth_l1_loss(input: Tensor, target: Tensor, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = input - target``)."""
    _check_reduction("smooth_l1_loss", reduction)
    x, t = _pair_check("smooth_l1_loss", input, target, "warn")
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    # PyTorch's CPU loop computes float16 in the dtype, bfloat16 in float32
    loss = _in_two_byte(x, t, x.dtype is float16, _smooth_l1_terms, beta)
    if loss is None:
        loss = _smooth_l1_terms(x, t, beta)
    out = _reduce("smooth_l1_loss", loss, reduction)
    saved_by_pytorch(out, input, target, op="smooth_l1_loss")
    return out


def _huber_terms(x: Tensor, t: Tensor, delta: float) -> Tensor:
    d = x - t
    a = _abs(d)
    # NaN takes the quadratic branch (NaN gradient, as in PyTorch), which never sees inf
    small = (a > delta).logical_not()
    q = where(small, d, 0.0)
    return where(small, 0.5 * q * q, (a - 0.5 * delta) * delta)  # PyTorch's order


@autocast_op("huber_loss")
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean",
               delta: float = 1.0) -> Tensor:
    """``0.5 d^2`` where ``|d| <= delta``, else ``delta (|d| - 0.5 delta)``."""
    _check_reduction("huber_loss", reduction)
    x, t = _pair_check("huber_loss", input, target, "warn", dtype="input")
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    # PyTorch's CPU loop computes bfloat16 in the dtype, float16 in float32
    loss = _in_two_byte(x, t, x.dtype is bfloat16, _huber_terms, delta)
    if loss is None:
        loss = _huber_terms(x, t, delta)
    out = _reduce("huber_loss", loss, reduction)
    saved_by_pytorch(out, input, target, op="huber_loss")
    return out


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Tensor | float, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Gaussian negative log likelihood ``(log var + (input - target)^2 / var) / 2``.

    ``var`` is clamped below at ``eps`` for stability; as in PyTorch, the clamp passes
    gradients through unchanged.

    Args:
        input: the predicted means.
        target: samples from the Gaussian.
        var: the predicted variances: ``input``'s shape, that shape without its last
            dim (one variance per sample), with a last dim of 1, or a number.
        full: add the constant ``log(2 pi) / 2``.
        eps: the smallest variance used.
    """
    op = "gaussian_nll_loss"
    _check_reduction(op, reduction)
    _check_tensor(op, input)
    _check_tensor(op, target, "target")
    if not isinstance(var, Tensor):
        var = input.new_full((), float(var))
    input, target, var = _floats(op, input, target, var, dtype="ops")
    _check_floating(op, var)  # PyTorch clamps var in place
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.shape[:-1] == var.shape[:-1] and var.ndim and var.shape[-1] == 1
                  or var.ndim == 0):
            raise ShapeError(f"{op}: var of shape {var.shape} fits neither the input's shape "
                             f"{input.shape} nor that shape without its last dim")
    if var.device.type == "cpu" and var.numel() and float(var.min().item()) < 0:
        raise ValueError(f"{op}: var has negative entries; variances must be >= 0")
    var = var + (clamp_min(var, eps) - var).detach()  # clamp, gradient passed through
    d = input - target
    loss = (log(var) + d * d / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(op, loss, reduction)


@autocast_op("poisson_nll_loss")
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: bool | None = None, eps: float = 1e-8,
                     reduce: bool | None = None, reduction: str = "mean") -> Tensor:
    """Poisson negative log likelihood of ``target`` counts.

    ``exp(input) - target * input`` when ``log_input`` (the input is the log rate), else
    ``input - target * log(input + eps)``; ``full`` adds Stirling's approximation of
    ``log(target!)`` where ``target > 1``.
    """
    op = "poisson_nll_loss"
    reduction = _legacy(size_average, reduce, reduction)
    _check_reduction(op, reduction)
    input, target = _pair_check(op, input, target, "quiet", dtype="ops")
    if log_input:
        loss = _exp_of(input) - target * input
    else:
        loss = input - target * log(input + eps)
    if full:
        big = target > 1
        t = where(big, target, target.new_ones(()))
        stirling = t * log(t) - t + 0.5 * log(t * (2 * math.pi))
        loss = loss + where(big, stirling, stirling.new_zeros(()))
    return _reduce(op, loss, reduction)


def _exp_of(input: Tensor) -> Tensor:
    """``exp(input)``; of an integer input in float64, rounded once to the float dtype
    ``exp`` gives: PyTorch's float32 exp is correctly rounded at integers, NumPy's can be 2
    ulp off, which a float64 target then carries into a float64 loss."""
    dev = input.device
    if input.dtype.is_floating_point or "float64" not in dev.backend.dtype_names(dev.index):
        return exp(input)
    return exp(input.double()).to(get_default_dtype())  # exp's dtype for integers


# -- modules ------------------------------------------------------------------------------


class MSELoss(_Loss):
    """Mean squared error; see :func:`mse_loss`. Shape: input and target the same."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    """Mean absolute error; see :func:`l1_loss`. Shape: input and target the same."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return l1_loss(input, target, self.reduction)


class SmoothL1Loss(_Loss):
    """Smooth L1; see :func:`smooth_l1_loss`.

    Args:
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.
        beta: the quadratic-to-linear switch point.
    """

    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return smooth_l1_loss(input, target, self.reduction, self.beta)


class HuberLoss(_Loss):
    """Huber loss; see :func:`huber_loss`.

    Args:
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.
        delta: the quadratic-to-linear switch point.
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return huber_loss(input, target, self.reduction, self.delta)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood; see :func:`gaussian_nll_loss`.

    Args:
        full: add the constant ``log(2 pi) / 2``.
        eps: the smallest variance used.

    Shape:
        ``forward(input, target, var)``; var like input, or without its last dim.
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:
        return gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


class PoissonNLLLoss(_LegacyLoss):
    """Poisson negative log likelihood; see :func:`poisson_nll_loss`.

    Args:
        log_input: the input is the log of the rate.
        full: add Stirling's term.
        eps: added inside the log when ``log_input`` is False.
    """

    def __init__(self, log_input: bool = True, full: bool = False,
                 size_average: bool | None = None, eps: float = 1e-8,
                 reduce: bool | None = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps,
                                reduction=self.reduction)


__all__ = ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "GaussianNLLLoss",
           "PoissonNLLLoss"]
