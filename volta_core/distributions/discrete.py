"""Bernoulli, Categorical and OneHotCategorical distributions (parameterised by
``probs`` or ``logits``; the other is derived on first use)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..tensor import Tensor
from . import constraints
from .distribution import (
    Distribution,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)


def _one_of(name: str, probs: object, logits: object) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def _softplus(x: Tensor) -> Tensor:
    return x.clamp(min=0) + (-x.abs()).exp().log1p()


class _BinaryEvent(Distribution):
    """A distribution of one binary event per element, given by ``probs`` or ``logits``
    (the other is derived on first use): Bernoulli, Geometric."""

    def __init__(self, probs: Tensor | float | None = None,
                 logits: Tensor | float | None = None,
                 validate_args: bool | None = None) -> None:
        _one_of(type(self).__name__, probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            shape = self.probs.shape
        else:
            (self.logits,) = broadcast_all(logits)
            shape = self.logits.shape
        super().__init__(shape, validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)


class Bernoulli(_BinaryEvent):
    """1 with probability ``probs`` (or ``sigmoid(logits)``), else 0."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    @property
    def param_shape(self) -> tuple[int, ...]:
        return self._batch_shape

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, math.nan)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        from ..creation import rand

        p = self.probs.detach()
        u = rand(*self._extended_shape(sample_shape), dtype=p.dtype, device=p.device)
        return (u < p).to(p.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return logits * value - _softplus(logits)

    def entropy(self) -> Tensor:
        return _softplus(self.logits) - self.probs * self.logits

    def enumerate_support(self, expand: bool = True) -> Tensor:
        from ..creation import arange

        values = arange(2, dtype=self.probs.dtype if "probs" in self.__dict__
                        else self.logits.dtype, device=self.logits.device)
        values = values.reshape(-1, *(1,) * len(self._batch_shape))
        return values.expand(2, *self._batch_shape) if expand else values


class Categorical(Distribution):
    """A category index in ``0..n-1`` with probabilities ``probs`` (normalised along
    the last dim) or ``softmax(logits)``."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(
        constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        _one_of("Categorical", probs, logits)
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            param = self.probs
        else:
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
            param = self.logits
        self._num_events = param.shape[-1]
        super().__init__(param.shape[:-1], validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> tuple[int, ...]:
        return self._batch_shape + (self._num_events,)

    @property
    def support(self) -> constraints.Constraint:
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self) -> Tensor:
        return self.probs.new_full(self._batch_shape, math.nan)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return self.probs.new_full(self._batch_shape, math.nan)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        from ..creation import multinomial

        if isinstance(sample_shape, int):
            sample_shape = (sample_shape,)
        n = math.prod(sample_shape)
        probs = self.probs.detach().reshape(-1, self._num_events)
        draws = multinomial(probs, n, replacement=True)  # (batch, n)
        return draws.t().reshape(*sample_shape, *self._batch_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        from ..ops.movement import broadcast_tensors

        value = value.to("int64").unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        lowest = {"float64": -1.7976931348623157e308, "float16": -65504.0}.get(
            self.logits.dtype.name, -3.4028234663852886e38)
        logits = self.logits.clamp(min=lowest)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        from ..creation import arange

        values = arange(self._num_events, device=self.probs.device)
        values = values.reshape(-1, *(1,) * len(self._batch_shape))
        return values.expand(self._num_events, *self._batch_shape) if expand else values


class OneHotCategorical(Distribution):
    """A one-hot vector of length ``n`` (a :class:`Categorical` draw, one-hot encoded)."""

    arg_constraints = Categorical.arg_constraints
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        super().__init__(self._categorical.batch_shape,
                         (self._categorical._num_events,), validate_args=validate_args)

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        from ..nn.functional import one_hot

        return one_hot(self.probs.argmax(-1), self._event_shape[0]).to(self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        from ..nn.functional import one_hot

        idx = self._categorical.sample(sample_shape)
        return one_hot(idx, self._event_shape[0]).to(self.probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        from ..creation import eye

        n = self._event_shape[0]
        values = eye(n, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape(n, *(1,) * len(self._batch_shape), n)
        return values.expand(n, *self._batch_shape, n) if expand else values


__all__ = ["Bernoulli", "Categorical", "OneHotCategorical", "clamp_probs"]
