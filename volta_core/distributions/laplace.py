"""The Laplace distribution."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, broadcast_all, uniform_like


class Laplace(Distribution):
    """The Laplace distribution with location ``loc`` and scale ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        tiny = 1.1920928955078125e-07 if self.loc.dtype.itemsize <= 4 else 2.2e-16
        u = uniform_like(self._extended_shape(sample_shape), self.loc) * (2 - tiny) - 1 + tiny
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Tensor) -> Tensor:
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()


__all__ = ["Laplace"]
