"""Heavy-tailed distributions: Cauchy and StudentT."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..tensor import Tensor
from . import constraints
from .distribution import (
    Distribution,
    broadcast_all,
)
from .gamma import standard_gamma


class Cauchy(Distribution):
    """The Cauchy (Lorentz) distribution with median ``loc`` and half-width ``scale``."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc.new_full(self._batch_shape, math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self.loc.new_full(self._batch_shape, math.inf)

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        from ..creation import rand

        u = rand(*self._extended_shape(sample_shape), dtype=self.loc.dtype,
                 device=self.loc.device)
        return self.loc + self.scale * (math.pi * (u - 0.5)).tan()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value: Tensor) -> Tensor:
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()


class StudentT(Distribution):
    """Student's t distribution with ``df`` degrees of freedom, ``loc`` and ``scale``;
    reparameterised (a normal over the square root of a gamma draw)."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df: Tensor | float, loc: Tensor | float = 0.0,
                 scale: Tensor | float = 1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(self.df.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        from ..ops.elementwise import where

        return where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        from ..ops.elementwise import where

        var = self.scale.pow(2) * self.df / (self.df - 2)
        var = where(self.df > 2, var, math.inf)
        return where(self.df > 1, var, math.nan)

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        from ..creation import randn

        shape = self._extended_shape(sample_shape)
        z = randn(*shape, dtype=self.df.dtype, device=self.df.device)
        chi2 = 2 * standard_gamma(0.5 * self.df.expand(*shape))
        return self.loc + self.scale * z * (self.df / chi2).sqrt()

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + (0.5 * self.df).lgamma() - (0.5 * (self.df + 1.0)).lgamma())
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - z

    def entropy(self) -> Tensor:
        half = 0.5 * self.df
        lbeta = half.lgamma() + math.lgamma(0.5) - (half + 0.5).lgamma()
        return (self.scale.log() + 0.5 * (self.df + 1) * ((half + 0.5).digamma()
                                                          - half.digamma())
                + 0.5 * self.df.log() + lbeta)


__all__ = ["Cauchy", "StudentT"]
