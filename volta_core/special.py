"""``vt.special``: PyTorch's ``torch.special`` names, for the functions Volta has.

Most are the ops under their ``torch.special`` names (``expit`` is ``sigmoid``, ``gammaln``
is ``lgamma``, ``psi`` is ``digamma``, ...); ``xlog1py``, ``entr``, ``ndtr`` and
``spherical_bessel_j0`` exist only here, as in PyTorch, and so do ``i0e``, ``i1`` and
``i1e`` (``i0`` is also ``vt.i0``), ``erfcx``, ``log_ndtr``, ``ndtri``, ``gammainc`` and
``gammaincc``, and the orthogonal polynomial families. Not here yet: the Bessel J/Y/K
functions and ``airy_ai``.
"""

from __future__ import annotations

from .ops.bessel import i0, i0e, i1, i1e
from .ops.elementwise import exp2, sigmoid
from .ops.erfinv import erfinv
from .ops.gamma_functions import digamma, gammainc, gammaincc, lgamma, mvlgamma, polygamma, zeta
from .ops.math import erf, expm1, log1p, round  # noqa: A004
from .ops.normal_functions import erfcx, log_ndtr, ndtri
from .ops.orthogonal_polynomials import (
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    hermite_polynomial_h,
    hermite_polynomial_he,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
)
from .ops.reduce import log_softmax, logsumexp, softmax
from .ops.special import entr, erfc, logit, ndtr, sinc, spherical_bessel_j0, xlog1py, xlogy

expit = sigmoid
gammaln = lgamma
psi = digamma
multigammaln = mvlgamma


__all__ = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2",
           "expit", "expm1", "gammainc", "gammaincc", "gammaln", "hermite_polynomial_h",
           "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
           "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax",
           "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]
