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
from .counts import Geometric, Poisson
from .dirichlet import Beta, Dirichlet
from .discrete import Bernoulli, Categorical, OneHotCategorical
from .distribution import Distribution, set_default_validate_args
from .exponential import Exponential
from .gamma import Chi2, Gamma
from .heavy_tailed import Cauchy, StudentT
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import LogNormal, Normal
from .uniform import Uniform

__all__ = ["Distribution", "Normal", "LogNormal", "Uniform", "Laplace", "Exponential",
           "Bernoulli", "Categorical", "OneHotCategorical", "Gamma", "Chi2", "Beta", "Dirichlet",
           "MultivariateNormal", "Independent", "Poisson", "Geometric", "Cauchy", "StudentT",
           "kl_divergence", "register_kl",
           "constraints", "Constraint", "set_default_validate_args"]
