"""The LU factorisation with partial pivoting and what is built on it:
``vt.linalg.lu_factor``/``lu_factor_ex``/``lu``/``lu_solve``/``solve_ex``,
``vt.lu_unpack``, and PyTorch's older ``vt.lu``/``vt.lu_solve`` (``Tensor.lu``,
``Tensor.lu_solve``).

The factorisation is LAPACK's blocked ``getrf`` written in Tensor ops (panels of columns
factored a column at a time, the rest updated by GEMMs), so every backend runs it and
autograd differentiates it. Each column step picks its pivot under
``no_grad`` (the first row with the largest magnitude, as LAPACK's ``idamax``, so ties give
PyTorch's pivots), swaps that row up, scales the column below the pivot and updates the
trailing block. With the pivots fixed, the factors are smooth functions of ``A``: the
gradients autograd finds through the loop are PyTorch's (its LU backward is the same
derivative in closed form), and differentiable again. The solves are forward and back
substitution on the packed factors, as LAPACK's ``getrs``: a zero pivot gives inf/NaN, not
an error. Pivots are int32 and 1-based, as LAPACK's and PyTorch's.
"""

from __future__ import annotations

from collections import namedtuple

from ..autograd.grad_mode import no_grad
from ..errors import DTypeError, IndexOutOfRangeError, LinAlgError, ShapeError
from ..tensor import Tensor, tensor_method
from ._util import broadcast_shapes

# PyTorch's result types (``torch.return_types.<name>``): the same names and fields
LUFactorResult = namedtuple("linalg_lu_factor", ["LU", "pivots"])
LUFactorExResult = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
LUResult = namedtuple("linalg_lu", ["P", "L", "U"])
LUUnpackResult = namedtuple("lu_unpack", ["P", "L", "U"])
SolveExResult = namedtuple("linalg_solve_ex", ["result", "info"])
LUWithInfoResult = namedtuple("_lu_with_info", ["LU", "pivots", "info"])

_LAPACK_DTYPES = ("float32", "float64")


def _check_matrices(op: str, A: Tensor, what: str = "A") -> None:
    """``A`` is a float32/float64 batch of matrices (LAPACK's types, as PyTorch's CPU)."""
    if not isinstance(A, Tensor):
        raise TypeError(f"{op}: expected {what} to be a Tensor, got {type(A).__name__}")
    if A.ndim < 2:
        raise ShapeError(f"{op}: expected {what} with 2 or more dimensions (a batch of "
                         f"matrices (*, m, n)), got shape {tuple(A.shape)}")
    if A.dtype.name not in _LAPACK_DTYPES:
        raise DTypeError(f"{op}: the LU factorisation is implemented for float32 and float64 "
                         f"(as PyTorch's), got {what} of dtype {A.dtype.name}; convert it "
                         "with .float() or .double()")


def _check_pivot(op: str, pivot: bool) -> None:
    if not pivot:  # PyTorch's CPU kernel (LAPACK getrf) always pivots: refused as there
        raise LinAlgError(f"{op}: LU without pivoting is not implemented (as on PyTorch's "
                          "CPU); call it with pivot=True")


# columns factored one at a time before the rest of the matrix is updated by one GEMM
_PANEL = 32


