"""Learning-rate schedulers: change each parameter group's ``lr`` as training goes on.

Call ``scheduler.step()`` once per epoch (or per batch for ``OneCycleLR``) after
``optimizer.step()``. Every scheduler has ``get_last_lr()`` and a JSON-able
``state_dict()`` / ``load_state_dict()``. As in PyTorch, the chainable schedulers
(``StepLR``, ``MultiStepLR``, ``ExponentialLR``, ``CosineAnnealingLR``, ``LinearLR``)
update the current ``lr`` of each group recursively, so several can act on one
optimizer; ``step(epoch)`` jumps to an epoch through the closed form.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from .cyclic_lr import CosineAnnealingWarmRestarts, CyclicLR
from .optimizer import Optimizer
from .plateau import ReduceLROnPlateau
from .scheduler import LRScheduler


class StepLR(LRScheduler):
    """Multiply the rate by ``gamma`` every ``step_size`` epochs.

    ``lr = base_lr * gamma ** (epoch // step_size)``.
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        if step_size < 1:
            raise ValueError(f"StepLR: step_size must be a positive int, got {step_size}")
        self.step_size, self.gamma = int(step_size), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _closed_form(self) -> list[float]:
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the rate by ``gamma`` at each epoch listed in ``milestones``.

    ``lr = base_lr * gamma ** (number of milestones <= epoch)``.
    """

    def __init__(self, optimizer: Optimizer, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(int(m) for m in milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        hits = self.milestones.get(self.last_epoch, 0)
        if not hits:
            return self._lrs()
        return [lr * self.gamma ** hits for lr in self._lrs()]

    def _closed_form(self) -> list[float]:
        n = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [b * self.gamma ** n for b in self.base_lrs]

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        self.milestones = Counter({int(k): int(v) for k, v in self.milestones.items()})


class ExponentialLR(LRScheduler):
    """Multiply the rate by ``gamma`` every epoch: ``lr = base_lr * gamma ** epoch``."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return self._lrs()
        return [lr * self.gamma for lr in self._lrs()]

    def _closed_form(self) -> list[float]:
        return [b * self.gamma ** self.last_epoch for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Anneal the rate along a cosine from ``base_lr`` down to ``eta_min`` in ``T_max``.

    :math:`\eta_t = \eta_{min} + (\eta_{base} - \eta_{min})(1 + \cos(\pi t / T_{max})) / 2`
    (continuing as a cosine wave past ``T_max``, as PyTorch's recursive form does).
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if T_max < 1:
            raise ValueError(f"CosineAnnealingLR: T_max must be a positive int, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, T, lo = self.last_epoch, self.T_max, self.eta_min
        if t == 0:
            return self._lrs()
        if self._step_count == 1 and t > 0:  # constructed with a resumed last_epoch
            return self._closed_form()
        if (t - 1 - T) % (2 * T) == 0:  # bottom of the wave: restart the climb
            return [lr + (b - lo) * (1 - math.cos(math.pi / T)) / 2
                    for lr, b in zip(self._lrs(), self.base_lrs)]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [lo + ratio * (lr - lo) for lr in self._lrs()]

    def _closed_form(self) -> list[float]:
        c = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (b - self.eta_min) * c for b in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the rate by a factor going linearly from ``start_factor`` to ``end_factor``.

    ``lr = base_lr * (start + (end - start) * min(epoch, total_iters) / total_iters)``;
    the usual warm-up before a decay in :class:`SequentialLR`.
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor}")
        if total_iters < 1:
            raise ValueError(f"LinearLR: total_iters must be >= 1, got {total_iters}")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, s, e, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
        if t == 0:
            return [lr * s for lr in self._lrs()]
        if t > n:
            return self._lrs()
        factor = 1 + (e - s) / (n * s + (t - 1) * (e - s))
        return [lr * factor for lr in self._lrs()]

    def _closed_form(self) -> list[float]:
        s, e, n = self.start_factor, self.end_factor, self.total_iters
        f = s + (e - s) * min(n, self.last_epoch) / n
        return [b * f for b in self.base_lrs]


class LambdaLR(LRScheduler):
    """Set the rate to ``base_lr * lr_lambda(epoch)`` (one function, or one per group).

    The functions are not part of ``state_dict()`` (checkpoints hold no code); pass
    the same ones when re-creating the scheduler.
    """

    _not_saved = ("optimizer", "lr_lambdas")

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        n = len(optimizer.param_groups)
        if callable(lr_lambda):
            self.lr_lambdas = [lr_lambda] * n
        else:
            self.lr_lambdas = list(lr_lambda)
            if len(self.lr_lambdas) != n:
                raise ValueError(f"LambdaLR: expected {n} lr_lambdas (one per param group), "
                                 f"got {len(self.lr_lambdas)}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [b * fn(self.last_epoch) for b, fn in zip(self.base_lrs, self.lr_lambdas)]


class MultiplicativeLR(LRScheduler):
    """Multiply the rate by ``lr_lambda(epoch)`` at every epoch after the first.

    The functions are not part of ``state_dict()``; pass the same ones when re-creating it.
    """

    _not_saved = ("optimizer", "lr_lambdas")

    def __init__(self, optimizer: Optimizer,
                 lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
                 last_epoch: int = -1) -> None:
        n = len(optimizer.param_groups)
        self.lr_lambdas = [lr_lambda] * n if callable(lr_lambda) else list(lr_lambda)
        if len(self.lr_lambdas) != n:
            raise ValueError(f"MultiplicativeLR: expected {n} lr_lambdas (one per param "
                             f"group), got {len(self.lr_lambdas)}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch > 0:
            return [lr * fn(self.last_epoch) for lr, fn in zip(self._lrs(), self.lr_lambdas)]
        return self._lrs()


class ConstantLR(LRScheduler):
    """Scale the rate by ``factor`` until epoch ``total_iters``, then restore it."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if not 0 <= factor <= 1:
            raise ValueError("ConstantLR: Constant multiplicative factor expected to be "
                             f"between 0 and 1, got {factor}")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._lrs()]
        if self.last_epoch != self.total_iters:
            return self._lrs()
        return [lr * (1.0 / self.factor) for lr in self._lrs()]

    def _closed_form(self) -> list[float]:
        f = self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)
        return [b * f for b in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the rate as ``base_lr * (1 - min(epoch, total_iters) / total_iters) ** power``."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, n = self.last_epoch, self.total_iters
        if t == 0 or t > n:
            return self._lrs()
        decay = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [lr * decay for lr in self._lrs()]

    def _closed_form(self) -> list[float]:
        n = self.total_iters
        return [b * (1.0 - min(n, self.last_epoch) / n) ** self.power for b in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin): warm up to ``max_lr``, then anneal far below.

    Stepped once per batch. Two phases (``pct_start`` of ``total_steps`` rising from
    ``max_lr / div_factor`` to ``max_lr``, then falling to ``initial / final_div_factor``)
    or three with ``three_phase=True``. With ``cycle_momentum`` the momentum (or
    Adam's ``beta1``) moves inversely between ``max_momentum`` and ``base_momentum``.
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | Sequence[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float | Sequence[float] = 0.85,
                 max_momentum: float | Sequence[float] = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        if total_steps is None:
            if epochs is None or steps_per_epoch is None or epochs < 1 or steps_per_epoch < 1:
                raise ValueError("OneCycleLR: give total_steps, or positive epochs and "
                                 "steps_per_epoch")
            total_steps = epochs * steps_per_epoch
        if total_steps < 1:
            raise ValueError(f"OneCycleLR: total_steps must be positive, got {total_steps}")
        if not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: pct_start must be in [0, 1], got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("OneCycleLR: anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        self.total_steps = int(total_steps)
        self.anneal_strategy = anneal_strategy
        self.cycle_momentum = cycle_momentum
        T, p = self.total_steps, pct_start
        if three_phase:
            ends = [p * T - 1, 2 * p * T - 2, T - 1]
            lrs = [("initial_lr", "max_lr"), ("max_lr", "initial_lr"), ("initial_lr", "min_lr")]
            moms = [("max_momentum", "base_momentum"), ("base_momentum", "max_momentum"),
                    ("max_momentum", "max_momentum")]
        else:
            ends = [p * T - 1, T - 1]
            lrs = [("initial_lr", "max_lr"), ("max_lr", "min_lr")]
            moms = [("max_momentum", "base_momentum"), ("base_momentum", "max_momentum")]
        self._phases = [{"end_step": float(e), "lr": list(lr), "momentum": list(m)}
                        for e, lr, m in zip(ends, lrs, moms)]
        groups = optimizer.param_groups
        max_lrs = _per_group("max_lr", max_lr, len(groups))
        if last_epoch == -1:
            for group, top in zip(groups, max_lrs):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self._beta1 = False
        if cycle_momentum:
            d = optimizer.defaults
            if "momentum" not in d and "betas" not in d:
                raise ValueError(f"OneCycleLR: {type(optimizer).__name__} has neither "
                                 "'momentum' nor 'betas'; pass cycle_momentum=False")
            self._beta1 = "betas" in d
            lows = _per_group("base_momentum", base_momentum, len(groups))
            highs = _per_group("max_momentum", max_momentum, len(groups))
            if last_epoch == -1:
                for group, lo, hi in zip(groups, lows, highs):
                    self._set_momentum(group, hi)
                    group["base_momentum"], group["max_momentum"] = lo, hi
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict, value: float) -> None:
        if self._beta1:
            group["betas"] = (value, *tuple(group["betas"])[1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        t = self.last_epoch
        if t > self.total_steps:
            raise ValueError(f"OneCycleLR: stepped {t} times but total_steps is "
                             f"{self.total_steps}; raise total_steps (or epochs)")
        out = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._phases):
                end = phase["end_step"]
                if t <= end or i == len(self._phases) - 1:
                    pct = (t - start) / (end - start) if end != start else 1.0
                    lr = self._anneal(group[phase["lr"][0]], group[phase["lr"][1]], pct)
                    if self.cycle_momentum:
                        m0, m1 = phase["momentum"]
                        self._set_momentum(group, self._anneal(group[m0], group[m1], pct))
                    break
                start = end
            out.append(lr)
        return out


def _per_group(name: str, value: float | Sequence[float], n: int) -> list[float]:
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"OneCycleLR: expected {n} values of {name} (one per param "
                             f"group), got {len(value)}")
        return [float(v) for v in value]
    return [float(value)] * n


class _Composite(LRScheduler):
    """A scheduler driving others (``_schedulers``); its state holds theirs."""

    _not_saved = ("optimizer", "_schedulers")

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        subs = state.pop("_schedulers", None)
        super().load_state_dict(state)
        if subs is not None:
            for s, sd in zip(self._schedulers, subs):
                s.load_state_dict(sd)


class SequentialLR(_Composite):
    """Run ``schedulers`` one after another, switching at the epochs in ``milestones``.

    Example (5 epochs of linear warm-up, then cosine decay)::

        warm = LinearLR(opt, start_factor=0.1, total_iters=5)
        decay = CosineAnnealingLR(opt, T_max=95)
        sched = SequentialLR(opt, [warm, decay], milestones=[5])
    """

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[LRScheduler],
                 milestones: Sequence[int], last_epoch: int = -1) -> None:
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError("SequentialLR: expected at least one scheduler")
        others = [i for i, s in enumerate(schedulers) if s.optimizer is not optimizer]
        if others:
            raise ValueError(f"SequentialLR: schedulers {others} act on another optimizer "
                             "than the one given; build them all on the same optimizer")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR: expected {len(schedulers) - 1} milestone(s) for "
                             f"{len(schedulers)} schedulers, got {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = [int(m) for m in milestones]
        self.optimizer = optimizer
        self.last_epoch = last_epoch + 1
        self._step_count = 0
        for group in optimizer.param_groups:  # undo the schedulers' initial steps
            group["lr"] = group["initial_lr"]
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        for s in schedulers:
            s.last_epoch -= 1
        schedulers[0]._initial_step()
        self._last_lr = schedulers[0].get_last_lr()

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch, stepping the scheduler in charge (``epoch`` not supported)."""
        if epoch is not None:
            raise ValueError("SequentialLR.step() takes no epoch")
        self._step_count += 1
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        sched = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            sched.step(0)
        else:
            sched.step()
        self._last_lr = sched.get_last_lr()


class ChainedScheduler(_Composite):
    """Step several chainable schedulers together on every :meth:`step`, so their
    effects multiply (e.g. a constant warm-up factor and an exponential decay).

    Args:
        schedulers: the schedulers, all on the same optimizer.
        optimizer: that optimizer (the first scheduler's when None).
    """

    def __init__(self, schedulers: Sequence[LRScheduler],
                 optimizer: Optimizer | None = None) -> None:
        schedulers = list(schedulers)
        if not schedulers:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained, "
                             "but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        others = [i for i, s in enumerate(schedulers) if s.optimizer is not optimizer]
        if others:
            raise ValueError(f"ChainedScheduler: schedulers {others} act on another "
                             "optimizer; build them all on the same optimizer")
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = self._lrs()

    def step(self, epoch: int | None = None) -> None:
        """Step every scheduler once."""
        for s in self._schedulers:
            s.step()
        self._last_lr = self._lrs()


__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "LinearLR", "LambdaLR", "OneCycleLR", "SequentialLR", "ReduceLROnPlateau",
           "MultiplicativeLR", "ConstantLR", "PolynomialLR", "ChainedScheduler",
           "CosineAnnealingWarmRestarts", "CyclicLR"]
