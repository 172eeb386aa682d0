"""Rprop: resilient backpropagation."""

from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from . import kernels  # noqa: F401 - registers the kernel's fallback
from .optimizer import Optimizer


class Rprop(Optimizer):
    r"""Rprop (Riedmiller & Braun, 1993), as PyTorch's ``optim.Rprop``: every weight has its
    own step size, which grows by :math:`\eta_+` while the gradient keeps its sign and
    shrinks by :math:`\eta_-` when it flips; the weight moves by its step size against the
    gradient's sign, and a gradient that flipped sign counts as zero for that step (and
    for the next comparison).

    .. math::
        s_t &= \mathrm{clamp}(s_{t-1} \cdot f_t, \Gamma_{min}, \Gamma_{max}),\quad
        f_t = \eta_+ \text{ if } g_t g_{t-1} > 0,\ \eta_- \text{ if } < 0,\ 1 \text{ else} \\
        g_t &\leftarrow 0 \text{ where } f_t = \eta_- \\
        \theta_t &= \theta_{t-1} - \mathrm{sign}(g_t)\, s_t

    with :math:`s_0 = \gamma` and :math:`g_0 = 0`. The update of one parameter is the
    ``rprop_step`` extension kernel.

    Args:
        params: parameters to optimize, or dicts defining parameter groups.
        lr: the initial step size :math:`\gamma` (default: 1e-2).
        etas: :math:`(\eta_-, \eta_+)`, the factors that shrink and grow step sizes
            (default: (0.5, 1.2)).
        step_sizes: :math:`(\Gamma_{min}, \Gamma_{max})`, the step size bounds
            (default: (1e-6, 50)).
        maximize: maximize the objective instead of minimizing it (default: False).

    Example:
        >>> opt = vt.optim.Rprop(model.parameters(), lr=0.01)
    """

    kernel_name = "rprop_step"

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *,
                 maximize: bool = False) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes),
                        maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, p: Tensor, group: dict) -> None:
        state = self._step_state(p, "prev")
        xp = p.device.xp
        if state["step"] == 1:
            state["step_size"] = Tensor._make(xp.full_like(p.array, group["lr"]), p.device)
        etaminus, etaplus = group["etas"]
        lo, hi = group["step_sizes"]
        new_p, prev, step_size = self._kernel(p)(
            xp, p.array, p.grad.array, state["prev"].array, state["step_size"].array,
            etaminus=etaminus, etaplus=etaplus, step_size_min=lo, step_size_max=hi,
            maximize=group["maximize"])
        self._write(p, new_p)
        state["prev"].array = prev
        state["step_size"].array = step_size


__all__ = ["Rprop"]
