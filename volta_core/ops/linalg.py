"""Linear algebra: matmul and its fixed-rank forms, products, tensordot, einsum, norms.

``volta_core.linalg`` is this module, so ``vt.linalg.vector_norm`` works as in PyTorch.
"""

from __future__ import annotations

from typing import Any

from ..amp.dispatch import autocast_call, autocast_op
from ..amp.state import state as _autocast_state
from ..autograd.function import Function
from ..errors import DTypeError, LinAlgError, ShapeError  # noqa: F401 - vt.linalg's too
from ..tensor import Tensor, tensor_method
from ._util import broadcast_shapes, normalize_dim
from .elementwise import cast
from .movement import sum_to


class Matmul(Function):
    pytorch_saves = ((1,), (0,))  # mm: the other factor for each gradient
    saves_as_pytorch = True

    def forward(ctx, a, b):
        na, nb = ctx.needs_input_grad[:2]  # all False when not recording
        ctx.shapes = (tuple(a.shape), tuple(b.shape))
        # keep only the operand each gradient reads
        ctx.save_for_backward(a if nb else None, b if na else None)
        y = ctx.xp.matmul(a, b)
        # NumPy computes bfloat16 (ml_dtypes) products in float32: round back
        return y if y.dtype == a.dtype else ctx.xp.astype(y, a.dtype)

    def backward(ctx, g):
        a, b = ctx.saved_tensors
        sa, sb = ctx.shapes
        na, nb = ctx.needs_input_grad
        # treat vectors as matrices, then undo it: (n,) @ (n, m) is (1, n) @ (n, m)
        sa2 = (1, *sa) if len(sa) == 1 else sa
        sb2 = (*sb, 1) if len(sb) == 1 else sb
        if len(sa) == 1 and len(sb) == 1:
            g2 = g.reshape(1, 1)
        elif len(sa) == 1:
            g2 = g.unsqueeze(-2)
        elif len(sb) == 1:
            g2 = g.unsqueeze(-1)
        else:
            g2 = g
        ga = gb = None
        if na:
            ga = sum_to(matmul(g2, b.reshape(sb2).mT), sa2).reshape(sa)
        if nb:
            gb = sum_to(matmul(a.reshape(sa2).mT, g2), sb2).reshape(sb)
        return ga, gb


@tensor_method("matmul", "__matmul__")
def matmul(a: Tensor, b: Tensor) -> Tensor:
    """Matrix product of ``a`` and ``b`` (vectors, matrices, or broadcast batches).

    Args:
        a: tensor of shape ``(n,)``, ``(n, k)`` or ``(*batch, n, k)``.
        b: tensor of shape ``(k,)``, ``(k, m)`` or ``(*batch, k, m)``.
    """
    if _autocast_state.active:  # the autocast hook: one thread-local read when off
        return autocast_call("matmul", matmul, a, b)
    if type(a) is not Tensor or type(b) is not Tensor:
        raise TypeError("matmul: both operands must be tensors")
    sa, sb = a.shape, b.shape
    if not sa or not sb:
        raise ShapeError(f"matmul: both arguments need at least 1 dim, got shapes {sa} and {sb}")
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if k_a != k_b:
        raise ShapeError(f"matmul: shapes {sa} and {sb} cannot be multiplied "
                         f"({k_a} != {k_b} in the contracted dimension)")
    if len(sa) > 2 or len(sb) > 2:
        broadcast_shapes("matmul", sa[:-2], sb[:-2] if len(sb) > 1 else ())
    if a.dtype is not b.dtype:  # PyTorch does not promote here
        raise DTypeError(f"matmul: both operands must have the same dtype, got "
                         f"{a.dtype.name} and {b.dtype.name}; convert one with .to()")
    return Matmul.apply(a, b)


Tensor.__rmatmul__ = lambda self, other: matmul(other, self)


def _check_ranks(op: str, want: tuple[int, ...], *tensors: Tensor) -> None:
    for t in tensors:
        if type(t) is not Tensor:
            raise TypeError(f"{op}: expected Tensors, got {type(t).__name__}")
    got = tuple(t.ndim for t in tensors)
    if got != want:
        shapes = " and ".join(str(t.shape) for t in tensors)
        raise ShapeError(f"{op}: expected tensors with {want} dims, got shapes {shapes}; "
                         "use matmul for other ranks")


@tensor_method()
@autocast_op("mm")
def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """Matrix product of two 2-D tensors ``(n, k) @ (k, m)``."""
    _check_ranks("mm", (2, 2), input, mat2)
    return matmul(input, mat2)


@tensor_method()
@autocast_op("bmm")
def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product ``(b, n, k) @ (b, k, m)`` (no broadcasting)."""
    _check_ranks("bmm", (3, 3), input, mat2)
    if input.shape[0] != mat2.shape[0]:
        raise ShapeError(f"bmm: batch sizes differ: shapes {input.shape} and {mat2.shape}")
    return matmul(input, mat2)


@tensor_method()
@autocast_op("mv")
def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product ``(n, m) @ (m,)``."""
    _check_ranks("mv", (2, 1), input, vec)
    return matmul(input, vec)


