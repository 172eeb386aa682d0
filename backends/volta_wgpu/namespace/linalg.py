"""Linear algebra: ``matmul``, ``tensordot``, ``vecdot``, ``matrix_transpose``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import dtypes as D
from .._errors import DTypeError, ShapeError
from ..array import Array
from ..kernels.matmul import matmul_nd
from .manipulation import matrix_transpose, permute_dims, reshape


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product with NumPy's rules (1-d operands, broadcast batch dims)."""
    if not isinstance(x1, Array) or not isinstance(x2, Array):
        raise TypeError("matmul: both operands must be volta_wgpu Arrays")
    if x1.ndim == 0 or x2.ndim == 0:
        raise ShapeError(f"matmul: operands must have at least 1 dim, got shapes {x1.shape} "
                         f"and {x2.shape}; use multiply for scalars")
    t = D.promote(x1.dtype, x2.dtype)
    if t is D.bool:
        raise DTypeError("matmul: bool operands are not supported; cast to an integer or "
                         "float dtype")
    from .elementwise import astype
    a = x1 if x1.dtype is t else astype(x1, t)
    b = x2 if x2.dtype is t else astype(x2, t)
    va, vb = a.ndim == 1, b.ndim == 1
    if va:
        a = reshape(a, (1, a.shape[0]))
    if vb:
        b = reshape(b, (b.shape[0], 1))
    if a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"matmul: shapes {x1.shape} and {x2.shape} do not align "
                         f"({a.shape[-1]} != {b.shape[-2]})")
    if t.emu:  # int64 pairs: products and sums of the int64_emu functions
        from .elementwise import multiply
        from .manipulation import expand_dims
        from .reduction import sum as _sum
        out = _sum(multiply(expand_dims(a, axis=-1), expand_dims(b, axis=-3)), axis=-2)
    else:
        out = matmul_nd(a, b)
    if va and vb:
        return reshape(out, out.shape[:-2])
    if va:
        return reshape(out, out.shape[:-2] + (out.shape[-1],))
    if vb:
        return reshape(out, out.shape[:-1])
    return out


def tensordot(x1: Array, x2: Array, /, *, axes: Any = 2) -> Array:
    """Sum products over ``axes`` (an int: last/first dims; or two sequences)."""
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError("tensordot: axes must be non-negative")
        a1 = tuple(range(x1.ndim - axes, x1.ndim))
        a2 = tuple(range(axes))
    else:
        a1 = tuple(a % x1.ndim for a in axes[0])
        a2 = tuple(a % x2.ndim for a in axes[1])
    if len(a1) != len(a2) or any(x1.shape[i] != x2.shape[j] for i, j in zip(a1, a2)):
        raise ShapeError(f"tensordot: contracted dims of {x1.shape} (axes {a1}) and "
                         f"{x2.shape} (axes {a2}) differ")
    f1 = [i for i in range(x1.ndim) if i not in a1]
    f2 = [i for i in range(x2.ndim) if i not in a2]
    k = 1
    for i in a1:
        k *= x1.shape[i]
    m = 1
    for i in f1:
        m *= x1.shape[i]
    n = 1
    for i in f2:
        n *= x2.shape[i]
    p1 = reshape(permute_dims(x1, f1 + list(a1)), (m, k))
    p2 = reshape(permute_dims(x2, list(a2) + f2), (k, n))
    out = matmul(p1, p2)
    return reshape(out, tuple(x1.shape[i] for i in f1) + tuple(x2.shape[i] for i in f2))


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Dot product of vectors along ``axis`` (broadcasting the other dims)."""
    from .elementwise import multiply
    from .reduction import sum as _sum
    if not (isinstance(x1, Array) and isinstance(x2, Array)):
        raise TypeError("vecdot: expected two volta_wgpu Arrays")
    n = max(x1.ndim, x2.ndim)
    if not -n <= axis < n:
        raise ValueError(f"vecdot: axis {axis} is out of range for shapes {x1.shape} and "
                         f"{x2.shape}")
    axis = axis - n if axis >= 0 else axis
    if -axis > min(x1.ndim, x2.ndim):  # the contracted dim is never broadcast
        raise ValueError(f"vecdot: both arrays need the contracted axis {axis} (shapes "
                         f"{x1.shape} and {x2.shape})")
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot: the arrays' sizes along axis {axis} differ "
                         f"({x1.shape} and {x2.shape})")
    t = D.promote(x1.dtype, x2.dtype)
    if t is D.bool:
        raise TypeError("vecdot: not defined for bool arrays")
    return _sum(multiply(x1, x2), axis=axis, dtype=t)


def outer(x1: Array, x2: Array, /) -> Array:
    """Outer product of two 1-d arrays."""
    from .elementwise import multiply
    return multiply(reshape(x1, (-1, 1)), reshape(x2, (1, -1)))


def vector_norm(x: Array, /, *, axis: Any = None, keepdims: bool = False,
                ord: float = 2) -> Array:  # noqa: A002
    """The ``ord``-norm of vectors along ``axis``."""
    from .elementwise import abs as _abs
    from .elementwise import multiply, pow, sqrt
    from .reduction import max as _max
    from .reduction import sum as _sum
    if ord == 2:
        return sqrt(_sum(multiply(x, x), axis=axis, keepdims=keepdims))
    if ord == float("inf"):
        return _max(_abs(x), axis=axis, keepdims=keepdims)
    if ord == 1:
        return _sum(_abs(x), axis=axis, keepdims=keepdims)
    return pow(_sum(pow(_abs(x), float(ord)), axis=axis, keepdims=keepdims), 1.0 / ord)


__all__: Sequence[str] = ["matmul", "tensordot", "vecdot", "matrix_transpose", "outer",
                          "vector_norm"]
