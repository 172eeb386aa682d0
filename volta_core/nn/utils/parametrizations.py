"""Ready-made parametrizations (as ``torch.nn.utils.parametrizations``): ``weight_norm``,
``spectral_norm`` and ``orthogonal``, registered through
:func:`~volta_core.nn.utils.parametrize.register_parametrization`."""

from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...creation import eye, randn
from ...ops.decompositions import geqrf, householder_product
from ...ops.elementwise import where
from ...ops.joining import cat
from ...ops.spectral import matrix_exp
from ...tensor import Tensor
from ..distance import normalize
from ..module import Module
from . import parametrize
from .spectral_norm import _as_matrix, _default_dim, _store
from .weight_norm import _weight_norm, norm_except_dim


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Parametrize ``module.<name>`` as ``g * v / ||v||``: the originals are
    ``parametrizations.<name>.original0`` (``g``) and ``original1`` (``v``).

    Args:
        module: the module.
        name: the weight's name.
        dim: the dim kept by the norm (the whole tensor's norm when None).
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = _as_matrix(weight.detach(), self.dim)
            h, w = mat.shape
            u = normalize(randn(h, dtype=weight.dtype, device=weight.device), dim=0, eps=eps)
            v = normalize(randn(w, dtype=weight.dtype, device=weight.device), dim=0, eps=eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            self._power_method(mat, 15)

    def _power_method(self, mat: Tensor, n: int) -> None:
        with no_grad():
            for _ in range(n):
                _store(self._u, normalize(mat @ self._v, dim=0, eps=self.eps))
                _store(self._v, normalize(mat.t() @ self._u, dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        mat = _as_matrix(weight, self.dim)
        if self.training:
            self._power_method(mat.detach(), self.n_power_iterations)
        u, v = self._u.detach().clone(), self._v.detach().clone()
        sigma = (u * (mat @ v)).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Module:
    """Parametrize ``module.<name>`` as ``W / sigma(W)`` (the largest singular value,
    estimated by power iteration; the vectors are the buffers ``_u`` and ``_v`` of
    ``parametrizations.<name>.0``, updated in training mode).

    Args:
        module: the module.
        name: the weight's name.
        n_power_iterations: power iterations per forward in training.
        eps: the smallest norm when normalising.
        dim: the dim of the output channels (1 for ConvTranspose, else 0, when None).
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    dim = _default_dim(module) if dim is None else dim
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def _gram_schmidt_q(a: Tensor) -> Tensor:
    """The Q of ``a = QR`` with R's diagonal positive (columns orthonormalised in order)."""
    cols = []
    for j in range(a.shape[-1]):
        c = a[..., j:j + 1]
        for q in cols:
            c = c - q * (q * c).sum(-2, keepdim=True)
        for q in cols:  # a second pass keeps the columns orthogonal to rounding
            c = c - q * (q * c).sum(-2, keepdim=True)
        cols.append(c / (c * c).sum(-2, keepdim=True).sqrt())
    return cat(cols, -1)


class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: str, use_trivialization: bool) -> None:
        super().__init__()
        if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
            raise ValueError(f"orthogonal_map has to be one of 'matrix_exp', 'cayley', "
                             f"'householder'. Got: {orthogonal_map!r}")
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Tensor) -> Tensor:
        n, k = x.shape[-2], x.shape[-1]
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map == "householder":
            # the reflectors below X's diagonal, scaled to be reflections (tau = 2 / |v|^2);
            # X's diagonal (+-1, truncated: no gradient reaches it) signs Q's columns
            a = x.tril(-1)
            q = householder_product(a, 2.0 / (1.0 + (a * a).sum(-2)))
            q = q * x.detach().diagonal(dim1=-2, dim2=-1).trunc().unsqueeze(-2)
        else:
            x = x.tril()
            if n != k:
                x = cat([x, x.new_zeros(*x.shape[:-2], n, n - k)], -1)
            a = x - x.mT
            if self.orthogonal_map == "matrix_exp":
                q = matrix_exp(a)
            else:  # cayley: (I - A/2)^-1 (I + A/2) = 2 (I - A/2)^-1 - I
                ident = eye(n, dtype=a.dtype, device=a.device)
                q = _solve(ident - a * 0.5, ident + a * 0.5)
            if n != k:
                q = q[..., :k]
        if "base" in self._buffers:
            q = self.base @ q
        return q.mT if transposed else q

    def right_inverse(self, q: Tensor) -> Tensor:
        if tuple(q.shape) != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {tuple(q.shape)}.")
        with no_grad():
            q_init = q
            n, k = q.shape[-2], q.shape[-1]
            transposed = n < k
            if transposed:
                q = q.mT
                n, k = k, n
            if "base" not in self._buffers:  # no trivialization: the inverse of the map
                if self.orthogonal_map != "householder":
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the "
                        "Cayley parametrizations when use_trivialization=False.")
                # Q's reflectors; the diagonal holds the sign of each column of Q (so that
                # diag(R) > 0), flipped where no reflection was needed (tau = 0)
                a, tau = geqrf(q)
                diag = a.diagonal(dim1=-2, dim2=-1)
                diag.copy_(where(tau == 0.0, -diag.sign(), diag.sign()))
                return a.mT if transposed else a
            if n != k:
                extra = randn(*q.shape[:-2], n, n - k, dtype=q.dtype, device=q.device)
                q = cat([q, extra], -1)
            self.base = _gram_schmidt_q(q)
            rows, cols = q_init.shape[-2], q_init.shape[-1]
            neg_id = -eye(rows, cols, dtype=q_init.dtype, device=q_init.device)
            return neg_id.expand(*q_init.shape).clone()


def _solve(a: Tensor, b: Tensor) -> Tensor:
    """``a^-1 b`` by Gauss-Jordan elimination without pivoting (``a`` is ``I - A/2`` with
    ``A`` skew-symmetric: its symmetric part is I, so no pivot is ever small)."""
    n = a.shape[-1]
    rows_a = [a[..., i:i + 1, :] for i in range(n)]
    rows_b = [b[..., i:i + 1, :] for i in range(n)]
    for i in range(n):
        piv = rows_a[i][..., i:i + 1]
        rows_a[i], rows_b[i] = rows_a[i] / piv, rows_b[i] / piv
        for r in range(n):
            if r != i:
                f = rows_a[r][..., i:i + 1]
                rows_a[r] = rows_a[r] - f * rows_a[i]
                rows_b[r] = rows_b[r] - f * rows_b[i]
    return cat(rows_b, -2)


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Parametrize ``module.<name>`` (a matrix or batch of matrices) to stay orthogonal.

    The value is ``base @ Q(X)`` (``base`` the orthogonalised initial weight; with
    ``use_trivialization=False``, ``Q(X)`` alone), ``Q`` the ``"matrix_exp"`` or
    ``"cayley"`` map of the skew-symmetric part of the learnable ``X``, or the product of
    the ``"householder"`` reflectors below its diagonal. As PyTorch, the default map is
    ``"matrix_exp"`` for square weights and ``"householder"`` otherwise, and only the
    Householder map can be assigned to without trivialization.
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square else "householder"
    parametrize.register_parametrization(
        module, name, _Orthogonal(weight, orthogonal_map, use_trivialization))
    return module


__all__ = ["weight_norm", "spectral_norm", "orthogonal"]