@tensor_method()
@autocast_op("dot")
def dot(input: Tensor, other: Tensor) -> Tensor:
    """Dot product of two 1-D tensors of the same size (a 0-d tensor)."""
    _check_ranks("dot", (1, 1), input, other)
    return matmul(input, other)


vdot = dot


@tensor_method("outer", "ger")
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product of two 1-D tensors: ``out[i, j] = input[i] * vec2[j]``."""
    _check_ranks("outer", (1, 1), input, vec2)
    return input.reshape(-1, 1) * vec2


ger = outer


@tensor_method()
@autocast_op("addmm")
def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1,
          alpha: float = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``; ``input`` broadcasts to the product.

    Args:
        input: the tensor added (ignored, NaNs included, when ``beta`` is 0).
        mat1: a ``(n, k)`` matrix.
        mat2: a ``(k, m)`` matrix.
        beta: scale of ``input``.
        alpha: scale of the product.
    """
    return _add_scaled(input, mm, (mat1, mat2), beta, alpha, "addmm")


@tensor_method()
@autocast_op("baddbmm")
def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1,
            alpha: float = 1) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``.

    Args:
        input: the tensor added, broadcast to ``(b, n, m)`` (ignored when ``beta`` is 0).
        batch1: a ``(b, n, k)`` tensor.
        batch2: a ``(b, k, m)`` tensor.
        beta: scale of ``input``.
        alpha: scale of the product.
    """
    return _add_scaled(input, bmm, (batch1, batch2), beta, alpha, "baddbmm")


@tensor_method()
@autocast_op("addmv")
def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: float = 1,
          alpha: float = 1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``.

    Args:
        input: the tensor added, broadcast to ``(n,)`` (ignored when ``beta`` is 0).
        mat: a ``(n, m)`` matrix.
        vec: a ``(m,)`` vector.
        beta: scale of ``input``.
        alpha: scale of the product.
    """
    return _add_scaled(input, mv, (mat, vec), beta, alpha, "addmv")


@tensor_method()
@autocast_op("addr")
def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: float = 1,
         alpha: float = 1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``.

    Args:
        input: the tensor added, broadcast to ``(n, m)`` (ignored when ``beta`` is 0).
        vec1: a ``(n,)`` vector.
        vec2: a ``(m,)`` vector.
        beta: scale of ``input``.
        alpha: scale of the outer product.
    """
    return _add_scaled(input, outer, (vec1, vec2), beta, alpha, "addr")


@tensor_method()
@autocast_op("addbmm")
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: float = 1,
           alpha: float = 1) -> Tensor:
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``: the batch's products summed.

    Args:
        input: the tensor added, broadcast to ``(n, m)`` (ignored when ``beta`` is 0).
        batch1: a ``(b, n, k)`` tensor.
        batch2: a ``(b, k, m)`` tensor.
        beta: scale of ``input``.
        alpha: scale of the summed products.
    """
    return _add_scaled(input, lambda a, b: bmm(a, b).sum(0), (batch1, batch2), beta, alpha,
                       "addbmm")


