"""Dirichlet and Beta distributions, reparameterised through normalised gamma draws.

``rsample`` divides independent Gamma(alpha_i, 1) draws (each with its implicit
gradient) by their sum. This is an exact reparameterisation, but not the one PyTorch
uses (an implicit gradient of the Dirichlet itself), so per-sample gradients differ from
PyTorch's while their expectation is the same.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, broadcast_all
from .gamma import standard_gamma


def _lbeta(alpha: Tensor) -> Tensor:
    return alpha.lgamma().sum(-1) - alpha.sum(-1).lgamma()


class Dirichlet(Distribution):
    """The Dirichlet distribution over the simplex, of concentration ``(..., k)``."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.ndim < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        a = (self.concentration - 1).clamp(min=0)
        return a / a.sum(-1, keepdim=True)

    @property
    def variance(self) -> Tensor:
        a0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (a0 - self.concentration) / (a0.pow(2) * (a0 + 1))

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        g = standard_gamma(self.concentration.expand(*shape))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return ((a - 1) * value.log()).sum(-1) - _lbeta(a)

    def entropy(self) -> Tensor:
        a = self.concentration
        k = a.shape[-1]
        a0 = a.sum(-1)
        return _lbeta(a) + (a0 - k) * a0.digamma() - ((a - 1) * a.digamma()).sum(-1)


class Beta(Distribution):
    """The beta distribution on ``[0, 1]``, with ``concentration1`` (alpha) and
    ``concentration0`` (beta)."""

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1: Tensor | float, concentration0: Tensor | float,
                 validate_args: bool | None = None) -> None:
        from ..ops.joining import stack

        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        self._dirichlet = Dirichlet(stack([self.concentration1, self.concentration0], -1),
                                    validate_args=validate_args)
        super().__init__(self._dirichlet.batch_shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        from ..ops.joining import stack

        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()


__all__ = ["Dirichlet", "Beta"]
