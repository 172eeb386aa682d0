"""Adagrad."""

from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from .optimizer import Optimizer, check_range


class Adagrad(Optimizer):
    r"""Adagrad: per-coordinate rates from the sum of squared gradients (Duchi et al.).

    For each parameter :math:`\theta` with gradient :math:`g_t` at step :math:`t \ge 1`:

    .. math::
        g_t &\leftarrow -g_t \text{ if maximize} \\
        g_t &\leftarrow g_t + \lambda \theta_{t-1} \text{ if } \lambda \ne 0 \\
        \tilde\gamma &= \gamma / (1 + (t - 1)\eta) \\
        s_t &= s_{t-1} + g_t^2 \\
        \theta_t &= \theta_{t-1} - \tilde\gamma \, g_t / (\sqrt{s_t} + \epsilon)

    with :math:`s_0` = ``initial_accumulator_value``. The update of one parameter is the
    ``adagrad_step`` extension kernel.

    Args:
        params: parameters to optimize, or dicts defining parameter groups.
        lr: learning rate :math:`\gamma` (default: 1e-2).
        lr_decay: learning-rate decay :math:`\eta` (default: 0).
        weight_decay: L2 penalty :math:`\lambda` (default: 0).
        initial_accumulator_value: starting value of the sum :math:`s_0` (default: 0).
        eps: term added to the denominator for stability (default: 1e-10).
        maximize: maximize the objective instead of minimizing it (default: False).
    """

    kernel_name = "adagrad_step"
    live_update = True

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-2,
                 lr_decay: float = 0.0, weight_decay: float = 0.0,
                 initial_accumulator_value: float = 0.0, eps: float = 1e-10, *,
                 maximize: bool = False) -> None:
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        for key in ("lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"):
            check_range("Adagrad", key, group[key])

    def _init_state(self, p: Tensor, group: dict) -> dict:
        state = self.state[p]
        if not state:
            xp = p.device.xp
            state["step"] = 0
            state["sum"] = Tensor._make(
                xp.full_like(p.array, group["initial_accumulator_value"]), p.device)
        return state

    def add_param_group(self, param_group: dict) -> None:
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        for p in group["params"]:  # PyTorch creates Adagrad's state up front
            self._init_state(p, group)

    def _kernel_args(self, state: dict, group: dict) -> dict | None:
        return dict(step=state["step"], lr=group["lr"], lr_decay=group["lr_decay"],
                    weight_decay=group["weight_decay"], eps=group["eps"],
                    maximize=group["maximize"])

    def _update(self, p: Tensor, group: dict) -> None:
        state = self._init_state(p, group)
        state["step"] += 1
        with self._host_args(p, group):
            new_p, new_sum = self._kernel(p)(
                p.device.xp, p.array, p.grad.array, state["sum"].array,
                **self._kernel_args(state, group))
        self._write(p, new_p)
        state["sum"].array = new_sum


__all__ = ["Adagrad"]
