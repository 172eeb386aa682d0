"""``LRScheduler``: the base class of the learning-rate schedulers."""

from __future__ import annotations

from typing import Any

from .optimizer import Optimizer


def _check_optimizer(name: str, optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{name}: expected an Optimizer, got {type(optimizer).__name__}")


class LRScheduler:
    """Base class of the schedulers: ``last_epoch`` counts calls of :meth:`step`.

    Args:
        optimizer: the optimizer whose groups' ``lr`` this scheduler sets.
        last_epoch: the index of the last epoch, -1 to start (sets each group's
            ``initial_lr``); when resuming, the groups must already hold ``initial_lr``.
    """

    _not_saved: tuple[str, ...] = ("optimizer",)

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(type(self).__name__, optimizer)
        self.optimizer = optimizer
        groups = optimizer.param_groups
        if last_epoch == -1:
            for group in groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            missing = [i for i, g in enumerate(groups) if "initial_lr" not in g]
            if missing:
                raise KeyError(f"{type(self).__name__}: param_groups {missing} have no "
                               f"'initial_lr' but last_epoch={last_epoch}; load the "
                               "optimizer's state dict first or start with last_epoch=-1")
        self.base_lrs: list[float] = [g["initial_lr"] for g in groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self.step()

    def get_lr(self) -> list[float]:
        """The learning rates for the current ``last_epoch`` (subclasses implement)."""
        raise NotImplementedError

    def _closed_form(self) -> list[float] | None:
        """The rates at ``last_epoch`` from the base rates alone, or None if undefined."""
        return None

    def get_last_lr(self) -> list[float]:
        """The learning rate of each group set by the last :meth:`step`."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to ``epoch``) and set the groups' learning rates."""
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = int(epoch)
            values = self._closed_form() or self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def _lrs(self) -> list[float]:
        return [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's state (JSON-able): every attribute except the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k not in self._not_saved}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state returned by :meth:`state_dict`."""
        self.__dict__.update({k: v for k, v in state_dict.items() if k not in self._not_saved})


__all__ = ["LRScheduler"]
