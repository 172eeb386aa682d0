"""Sampling ops: ``normal``, ``bernoulli``, ``poisson`` and the in-place fills
``bernoulli_``, ``exponential_``, ``random_``, ``log_normal_``, ``cauchy_``, ``geometric_``.

Each takes ``generator=`` (a :class:`vt.Generator`) as in PyTorch. PyTorch's results carry
a ``grad_fn`` whose gradient is zero; Volta's are simply not part of the graph.
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .inplace import inplace


def _u(shape: tuple, like: Tensor, generator: Any) -> Tensor:
    from ..creation import rand

    return rand(*shape, dtype=like.dtype, device=like.device, generator=generator)


def normal(mean: Any, std: Any = 1.0, size: Any = None, *, generator: Any = None,
           dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Samples from N(mean, std^2), elementwise.

    Forms: ``normal(mean_tensor, std_tensor)`` (shapes broadcast), ``normal(mean_tensor,
    std=1.0)``, ``normal(mean, std_tensor)``, ``normal(mean, std, size)``.
    """
    from ..creation import randn

    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal() with float mean and std needs a size: "
                            "normal(mean, std, size)")
        z = randn(*((size,) if isinstance(size, int) else tuple(size)), generator=generator,
                  dtype=dtype, device=device)
        out = z * float(std) + float(mean)
        return out.requires_grad_(True) if requires_grad else out
    ref = mean if isinstance(mean, Tensor) else std
    if not ref.dtype.is_floating_point:
        raise RuntimeError(f"normal expects floating-point mean and std, got {ref.dtype}")
    with no_grad():
        m = mean.detach() if isinstance(mean, Tensor) else mean
        s = std.detach() if isinstance(std, Tensor) else std
        if isinstance(s, Tensor) and bool((s < 0).any()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        if isinstance(s, (int, float)) and s < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {s}")
        shape = (m + s * 0).shape if isinstance(m, Tensor) else (s + 0.0 * m).shape
        z = randn(*shape, dtype=ref.dtype, device=ref.device, generator=generator)
        return z * s + m


def bernoulli(input: Tensor, p: float | None = None, *, generator: Any = None) -> Tensor:
    """0/1 samples with probabilities ``input`` (or the scalar ``p``), of ``input``'s dtype."""
    with no_grad():
        probs = input.detach() if p is None else input.new_full(input.shape, float(p))
        if probs.dtype.is_floating_point and bool(((probs < 0) | (probs > 1)).any()):
            raise RuntimeError("bernoulli: expected 0 <= p <= 1 for all probabilities")
        dt = probs.dtype if probs.dtype.is_floating_point else None
        from ..creation import rand

        u = rand(*probs.shape, dtype=dt, device=input.device, generator=generator)
        return (u < probs).to(input.dtype)


def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """Samples from Poisson(rate=``input``), elementwise, of ``input``'s dtype.

    Drawn by counting unit-rate exponential arrivals (Knuth), vectorised: exact, and fast
    for the small to moderate rates typical of dropout-like noise and count models.
    """
    with no_grad():
        rate = input.detach()
        if bool((rate < 0).any()):
            raise RuntimeError("poisson: the rates must be non-negative")
        # Normal approximation above 64 keeps the loop short; below, count exactly.
        big = rate > 64
        limit = (-rate).exp()
        count = rate.new_zeros(rate.shape)
        prod = rate.new_ones(rate.shape)
        bound = int(float(rate.clamp(max=64).max()) * 3 + 20) if rate.numel() else 0
        for _ in range(bound):
            prod = prod * _u(rate.shape, rate, generator)
            alive = prod > limit
            if not bool(alive.any()):
                break
            count = count + alive.to(rate.dtype)
        if bool(big.any()):
            approx = (normal(rate, rate.clamp(min=0).sqrt(), generator=generator)
                      .round().clamp(min=0))
            from .elementwise import where

            count = where(big, approx, count)
        return count


def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Any = None) -> Tensor:
    """Fill ``self`` with 0/1 samples, 1 with probability ``p`` (a float or tensor)."""
    def draw(s: Tensor) -> Tensor:
        probs = p if isinstance(p, Tensor) else s.new_full(s.shape, float(p))
        probs = probs.detach().to(s.device).expand(*s.shape)
        dt = probs.dtype if probs.dtype.is_floating_point else None
        from ..creation import rand

        return (rand(*s.shape, dtype=dt, device=s.device, generator=generator)
                < probs).to(s.dtype)
    return inplace(self, "bernoulli_", draw)


def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill ``self`` with samples of the exponential distribution of rate ``lambd``."""
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return inplace(self, "exponential_", lambda s: -(1 - _u(s.shape, s, generator))
                   .clamp(min=1e-30).log() / lambd)


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Any = None) -> Tensor:
    """Fill ``self`` with ``exp`` of N(mean, std^2) samples."""
    from ..creation import randn

    return inplace(self, "log_normal_", lambda s: (randn(
        *s.shape, dtype=s.dtype, device=s.device, generator=generator) * std + mean).exp())


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Any = None) -> Tensor:
    """Fill ``self`` with samples of the Cauchy distribution."""
    return inplace(self, "cauchy_", lambda s: median + sigma * (
        math.pi * (_u(s.shape, s, generator) - 0.5)).tan())


def geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Fill ``self`` with the number of Bernoulli(p) trials up to the first success."""
    if not 0 < p <= 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1], but got p={p}")
    dt = None if self.dtype.is_floating_point else "float64"
    return inplace(self, "geometric_", lambda s: (
        (1 - _u(s.shape, s if dt is None else s.to(dt), generator)).clamp(min=1e-30).log()
        / math.log1p(-p) if p < 1 else s.new_zeros(s.shape).to(dt or s.dtype)
    ).ceil().clamp(min=1).to(s.dtype))


def random_(self: Tensor, from_: int = 0, to: int | None = None, *,
            generator: Any = None) -> Tensor:
    """Fill ``self`` with integers from ``[from_, to)``; ``random_(to)`` draws ``[0, to)``;
    without bounds, ``[0, 2**mantissa]`` for floats or the dtype's range for integers."""
    from ..creation import randint

    if to is None and from_ != 0:
        from_, to = 0, from_
    if to is None:
        dt = self.dtype
        if dt.is_floating_point:
            to = 2 ** {"float16": 11, "bfloat16": 8, "float32": 24}.get(dt.name, 53) + 1
        elif dt.name == "bool":
            to = 2
        else:
            to = 2 ** (8 * dt.itemsize - (0 if dt.name.startswith("uint") else 1))
    return inplace(self, "random_", lambda s: randint(
        from_, to, s.shape, dtype="int64", device=s.device, generator=generator).to(s.dtype))


for _f in (bernoulli_, exponential_, log_normal_, cauchy_, geometric_, random_):
    setattr(Tensor, _f.__name__, _f)
Tensor.bernoulli = bernoulli
Tensor.poisson = poisson

__all__ = ["normal", "bernoulli", "poisson"]
