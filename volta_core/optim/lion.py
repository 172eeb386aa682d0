"""Lion."""

from __future__ import annotations

from collections.abc import Iterable

from ..tensor import Tensor
from . import kernels  # noqa: F401 - registers the kernel's fallback
from .optimizer import Optimizer, check_range


class Lion(Optimizer):
    r"""Lion: evolved sign momentum (Chen et al., 2023, "Symbolic Discovery of
    Optimization Algorithms").

    For each parameter :math:`\theta` with gradient :math:`g_t`:

    .. math::
        g_t &\leftarrow -g_t \text{ if maximize} \\
        c_t &= \beta_1 m_{t-1} + (1 - \beta_1) g_t \\
        \theta_t &= (1 - \gamma\lambda) \theta_{t-1} - \gamma \operatorname{sign}(c_t) \\
        m_t &= \beta_2 m_{t-1} + (1 - \beta_2) g_t

    with :math:`m_0 = 0` and decoupled weight decay :math:`\lambda`. PyTorch has no
    Lion; the defaults are the paper's. The update of one parameter is the
    ``lion_step`` extension kernel.

    Args:
        params: parameters to optimize, or dicts defining parameter groups.
        lr: learning rate :math:`\gamma` (default: 1e-4; typically 3-10x smaller than
            AdamW's).
        betas: coefficients :math:`(\beta_1, \beta_2)` (default: (0.9, 0.99)).
        weight_decay: decoupled weight decay :math:`\lambda` (default: 0).
        maximize: maximize the objective instead of minimizing it (default: False).

    Example:
        >>> opt = vt.optim.Lion(model.parameters(), lr=1e-4, weight_decay=1.0)
    """

    kernel_name = "lion_step"

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-4,
                 betas: tuple[float, float] = (0.9, 0.99), weight_decay: float = 0.0, *,
                 maximize: bool = False) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), weight_decay=weight_decay,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_range("Lion", "learning rate", group["lr"])
        check_range("Lion", "weight_decay value", group["weight_decay"])
        b1, b2 = group["betas"]
        check_range("Lion", "beta parameter at index 0", b1, 0.0, 1.0)
        check_range("Lion", "beta parameter at index 1", b2, 0.0, 1.0)

    def _update(self, p: Tensor, group: dict) -> None:
        state = self.state[p]
        if not state:
            state["exp_avg"] = self._zeros(p)
        beta1, beta2 = group["betas"]
        new_p, m = self._kernel(p)(
            p.device.xp, p.array, p.grad.array, state["exp_avg"].array, lr=group["lr"],
            beta1=beta1, beta2=beta2, weight_decay=group["weight_decay"],
            maximize=group["maximize"])
        self._write(p, new_p)
        state["exp_avg"].array = m


__all__ = ["Lion"]
