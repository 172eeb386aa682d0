"""Adamax."""

from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from . import kernels  # noqa: F401 - registers the kernel's fallback
from .optimizer import Optimizer, check_betas


class Adamax(Optimizer):
    r"""Adamax: Adam with the infinity norm (Kingma & Ba, 2015, section 7).

    For each parameter :math:`\theta` with gradient :math:`g_t` at step :math:`t \ge 1`:

    .. math::
        g_t &\leftarrow -g_t \text{ if maximize} \\
        g_t &\leftarrow g_t + \lambda \theta_{t-1} \text{ if } \lambda \ne 0 \\
        m_t &= \beta_1 m_{t-1} + (1 - \beta_1) g_t \\
        u_t &= \max(\beta_2 u_{t-1}, |g_t| + \epsilon) \\
        \theta_t &= \theta_{t-1} - \frac{\gamma}{1 - \beta_1^t} \frac{m_t}{u_t}

    with :math:`m_0 = u_0 = 0`. The update of one parameter is the ``adamax_step``
    extension kernel.

    Args:
        params: parameters to optimize, or dicts defining parameter groups.
        lr: learning rate :math:`\gamma` (default: 2e-3).
        betas: coefficients :math:`(\beta_1, \beta_2)` (default: (0.9, 0.999)).
        eps: term added to the norm for stability (default: 1e-8).
        weight_decay: L2 penalty :math:`\lambda` (default: 0).
        maximize: maximize the objective instead of minimizing it (default: False).

    Example:
        >>> opt = vt.optim.Adamax(model.parameters(), lr=2e-3)
    """

    kernel_name = "adamax_step"
    live_update = True

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, *, maximize: bool = False) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_betas("Adamax", group)

    def _kernel_args(self, state: dict, group: dict) -> dict | None:
        beta1, beta2 = group["betas"]
        return dict(step=state["step"], lr=group["lr"], beta1=beta1, beta2=beta2,
                    eps=group["eps"], weight_decay=group["weight_decay"],
                    maximize=group["maximize"])

    def _update(self, p: Tensor, group: dict) -> None:
        state = self._step_state(p, "exp_avg", "exp_inf")
        with self._host_args(p, group):
            new_p, m, u = self._kernel(p)(
                p.device.xp, p.array, p.grad.array, state["exp_avg"].array,
                state["exp_inf"].array, **self._kernel_args(state, group))
        self._write(p, new_p)
        state["exp_avg"].array = m
        state["exp_inf"].array = u


__all__ = ["Adamax"]