def _panel(a: Tensor) -> tuple[Tensor, Tensor, list]:
    """Unblocked ``getrf`` of a panel ``a (*, r, c)`` (``r >= c``): the factored panel,
    ``order (*, r)`` (the row of ``a`` each row of the result came from) and the pivots
    (panel rows, ``(*, 1)`` each)."""
    from ..creation import arange
    from .elementwise import where
    from .indexing import take_along_dim

    r, c = a.shape[-2], a.shape[-1]
    batch = tuple(a.shape[:-2])
    rows = arange(r, device=a.device).reshape(r, 1)
    cols = arange(c, device=a.device).reshape(1, c)
    order = arange(r, device=a.device).reshape(r, 1).expand(*batch, r, 1)
    pivots = []
    for j in range(c):
        with no_grad():  # the pivot is a choice, not a function to differentiate
            mag = where(rows >= j, a[..., :, j:j + 1].abs(), -1.0)
            p = mag.argmax(-2, keepdim=True)  # (*batch, 1, 1): the first largest, as idamax
            order = where(rows == j, take_along_dim(order, p, -2),
                          where(rows == p, order[..., j:j + 1, :], order))
        # swap rows j and p by a gather, so the gradient follows the rows
        row_p = take_along_dim(a, p.expand(*batch, 1, c), -2)
        a = where(rows == j, row_p, where(rows == p, a[..., j:j + 1, :], a))
        pivot = a[..., j:j + 1, j:j + 1]
        # a zero pivot means a zero column: getrf leaves it unscaled (info reports it)
        lcol = a[..., :, j:j + 1] / where(pivot != 0, pivot, 1.0)
        below = rows > j
        a = where(below & (cols > j), a - lcol * a[..., j:j + 1, :],
                  where(below & (cols == j), lcol, a))
        pivots.append(p[..., 0])
    return a, order[..., 0], pivots


