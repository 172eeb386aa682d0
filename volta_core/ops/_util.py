"""Helpers shared by the op modules: argument checks, dims and dtype promotion."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..dtypes import DType, checked_scalar, promote_types, scalar_result_type
from ..errors import IndexOutOfRangeError, ShapeError
from ..tensor import Tensor

Scalar = (int, float, bool)


def normalize_dim(op: str, dim: int, ndim: int) -> int:
    """Return ``dim`` as a non-negative index into ``ndim`` dims, or raise naming ``op``."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexOutOfRangeError(
            f"{op}: dimension {dim} is out of range for a tensor with {ndim} dims "
            f"(expected in [{-n}, {n - 1}])")
    return dim % n


def require_int_dim(op: str, dim: Any) -> None:
    """Refuse a tuple or list ``dim`` where PyTorch takes one int (``prod``, ``aminmax``)."""
    if dim is not None and not hasattr(dim, "__index__"):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}, as "
                        f"in PyTorch; reduce one dim at a time")


def normalize_dims(op: str, dim: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """Return the sorted dims of a reduction (all dims when ``dim`` is None)."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        d = normalize_dim(op, dim, ndim)  # a 0-d tensor takes dim -1 or 0 only
        return (d,) if ndim else ()
    dims = tuple(sorted({normalize_dim(op, d, ndim) for d in dim}))
    if len(dims) != len(tuple(dim)):
        raise ShapeError(f"{op}: dim {tuple(dim)} repeats a dimension")
    return dims if ndim else ()


def broadcast_shapes(op: str, *shapes: Sequence[int]) -> tuple[int, ...]:
    """Return the broadcast shape of ``shapes`` or raise a ``ShapeError`` naming ``op``."""
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n != 1:
                if out[i] != 1 and out[i] != n:
                    listed = " and ".join(str(tuple(x)) for x in shapes)
                    raise ShapeError(f"{op}: shapes {listed} cannot be broadcast together "
                                     f"(dimension {i - ndim} is {out[i]} vs {n})")
                out[i] = n
    return tuple(out)


def result_type(a: Tensor, b: Tensor) -> DType:
    """PyTorch's promotion between two tensors: a 0-d tensor only changes the category."""
    da, db = a.dtype, b.dtype
    if da is db:
        return da
    a0, b0 = a.ndim == 0, b.ndim == 0
    if a0 != b0:  # the 0-d one wins only when it is of a higher category
        dimmed, zero = (db, da) if a0 else (da, db)
        order = {"b": 0, "u": 1, "i": 1, "f": 2}
        return dimmed if order[zero.kind] <= order[dimmed.kind] else zero
    return promote_types(da, db)


_cast = None


def _get_cast():
    global _cast
    from .elementwise import cast  # imported late: elementwise imports this module

    _cast = cast
    return cast


def python_scalar(v: Any) -> Any:
    """A NumPy (or other array library's) scalar as the Python scalar it holds.

    PyTorch treats ``np.float64(2.0)`` like ``2.0``: it only changes the category of the
    result, never its width. Tensors and other values come back unchanged.
    """
    t = type(v)
    if t is Tensor or t is float or t is int or t is bool:
        return v
    if getattr(v, "shape", None) == () and hasattr(v, "dtype") and hasattr(v, "item"):
        return v.item()
    return v


def wrap_int(dtype: DType, v: Any) -> Any:
    """A Python int outside an integer dtype's range wrapped into it (two's complement),
    as PyTorch converts scalars; anything else unchanged."""
    if dtype.kind not in "iu" or type(v) is not int:
        return v
    span = 1 << (8 * dtype.itemsize)
    lo = 0 if dtype.kind == "u" else -(span >> 1)
    return v if lo <= v < lo + span else (v - lo) % span + lo


def promote_pair(a: Any, b: Any, checked: str = "") -> tuple[Any, Any]:
    """Cast two operands (Tensors or Python/NumPy scalars) to their common dtype.

    A scalar comes back as a Python scalar; an int wraps into an integer result dtype,
    or, with ``checked`` (the op's name), is checked as PyTorch's clamp/where/pow do.
    """
    cast = _cast or _get_cast()
    a, b = python_scalar(a), python_scalar(b)
    if checked:
        pa, pb = promote_pair(a, b)
        if type(pa) is not Tensor:
            return checked_scalar(checked, pb.dtype, a), pb
        if type(pb) is not Tensor:
            return pa, checked_scalar(checked, pa.dtype, b)
        return pa, pb
    if type(a) is Tensor:
        if type(b) is Tensor:
            if a.array.dtype != b.array.dtype:
                dt = result_type(a, b)
                a, b = cast(a, dt), cast(b, dt)
            return a, b
        if isinstance(b, Scalar):
            dt = scalar_result_type(a.dtype, b)
            return (a if dt is a.dtype else cast(a, dt)), wrap_int(dt, b)
        raise TypeError(f"unsupported operand type {type(b).__name__} for a Tensor op")
    if isinstance(a, Scalar) and type(b) is Tensor:
        dt = scalar_result_type(b.dtype, a)
        return wrap_int(dt, a), (b if dt is b.dtype else cast(b, dt))
    raise TypeError(f"unsupported operand types {type(a).__name__} and {type(b).__name__}")


def shape_of(x: Any) -> tuple[int, ...]:
    """Shape of a Tensor, or () for a Python scalar."""
    return tuple(x._data.shape) if type(x) is Tensor else ()


def checked_pair(op: str, a: Any, b: Any, scalars: bool) -> tuple[Any, Any]:
    """``a`` and ``b`` promoted to their common dtype, after PyTorch's argument check:
    Tensors, or (with ``scalars``) numbers and NumPy scalars, which count as numbers."""
    if scalars:
        a, b = python_scalar(a), python_scalar(b)
    for v in (a, b):
        if type(v) is not Tensor and (not scalars or not isinstance(v, Scalar)):
            raise TypeError(f"{op}: expected Tensor arguments, got {type(a).__name__} and "
                            f"{type(b).__name__}")
    return promote_pair(a, b)

