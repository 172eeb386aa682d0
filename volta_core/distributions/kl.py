"""``kl_divergence(p, q)`` and ``register_kl``: closed forms registered per pair of types.

Dispatch picks the registered pair most specific to ``(type(p), type(q))`` (by their
method resolution orders), as PyTorch does.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..tensor import Tensor
from .counts import Geometric, Poisson
from .dirichlet import Beta, Dirichlet
from .discrete import Bernoulli, Categorical, OneHotCategorical, _softplus
from .distribution import Distribution
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent, _sum_rightmost
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import LogNormal, Normal
from .uniform import Uniform

_KL: dict[tuple[type, type], Callable] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[Callable], Callable]:
    """Decorator registering ``fn(p, q)`` as the KL divergence of that pair of types."""
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)
            and isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"register_kl expects Distribution subclasses, got {type_p} and "
                        f"{type_q}")

    def decorator(fn: Callable) -> Callable:
        _KL[type_p, type_q] = fn
        return fn
    return decorator


def _dispatch(type_p: type, type_q: type) -> Callable | None:
    best, rank = None, None
    for (tp, tq), fn in _KL.items():
        if issubclass(type_p, tp) and issubclass(type_q, tq):
            r = (type_p.__mro__.index(tp), type_q.__mro__.index(tq))
            if rank is None or r < rank:
                best, rank = fn, r
    return best


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q) = E_p[log p(x) - log q(x)], batched over the batch shape."""
    fn = _dispatch(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return fn(p, q)


def _infinite_where(mask: Tensor, value: Tensor) -> Tensor:
    from ..ops.elementwise import where

    return where(mask, value.new_full((), math.inf), value)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p: LogNormal, q: LogNormal) -> Tensor:
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    from ..ops.elementwise import where

    t1 = p.probs * (_softplus(-q.logits) - _softplus(-p.logits))
    t1 = where(p.probs == 0, t1.new_zeros(()), _infinite_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (_softplus(q.logits) - _softplus(p.logits))
    t2 = where(p.probs == 1, t2.new_zeros(()), _infinite_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    from ..ops.elementwise import where

    t = p.probs * (p.logits - q.logits)
    t = where(p.probs == 0, t.new_zeros(()), _infinite_where(q.probs == 0, t))
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _infinite_where((q.low > p.low) | (q.high < p.high), result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    ratio = q.rate / p.rate
    return -ratio.log() + ratio - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    diff = (p.loc - q.loc).abs()
    return -scale_ratio.log() + diff / q.scale + scale_ratio * (-diff / p.scale).exp() - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    a, b, c, d = p.concentration, p.rate, q.concentration, q.rate
    return (c * (b / d).log() + c.lgamma() - a.lgamma() + (a - c) * a.digamma()
            + (d - b) * (a / b))


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    a, b = p.concentration, q.concentration
    a0, b0 = a.sum(-1), b.sum(-1)
    t1 = a0.lgamma() - b0.lgamma()
    t2 = (a.lgamma() - b.lgamma()).sum(-1)
    t4 = a.digamma() - a0.digamma().unsqueeze(-1)
    return t1 - t2 + ((a - b) * t4).sum(-1)


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    from ..ops._util import broadcast_shapes
    from ..ops.linalg import solve_triangular

    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different "
                         "event shapes cannot be computed")
    n = p.event_shape[0]
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = q._half_log_det() - p._half_log_det()
    batch = broadcast_shapes("kl_divergence", lp.shape[:-2], lq.shape[:-2])
    m = solve_triangular(lq.expand(*batch, n, n), lp.expand(*batch, n, n), upper=False)
    term2 = m.pow(2).sum(-1).sum(-1)
    term3 = _batch_mahalanobis(lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Tensor:
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independent distributions with different "
                                  "reinterpreted_batch_ndims is not implemented")
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist),
                          p.reinterpreted_batch_ndims)


__all__ = ["kl_divergence", "register_kl"]
