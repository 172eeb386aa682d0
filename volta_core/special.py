"""``vt.special``: PyTorch's ``torch.special`` names, for the functions Volta has.

Most are the ops under their ``torch.special`` names (``expit`` is ``sigmoid``, ``gammaln``
is ``lgamma``, ``psi`` is ``digamma``, ...); ``xlog1py``, ``entr``, ``ndtr`` and
``spherical_bessel_j0`` exist only here, as in PyTorch, and so do ``i0e``, ``i1`` and
``i1e`` (``i0`` is also ``vt.i0``), ``erfcx``, ``log_ndtr``, ``ndtri``, ``gammainc`` and
``gammaincc``, the Bessel functions ``bessel_j0``/``j1``, ``bessel_y0``/``y1``,
``modified_bessel_i0``/``i1``/``k0``/``k1`` and ``scaled_modified_bessel_k0``/``k1``,
``airy_ai``, and the orthogonal polynomial families.
"""

from __future__ import annotations

from .ops.bessel import (
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    i0,
    i0e,
    i1,
    i1e,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
)
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


__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
           "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc",
           "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e",
           "i1", "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr",
           "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma",
           "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax",
           "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]