@autocast_op("chain_matmul")
def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of a chain of 2-D matrices (PyTorch's older spelling of
    ``linalg.multi_dot``; one matrix is returned as a copy)."""
    if not matrices:
        raise ValueError("chain_matmul(): Expected one or more matrices")
    _check_ranks("chain_matmul", (2,) * len(matrices), *matrices)
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(list(matrices))


def _add_scaled(input: Tensor, product: Any, mats: tuple, beta: float, alpha: float,
                op: str) -> Tensor:
    """``beta * input + alpha * product(*mats)``."""
    dt = mats[0].dtype
    if dt.kind == "f" and dt.itemsize == 2 and beta != 0 and type(input) is Tensor:
        # PyTorch's GEMM adds beta * input in float32 and rounds once: a rounded 2-byte
        # product plus input cancels to nonsense
        return cast(_add_scaled(cast(input, "float32"), product,
                                tuple(cast(m, "float32") for m in mats), beta, alpha, op),
                    dt)
    prod = product(*mats)
    out = prod if alpha == 1 else prod * alpha
    if beta == 0:
        if input.requires_grad:  # input's NaN ignored, its gradient zeros (as PyTorch's)
            from .elementwise import where

            return where(out.new_zeros((), dtype="bool"), input, out)
        return out.expand(broadcast_shapes(op, input.shape, out.shape)) if (
            input.shape != out.shape) else out
    return out + (input if beta == 1 else input * beta)


@autocast_op("tensordot")
def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """Contract the last ``dims`` dims of ``a`` with the first ``dims`` of ``b``.

    Args:
        a: first tensor.
        b: second tensor.
        dims: an int, or two lists of dims ``([dims of a], [dims of b])`` to contract.
    """
    if isinstance(dims, int):
        if dims < 0 or dims > min(a.ndim, b.ndim):
            raise ShapeError(f"tensordot: dims={dims} is invalid for shapes {a.shape} and "
                             f"{b.shape}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
        if len(da) != len(db):
            raise ShapeError(f"tensordot: got {len(da)} dims of a but {len(db)} of b")
        da = [normalize_dim("tensordot", d, a.ndim) for d in da]
        db = [normalize_dim("tensordot", d, b.ndim) for d in db]
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise ShapeError(f"tensordot: contracted dim {i} of a (size {a.shape[i]}) does not "
                             f"match dim {j} of b (size {b.shape[j]}); shapes {a.shape} and "
                             f"{b.shape}")
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    if a.ndim + b.ndim - len(da) > len(letters):
        raise ShapeError("tensordot: too many dims")
    la = list(letters[:a.ndim])
    lb = list(letters[a.ndim:a.ndim + b.ndim])
    for i, j in zip(da, db):
        lb[j] = la[i]
    out = [c for k, c in enumerate(la) if k not in da] + [
        c for k, c in enumerate(lb) if k not in db]
    return einsum("".join(la) + "," + "".join(lb) + "->" + "".join(out), a, b)


@autocast_op("norm")
def norm(x: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """``torch.linalg.norm``: a vector norm or a matrix norm, as PyTorch chooses.

    Args:
        x: the tensor.
        ord: None (the 2-norm of all elements in ``dim``: the Frobenius norm of a matrix),
            a number (a vector norm, or with two dims a matrix norm as in
            :func:`matrix_norm`), ``'fro'`` or ``'nuc'`` (matrix norms).
        dim: an int (vector norm), a pair of ints (matrix norm) or None: all elements
            when ``ord`` is None, else ``x`` must be 1-D (vector) or 2-D (matrix).
        keepdim: keep reduced dims with size 1.
        dtype: cast ``x`` to this dtype first.
    """
    if dim is None and ord is not None:
        if x.ndim not in (1, 2):
            raise ShapeError(f"linalg.norm: If dim is not specified but ord is, the input "
                             f"must be 1D or 2D. Got {x.ndim}D.")
        dim = (-2, -1) if x.ndim == 2 else None
    if isinstance(dim, (tuple, list)) and len(dim) == 2 or isinstance(ord, str):
        if ord is None:
            ord = "fro"
        return matrix_norm(x, ord, (-2, -1) if dim is None else tuple(dim), keepdim,
                           dtype=dtype)
    return vector_norm(x, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


@tensor_method()
def renorm(input: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Rescale each slice ``input.select(dim, i)`` whose ``p``-norm exceeds ``maxnorm`` to
    norm ``maxnorm`` (as PyTorch: by ``maxnorm / (norm + 1e-7)``); differentiable.

    Args:
        input: a floating tensor of at least 2 dims.
        p: the norm's order (positive).
        dim: the dim whose slices are rescaled one by one.
        maxnorm: the largest norm a slice keeps.
    """
    if input.ndim < 2:
        raise ShapeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                         "dimensions")
    if not input.dtype.is_floating_point:
        raise DTypeError(f"renorm: expected a floating tensor, got {input.dtype.name}")
    if p <= 0:
        raise ValueError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise ValueError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dtype.itemsize == 2:  # float16/bfloat16: in float32, rounded once (PyTorch)
        return renorm(input.float(), p, dim, maxnorm).to(input.dtype)
    d = normalize_dim("renorm", dim, input.ndim)
    norms = vector_norm(input, p, tuple(i for i in range(input.ndim) if i != d), True)
    from .elementwise import where

    return input * where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)


from .decompositions import (  # noqa: E402, F401
    cholesky,
    cholesky_inverse,
    cholesky_solve,
    det,
    geqrf,
    householder_product,
    inv,
    inverse,
    logdet,
    slogdet,
    solve,
    solve_triangular,
    tensorinv,
    tensorsolve,
    triangular_solve,
)
from .einsum import einsum  # noqa: E402 - einsum is built on matmul above
from .index_sets import linalg_vander as vander  # noqa: E402, F401 - batched, increasing
from .lu import (  # noqa: E402, F401 - vt.linalg's; the top-level lu/lu_solve are the older
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    solve_ex,
)

orgqr = householder_product  # PyTorch's older name (torch.orgqr)
from .reduce import vector_norm  # noqa: E402
from .spectral import (  # noqa: E402, F401 - built on matmul and the decompositions
    cholesky_ex,
    cond,
    cross,
    diagonal,
    eigh,
    eigvalsh,
    inv_ex,
    lstsq,
    matrix_exp,
    matrix_norm,
    matrix_power,
    matrix_rank,
    multi_dot,
    pinv,
    qr,
    svd,
    svdvals,
    vecdot,
)

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "outer", "ger", "addmm", "baddbmm",
           "addmv", "addr", "addbmm", "chain_matmul", "renorm",
           "tensordot", "einsum", "det", "inverse", "logdet", "slogdet", "cholesky_solve",
           "cholesky_inverse", "triangular_solve", "orgqr", "geqrf"]
