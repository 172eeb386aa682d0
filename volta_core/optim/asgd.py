"""ASGD: averaged stochastic gradient descent."""

from __future__ import annotations

import struct
from collections.abc import Iterable

from ..tensor import Tensor
from . import kernels  # noqa: F401 - registers the kernel's fallback
from .optimizer import Optimizer


def _as_float32(value: float) -> float:
    # PyTorch keeps eta and mu as tensors of the default dtype (float32) and reads them
    # back for each step: the step uses the float32 value
    return struct.unpack("f", struct.pack("f", value))[0]


class ASGD(Optimizer):
    r"""Averaged SGD (Polyak & Juditsky, 1992), as PyTorch's ``optim.ASGD``.

    For each parameter :math:`\theta` with gradient :math:`g_t` at step :math:`t \ge 1`:

    .. math::
        g_t &\leftarrow -g_t \text{ if maximize};\quad
        g_t \leftarrow g_t + \lambda_{wd} \theta_{t-1} \text{ if } \lambda_{wd} \ne 0 \\
        \theta_t &= \theta_{t-1} (1 - \lambda \eta_{t-1}) - \eta_{t-1} g_t \\
        \bar\theta_t &= \theta_t \text{ if } \mu_{t-1} = 1 \text{ else }
            \bar\theta_{t-1} + \mu_{t-1} (\theta_t - \bar\theta_{t-1}) \\
        \eta_t &= \gamma / (1 + \lambda \gamma t)^\alpha,\quad
        \mu_t = 1 / \max(1, t - t_0)

    with :math:`\eta_0 = \gamma`, :math:`\mu_0 = 1`. The average :math:`\bar\theta` is kept
    in the state as ``ax`` (read it for evaluation). The update of one parameter is the
    ``asgd_step`` extension kernel.

    Args:
        params: parameters to optimize, or dicts defining parameter groups.
        lr: learning rate :math:`\gamma` (default: 1e-2).
        lambd: decay term :math:`\lambda` (default: 1e-4).
        alpha: power for the eta update (default: 0.75).
        t0: the step at which averaging starts (default: 1e6).
        weight_decay: L2 penalty :math:`\lambda_{wd}` (default: 0).
        maximize: maximize the objective instead of minimizing it (default: False).

    Example:
        >>> opt = vt.optim.ASGD(model.parameters(), lr=0.01, t0=100)
    """

    kernel_name = "asgd_step"

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-2,
                 lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                 weight_decay: float = 0.0, *, maximize: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, p: Tensor, group: dict) -> None:
        state = self._step_state(p, "ax")
        if state["step"] == 1:
            state["eta"] = _as_float32(group["lr"])
            state["mu"] = 1.0
        new_p, ax = self._kernel(p)(
            p.device.xp, p.array, p.grad.array, state["ax"].array, eta=state["eta"],
            lambd=group["lambd"], mu=state["mu"], weight_decay=group["weight_decay"],
            maximize=group["maximize"])
        self._write(p, new_p)
        state["ax"].array = ax
        step, lr = state["step"], group["lr"]
        state["eta"] = _as_float32(lr / (1 + group["lambd"] * lr * step) ** group["alpha"])
        state["mu"] = _as_float32(1 / max(1, step - group["t0"]))


__all__ = ["ASGD"]
