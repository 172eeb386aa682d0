"""The base class of distributions and the helpers they share."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from . import constraints

_validate_default = True  # PyTorch validates by default (under __debug__)


def set_default_validate_args(value: bool) -> None:
    """Turn argument/sample validation on or off for distributions made later."""
    global _validate_default
    if value not in (True, False):
        raise ValueError(f"validate_args must be a bool, got {value!r}")
    _validate_default = value


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Tensors of ``values`` broadcast to one shape; numbers take the tensors' dtype and
    device (the default dtype when all are numbers)."""
    from ..creation import tensor
    from ..dtypes import get_default_dtype
    from ..ops.movement import broadcast_tensors

    ref = next((v for v in values if isinstance(v, Tensor)), None)
    if ref is None:
        dt, dev = get_default_dtype(), None
    else:
        dt = ref.dtype if ref.dtype.is_floating_point else get_default_dtype()
        dev = ref.device
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, (int, float)):
            out.append(tensor(float(v), dtype=dt, device=dev))
        else:
            raise ValueError(f"Input arguments must all be instances of numbers or "
                             f"Tensors, got {type(v).__name__}")
    return tuple(broadcast_tensors(*out))


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: sigmoid for binary, softmax over the last dim else."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped to ``[eps, 1 - eps]`` of its dtype."""
    eps = {"float64": 2.220446049250313e-16, "float16": 0.0009765625,
           "bfloat16": 0.0078125}.get(probs.dtype.name, 1.1920928955078125e-07)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from probabilities (log-odds for binary, log-probabilities else)."""
    p = clamp_probs(probs)
    return (p.log() - (-p).log1p()) if is_binary else p.log()


def uniform_like(shape: tuple, like: Tensor) -> Tensor:
    """U[0, 1) samples of ``shape`` with ``like``'s dtype and device."""
    from ..creation import rand

    return rand(*shape, dtype=like.dtype, device=like.device)


class lazy_property:  # noqa: N801 - named as PyTorch's
    """A property computed on first access and then stored on the instance."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        if obj is None:
            return self
        value = self.fn(obj)
        setattr(obj, self.fn.__name__, value)
        return value


class Distribution:
    """A probability distribution (``torch.distributions.Distribution``).

    Args:
        batch_shape: the shape of independent draws of different parameters.
        event_shape: the shape of one draw.
        validate_args: check the parameters (at construction) and the values given to
            ``log_prob``; the default set by :func:`set_default_validate_args` (True).
    """

    has_rsample = False
    has_enumerate_support = False
    arg_constraints: dict[str, constraints.Constraint] = {}
    support: constraints.Constraint | None = None

    def __init__(self, batch_shape: Sequence[int] = (), event_shape: Sequence[int] = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        self._validate_args = _validate_default if validate_args is None else validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if constraint is constraints.dependent:
                    continue
                if param not in self.__dict__ and isinstance(
                        getattr(type(self), param, None), lazy_property):
                    continue  # not given: derived from another parameter
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self._batch_shape

    @property
    def event_shape(self) -> tuple[int, ...]:
        return self._event_shape

    def _extended_shape(self, sample_shape: Sequence[int] = ()) -> tuple[int, ...]:
        if isinstance(sample_shape, int):
            sample_shape = (sample_shape,)
        return tuple(sample_shape) + self._batch_shape + self._event_shape

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """A draw (cut off from the graph) of shape ``sample_shape + batch + event``."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """A reparameterised draw: differentiable with respect to the parameters."""
        raise NotImplementedError(f"{type(self).__name__} has no rsample (has_rsample is "
                                  "False); use sample(), or a score-function estimator")

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no cdf")

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no icdf")

    def entropy(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no entropy")

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} cannot enumerate its support")

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no variance")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def _validate_sample(self, value: Tensor) -> None:
        """PyTorch's checks of a ``log_prob`` argument: a tensor whose shape broadcasts
        with ``batch_shape + event_shape``, inside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        n = len(self._event_shape)
        if n and value.shape[-n:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.shape} vs {self._event_shape}.")
        actual = value.shape
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        if self.support is not None and not bool(self.support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) to be within the support "
                             f"({self.support!r}) of the distribution {self!r}, but found "
                             f"invalid values:\n{value}")

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{k}: {getattr(self, k) if getattr(self, k).numel() == 1 else getattr(self, k).shape}"
            for k in names)
        return f"{type(self).__name__}({args})"


_LOG_2PI = math.log(2 * math.pi)

__all__ = ["Distribution", "set_default_validate_args"]
