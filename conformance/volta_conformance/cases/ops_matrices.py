"""Cases of matrix builders, decompositions, distances and covariance: diag family,
block_diag, kron, inner, det/inverse/slogdet/logdet, linalg.cholesky/solve/
solve_triangular, cholesky_solve/cholesky_inverse/triangular_solve, linalg.tensorinv,
linalg.householder_product/orgqr, geqrf, the LU family (linalg.lu_factor/lu_factor_ex/lu/
lu_solve/solve_ex, lu_unpack, lu/lu_solve and their methods), linalg.vander,
matrix_power/matrix_exp, pinverse, svd, linalg.eigh/qr/matrix_norm,
cdist, dist, cov, corrcoef."""

from __future__ import annotations

import volta_core as vt

from ..case import FLOAT, Arg, OpCase, Scalar

A34 = Arg((3, 4))
SQ = Arg((2, 3, 3))


def case(name: str, op: str, *args, fn=None, dtypes: tuple = FLOAT, **kw) -> OpCase:
    extra = {k: kw.pop(k) for k in ("covers", "needs", "tol", "grad") if k in kw}
    return OpCase(f"{op}/{name}", op, dtypes, args=args, fn=fn, kwargs=kw, **extra)


def _spd(m):
    return m @ m.transpose(-2, -1) + 3 * vt.eye(m.shape[-1], dtype=m.dtype, device=m.device)


def _eye6(m):
    """A well-conditioned (2, 3, 6) map for tensorinv/tensorsolve."""
    return m + 3 * vt.eye(6, dtype=m.dtype, device=m.device).reshape(2, 3, 6)


