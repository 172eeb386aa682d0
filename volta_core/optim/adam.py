"""Adam and AdamW."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..backend.kernels import get_kernel
from ..replay import host_args
from ..tensor import Tensor
from .optimizer import Optimizer, check_betas


class Adam(Optimizer):
    r"""Adam: adaptive moment estimation (Kingma & Ba, 2015).

    For each parameter :math:`\theta` with gradient :math:`g_t` at step :math:`t \ge 1`:

    .. math::
        g_t &\leftarrow -g_t \text{ if maximize} \\
        g_t &\leftarrow g_t + \lambda \theta_{t-1}
            \quad (\text{AdamW instead: } \theta_{t-1} \leftarrow (1 - \gamma\lambda)
            \theta_{t-1}) \\
        m_t &= \beta_1 m_{t-1} + (1 - \beta_1) g_t \\
        v_t &= \beta_2 v_{t-1} + (1 - \beta_2) g_t^2 \\
        \hat v_t &= \max(\hat v_{t-1}, v_t) \text{ if amsgrad else } v_t \\
        \theta_t &= \theta_{t-1} - \frac{\gamma}{1 - \beta_1^t}
            \frac{m_t}{\sqrt{\hat v_t} / \sqrt{1 - \beta_2^t} + \epsilon}

    with :math:`m_0 = v_0 = \hat v_0 = 0`. The update of one parameter is the
    ``adam_step`` extension kernel.

    Args:
        params: parameters to optimize, or dicts defining parameter groups.
        lr: learning rate :math:`\gamma` (default: 1e-3).
        betas: coefficients :math:`(\beta_1, \beta_2)` of the running averages of the
            gradient and its square (default: (0.9, 0.999)).
        eps: term added to the denominator for stability (default: 1e-8).
        weight_decay: weight decay :math:`\lambda`, added to the gradient (L2) for Adam,
            decoupled for AdamW (default: 0).
        amsgrad: use the AMSGrad variant (default: False).
        maximize: maximize the objective instead of minimizing it (default: False).
        decoupled_weight_decay: apply weight decay as AdamW does (default: False).
        capturable: keep the step count on the GPU (cuda parameters), so that the step
            can be captured in a CUDA graph (``vt.cuda.graph``) (default: False).
        foreach: update all parameters of a group with one multi-tensor kernel where the
            backend has one (None or True, the default where available); False updates
            them one by one.
        fused: accepted for PyTorch compatibility (each update is already one fused
            kernel).

    Example:
        >>> opt = vt.optim.Adam(model.parameters(), lr=1e-3)
    """

    kernel_name = "adam_step"
    capture_safe = True  # with capturable=True (checked per group in Optimizer.step)
    live_update = True

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, maximize: bool = False,
                 decoupled_weight_decay: bool = False, capturable: bool = False,
                 foreach: bool | None = None, fused: bool | None = None) -> None:
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize,
                        decoupled_weight_decay=decoupled_weight_decay,
                        capturable=capturable, foreach=foreach, fused=fused)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_betas(type(self).__name__, group)

    def _step_group(self, group: dict) -> bool:
        if group["amsgrad"] or group["capturable"] or group.get("foreach") is False:
            return False
        found = self._group_arrays(group, "exp_avg", "exp_avg_sq")
        if found is None:
            return False
        params, arrays, grads, ms, vs = found
        hp = self._multi_args(group, params)
        if hp is None:
            return False
        kern = get_kernel(params[0].device.backend, "adam_step_multi")
        with host_args(lambda: self._multi_args(group, params, done=True), group):
            if not kern(params[0].device.xp, arrays, grads, ms, vs, **hp):
                return False
        for p in params:  # updated in place
            state = self.state[p]
            state["step"] = hp["step"]
            p._version[0] += 1
            p._gen += 1  # its views re-derive (a NumPy view would show it anyway)
            state["exp_avg"]._version[0] += 1
            state["exp_avg_sq"]._version[0] += 1
        return True

    def _multi_args(self, group: dict, params: list, done: bool = False) -> dict | None:
        """The host arguments of the group's next ``adam_step_multi`` call, or with
        ``done`` of the call that advanced the step counts to what they are (None when the
        parameters' step counts differ)."""
        steps = {self.state[p].get("step") for p in params}
        if len(steps) != 1 or type(step := next(iter(steps))) is not int:
            return None
        beta1, beta2 = group["betas"]
        return dict(step=step if done else step + 1, lr=group["lr"], beta1=beta1,
                    beta2=beta2, eps=group["eps"], weight_decay=group["weight_decay"],
                    maximize=group["maximize"], decoupled=group["decoupled_weight_decay"])

    def _kernel_args(self, state: dict, group: dict, count: Any = None) -> dict | None:
        if count is None:
            count = state.get("step")
            if type(count) is not int:
                return None
        beta1, beta2 = group["betas"]
        return dict(step=count, lr=group["lr"], beta1=beta1, beta2=beta2, eps=group["eps"],
                    weight_decay=group["weight_decay"], amsgrad=group["amsgrad"],
                    maximize=group["maximize"], decoupled=group["decoupled_weight_decay"])

    def _update(self, p: Tensor, group: dict) -> None:
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["exp_avg"] = self._zeros(p)
            state["exp_avg_sq"] = self._zeros(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = self._zeros(p)
        if group["capturable"] and p.device.type == "cuda":
            step = state["step"]
            if not isinstance(step, Tensor):  # first step, or a loaded state dict
                step = state["step"] = Tensor._make(
                    p.device.xp.full((), float(step), dtype=p.device.xp.float32), p.device)
            step.array += 1  # on the GPU: a CUDA graph replays the increment
            step._version[0] += 1
            count = step.array
        else:
            if isinstance(state["step"], Tensor):  # capturable switched off
                state["step"] = int(state["step"].item())
            state["step"] += 1
            count = state["step"]
        vmax = state.get("max_exp_avg_sq")
        with self._host_args(p, group):
            new_p, m, v, new_vmax = self._kernel(p)(
                p.device.xp, p.array, p.grad.array, state["exp_avg"].array,
                state["exp_avg_sq"].array, None if vmax is None else vmax.array,
                **self._kernel_args(state, group, count))
        self._write(p, new_p)
        state["exp_avg"].array = m
        state["exp_avg_sq"].array = v
        if group["amsgrad"]:
            if vmax is None:  # amsgrad switched on after the state was created
                state["max_exp_avg_sq"] = Tensor._make(new_vmax, p.device)
            else:
                vmax.array = new_vmax


class AdamW(Adam):
    r"""AdamW: Adam with decoupled weight decay (Loshchilov & Hutter, 2019).

    The algorithm is :class:`Adam`'s, except that weight decay shrinks the parameter
    directly, :math:`\theta_{t-1} \leftarrow (1 - \gamma\lambda)\theta_{t-1}`, instead
    of being added to the gradient. Same arguments as :class:`Adam`; ``weight_decay``
    defaults to 1e-2.

    Example:
        >>> opt = vt.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, capturable: bool = False,
                 foreach: bool | None = None, fused: bool | None = None) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         amsgrad=amsgrad, maximize=maximize, decoupled_weight_decay=True,
                         capturable=capturable, foreach=foreach, fused=fused)


__all__ = ["Adam", "AdamW"]
