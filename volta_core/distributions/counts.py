"""Count distributions: Poisson and Geometric."""

from __future__ import annotations

from collections.abc import Sequence

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from . import constraints
from .discrete import _BinaryEvent
from .distribution import (
    Distribution,
    broadcast_all,
)


class Poisson(Distribution):
    """The Poisson distribution of ``rate`` (non-negative counts)."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Tensor | float, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        from ..ops.sampling import poisson

        with no_grad():
            return poisson(self.rate.detach().expand(*self._extended_shape(sample_shape)))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()


class Geometric(_BinaryEvent):
    """The number of failures before the first success of Bernoulli(``probs``) trials."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return self.probs.new_zeros(self.probs.shape)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        from ..creation import rand

        with no_grad():
            p = self.probs.detach()
            tiny = 1.1754943508222875e-38 if p.dtype.itemsize <= 4 else 2.2e-308
            u = rand(*self._extended_shape(sample_shape), dtype=p.dtype,
                     device=p.device).clamp(min=tiny)
            return (u.log() / (-p).log1p()).floor()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        from ..ops.elementwise import where

        safe = where((probs == 1) & (value == 0), probs.new_zeros(()), probs)
        return value * (-safe).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        from ..nn.functional import binary_cross_entropy_with_logits

        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs


__all__ = ["Poisson", "Geometric"]