def _getrf(A: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """``(LU, pivots, info)`` of ``A (*, m, n)``: LAPACK's blocked ``getrf`` in
    differentiable Tensor ops. Each panel of ``_PANEL`` columns is factored a column at a
    time (:func:`_panel`); its row swaps then move the rows of the columns left and right
    of it, the rows right of it become ``U12 = L11^-1 A12`` and the trailing block
    ``A22 - L21 U12`` (one GEMM), which the next panel factors. The work outside GEMMs is
    on one panel at a time (a column at a time over the whole matrix made a 200x200
    factorisation take 0.6 s)."""
    from .elementwise import where
    from .indexing import take_along_dim
    from .joining import cat

    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    batch = tuple(A.shape[:-2])
    done: list = []  # finished row blocks (rows j0.. of a panel: all n columns)
    pivots: list = []
    a = A.clone()  # the rows not finished yet, all n columns
    for j0 in range(0, k, _PANEL):
        jb = min(_PANEL, k - j0)
        panel, order, piv = _panel(a[..., :, j0:j0 + jb])
        pivots += [p + j0 for p in piv]
        swap = order.unsqueeze(-1)
        left = take_along_dim(a[..., :, :j0], swap.expand(*batch, m - j0, j0), -2)
        right = take_along_dim(a[..., :, j0 + jb:], swap.expand(*batch, m - j0, n - j0 - jb),
                               -2)
        u12 = _substitute(panel[..., :jb, :], right[..., :jb, :], lower=True, unit=True)
        a22 = right[..., jb:, :] - panel[..., jb:, :] @ u12
        done.append(cat([left[..., :jb, :], panel[..., :jb, :], u12], -1))
        a = cat([left[..., jb:, :], panel[..., jb:, :], a22], -1)
    if m > k or not done:  # rows below the last panel (m > n), or no panel at all
        done.append(a)
    lu = done[0] if len(done) == 1 else cat(done, -2)
    with no_grad():
        if k:
            piv = (cat(pivots, -1) + 1).to("int32")
            zero = lu.diagonal(0, -2, -1)[..., :k] == 0
            first = zero.to(A.dtype).argmax(-1)  # the first zero pivot
            info = where(zero.any(-1), first + 1, 0).to("int32")
        else:
            piv = A.new_zeros((*batch, 0), dtype="int32")
            info = A.new_zeros(batch, dtype="int32")
    return lu, piv, info


def _raise_singular(op: str, info: Tensor, solver: bool = False) -> None:
    """PyTorch's ``check_errors``: a ``LinAlgError`` naming the first matrix with a zero
    pivot (its batch element) and that pivot (one host read of ``info``)."""
    flat = info.reshape(-1).tolist() if info.numel() else []
    bad = next((i for i, v in enumerate(flat) if v), None)
    if bad is None:
        return
    at = f" (batch element {bad})" if info.ndim else ""
    j = flat[bad]
    if solver:
        raise LinAlgError(f"{op}: the solver failed because the input matrix is singular{at}"
                          f" (U[{j},{j}] is zero); linalg.lstsq or linalg.pinv give "
                          "least-squares solutions")
    raise LinAlgError(f"{op}: U[{j},{j}] is zero{at}: the matrix is singular and using the "
                      "factorisation in lu_solve would divide by zero; to factor it anyway "
                      "call linalg.lu_factor_ex (whose info reports it) or linalg.lu")


def lu_factor_ex(A: Tensor, *, pivot: bool = True,
                 check_errors: bool = False) -> LUFactorExResult:
    """The LU factorisation with partial pivoting of ``A``, packed as LAPACK's ``getrf``.

    ``A = P L U`` with ``L`` unit lower triangular (stored below the diagonal of ``LU``,
    its ones not stored) and ``U`` upper triangular (on and above it). A singular matrix is
    factored all the same: ``info`` reports it instead of an error.

    Args:
        A: tensor of shape ``(*, m, n)`` (float32 or float64; rectangular and batched).
        pivot: must be True: as on PyTorch's CPU, LU without pivoting is not implemented.
        check_errors: raise ``LinAlgError`` when some matrix is singular (``info > 0``).

    Returns:
        A namedtuple ``(LU, pivots, info)``: ``LU (*, m, n)``; ``pivots (*, min(m, n))``,
        int32 and 1-based (row ``i`` was swapped with row ``pivots[i]``, in order);
        ``info (*)``, int32: 0, or the 1-based index of the first zero pivot ``U[i, i]``.
        ``LU`` is differentiable (PyTorch's gradient), the pivots and info are not.
    """
    _check_matrices("linalg.lu_factor_ex", A)
    _check_pivot("linalg.lu_factor_ex", pivot)
    LU, piv, info = _getrf(A)
    if check_errors:
        _raise_singular("linalg.lu_factor_ex", info)
    return LUFactorExResult(LU, piv, info)


def lu_factor(A: Tensor, *, pivot: bool = True) -> LUFactorResult:
    """The packed LU factorisation ``(LU, pivots)`` of ``A`` (see :func:`lu_factor_ex`).

    Raises ``LinAlgError`` for a singular matrix, as PyTorch's (its ``U`` has a zero pivot,
    which :func:`lu_solve` would divide by); :func:`lu_factor_ex` and :func:`lu` factor it.

    Args:
        A: tensor of shape ``(*, m, n)`` (float32 or float64).
        pivot: must be True (as on PyTorch's CPU).
    """
    _check_matrices("linalg.lu_factor", A)
    _check_pivot("linalg.lu_factor", pivot)
    LU, piv, info = _getrf(A)
    _raise_singular("linalg.lu_factor", info)
    return LUFactorResult(LU, piv)


def lu(A: Tensor, *, pivot: bool = True) -> LUResult:
    """The LU factorisation with partial pivoting ``A = P L U``, unpacked.

    Args:
        A: tensor of shape ``(*, m, n)`` (float32 or float64); singular matrices too.
        pivot: must be True (as on PyTorch's CPU).

    Returns:
        A namedtuple ``(P, L, U)``: the permutation ``P (*, m, m)`` (in ``A``'s dtype),
        ``L (*, m, k)`` unit lower triangular and ``U (*, k, n)`` upper triangular, with
        ``k = min(m, n)``. ``L`` and ``U`` are differentiable, as PyTorch's.
    """
    _check_matrices("linalg.lu", A)
    _check_pivot("linalg.lu", pivot)
    LU, piv, _ = _getrf(A)
    return LUResult(*lu_unpack(LU, piv))


def _row_order(pivots: Tensor, m: int, reverse: bool = False) -> Tensor:
    """``perm (*, m)`` int64: row ``i`` of ``P^T A`` is row ``perm[i]`` of ``A`` (the
    swaps in order, as LAPACK's ``laswp``); ``reverse``: the inverse (``P X``'s rows)."""
    from ..creation import arange
    from .elementwise import where
    from .indexing import take_along_dim

    k = pivots.shape[-1]
    cols = arange(m, device=pivots.device)
    with no_grad():
        piv = pivots.to("int64") - 1
        perm = cols.expand(*pivots.shape[:-1], m)
        for i in (range(k - 1, -1, -1) if reverse else range(k)):
            p = piv[..., i:i + 1]
            perm = where(cols == i, take_along_dim(perm, p, -1),
                         where(cols == p, perm[..., i:i + 1], perm))
    return perm


def _check_pivot_range(op: str, pivots: Tensor, m: int) -> None:
    if pivots.numel() and (int(pivots.min()) < 1 or int(pivots.max()) > m):
        raise IndexOutOfRangeError(f"{op}: pivots must be between 1 and LU.shape[-2] = {m} "
                                   "inclusive (1-based, as linalg.lu_factor returns them); "
                                   "pass the pivots linalg.lu_factor returned")


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> LUUnpackResult:
    """Unpack ``(LU, pivots)`` (from :func:`lu_factor`) into ``(P, L, U)``, ``A = P L U``.

    Args:
        LU_data: the packed factors, shape ``(*, m, n)``.
        LU_pivots: their int32, 1-based pivots, shape ``(*, min(m, n))``.
        unpack_data: whether to return ``L (*, m, k)`` and ``U (*, k, n)``; else both are
            empty tensors of shape ``(0,)``.
        unpack_pivots: whether to return the permutation ``P (*, m, m)`` (in ``LU_data``'s
            dtype); else it is an empty tensor of shape ``(0,)``.

    Returns:
        A namedtuple ``(P, L, U)``; ``L`` and ``U`` are differentiable in ``LU_data``.
    """
    from ..creation import arange, eye
    from .elementwise import where
    from .sorting import tril, triu

    op = "lu_unpack"
    if LU_data.ndim < 2:
        raise ShapeError(f"{op}: expected LU_data with 2 or more dimensions (*, m, n), got "
                         f"shape {tuple(LU_data.shape)}")
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    empty = LU_data.new_zeros(0)
    L = U = empty
    if unpack_data:
        ones = eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        L = where(ones != 0, ones, tril(LU_data, -1)[..., :, :k])
        U = triu(LU_data)[..., :k, :]
    P = empty
    if unpack_pivots:
        if LU_pivots.dtype.name != "int32":
            raise DTypeError(f"{op}: LU_pivots must be an int32 tensor (as linalg.lu_factor "
                             f"returns them), got {LU_pivots.dtype.name}")
        want = (*LU_data.shape[:-2], k)
        if tuple(LU_pivots.shape) != want:
            raise ShapeError(f"{op}: LU_pivots of shape {tuple(LU_pivots.shape)} do not fit "
                             f"LU_data of shape {tuple(LU_data.shape)}: expected {want} "
                             "(LU_data's batch dims, then min(m, n))")
        _check_pivot_range(op, LU_pivots, m)
        perm = _row_order(LU_pivots, m)
        rows = arange(m, device=LU_data.device).reshape(m, 1)
        P = (perm.unsqueeze(-2) == rows).to(LU_data.dtype)  # P[perm[c], c] = 1
    return LUUnpackResult(P, L, U)


def _substitute(T: Tensor, b: Tensor, lower: bool, unit: bool) -> Tensor:
    """The solution of ``T X = b`` for the lower (or upper) triangle of ``T``, by columns
    as LAPACK's ``trsm`` (only that triangle is read; ``unit``: a diagonal of ones)."""
    from ..creation import arange
    from .elementwise import where

    n = T.shape[-1]
    rows = arange(n, device=T.device).reshape(n, 1)
    for j in (range(n) if lower else range(n - 1, -1, -1)):
        xj = b[..., j:j + 1, :]
        if not unit:
            xj = xj / T[..., j:j + 1, j:j + 1]
        rest = rows > j if lower else rows < j
        b = where(rows == j, xj, where(rest, b - T[..., :, j:j + 1] * xj, b))
    return b


def _getrs(LU: Tensor, pivots: Tensor, B: Tensor, adjoint: bool) -> Tensor:
    """``A^-1 B`` (``A^-T B`` with ``adjoint``) from ``A``'s packed factors, as ``getrs``;
    ``B``'s batch dims already broadcast with ``LU``'s."""
    from .indexing import take_along_dim

    n = LU.shape[-1]
    if not adjoint:  # A = P L U: X = U^-1 L^-1 P^T B
        perm = _row_order(pivots, n).unsqueeze(-1).expand(*B.shape)
        x = _substitute(LU, take_along_dim(B, perm, -2), lower=True, unit=True)
        return _substitute(LU, x, lower=False, unit=False)
    # A^T = U^T L^T P^T: X = P L^-T U^-T B
    x = _substitute(LU.mT, B, lower=True, unit=False)
    x = _substitute(LU.mT, x, lower=False, unit=True)
    back = _row_order(pivots, n, reverse=True).unsqueeze(-1).expand(*x.shape)
    return take_along_dim(x, back, -2)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
             adjoint: bool = False) -> Tensor:
    """The solution ``X`` of ``A X = B`` from the LU factorisation of ``A``.

    With ``left=False`` it solves ``X A = B``; with ``adjoint=True``, ``A^H X = B`` (or
    ``X A^H = B``). A zero pivot gives inf/NaN, as LAPACK's ``getrs``, not an error.

    Args:
        LU: the packed factors of square ``A``, shape ``(*, n, n)`` (from
            :func:`lu_factor`).
        pivots: their int32 pivots, shape ``(*, n)``.
        B: right-hand sides of shape ``(*, n, k)`` (``(*, k, n)`` with ``left=False``),
            its batch dims broadcasting with ``LU``'s.
        left: solve ``A X = B`` (True) or ``X A = B``.
        adjoint: solve with ``A``'s (conjugate) transpose.

    Returns:
        ``X``, differentiable in ``LU`` and ``B`` (PyTorch's gradients).
    """
    op = "linalg.lu_solve"
    _check_matrices(op, LU, "LU")
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise ShapeError(f"{op}: LU must be a batch of square matrices, got shape "
                         f"{tuple(LU.shape)}")
    if not isinstance(pivots, Tensor) or pivots.dtype.name != "int32":
        raise DTypeError(f"{op}: pivots must be an int32 tensor (as linalg.lu_factor "
                         f"returns them), got {getattr(pivots, 'dtype', type(pivots).__name__)}")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise ShapeError(f"{op}: expected pivots of shape LU.shape[:-1] = "
                         f"{tuple(LU.shape[:-1])}, got {tuple(pivots.shape)}")
    if not isinstance(B, Tensor) or B.ndim < 2:
        raise ShapeError(f"{op}: B must be a batch of matrices (*, n, k) with at least 2 "
                         f"dimensions, got shape {tuple(getattr(B, 'shape', ()))}; add a "
                         "trailing dim to a vector with B.unsqueeze(-1)")
    if B.dtype is not LU.dtype:
        raise DTypeError(f"{op}: LU and B must have the same dtype, got {LU.dtype.name} and "
                         f"{B.dtype.name}; convert one with .to()")
    if (B.shape[-2] if left else B.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        raise ShapeError(f"{op}: incompatible shapes of A and B for the equation {eq} "
                         f"({n}x{n} and {B.shape[-2]}x{B.shape[-1]})")
    batch = broadcast_shapes(op, LU.shape[:-2], B.shape[:-2])
    _check_pivot_range(op, pivots, n)
    if not left:  # X A = B is A^T X^T = B^T (and X A^T = B is A X^T = B^T)
        return _getrs(LU, pivots, B.mT.expand(*batch, n, B.shape[-2]), not adjoint).mT
    return _getrs(LU, pivots, B.expand(*batch, n, B.shape[-1]), adjoint)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True,
             check_errors: bool = False) -> SolveExResult:
    """The solution of ``A X = B`` (``X A = B`` with ``left=False``) and whether ``A`` was
    invertible: :func:`lu_factor_ex` then :func:`lu_solve`, as PyTorch's.

    Args:
        A: square matrices ``(*, n, n)`` (float32 or float64).
        B: ``(*, n, k)``, or a vector ``(n,)``/``(*, n)`` (a batch of vectors when its
            shape is ``A.shape[:-1]``), its batch dims broadcasting with ``A``'s.
        left: solve ``A X = B`` (True) or ``X A = B``.
        check_errors: raise ``LinAlgError`` when some ``A`` is singular.

    Returns:
        A namedtuple ``(result, info)``: ``info (*)`` int32 is 0, or the 1-based index of
        ``A``'s first zero pivot (where ``result`` holds inf/NaN).
    """
    op = "linalg.solve_ex"
    _check_matrices(op, A)
    n = A.shape[-1]
    if A.shape[-2] != n:
        raise ShapeError(f"{op}: A must be a batch of square matrices, got shape "
                         f"{tuple(A.shape)}")
    if not isinstance(B, Tensor):
        raise TypeError(f"{op}: expected B to be a Tensor, got {type(B).__name__}")
    if B.dtype is not A.dtype:
        raise DTypeError(f"{op}: A and B must have the same dtype, got {A.dtype.name} and "
                         f"{B.dtype.name}; convert one with .to()")
    # PyTorch's rule: B is a vector (or a batch of them) when it is 1-d or has A's shape
    # less its last dim
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    b = B.unsqueeze(-1) if vector else B
    if b.ndim < 2 or (b.shape[-2] if left else b.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        got = "x".join(str(s) for s in b.shape[-2:])
        raise ShapeError(f"{op}: incompatible shapes of A and B for the equation {eq} "
                         f"({n}x{n} and {got})")
    LU, piv, info = _getrf(A)
    if check_errors:
        _raise_singular(op, info, solver=True)
    x = lu_solve(LU, piv, b, left=left)
    return SolveExResult(x.squeeze(-1) if vector else x, info)


@tensor_method("lu")
def legacy_lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple:
    """``torch.lu`` (deprecated in PyTorch for :func:`lu_factor`): ``(LU, pivots)``, or a
    namedtuple ``(LU, pivots, info)`` with ``get_infos``; a singular matrix raises no
    error either way.

    Args:
        A: tensor of shape ``(*, m, n)`` (float32 or float64).
        pivot: must be True (as on PyTorch's CPU).
        get_infos: also return ``info`` (see :func:`lu_factor_ex`).
    """
    _check_matrices("lu", A)
    _check_pivot("lu", pivot)
    LU, piv, info = _getrf(A)
    return LUWithInfoResult(LU, piv, info) if get_infos else (LU, piv)


@tensor_method("lu_solve")
def legacy_lu_solve(b: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """``torch.lu_solve`` (deprecated in PyTorch for :func:`lu_solve`): the solution of
    ``A X = b`` from ``A``'s packed factors; the arguments come in PyTorch's order,
    ``b`` first, as ``linalg.lu_solve(LU_data, LU_pivots, b)``."""
    return lu_solve(LU_data, LU_pivots, b)


__all__ = ["lu_unpack"]
