"""RAdam."""

from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from . import kernels  # noqa: F401 - registers the kernel's fallback
from .optimizer import Optimizer, check_betas


class RAdam(Optimizer):
    r"""RAdam: Adam with a rectified adaptive learning rate (Liu et al., 2020).

    For each parameter :math:`\theta` with gradient :math:`g_t` at step :math:`t \ge 1`:

    .. math::
        g_t &\leftarrow -g_t \text{ if maximize} \\
        g_t &\leftarrow g_t + \lambda \theta_{t-1}
            \quad (\text{decoupled: } \theta_{t-1} \leftarrow (1 - \gamma\lambda)
            \theta_{t-1}) \\
        m_t &= \beta_1 m_{t-1} + (1 - \beta_1) g_t, \quad
            v_t = \beta_2 v_{t-1} + (1 - \beta_2) g_t^2 \\
        \rho_\infty &= 2 / (1 - \beta_2) - 1, \quad
            \rho_t = \rho_\infty - 2 t \beta_2^t / (1 - \beta_2^t) \\
        r_t &= \sqrt{\frac{(\rho_t - 4)(\rho_t - 2)\rho_\infty}
            {(\rho_\infty - 4)(\rho_\infty - 2)\rho_t}} \\
        \theta_t &= \theta_{t-1} - \frac{\gamma}{1 - \beta_1^t} m_t \cdot
            \begin{cases} r_t \sqrt{1 - \beta_2^t} / (\sqrt{v_t} + \epsilon)
            & \rho_t > 5 \\ 1 & \text{otherwise} \end{cases}

    with :math:`m_0 = v_0 = 0`. The update of one parameter is the ``radam_step``
    extension kernel.

    Args:
        params: parameters to optimize, or dicts defining parameter groups.
        lr: learning rate :math:`\gamma` (default: 1e-3).
        betas: coefficients :math:`(\beta_1, \beta_2)` (default: (0.9, 0.999)).
        eps: term added to the denominator for stability (default: 1e-8).
        weight_decay: weight decay :math:`\lambda` (default: 0).
        decoupled_weight_decay: apply weight decay as AdamW does (default: False).
        maximize: maximize the objective instead of minimizing it (default: False).

    Example:
        >>> opt = vt.optim.RAdam(model.parameters(), lr=1e-3)
    """

    kernel_name = "radam_step"
    live_update = True

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *,
                 maximize: bool = False) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_betas("RAdam", group)

    def _kernel_args(self, state: dict, group: dict) -> dict | None:
        beta1, beta2 = group["betas"]
        return dict(step=state["step"], lr=group["lr"], beta1=beta1, beta2=beta2,
                    eps=group["eps"], weight_decay=group["weight_decay"],
                    maximize=group["maximize"], decoupled=group["decoupled_weight_decay"])

    def _update(self, p: Tensor, group: dict) -> None:
        state = self._step_state(p, "exp_avg", "exp_avg_sq")
        with self._host_args(p, group):
            new_p, m, v = self._kernel(p)(
                p.device.xp, p.array, p.grad.array, state["exp_avg"].array,
                state["exp_avg_sq"].array, **self._kernel_args(state, group))
        self._write(p, new_p)
        state["exp_avg"].array = m
        state["exp_avg_sq"].array = v


__all__ = ["RAdam"]
