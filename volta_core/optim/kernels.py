"""Fused optimizer steps: one extension kernel per optimizer, with Array-API fallbacks.

Each kernel takes the namespace ``xp``, the parameter's raw array, its gradient and
the optimizer state arrays for ONE parameter, plus the hyper-parameters as keywords,
and returns the new ``(param, *state)`` arrays. The fallbacks below are the reference;
a backend can replace any of them with a single fused kernel through
``Backend.kernels[name]`` or the ``volta_kernel`` plugin hook.

State arrays that do not exist yet (the first step of a momentum buffer) are passed
as ``None``; state arrays that are not used by the chosen options are returned as
``None``. Step counts and learning rates are Python numbers, so no kernel has to
read a value back from the device.
"""

from __future__ import annotations

import math
from typing import Any

from ..backend.kernels import fallback

Array = Any


@fallback("sgd_step_multi")
def sgd_step_multi(xp: Any, params: list, grads: list, momentum_buffers: list, *, lr: float,
                   momentum: float, dampening: float, weight_decay: float, nesterov: bool,
                   maximize: bool) -> bool:
    """SGD over a whole group in place (a backend's multi-tensor kernel); returns whether it
    did so. This fallback does nothing and returns False: the optimizer then calls
    ``sgd_step`` per parameter. A backend serves it only when every momentum buffer
    exists and it can update the arrays in place."""
    return False


@fallback("adam_step_multi")
def adam_step_multi(xp: Any, params: list, grads: list, exp_avgs: list, exp_avg_sqs: list,
                    *, step: int, lr: float, beta1: float, beta2: float, eps: float,
                    weight_decay: float, maximize: bool, decoupled: bool) -> bool:
    """Adam/AdamW (no AMSGrad) over a whole group in place, every parameter at the same
    ``step``; returns whether it did so (this fallback: False, see ``sgd_step_multi``)."""
    return False


@fallback("sgd_step")
def sgd_step(xp: Any, param: Array, grad: Array, momentum_buffer: Array | None, *,
             lr: float, momentum: float, dampening: float, weight_decay: float,
             nesterov: bool, maximize: bool) -> tuple[Array, Array | None]:
    """One SGD update; returns ``(param, momentum_buffer)``."""
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    buf = None
    if momentum != 0:
        if momentum_buffer is None:
            buf = xp.asarray(g, copy=True)
        else:
            buf = momentum * momentum_buffer + (1.0 - dampening) * g
        g = g + momentum * buf if nesterov else buf
    return param - lr * g, buf


