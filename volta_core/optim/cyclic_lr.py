"""Cyclic learning-rate schedules: ``CyclicLR`` and ``CosineAnnealingWarmRestarts``.

Both are re-exported by :mod:`volta_core.optim.lr_scheduler`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .optimizer import Optimizer
from .scheduler import LRScheduler


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from ``base_lr`` to ``eta_min`` over ``T_i`` epochs, then restart.

    ``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2``, where the
    period ``T_i`` starts at ``T_0`` and is multiplied by ``T_mult`` at each restart.
    ``step(epoch)`` accepts fractional epochs (to step per batch).

    Args:
        optimizer: the optimizer.
        T_0: the length of the first period (a positive int).
        T_mult: the factor of each new period's length (an int >= 1).
        eta_min: the lowest rate.
        last_epoch: the index of the last epoch.
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1,
                 eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        cos = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (b - self.eta_min) * cos for b in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or jump to ``epoch`` (may be fractional)."""
        self._step_count += 1
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur - self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = self._lrs()


def _per_group(name: str, value: float | Sequence[float], n: int) -> list[float]:
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"expected {n} values for {name}, got {len(value)}")
        return [float(v) for v in value]
    return [float(value)] * n


class CyclicLR(LRScheduler):
    """Cycle the rate between ``base_lr`` and ``max_lr`` (Smith's cyclical learning rates),
    and the momentum inversely between ``max_momentum`` and ``base_momentum``.

    Step it after every batch. Each cycle rises for ``step_size_up`` steps and falls for
    ``step_size_down``; the amplitude is scaled by ``scale_fn`` (per cycle or per step).

    Args:
        optimizer: the optimizer (its ``lr`` is set to ``base_lr`` at the start).
        base_lr: the lower rate (one, or one per group).
        max_lr: the upper rate (one, or one per group).
        step_size_up: steps in the rising half.
        step_size_down: steps in the falling half (``step_size_up`` when None).
        mode: ``"triangular"``, ``"triangular2"`` (amplitude halves each cycle) or
            ``"exp_range"`` (amplitude ``gamma ** step``); ignored with ``scale_fn``.
        gamma: the base of ``exp_range``.
        scale_fn: a custom amplitude scale ``f(x)`` with ``0 <= f(x) <= 1``.
        scale_mode: ``"cycle"`` or ``"iterations"``: what ``x`` counts for ``scale_fn``.
        cycle_momentum: cycle the momentum (or Adam's ``beta1``) too.
        base_momentum: the lower momentum.
        max_momentum: the upper momentum.
        last_epoch: the index of the last batch.
    """

    _not_saved = ("optimizer", "_scale_fn_custom")

    def __init__(self, optimizer: Optimizer, base_lr: float | Sequence[float],
                 max_lr: float | Sequence[float], step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum: float | Sequence[float] = 0.8,
                 max_momentum: float | Sequence[float] = 0.9, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"CyclicLR: expected an Optimizer, got {type(optimizer).__name__}")
        groups = optimizer.param_groups
        base_lrs = _per_group("base_lr", base_lr, len(groups))
        if last_epoch == -1:
            for lr, group in zip(base_lrs, groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", max_lr, len(groups))
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else (
            "iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            defaults = optimizer.defaults
            if "momentum" not in defaults and "betas" not in defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in defaults
            self.base_momentums = _per_group("base_momentum", base_momentum, len(groups))
            self.max_momentums = _per_group("max_momentum", max_momentum, len(groups))
            if last_epoch == -1:
                for hi, lo, group in zip(self.max_momentums, self.base_momentums, groups):
                    self._set_momentum(group, hi)
                    group["max_momentum"], group["base_momentum"] = hi, lo
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _set_momentum(self, group: dict, value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *tuple(group["betas"])[1:])
        else:
            group["momentum"] = value

    def scale_fn(self, x: float) -> float:
        """The amplitude scale at cycle (or step) ``x``."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        if self.mode == "exp_range":
            return self.gamma ** x
        return 1.0

    def get_lr(self) -> list[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [b + (m - b) * scale_factor * scale for b, m in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, lo, hi in zip(self.optimizer.param_groups, self.base_momentums,
                                     self.max_momentums):
                self._set_momentum(group, hi - (hi - lo) * scale_factor * scale)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The state, without a custom ``scale_fn`` (pass it again when re-creating)."""
        return super().state_dict()


__all__ = ["CosineAnnealingWarmRestarts", "CyclicLR"]