CASES: list = [
    case("vector", "diag", Arg((4,)), Scalar(1), covers=("Tensor.diag",)),
    case("matrix", "diag", A34, Scalar(-1)),
    case("basic", "diag_embed", A34, offset=1, covers=("Tensor.diag_embed",)),
    case("basic", "diagflat", Arg((2, 2)), covers=("Tensor.diagflat",)),
    case("basic", "block_diag", A34, Arg((2,)), Arg(())),
    case("basic", "kron", Arg((2, 3)), Arg((3, 2)), covers=("Tensor.kron",)),
    case("basic", "inner", A34, Arg((2, 4)), covers=("Tensor.inner",)),
    case("basic", "det", SQ, covers=("linalg.det",)),
    case("basic", "inverse", SQ, fn=lambda m: vt.inverse(_spd(m)), covers=("linalg.inv",)),
    case("basic", "slogdet", SQ),
    case("basic", "logdet", SQ, fn=lambda m: vt.logdet(_spd(m))),
    case("basic", "linalg.cholesky", SQ, fn=lambda m: vt.linalg.cholesky(_spd(m))),
    case("upper", "cholesky", SQ, fn=lambda m: vt.cholesky(_spd(m), upper=True),
         covers=("Tensor.cholesky",)),
    case("basic", "linalg.solve", SQ, Arg((2, 3, 2)),
         fn=lambda m, b: vt.linalg.solve(_spd(m), b)),
    case("basic", "linalg.solve_triangular", SQ, Arg((2, 3, 2)),
         fn=lambda m, b: vt.linalg.solve_triangular(_spd(m), b, upper=True)),
    case("basic", "cholesky_solve", Arg((2, 3, 2)), SQ,
         fn=lambda b, m: vt.cholesky_solve(b, vt.linalg.cholesky(_spd(m)))),
    case("upper", "cholesky_inverse", SQ,
         fn=lambda m: vt.cholesky_inverse(vt.linalg.cholesky(_spd(m)).mT, upper=True)),
    case("transpose", "triangular_solve", Arg((2, 3, 2)), SQ,
         fn=lambda b, m: vt.triangular_solve(b, _spd(m), upper=False, transpose=True)[0]),
    case("basic", "linalg.tensorinv", Arg((2, 3, 6)), fn=lambda m: vt.linalg.tensorinv(_eye6(m))),
    case("basic", "linalg.householder_product", Arg((2, 4, 3)), Arg((2, 2)),
         covers=("orgqr",)),
    case("basic", "geqrf", Arg((2, 4, 3)), fn=lambda m: vt.geqrf(m)[0], grad=False),
    case("basic", "linalg.lu_factor", SQ),
    # a zero column: the second pivot is exactly 0 on every backend (info 2, no error)
    case("singular", "linalg.lu_factor_ex", SQ,
         fn=lambda m: vt.linalg.lu_factor_ex(m * m.new_tensor([1.0, 0.0, 1.0]))),
    case("tall", "linalg.lu", Arg((2, 5, 3))),
    case("wide", "lu_unpack", Arg((2, 3, 5)), fn=lambda m: vt.lu_unpack(*vt.linalg.lu_factor(m))),
    case("adjoint", "linalg.lu_solve", SQ, Arg((2, 3, 2)),
         fn=lambda m, b: vt.linalg.lu_solve(*vt.linalg.lu_factor(m), b, adjoint=True)),
    case("right", "linalg.lu_solve", SQ, Arg((3, 3)),
         fn=lambda m, b: vt.linalg.lu_solve(*vt.linalg.lu_factor(m), b, left=False)),
    case("infos", "lu", SQ, fn=lambda m: vt.lu(m, get_infos=True)),
    case("basic", "lu_solve", Arg((2, 3, 2)), SQ, fn=lambda b, m: vt.lu_solve(b, *vt.lu(m))),
    case("method", "Tensor.lu_solve", Arg((2, 3, 2)), SQ, fn=lambda b, m: b.lu_solve(*m.lu()),
         covers=("Tensor.lu",)),
    case("vector", "linalg.solve_ex", SQ, Arg((2, 3))),
    case("basic", "linalg.vander", Arg((2, 4)), N=3),
    case("basic", "linalg.tensorsolve", Arg((2, 3, 6)), Arg((2, 3)),
         fn=lambda m, b: vt.linalg.tensorsolve(_eye6(m), b)),
    case("basic", "matrix_power", SQ, Scalar(3), covers=("Tensor.matrix_power",
                                                          "linalg.matrix_power")),
    case("basic", "matrix_exp", SQ, fn=lambda m: vt.matrix_exp(m * 0.5),
         covers=("Tensor.matrix_exp", "linalg.matrix_exp")),
    case("basic", "pinverse", A34, covers=("Tensor.pinverse", "linalg.pinv")),
    case("values", "svd", A34, fn=lambda m: vt.svd(m).S,
         covers=("Tensor.svd", "linalg.svd", "linalg.svdvals")),
    case("basic", "linalg.eigh", SQ, fn=lambda m: vt.linalg.eigh(_spd(m)).eigenvalues,
         covers=("linalg.eigvalsh",)),
    case("r", "linalg.qr", A34, fn=lambda m: vt.linalg.qr(m.mT).R.abs()),
    case("nuc", "linalg.matrix_norm", A34, fn=lambda m: vt.linalg.matrix_norm(m, "nuc")),
    case("p1", "cdist", Arg((5, 3)), Arg((4, 3)), p=1.0),
    case("basic", "pdist", Arg((5, 3))),
    case("basic", "trapezoid", A34, covers=("trapz",)),
    case("x", "trapezoid", A34, Arg((4,))),
    case("basic", "cumulative_trapezoid", A34, dx=0.5),
    case("basic", "combinations", Arg((4,)), Scalar(2)),
    case("basic", "vander", Arg((4,)), Scalar(3)),
    case("basic", "dist", A34, Arg((4,)), Scalar(3)),
    case("basic", "cov", A34, covers=("Tensor.cov",)),
    case("basic", "corrcoef", A34, covers=("Tensor.corrcoef",)),
]
