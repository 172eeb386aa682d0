"""Adadelta."""

from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from . import kernels  # noqa: F401 - registers the kernel's fallback
from .optimizer import Optimizer, check_range


class Adadelta(Optimizer):
    r"""Adadelta: an adaptive learning rate from running averages (Zeiler, 2012).

    For each parameter :math:`\theta` with gradient :math:`g_t`:

    .. math::
        g_t &\leftarrow -g_t \text{ if maximize} \\
        g_t &\leftarrow g_t + \lambda \theta_{t-1} \text{ if } \lambda \ne 0 \\
        v_t &= \rho v_{t-1} + (1 - \rho) g_t^2 \\
        \Delta x_t &= \frac{\sqrt{u_{t-1} + \epsilon}}{\sqrt{v_t + \epsilon}} g_t \\
        u_t &= \rho u_{t-1} + (1 - \rho) \Delta x_t^2 \\
        \theta_t &= \theta_{t-1} - \gamma \Delta x_t

    with :math:`v_0 = u_0 = 0`. The update of one parameter is the ``adadelta_step``
    extension kernel.

    Args:
        params: parameters to optimize, or dicts defining parameter groups.
        lr: coefficient :math:`\gamma` scaling the delta (default: 1.0).
        rho: coefficient of the running averages (default: 0.9).
        eps: term added inside the square roots for stability (default: 1e-6).
        weight_decay: L2 penalty :math:`\lambda` (default: 0).
        maximize: maximize the objective instead of minimizing it (default: False).

    Example:
        >>> opt = vt.optim.Adadelta(model.parameters())
    """

    kernel_name = "adadelta_step"

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1.0,
                 rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0.0, *,
                 maximize: bool = False) -> None:
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_range("Adadelta", "learning rate", group["lr"])
        check_range("Adadelta", "rho value", group["rho"], 0.0, 1.0)
        check_range("Adadelta", "epsilon value", group["eps"])
        check_range("Adadelta", "weight_decay value", group["weight_decay"])

    def _update(self, p: Tensor, group: dict) -> None:
        state = self._step_state(p, "square_avg", "acc_delta")
        new_p, v, u = self._kernel(p)(
            p.device.xp, p.array, p.grad.array, state["square_avg"].array,
            state["acc_delta"].array, lr=group["lr"], rho=group["rho"], eps=group["eps"],
            weight_decay=group["weight_decay"], maximize=group["maximize"])
        self._write(p, new_p)
        state["square_avg"].array = v
        state["acc_delta"].array = u


__all__ = ["Adadelta"]
