"""Fused steps of Adadelta, Adamax, NAdam, RAdam and Lion, with Array-API fallbacks.

Same contract as :mod:`volta_core.optim.kernels`: each kernel takes ``xp``, one
parameter's raw array, its gradient and its state arrays, plus the hyper-parameters as
keywords (Python numbers, so no kernel reads a value back from the device), and returns
the new ``(param, *state)`` arrays. A backend can replace any of them through
``Backend.kernels[name]`` or the ``volta_kernel`` plugin hook.
"""

from __future__ import annotations

import math
from typing import Any

from ..backend.kernels import fallback

Array = Any


def _decay(param: Array, grad: Array, lr: float, weight_decay: float, maximize: bool,
           decoupled: bool = False) -> tuple[Array, Array]:
    """Apply ``maximize`` and (L2 or decoupled) weight decay; returns ``(param, grad)``."""
    g = -grad if maximize else grad
    if weight_decay != 0:
        if decoupled:
            param = param * (1.0 - lr * weight_decay)
        else:
            g = g + weight_decay * param
    return param, g


@fallback("adadelta_step")
def adadelta_step(xp: Any, param: Array, grad: Array, square_avg: Array, acc_delta: Array, *,
                  lr: float, rho: float, eps: float, weight_decay: float, maximize: bool
                  ) -> tuple[Array, Array, Array]:
    """One Adadelta update; returns ``(param, square_avg, acc_delta)``."""
    param, g = _decay(param, grad, lr, weight_decay, maximize)
    square_avg = rho * square_avg + (1.0 - rho) * (g * g)
    delta = xp.sqrt(acc_delta + eps) / xp.sqrt(square_avg + eps) * g
    acc_delta = rho * acc_delta + (1.0 - rho) * (delta * delta)
    return param - lr * delta, square_avg, acc_delta


@fallback("adamax_step")
def adamax_step(xp: Any, param: Array, grad: Array, exp_avg: Array, exp_inf: Array, *,
                step: int, lr: float, beta1: float, beta2: float, eps: float,
                weight_decay: float, maximize: bool) -> tuple[Array, Array, Array]:
    """One Adamax update; returns ``(param, exp_avg, exp_inf)``. ``step`` counts from 1."""
    param, g = _decay(param, grad, lr, weight_decay, maximize)
    exp_avg = exp_avg + (1.0 - beta1) * (g - exp_avg)
    exp_inf = xp.maximum(beta2 * exp_inf, xp.abs(g) + eps)
    clr = lr / (1.0 - beta1 ** step)
    return param - clr * (exp_avg / exp_inf), exp_avg, exp_inf


@fallback("nadam_step")
def nadam_step(xp: Any, param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array, *,
               step: int, lr: float, beta1: float, beta2: float, eps: float,
               weight_decay: float, mu: float, mu_next: float, mu_product: float,
               mu_product_next: float, maximize: bool, decoupled: bool
               ) -> tuple[Array, Array, Array]:
    """One NAdam update; returns ``(param, exp_avg, exp_avg_sq)``.

    The momentum schedule (``mu`` of this step and the next, and their running
    products) is computed by the optimizer on the host.
    """
    param, g = _decay(param, grad, lr, weight_decay, maximize, decoupled)
    exp_avg = exp_avg + (1.0 - beta1) * (g - exp_avg)
    exp_avg_sq = beta2 * exp_avg_sq + (1.0 - beta2) * (g * g)
    denom = xp.sqrt(exp_avg_sq / (1.0 - beta2 ** step)) + eps
    param = param - (lr * (1.0 - mu) / (1.0 - mu_product)) * (g / denom)
    param = param - (lr * mu_next / (1.0 - mu_product_next)) * (exp_avg / denom)
    return param, exp_avg, exp_avg_sq


@fallback("radam_step")
def radam_step(xp: Any, param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array, *,
               step: int, lr: float, beta1: float, beta2: float, eps: float,
               weight_decay: float, maximize: bool, decoupled: bool
               ) -> tuple[Array, Array, Array]:
    """One RAdam update; returns ``(param, exp_avg, exp_avg_sq)``.

    The adaptive term is used only once the variance of the adaptive rate is tractable
    (``rho_t > 5``); before that the step is plain bias-corrected momentum.
    """
    param, g = _decay(param, grad, lr, weight_decay, maximize, decoupled)
    exp_avg = exp_avg + (1.0 - beta1) * (g - exp_avg)
    exp_avg_sq = beta2 * exp_avg_sq + (1.0 - beta2) * (g * g)
    bias1 = 1.0 - beta1 ** step
    bias2 = 1.0 - beta2 ** step
    rho_inf = 2.0 / (1.0 - beta2) - 1.0
    rho_t = rho_inf - 2.0 * step * beta2 ** step / bias2
    if rho_t > 5.0:
        rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                         / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        adaptive = math.sqrt(bias2) / (xp.sqrt(exp_avg_sq) + eps)
        param = param - (lr * rect / bias1) * (exp_avg * adaptive)
    else:
        param = param - (lr / bias1) * exp_avg
    return param, exp_avg, exp_avg_sq


@fallback("lion_step")
def lion_step(xp: Any, param: Array, grad: Array, exp_avg: Array, *, lr: float, beta1: float,
              beta2: float, weight_decay: float, maximize: bool) -> tuple[Array, Array]:
    """One Lion update; returns ``(param, exp_avg)``."""
    g = -grad if maximize else grad
    if weight_decay != 0:
        param = param * (1.0 - lr * weight_decay)
    update = xp.sign(beta1 * exp_avg + (1.0 - beta1) * g)
    exp_avg = beta2 * exp_avg + (1.0 - beta2) * g
    return param - lr * update, exp_avg


__all__ = ["adadelta_step", "adamax_step", "nadam_step", "radam_step", "lion_step"]
