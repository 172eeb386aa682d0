"""NAdam."""

from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from . import kernels  # noqa: F401 - registers the kernel's fallback
from .optimizer import Optimizer, check_betas, check_range


class NAdam(Optimizer):
    r"""NAdam: Adam with Nesterov momentum (Dozat, 2016).

    For each parameter :math:`\theta` with gradient :math:`g_t` at step :math:`t \ge 1`:

    .. math::
        g_t &\leftarrow -g_t \text{ if maximize} \\
        g_t &\leftarrow g_t + \lambda \theta_{t-1}
            \quad (\text{decoupled: } \theta_{t-1} \leftarrow (1 - \gamma\lambda)
            \theta_{t-1}) \\
        \mu_t &= \beta_1 (1 - \tfrac12 \, 0.96^{t \psi}), \quad
            \mu_{t+1} = \beta_1 (1 - \tfrac12 \, 0.96^{(t + 1) \psi}) \\
        m_t &= \beta_1 m_{t-1} + (1 - \beta_1) g_t, \quad
            v_t = \beta_2 v_{t-1} + (1 - \beta_2) g_t^2 \\
        d_t &= \sqrt{v_t / (1 - \beta_2^t)} + \epsilon \\
        \theta_t &= \theta_{t-1}
            - \gamma \frac{1 - \mu_t}{1 - \prod_{i \le t} \mu_i} \frac{g_t}{d_t}
            - \gamma \frac{\mu_{t+1}}{1 - \prod_{i \le t + 1} \mu_i} \frac{m_t}{d_t}

    with :math:`m_0 = v_0 = 0` and :math:`\psi` the momentum decay. The update of one
    parameter is the ``nadam_step`` extension kernel.

    Args:
        params: parameters to optimize, or dicts defining parameter groups.
        lr: learning rate :math:`\gamma` (default: 2e-3).
        betas: coefficients :math:`(\beta_1, \beta_2)` (default: (0.9, 0.999)).
        eps: term added to the denominator for stability (default: 1e-8).
        weight_decay: weight decay :math:`\lambda` (default: 0).
        momentum_decay: :math:`\psi` (default: 4e-3).
        decoupled_weight_decay: apply weight decay as AdamW does (NAdamW) (default: False).
        maximize: maximize the objective instead of minimizing it (default: False).

    Example:
        >>> opt = vt.optim.NAdam(model.parameters(), lr=2e-3)
    """

    kernel_name = "nadam_step"
    live_update = True

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, maximize: bool = False) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_betas("NAdam", group)
        check_range("NAdam", "momentum_decay", group["momentum_decay"])

    @staticmethod
    def _mu(group: dict, step: int) -> float:
        beta1 = group["betas"][0]
        return beta1 * (1.0 - 0.5 * 0.96 ** (step * group["momentum_decay"]))

    def _advance_host_state(self, state: dict, group: dict, step: int) -> None:
        """What step ``step`` does to the state's Python numbers: the running product of
        the momentum schedule (a replayed step, see ``volta_core.replay``, calls it too)."""
        state["mu_product"] = float(state["mu_product"]) * self._mu(group, step)

    def _kernel_args(self, state: dict, group: dict) -> dict | None:
        step = state["step"]
        beta1, beta2 = group["betas"]
        mu_product, mu_next = state["mu_product"], self._mu(group, step + 1)
        return dict(step=step, lr=group["lr"], beta1=beta1, beta2=beta2, eps=group["eps"],
                    weight_decay=group["weight_decay"], mu=self._mu(group, step),
                    mu_next=mu_next, mu_product=mu_product,
                    mu_product_next=mu_product * mu_next, maximize=group["maximize"],
                    decoupled=group["decoupled_weight_decay"])

    def _update(self, p: Tensor, group: dict) -> None:
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["mu_product"] = 1.0
            state["exp_avg"] = self._zeros(p)
            state["exp_avg_sq"] = self._zeros(p)
        state["step"] += 1
        self._advance_host_state(state, group, state["step"])
        with self._host_args(p, group):
            new_p, m, v = self._kernel(p)(
                p.device.xp, p.array, p.grad.array, state["exp_avg"].array,
                state["exp_avg_sq"].array, **self._kernel_args(state, group))
        self._write(p, new_p)
        state["exp_avg"].array = m
        state["exp_avg_sq"].array = v


__all__ = ["NAdam"]
