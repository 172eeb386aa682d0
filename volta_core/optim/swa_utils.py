"""Weight averaging (``torch.optim.swa_utils``): ``AveragedModel`` keeps a running average of
a model's parameters (SWA's equal-weight mean, or an exponential moving average with
``get_ema_multi_avg_fn``), ``SWALR`` anneals the learning rate to a constant SWA rate, and
``update_bn`` recomputes BatchNorm statistics for the averaged weights."""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Iterable
from typing import Any

from ..autograd.grad_mode import no_grad
from ..creation import tensor
from ..nn.module import Module
from ..tensor import Tensor
from .optimizer import Optimizer
from .scheduler import LRScheduler


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable:
    """An ``AveragedModel`` update: ``avg = decay * avg + (1 - decay) * p`` for each."""
    def ema_update(averaged: list, current: list, num_averaged: Any) -> None:
        for a, p in zip(averaged, current):
            a.copy_(a * decay + p * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn() -> Callable:
    """The equal-weight running mean, ``avg + (p - avg) / (n + 1)``, for each."""
    def swa_update(averaged: list, current: list, num_averaged: Any) -> None:
        n = float(num_averaged)
        for a, p in zip(averaged, current):
            a.copy_(a + (p - a) / (n + 1))
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable:
    """The per-parameter form of :func:`get_ema_multi_avg_fn`."""
    return lambda averaged, current, num_averaged: decay * averaged + (1 - decay) * current


def get_swa_avg_fn() -> Callable:
    """The per-parameter form of :func:`get_swa_multi_avg_fn`."""
    return lambda averaged, current, num_averaged: averaged + (current - averaged) / (
        float(num_averaged) + 1)


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers, with ``use_buffers``) are the
    average of ``model``'s at each :meth:`update_parameters` call.

    Args:
        model: the model to average.
        device: where the copy lives (default: where ``model`` is).
        avg_fn: ``avg_fn(averaged, current, num_averaged)`` returning the new average of
            one parameter (default: the equal-weight mean).
        multi_avg_fn: ``multi_avg_fn(averaged_list, current_list, num_averaged)`` updating
            the averages in place (takes precedence).
        use_buffers: average the buffers too (else they are copied from ``model``).
    """

    def __init__(self, model: Module, device: Any = None, avg_fn: Callable | None = None,
                 multi_avg_fn: Callable | None = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype="int64", device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _tensors(self, model: Module) -> list[Tensor]:
        params = model.parameters()
        return list(itertools.chain(params, model.buffers()) if self.use_buffers else params)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current parameters into the average."""
        with no_grad():
            mine = [t.detach() for t in self._tensors(self.module)]
            theirs = [t.detach().to(a.device) for t, a in zip(self._tensors(model), mine)]
            n = int(self.n_averaged.item())
            if n == 0:
                for a, p in zip(mine, theirs):
                    a.copy_(p)
            elif self.multi_avg_fn is not None:
                self.multi_avg_fn(mine, theirs, self.n_averaged.to(mine[0].device))
            else:
                fn = self.avg_fn or get_swa_avg_fn()
                for a, p in zip(mine, theirs):
                    a.copy_(fn(a, p, self.n_averaged.to(a.device)))
            if not self.use_buffers:  # keep the buffers in sync with the source model
                for b_avg, b in zip(self.module.buffers(), model.buffers()):
                    b_avg.detach().copy_(b.detach().to(b_avg.device))
            self.n_averaged.add_(1)


@no_grad()
def update_bn(loader: Iterable, model: Module, device: Any = None) -> None:
    """Recompute the running statistics of ``model``'s BatchNorm layers over ``loader``
    (a cumulative average over every batch), as SWA needs for averaged weights."""
    from ..nn.normalization import _BatchNorm

    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    for batch in loader:
        x = batch[0] if isinstance(batch, (list, tuple)) else batch
        if device is not None:
            x = x.to(device)
        model(x)
    for m, momentum in momenta.items():
        m.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's rate from its current value to ``swa_lr`` over
    ``anneal_epochs`` steps (cosine or linear), then keep it there.

    Args:
        optimizer: the optimizer.
        swa_lr: the SWA rate (one number, or one per group).
        anneal_epochs: steps of the annealing (default 10; 0 jumps at once).
        anneal_strategy: ``"cos"`` or ``"linear"``.
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float | list, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        groups = optimizer.param_groups
        lrs = list(swa_lr) if isinstance(swa_lr, (list, tuple)) else [swa_lr] * len(groups)
        if len(lrs) != len(groups):
            raise ValueError(f"swa_lr must have the same length as optimizer.param_groups: "
                             f"swa_lr has {len(lrs)}, optimizer.param_groups has "
                             f"{len(groups)}")
        for lr, group in zip(lrs, groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must by one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        self.anneal_strategy = anneal_strategy
        super().__init__(optimizer, last_epoch)

    def _anneal(self, t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2 if self.anneal_strategy == "cos" else t

    @staticmethod
    def _initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0.0, min(1.0, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self._anneal(prev_t)
        groups = self.optimizer.param_groups
        prev = [self._initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        t = max(0.0, min(1.0, step / max(1, self.anneal_epochs)))
        alpha = self._anneal(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev)]


__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]
