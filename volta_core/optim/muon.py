"""Muon: momentum with orthogonalised updates for 2-D weights."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from ..tensor import Tensor
from .optimizer import Optimizer, check_range

_ADJUST = ("original", "match_rms_adamw")


class Muon(Optimizer):
    r"""Muon: MomentUm Orthogonalized by Newton-Schulz (Jordan et al., 2024).

    For each 2-D parameter :math:`\theta \in \mathbb{R}^{A \times B}` with gradient
    :math:`g_t`:

    .. math::
        b_t &= \mu b_{t-1} + (1 - \mu) g_t \quad (b_0 = 0) \\
        u_t &= g_t + \mu (b_t - g_t) \text{ if nesterov else } b_t \\
        O_t &= \mathrm{NS}_k(u_t) \\
        \theta_t &= (1 - \gamma\lambda)\theta_{t-1} - \tilde\gamma O_t

    :math:`\mathrm{NS}_k` runs ``ns_steps`` iterations of the quintic Newton-Schulz map
    :math:`X \leftarrow aX + (bA + cA^2)X`, :math:`A = XX^\top`, on
    :math:`X = u / \max(\lVert u\rVert_F, \epsilon)`, which drives the singular values of
    :math:`u` towards 1. The rate :math:`\tilde\gamma` is scaled by the shape:
    ``"original"`` (default) uses :math:`\gamma\sqrt{\max(1, A/B)}`,
    ``"match_rms_adamw"`` uses :math:`0.2\,\gamma\sqrt{\max(A, B)}`, matching the RMS of
    an AdamW update. The update of one parameter is the ``muon_step`` extension kernel.

    Muon is meant for the 2-D weight matrices of hidden layers. As in PyTorch, other
    parameters (biases, norms, embeddings if you prefer, conv kernels) are refused at
    construction with a clear error rather than silently updated another way: put them
    in an :class:`AdamW` optimizer next to this one (or reshape conv kernels yourself).

    Args:
        params: 2-D parameters to optimize, or dicts defining parameter groups.
        lr: learning rate :math:`\gamma` (default: 1e-3).
        weight_decay: decoupled weight decay :math:`\lambda` (default: 0.1).
        momentum: momentum factor :math:`\mu` (default: 0.95).
        nesterov: use Nesterov momentum (default: True).
        ns_coefficients: the quintic's coefficients :math:`(a, b, c)`
            (default: (3.4445, -4.775, 2.0315)).
        eps: floor of the norm used to normalise the update (default: 1e-7).
        ns_steps: Newton-Schulz iterations (default: 5).
        adjust_lr_fn: ``"original"``, ``"match_rms_adamw"``, None (``"original"``), or a
            callable ``fn(lr, shape) -> lr``.
    """

    kernel_name = "muon_step"

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], lr: float = 1e-3,
                 weight_decay: float = 0.1, momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = (3.4445, -4.775, 2.0315),
                 eps: float = 1e-7, ns_steps: int = 5,
                 adjust_lr_fn: str | Callable | None = None) -> None:
        if adjust_lr_fn is not None and not callable(adjust_lr_fn) and \
                adjust_lr_fn not in _ADJUST:
            raise ValueError(f"Muon: adjust_lr_fn must be one of {_ADJUST}, None or a "
                             f"callable, got {adjust_lr_fn!r}")
        self.adjust_lr_fn = adjust_lr_fn
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                        nesterov=nesterov, ns_coefficients=tuple(ns_coefficients), eps=eps,
                        ns_steps=ns_steps)
        super().__init__(params, defaults)

    def _check_group(self, group: dict) -> None:
        check_range("Muon", "learning rate", group["lr"])
        check_range("Muon", "weight_decay", group["weight_decay"])
        check_range("Muon", "momentum", group["momentum"], 0.0, 1.0, high_open=True)
        if int(group["ns_steps"]) != group["ns_steps"] or group["ns_steps"] < 1:
            raise ValueError(f"Muon: ns_steps must be a positive int, got {group['ns_steps']}")
        if len(group["ns_coefficients"]) != 3:
            raise ValueError("Muon: ns_coefficients must be three numbers (a, b, c), got "
                             f"{group['ns_coefficients']}")
        bad = [f"params[{i}] of shape {tuple(p.shape)}"
               for i, p in enumerate(group["params"]) if p.ndim != 2]
        if bad:
            raise ValueError("Muon only optimizes 2-D parameters, got " + ", ".join(bad)
                             + "; optimize biases, norms and other non-matrix parameters "
                             "with a second optimizer such as AdamW")

    def _adjusted_lr(self, lr: float, shape: tuple[int, ...]) -> float:
        fn = self.adjust_lr_fn
        if callable(fn):
            return float(fn(lr, shape))
        rows, cols = shape[0], shape[1]
        if fn == "match_rms_adamw":
            return 0.2 * lr * math.sqrt(max(rows, cols))
        return lr * math.sqrt(max(1.0, rows / cols))

    def _update(self, p: Tensor, group: dict) -> None:
        state = self._step_state(p, "momentum_buffer")
        buf = state["momentum_buffer"]
        new_p, new_buf = self._kernel(p)(
            p.device.xp, p.array, p.grad.array, buf.array, lr=group["lr"],
            adjusted_lr=self._adjusted_lr(group["lr"], p.shape),
            weight_decay=group["weight_decay"], momentum=group["momentum"],
            nesterov=group["nesterov"], ns_coefficients=tuple(group["ns_coefficients"]),
            ns_steps=int(group["ns_steps"]), eps=group["eps"])
        self._write(p, new_p)
        buf.array = new_buf


__all__ = ["Muon"]