@fallback("adam_step")
def adam_step(xp: Any, param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array,
              max_exp_avg_sq: Array | None, *, step: int, lr: float, beta1: float,
              beta2: float, eps: float, weight_decay: float, amsgrad: bool, maximize: bool,
              decoupled: bool) -> tuple[Array, Array, Array, Array | None]:
    """One Adam (``decoupled=False``) or AdamW (``decoupled=True``) update.

    Returns ``(param, exp_avg, exp_avg_sq, max_exp_avg_sq)``; ``step`` is the count
    after this update (1 on the first call).
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        if decoupled:
            param = param * (1.0 - lr * weight_decay)
        else:
            g = g + weight_decay * param
    exp_avg = exp_avg + (1.0 - beta1) * (g - exp_avg)
    exp_avg_sq = beta2 * exp_avg_sq + (1.0 - beta2) * (g * g)
    bias1 = 1.0 - beta1 ** step
    bias2_sqrt = math.sqrt(1.0 - beta2 ** step)
    if amsgrad:
        max_exp_avg_sq = xp.maximum(max_exp_avg_sq, exp_avg_sq)
        denom = xp.sqrt(max_exp_avg_sq) / bias2_sqrt + eps
    else:
        denom = xp.sqrt(exp_avg_sq) / bias2_sqrt + eps
    param = param - (lr / bias1) * (exp_avg / denom)
    return param, exp_avg, exp_avg_sq, max_exp_avg_sq


@fallback("rmsprop_step")
def rmsprop_step(xp: Any, param: Array, grad: Array, square_avg: Array,
                 grad_avg: Array | None, momentum_buffer: Array | None, *, lr: float,
                 alpha: float, eps: float, weight_decay: float, momentum: float,
                 centered: bool, maximize: bool
                 ) -> tuple[Array, Array, Array | None, Array | None]:
    """One RMSprop update; returns ``(param, square_avg, grad_avg, momentum_buffer)``.

    ``grad_avg`` is used when ``centered``, ``momentum_buffer`` when ``momentum > 0``;
    both start as zeros (the optimizer creates them).
    """
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    square_avg = alpha * square_avg + (1.0 - alpha) * (g * g)
    if centered:
        grad_avg = grad_avg + (1.0 - alpha) * (g - grad_avg)
        avg = xp.sqrt(square_avg - grad_avg * grad_avg) + eps
    else:
        avg = xp.sqrt(square_avg) + eps
    if momentum > 0:
        momentum_buffer = momentum * momentum_buffer + g / avg
        param = param - lr * momentum_buffer
    else:
        param = param - lr * (g / avg)
    return param, square_avg, grad_avg, momentum_buffer


@fallback("adagrad_step")
def adagrad_step(xp: Any, param: Array, grad: Array, state_sum: Array, *, step: int,
                 lr: float, lr_decay: float, weight_decay: float, eps: float,
                 maximize: bool) -> tuple[Array, Array]:
    """One Adagrad update; returns ``(param, state_sum)``. ``step`` counts from 1."""
    g = -grad if maximize else grad
    if weight_decay != 0:
        g = g + weight_decay * param
    clr = lr / (1.0 + (step - 1) * lr_decay)
    state_sum = state_sum + g * g
    return param - clr * (g / (xp.sqrt(state_sum) + eps)), state_sum


def newton_schulz(xp: Any, g: Array, coefficients: tuple[float, float, float], steps: int,
                  eps: float) -> Array:
    """Approximately orthogonalise the matrix ``g`` (push its singular values towards 1).

    Runs ``steps`` iterations of the quintic ``X <- a X + (b A + c A A) X`` with
    ``A = X X^T`` on ``X = g / max(||g||_F, eps)``, working on the wide orientation
    (rows <= columns) so that ``A`` is the smaller Gram matrix.
    """
    a, b, c = coefficients
    tall = g.shape[0] > g.shape[1]
    x = xp.matrix_transpose(g) if tall else g
    x = x / xp.clip(xp.sqrt(xp.sum(x * x)), min=eps)
    for _ in range(steps):
        gram = xp.matmul(x, xp.matrix_transpose(x))
        poly = b * gram + c * xp.matmul(gram, gram)
        x = a * x + xp.matmul(poly, x)
    return xp.matrix_transpose(x) if tall else x


@fallback("muon_step")
def muon_step(xp: Any, param: Array, grad: Array, momentum_buffer: Array, *, lr: float,
              adjusted_lr: float, weight_decay: float, momentum: float, nesterov: bool,
              ns_coefficients: tuple[float, float, float], ns_steps: int, eps: float
              ) -> tuple[Array, Array]:
    """One Muon update of a 2-D parameter; returns ``(param, momentum_buffer)``.

    ``lr`` scales the decoupled weight decay, ``adjusted_lr`` (the shape-scaled rate)
    the orthogonalised update.
    """
    buf = momentum_buffer + (1.0 - momentum) * (grad - momentum_buffer)
    update = grad + momentum * (buf - grad) if nesterov else buf
    update = newton_schulz(xp, update, ns_coefficients, ns_steps, eps)
    if weight_decay != 0:
        param = param * (1.0 - lr * weight_decay)
    return param - adjusted_lr * update, buf


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


@fallback("asgd_step")
def asgd_step(xp: Any, param: Array, grad: Array, ax: Array, *, eta: float, lambd: float,
              mu: float, weight_decay: float, maximize: bool) -> tuple[Array, Array]:
    """One ASGD update; returns ``(param, ax)``, ``ax`` the running average of the
    parameter (a copy of it while ``mu`` is 1)."""
    _, g = _decay(param, grad, eta, weight_decay, maximize)
    param = param * (1.0 - lambd * eta) - eta * g
    ax = xp.asarray(param, copy=True) if mu == 1 else ax + (param - ax) * mu
    return param, ax


@fallback("rprop_step")
def rprop_step(xp: Any, param: Array, grad: Array, prev: Array, step_size: Array, *,
               etaminus: float, etaplus: float, step_size_min: float, step_size_max: float,
               maximize: bool) -> tuple[Array, Array, Array]:
    """One Rprop update; returns ``(param, prev, step_size)``: each step size grows by
    ``etaplus`` where the gradient kept its sign and shrinks by ``etaminus`` where it
    flipped (that gradient then counts as 0), and the parameter moves by its step size
    against the gradient's sign."""
    g = -grad if maximize else grad
    sign = xp.sign(g * prev)
    factor = xp.where(sign > 0, etaplus, xp.where(sign < 0, etaminus,
                                                   xp.where(sign == 0, 1.0, sign)))
    factor = xp.astype(factor, param.dtype)
    step_size = xp.minimum(xp.maximum(step_size * factor, step_size_min), step_size_max)
    g = xp.where(factor == etaminus, xp.zeros_like(g), g)
    return param - xp.sign(g) * step_size, g, step_size


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


__all__ = ["sgd_step", "adam_step", "rmsprop_step", "adagrad_step", "muon_step",
           "newton_schulz", "asgd_step", "rprop_step", "adadelta_step", "adamax_step",
           "nadam_step", "radam_step", "lion_step"]
