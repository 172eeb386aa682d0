"""Stochastic gradient descent, optionally with (Nesterov) momentum."""

from __future__ import annotations

from collections.abc import Iterable

from ..backend.kernels import get_kernel
from ..replay import host_args
from ..tensor import Tensor
from .optimizer import Optimizer, check_range


class SGD(Optimizer):
    r"""Stochastic gradient descent (optionally with momentum).

    For each parameter :math:`\theta` with gradient :math:`g_t` at step :math:`t`:

    .. math::
        g_t &\leftarrow -g_t \text{ if maximize} \\
        g_t &\leftarrow g_t + \lambda \theta_{t-1} \text{ if } \lambda \ne 0 \\
        b_t &= g_t \text{ if } t = 1 \text{ else } \mu b_{t-1} + (1 - \tau) g_t
               \text{ (when } \mu \ne 0) \\
        g_t &\leftarrow g_t + \mu b_t \text{ if nesterov else } b_t \\
        \theta_t &= \theta_{t-1} - \gamma g_t

    The update of one parameter is the ``sgd_step`` extension kernel.

    Args:
        params: parameters to optimize, or dicts defining parameter groups.
        lr: learning rate :math:`\gamma` (default: 1e-3).
        momentum: momentum factor :math:`\mu` (default: 0).
        dampening: dampening :math:`\tau` of the momentum (default: 0).
        weight_decay: L2 penalty :math:`\lambda` (default: 0).
        nesterov: use Nesterov momentum (default: False).
        maximize: maximize the objective instead of minimizing it (default: False).
        foreach: update all parameters of a group with one multi-tensor kernel where the
            backend has one (None or True, the default where available); False updates
            them one by one.
        fused: accepted for PyTorch compatibility (each update is already one fused
            kernel).

    Example:
        >>> opt = vt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        >>> opt.zero_grad(); loss_fn(model(x), y).backward(); opt.step()
    """

    kernel_name = "sgd_step"
    capture_safe = True

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-3,
                 momentum: float = 0.0, dampening: float = 0.0, weight_decay: float = 0.0,
                 nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, fused: bool | None = None) -> None:
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, fused=fused)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_range("SGD", "learning rate", group["lr"])
        check_range("SGD", "momentum", group["momentum"])
        check_range("SGD", "weight_decay", group["weight_decay"])
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("SGD: Nesterov momentum requires momentum > 0 and dampening 0, "
                             f"got momentum={group['momentum']}, "
                             f"dampening={group['dampening']}")

    def _step_group(self, group: dict) -> bool:
        if group.get("foreach") is False:
            return False
        names = ("momentum_buffer",) if group["momentum"] != 0 else ()
        found = self._group_arrays(group, *names)
        if found is None:
            return False
        params, arrays, grads, *bufs = found
        kern = get_kernel(params[0].device.backend, "sgd_step_multi")
        with host_args(lambda: self._multi_args(group), group):
            if not kern(params[0].device.xp, arrays, grads,
                        bufs[0] if bufs else [None] * len(params), **self._multi_args(group)):
                return False
        for p in params:  # updated in place
            p._version[0] += 1
            p._gen += 1  # its views re-derive (a NumPy view would show it anyway)
        if bufs:
            for p in params:
                self.state[p]["momentum_buffer"]._version[0] += 1
        return True

    @staticmethod
    def _multi_args(group: dict) -> dict:
        """The host arguments of the group's ``sgd_step_multi`` call."""
        return dict(lr=group["lr"], momentum=group["momentum"], dampening=group["dampening"],
                    weight_decay=group["weight_decay"], nesterov=group["nesterov"],
                    maximize=group["maximize"])

    def _update(self, p: Tensor, group: dict) -> None:
        state = self.state[p]
        buf = state.get("momentum_buffer")
        new_p, new_buf = self._kernel(p)(
            p.device.xp, p.array, p.grad.array, None if buf is None else buf.array,
            lr=group["lr"], momentum=group["momentum"], dampening=group["dampening"],
            weight_decay=group["weight_decay"], nesterov=group["nesterov"],
            maximize=group["maximize"])
        self._write(p, new_p)
        if group["momentum"] != 0:
            if buf is None:
                state["momentum_buffer"] = Tensor._make(new_buf, p.device)
            else:
                buf.array = new_buf


__all__ = ["SGD"]

