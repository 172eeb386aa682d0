"""RMSprop."""

from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from .optimizer import Optimizer, check_range


class RMSprop(Optimizer):
    r"""RMSprop: divide the gradient by a running RMS of its recent magnitudes (Hinton).

    For each parameter :math:`\theta` with gradient :math:`g_t` at step :math:`t`:

    .. math::
        g_t &\leftarrow -g_t \text{ if maximize} \\
        g_t &\leftarrow g_t + \lambda \theta_{t-1} \text{ if } \lambda \ne 0 \\
        v_t &= \alpha v_{t-1} + (1 - \alpha) g_t^2 \\
        d_t &= \sqrt{v_t - \bar g_t^2} + \epsilon, \quad
            \bar g_t = \alpha \bar g_{t-1} + (1 - \alpha) g_t \text{ if centered, else }
            d_t = \sqrt{v_t} + \epsilon \\
        b_t &= \mu b_{t-1} + g_t / d_t, \quad \theta_t = \theta_{t-1} - \gamma b_t
            \text{ if } \mu > 0 \text{, else } \theta_t = \theta_{t-1} - \gamma g_t / d_t

    with all running averages starting at 0. The update of one parameter is the
    ``rmsprop_step`` extension kernel.

    Args:
        params: parameters to optimize, or dicts defining parameter groups.
        lr: learning rate :math:`\gamma` (default: 1e-2).
        alpha: smoothing constant :math:`\alpha` (default: 0.99).
        eps: term added to the denominator for stability (default: 1e-8).
        weight_decay: L2 penalty :math:`\lambda` (default: 0).
        momentum: momentum factor :math:`\mu` (default: 0).
        centered: normalise by an estimate of the gradient's variance (default: False).
        maximize: maximize the objective instead of minimizing it (default: False).
    """

    kernel_name = "rmsprop_step"

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-2,
                 alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0.0,
                 momentum: float = 0.0, centered: bool = False, *,
                 maximize: bool = False) -> None:
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                        momentum=momentum, centered=centered, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        for key in ("lr", "eps", "momentum", "weight_decay", "alpha"):
            check_range("RMSprop", key, group[key])

    def _update(self, p: Tensor, group: dict) -> None:
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["square_avg"] = self._zeros(p)
        if group["momentum"] > 0 and "momentum_buffer" not in state:
            state["momentum_buffer"] = self._zeros(p)
        if group["centered"] and "grad_avg" not in state:
            state["grad_avg"] = self._zeros(p)
        state["step"] += 1
        ga, buf = state.get("grad_avg"), state.get("momentum_buffer")
        new_p, sq, new_ga, new_buf = self._kernel(p)(
            p.device.xp, p.array, p.grad.array, state["square_avg"].array,
            None if ga is None else ga.array, None if buf is None else buf.array,
            lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
            weight_decay=group["weight_decay"], momentum=group["momentum"],
            centered=group["centered"], maximize=group["maximize"])
        self._write(p, new_p)
        state["square_avg"].array = sq
        if group["centered"]:
            ga.array = new_ga
        if group["momentum"] > 0:
            buf.array = new_buf


__all__ = ["RMSprop"]
