"""The multivariate normal distribution, held by the Cholesky factor of its covariance."""

from __future__ import annotations

from collections.abc import Sequence

from ..tensor import Tensor
from . import constraints
from .distribution import _LOG_2PI, Distribution, lazy_property


def _batch_mahalanobis(scale_tril: Tensor, diff: Tensor) -> Tensor:
    """``|L^-1 diff|^2`` over the last dim (both batches broadcast)."""
    from ..ops._util import broadcast_shapes
    from ..ops.linalg import solve_triangular

    batch = broadcast_shapes("MultivariateNormal", scale_tril.shape[:-2], diff.shape[:-1])
    n = diff.shape[-1]
    low = scale_tril.expand(*batch, n, n)
    y = solve_triangular(low, diff.expand(*batch, n).unsqueeze(-1), upper=False)
    return y.squeeze(-1).pow(2).sum(-1)


class MultivariateNormal(Distribution):
    """N(loc, Sigma) over vectors, given exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (the lower Cholesky factor of Sigma).

    Reparameterisable. Needs ``xp.linalg`` (cholesky, solve) on the device.
    """

    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: Tensor, covariance_matrix: Tensor | None = None,
                 precision_matrix: Tensor | None = None, scale_tril: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        from ..ops._util import broadcast_shapes
        from ..ops.linalg import cholesky, solve

        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        matrix = given[0]
        if matrix.ndim < 2:
            raise ValueError("scale_tril, covariance_matrix or precision_matrix matrix must "
                             "be at least two-dimensional, with optional leading batch "
                             "dimensions")
        batch = broadcast_shapes("MultivariateNormal", matrix.shape[:-2], loc.shape[:-1])
        n = loc.shape[-1]
        self.loc = loc.expand(*batch, n)
        if scale_tril is not None:
            self.scale_tril = scale_tril.expand(*batch, n, n)
        elif covariance_matrix is not None:
            self.covariance_matrix = covariance_matrix.expand(*batch, n, n)
        else:
            self.precision_matrix = precision_matrix.expand(*batch, n, n)
        super().__init__(batch, (n,), validate_args=validate_args)
        if scale_tril is None:
            if covariance_matrix is not None:
                self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
            else:
                from ..creation import eye

                eye_n = eye(n, dtype=precision_matrix.dtype, device=precision_matrix.device)
                self._unbroadcasted_scale_tril = cholesky(solve(precision_matrix, eye_n))
        else:
            self._unbroadcasted_scale_tril = scale_tril

    @lazy_property
    def scale_tril(self) -> Tensor:
        n = self._event_shape[0]
        return self._unbroadcasted_scale_tril.expand(*self._batch_shape, n, n)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        low = self._unbroadcasted_scale_tril
        n = self._event_shape[0]
        return (low @ low.transpose(-2, -1)).expand(*self._batch_shape, n, n)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        from ..creation import eye
        from ..ops.linalg import solve

        cov = self.covariance_matrix
        return solve(cov, eye(cov.shape[-1], dtype=cov.dtype, device=cov.device))

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        n = self._event_shape[0]
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(*self._batch_shape, n)

    def rsample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        from ..creation import randn

        shape = self._extended_shape(sample_shape)
        eps = randn(*shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * _LOG_2PI + m) - self._half_log_det()

    def entropy(self) -> Tensor:
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + _LOG_2PI) + self._half_log_det()
        return h.expand(*self._batch_shape) if self._batch_shape else h



__all__ = ["MultivariateNormal"]
