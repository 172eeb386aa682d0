"""``ReduceLROnPlateau``: lower the learning rate when a metric stops improving."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .optimizer import Optimizer
from .scheduler import LRScheduler, _check_optimizer


class ReduceLROnPlateau(LRScheduler):
    """Cut the rate by ``factor`` when a metric stops improving for ``patience`` epochs.

    Call ``scheduler.step(metric)`` once per epoch with the validation metric.

    Args:
        optimizer: the optimizer whose rates are reduced.
        mode: ``"min"`` (lower is better) or ``"max"``.
        factor: the multiplier of each reduction, < 1 (default: 0.1).
        patience: epochs without improvement tolerated before a reduction (default: 10).
        threshold: the minimal change that counts as an improvement (default: 1e-4).
        threshold_mode: ``"rel"`` (relative to the best) or ``"abs"``.
        cooldown: epochs to wait after a reduction before counting again (default: 0).
        min_lr: a floor on the rate, one value or one per group (default: 0).
        eps: reductions smaller than this are skipped (default: 1e-8).
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | Sequence[float] = 0.0,
                 eps: float = 1e-8) -> None:
        _check_optimizer("ReduceLROnPlateau", optimizer)
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: factor must be < 1.0, got {factor}")
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got "
                             f"{threshold_mode!r}")
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"ReduceLROnPlateau: expected {n} min_lr values, got "
                                 f"{len(min_lr)}")
            self.min_lrs = [float(v) for v in min_lr]
        else:
            self.min_lrs = [float(min_lr)] * n
        self.optimizer = optimizer
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        self.cooldown, self.eps = cooldown, eps
        self.cooldown_counter = 0
        self.num_bad_epochs = 0
        self.best = math.inf if mode == "min" else -math.inf
        self.last_epoch = 0
        self._last_lr = self._lrs()

    def _is_better(self, a: float) -> bool:
        best, th = self.best, self.threshold
        if self.mode == "min":
            return a < (best * (1 - th) if self.threshold_mode == "rel" else best - th)
        return a > (best * (1 + th) if self.threshold_mode == "rel" else best + th)

    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record one epoch's ``metrics`` (a number or one-element tensor)."""
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else int(epoch)
        if self._is_better(current):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, floor in zip(self.optimizer.param_groups, self.min_lrs):
                old = group["lr"]
                new = max(old * self.factor, floor)
                if old - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._lrs()


__all__ = ["ReduceLROnPlateau"]
