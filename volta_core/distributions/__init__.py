"""``vt.distributions``: probability distributions with PyTorch's API.

``sample``/``rsample`` (reparameterised where PyTorch's is), ``log_prob``, ``entropy``,
``mean``/``mode``/``variance``/``stddev``, ``batch_shape``/``event_shape``, argument and
sample validation (``validate_args``), and :func:`kl_divergence` over registered pairs.

Differences from PyTorch: the random streams differ (Volta's generators); Dirichlet and
Beta ``rsample`` are reparameterised through normalised gamma draws, so their per-sample
gradients differ from PyTorch's (same expectation); ``batch_shape``/``event_shape`` are
tuples (Volta's shapes).
"""

from . import constraints
from .constraints import Constraint
from .dirichlet import Beta, Dirichlet
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution, set_default_validate_args
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .more import Cauchy, Geometric, Poisson, StudentT
from .multivariate_normal import MultivariateNormal
from .normal import LogNormal, Normal
from .simple import Exponential, Laplace, Uniform

__all__ = ["Distribution", "Normal", "LogNormal", "Uniform", "Laplace", "Exponential",
           "Bernoulli", "Categorical", "OneHotCategorical", "Gamma", "Beta", "Dirichlet",
           "MultivariateNormal", "Independent", "Poisson", "Geometric", "Cauchy", "StudentT",
           "kl_divergence", "register_kl",
           "constraints", "Constraint", "set_default_validate_args"]
