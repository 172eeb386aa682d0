"""Gamma distribution and the standard-gamma sampler with implicit reparameterisation.

Samples of Gamma(alpha, 1) are drawn with Marsaglia and Tsang's method (rejection from a
transformed normal; ``alpha < 1`` is boosted to ``alpha + 1`` and scaled by
``U^(1/alpha)``). Their gradient with respect to ``alpha`` is the implicit one PyTorch
also uses, ``dz/dalpha = -(dF/dalpha)(z; alpha) / p(z; alpha)`` with F the CDF, here
computed from the series of the regularised incomplete gamma function (summed until its
terms vanish; the loop is longer for large samples, about ``z + 10 sqrt(z)`` terms).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..autograd.function import Function
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, broadcast_all


def _draw_standard_gamma(alpha: Tensor) -> Tensor:
    """Gamma(alpha, 1) samples of ``alpha``'s shape (no graph)."""
    from ..creation import rand, randn
    from ..ops.elementwise import where

    with no_grad():
        boost = alpha < 1
        a = where(boost, alpha + 1, alpha)
        d = a - 1.0 / 3.0
        c = (9 * d).rsqrt()
        out = alpha.new_zeros(alpha.shape)
        done = alpha.new_zeros(alpha.shape).to("bool")
        for _ in range(1000):  # each round accepts > 95% of what is left
            x = randn(*alpha.shape, dtype=alpha.dtype, device=alpha.device)
            v = (1 + c * x) ** 3
            u = rand(*alpha.shape, dtype=alpha.dtype, device=alpha.device)
            safe_v = where(v > 0, v, v.new_ones(()))
            accept = (v > 0) & (u.log() < 0.5 * x * x + d - d * safe_v + d * safe_v.log())
            out = where(accept & ~done, d * safe_v, out)
            done = done | accept
            if bool(done.all()):
                break
        u = rand(*alpha.shape, dtype=alpha.dtype, device=alpha.device)
        out = where(boost, out * u.pow(1 / alpha), out)
        tiny = 1.1754943508222875e-38 if alpha.dtype.itemsize <= 4 else 2.2250738585072014e-308
        return out.clamp(min=tiny)


def _standard_gamma_grad(z: Tensor, alpha: Tensor) -> Tensor:
    """``dz/dalpha`` of Gamma(alpha, 1) samples ``z`` (implicit reparameterisation)."""
    from ..ops.gamma_functions import digamma, lgamma

    with no_grad():
        wide = z.device.type == "cpu" and z.dtype.name != "float64"
        x = z.to("float64") if wide else z
        a = alpha.to("float64") if wide else alpha
        logx = x.log()
        # P(a, x) = sum_n exp(-x + (a+n) log x - lgamma(a+n+1)); d/da of each term is
        # term_n * (log x - digamma(a+n+1)); both follow by recurrence in n
        term = (-x + a * logx - lgamma(a + 1)).exp()
        psi = digamma(a + 1)
        total = term * (logx - psi)
        cdf = term
        for n in range(1, 100000):
            term = term * x / (a + n)
            psi = psi + 1 / (a + n)
            total = total + term * (logx - psi)
            cdf = cdf + term
            if n % 16 == 0 and bool((term <= 1e-16 * cdf).all()):
                break
        log_pdf = (a - 1) * logx - x - lgamma(a)
        grad = -total / log_pdf.exp()
        return grad.to(z.dtype) if wide else grad


class _StandardGamma(Function):
    """Passes a drawn sample through, with the implicit gradient to ``alpha``."""

    def forward(ctx, alpha, z):
        ctx.save_for_backward(alpha, z)
        return ctx.xp.asarray(z, copy=True)

    def backward(ctx, g):
        alpha, z = ctx.saved_tensors
        return g * _standard_gamma_grad(z.detach(), alpha.detach()), None


def standard_gamma(alpha: Tensor) -> Tensor:
    """Gamma(alpha, 1) samples of ``alpha``'s shape, differentiable in ``alpha``."""
    return _StandardGamma.apply(alpha, _draw_standard_gamma(alpha.detach()))


class Gamma(Distribution):
    """The gamma distribution with shape ``concentration`` and inverse scale ``rate``.

    ``rsample`` is reparameterised (implicitly, as in PyTorch).
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration: Tensor | float, rate: Tensor | float,
                 validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.concentration.shape, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return standard_gamma(self.concentration.expand(*shape)) / self.rate.expand(*shape)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration, self.rate
        return (a * b.log() + (a - 1) * value.log() - b * value - a.lgamma())

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - self.rate.log() + a.lgamma() + (1 - a) * a.digamma()

    def cdf(self, value: Tensor) -> Tensor:
        """``P(concentration, rate * value)``, the regularized incomplete gamma function
        (differentiable w.r.t. ``value`` and ``rate``, as PyTorch's)."""
        from ..ops.gamma_functions import gammainc

        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom: ``Gamma(df / 2,
    1 / 2)``."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df: Tensor | float, validate_args: bool | None = None) -> None:
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, 0.5 * df.new_ones(df.shape), validate_args=validate_args)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


__all__ = ["Gamma", "Chi2"]
