"""array-api-compat's CuPy namespace with a sync-free ``clip`` and PyTorch's edge cases.

array-api-compat's generic ``clip`` writes the bounds through boolean masks
(``out[ia] = a[ia]``); on CuPy a boolean-mask read needs the number of True entries on
the host, so every ``xp.clip`` call blocks until the GPU catches up. The core calls it
in ``clip_grad_norm_``, ``clip_grad_value_``, Muon's Newton-Schulz step and replicate
padding. The version here is ``maximum``/``minimum`` (same NaN propagation, same
result dtype), all on the device.

It also keeps bfloat16 results bfloat16: CuPy (>= 14, through ml_dtypes) has no
bfloat16 loops for many ufuncs and reductions and computes them in float32, returning
float32 where the Array API (and PyTorch) give bfloat16. The functions in
:data:`_BF16_KEEPS` cast such a result back, and ``multiply``/``add``/``subtract``/
``divide`` of a bfloat16 array and a Python number run as one bfloat16 kernel. Those four
with bfloat16 or float32 operands, and float32 <-> bfloat16 ``astype``, go to
:mod:`volta_cupy.raw_arith` first where it serves the operands (its launches cost the host
a third of a CuPy ufunc call's); so do the functions of :data:`_F32_UNARY` of a float32
array.

Where CuPy's answer departs from NumPy's (and PyTorch's), the namespace has its own:
``floor_divide``/``remainder`` with infinite operands (:mod:`volta_cupy.division`),
``asarray`` of -0.0 (CuPy fills a 0-d array by memset when the value equals 0), ``var``
with no degrees of freedom left (``sum / 0``: inf, or NaN for a constant slice, where CuPy
gives NaN), and ``argmin``/``argmax`` where NaNs are (the first NaN wins, as in NumPy
and PyTorch; bfloat16 is read in float32).

To use it, ``CupyBackend.namespace`` returns :data:`xp` instead of
``array_api_compat.cupy``.
"""

from __future__ import annotations

import math
import types
from typing import Any

import array_api_compat.cupy as _compat
import cupy
import numpy as np

from . import division, raw_arith
from ._util import contiguous_flag
from .launch import mapped


def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """Array-API ``clip``: ``x`` limited to ``[min, max]``, in ``x``'s dtype."""
    out = x
    if x.dtype.kind in "iu":  # Python ints beyond the dtype's range bound nothing
        info = cupy.iinfo(x.dtype)
        if type(min) is int and min <= info.min:
            min = None
        if type(max) is int and max >= info.max:
            max = None
    if min is not None:
        out = cupy.maximum(out, min)
    if max is not None:
        out = cupy.minimum(out, max)
    if out is x:
        return x.copy()
    return out if out.dtype == x.dtype else out.astype(x.dtype)


# elementwise functions and reductions whose result dtype is their floating inputs'
_BF16_KEEPS = (
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "clip",
    "copysign", "cos", "cosh", "divide", "exp", "expm1", "floor", "floor_divide", "hypot",
    "log", "log1p", "log2", "log10", "logaddexp", "maximum", "minimum", "multiply",
    "negative", "nextafter", "positive", "pow", "reciprocal", "remainder", "round", "sign",
    "sin", "sinh", "square", "sqrt", "subtract", "tan", "tanh", "tril", "triu", "trunc",
    "where", "sum",
    "prod", "mean", "std", "var", "max", "min", "cumulative_sum", "cumulative_prod",
)


def _keeps_bfloat16(fn: Any, bf16: Any) -> Any:
    f32 = cupy.dtype("float32")

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        out = fn(*args, **kwargs)
        if getattr(out, "dtype", None) != f32 or kwargs.get("dtype") is not None:
            return out
        dts = [a.dtype for a in args if isinstance(a, cupy.ndarray)]
        if bf16 in dts and all(d == bf16 or d.kind != "f" for d in dts):
            return raw_arith.convert(out, bf16)
        return out

    wrapped.__name__ = wrapped.__qualname__ = getattr(fn, "__name__", "wrapped")
    wrapped.__doc__ = fn.__doc__
    return wrapped


# float32 functions of one array as one launch of :mod:`volta_cupy.launch` (CUDA's own
# functions, which CuPy's float32 loops call too: the same values)
_F32_UNARY = {"negative": "-v", "exp": "expf(v)", "expm1": "expm1f(v)", "log": "logf(v)",
              "log1p": "log1pf(v)", "sqrt": "sqrtf(v)", "tanh": "tanhf(v)", "sin": "sinf(v)",
              "cos": "cosf(v)", "reciprocal": "1.0f / v"}


def _unary_of(fallback: Any, name: str) -> Any:
    body = f"const float v = a[i]; out[i] = {_F32_UNARY[name]};"
    kernel = f"ns_{name}"
    ndarray, f32 = cupy.ndarray, cupy.dtype("float32")

    def op(x: Any, /) -> Any:
        if type(x) is ndarray and x.dtype == f32 and contiguous_flag(x) and x.size:
            return mapped(kernel, body, x)
        return fallback(x)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = fallback.__doc__
    return op


def _var_of(fallback: Any) -> Any:
    def var(x: Any, /, *, axis: Any = None, correction: float = 0.0,
            keepdims: bool = False) -> Any:
        axes = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
        n = 1
        for a in axes:
            n *= x.shape[a]
        if n - correction > 0 or n == 0:
            return fallback(x, axis=axis, correction=correction, keepdims=keepdims)
        d = x - cupy.mean(x, axis=axis, keepdims=True)
        return cupy.true_divide(cupy.sum(d * d, axis=axis, keepdims=keepdims), 0.0)

    var.__doc__ = fallback.__doc__
    return var


def _arg_of(fallback: Any, bf16: Any) -> Any:
    def arg(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
        if x.dtype == bf16:
            x = x.astype(cupy.float32)
        out = fallback(x, axis=axis, keepdims=keepdims)
        if x.dtype.kind == "f":  # the first NaN wins, as in PyTorch: CuPy's parallel
            nan = cupy.isnan(x)  # reduction returns any one of several NaNs
            first = cupy.argmax(nan, axis=axis, keepdims=keepdims)
            out = cupy.where(nan.any(axis=axis, keepdims=keepdims), first, out)
        return out

    arg.__name__ = arg.__qualname__ = fallback.__name__
    arg.__doc__ = fallback.__doc__
    return arg


def _joins_of(compat_stack: Any, compat_concat: Any) -> tuple:
    """``stack`` and ``concat`` that, while a CUDA graph captures, copy each array into
    its slice of the result: CuPy joins more than a few arrays through a table of their
    addresses copied from pinned host memory, which a capture refuses (and a replay
    would not redo)."""
    from . import graphs

    def stack(arrays: Any, /, *, axis: int = 0) -> Any:
        arrays = list(arrays)
        if len(arrays) < 2 or not graphs.is_capturing():
            return compat_stack(arrays, axis=axis)
        first = arrays[0]
        axis = axis % (first.ndim + 1)
        out = cupy.empty(first.shape[:axis] + (len(arrays),) + first.shape[axis:],
                         cupy.result_type(*arrays))
        for i, a in enumerate(arrays):
            out[(slice(None),) * axis + (i,)] = a
        return out

    def concat(arrays: Any, /, *, axis: int | None = 0) -> Any:
        arrays = list(arrays)
        if len(arrays) < 2 or axis is None or not graphs.is_capturing():
            return compat_concat(arrays, axis=axis)
        first = arrays[0]
        axis = axis % first.ndim
        size = sum(a.shape[axis] for a in arrays)
        out = cupy.empty(first.shape[:axis] + (size,) + first.shape[axis + 1:],
                         cupy.result_type(*arrays))
        at = 0
        for a in arrays:
            n = a.shape[axis]
            out[(slice(None),) * axis + (slice(at, at + n),)] = a
            at += n
        return out

    stack.__doc__, concat.__doc__ = compat_stack.__doc__, compat_concat.__doc__
    return stack, concat


def _asarray_of(fallback: Any) -> Any:
    def asarray(obj: Any, /, **kwargs: Any) -> Any:
        if type(obj) is float and obj == 0.0 and math.copysign(1.0, obj) < 0:
            # CuPy fills a 0-d array from a scalar equal to 0 by memset (+0.0); full keeps -0.0
            dtype = kwargs.get("dtype") or cupy.float64
            with cupy.cuda.Device(kwargs.get("device")):
                return cupy.full((), obj, dtype=dtype)
        return fallback(obj, **kwargs)

    asarray.__doc__ = fallback.__doc__
    return asarray


# name -> (array op number, number op array), computed in float32 as PyTorch's opmath
_SCALAR_BODIES = {
    "multiply": ("(float)x * s", "s * (float)x"), "add": ("(float)x + s", "s + (float)x"),
    "subtract": ("(float)x - s", "s - (float)x"), "divide": ("(float)x / s", "s / (float)x"),
}


def _arith_of(plain: Any, fallback: Any, name: str, bf16: Any) -> Any:
    """``name``: :mod:`volta_cupy.raw_arith`'s float32 kernels where they serve the
    operands, else CuPy's ufunc (``plain``), unless an operand is bfloat16; for bfloat16,
    :mod:`volta_cupy.raw_arith` where it serves the operands, else a bfloat16 array and a
    Python number in one kernel that keeps bfloat16 (CuPy's own loop would return float32,
    which a cast then narrows), else ``fallback``."""
    left, right = (cupy.ElementwiseKernel("T x, float32 s", "T y", f"y = (T)({body});",
                                          f"volta_bf16_{side}{name}")
                   for side, body in zip(("", "r"), _SCALAR_BODIES[name]))
    ndarray = cupy.ndarray

    def op(x1: Any, x2: Any, /) -> Any:
        if not ((type(x1) is ndarray and x1.dtype == bf16)
                or (type(x2) is ndarray and x2.dtype == bf16)):
            out = raw_arith.binary_f32(name, x1, x2)
            return plain(x1, x2) if out is None else out
        out = raw_arith.binary(name, x1, x2)
        if out is not None:
            return out
        if type(x2) in (float, int):
            return left(x1, x2)
        if type(x1) in (float, int):
            return right(x2, x1)
        return fallback(x1, x2)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = fallback.__doc__
    return op


def _matmul_of(compat_matmul: Any) -> Any:
    from . import blas, graphs
    from ._util import BFLOAT16

    def matmul(x1: Any, x2: Any, /) -> Any:
        """Array-API ``matmul``; 2-d products go through :func:`volta_cupy.blas.matmul`
        (capturable in a CUDA graph)."""
        if x1.ndim == 2 and x2.ndim == 2:
            return blas.matmul(x1, x2)
        if x1.ndim > 2 and x2.ndim > 2:
            # one strided-batched GEMM that reads transposed operands (k.mT, head views)
            # in place: CuPy copies them first, and attention's products took 2-3x longer
            out = blas.batched_matmul(x1, x2)
            if out is not None:
                return out
        if BFLOAT16 is not None and x1.dtype == x2.dtype == BFLOAT16 and x1.ndim > 2:
            # broadcast batch dims: in float32, rounded once
            f32 = np.float32
            out = compat_matmul(raw_arith.convert(x1, f32), raw_arith.convert(x2, f32))
            return raw_arith.convert(out, BFLOAT16)
        if x1.ndim > 2 and x2.ndim == 2 and x1.size and (contiguous_flag(x1)
                                                          or graphs.is_capturing()):
            # (..., k) @ (k, n): one 2-d product (CuPy's call can't be captured either)
            out = blas.matmul(x1.reshape(-1, x1.shape[-1]), x2)
            return out.reshape(x1.shape[:-1] + (x2.shape[-1],))
        return compat_matmul(x1, x2)

    return matmul


def _build() -> types.ModuleType:
    ns = types.ModuleType("volta_cupy.xp", _compat.__doc__)
    ns.__dict__.update({k: v for k, v in vars(_compat).items() if not k.startswith("__")})
    ns.__all__ = list(getattr(_compat, "__all__", ()))
    ns.clip = clip
    ns.matmul = _matmul_of(_compat.matmul)
    ns.floor_divide = division.floor_divide_of(_compat.floor_divide)
    ns.remainder = division.remainder_of(_compat.remainder)
    ns.var = _var_of(_compat.var)
    ns.asarray = _asarray_of(_compat.asarray)
    ns.stack, ns.concat = _joins_of(_compat.stack, _compat.concat)
    from ._util import BFLOAT16

    bf16 = None if BFLOAT16 is None else cupy.dtype(BFLOAT16)
    ns.argmin = _arg_of(_compat.argmin, bf16)
    ns.argmax = _arg_of(_compat.argmax, bf16)
    if bf16 is not None:
        for name in _BF16_KEEPS:
            if hasattr(ns, name):
                setattr(ns, name, _keeps_bfloat16(getattr(ns, name), bf16))
        ns.astype = _astype_of(_compat.astype)
        for name in _SCALAR_BODIES:
            setattr(ns, name, _arith_of(getattr(_compat, name), getattr(ns, name), name,
                                        bf16))
    for name in _F32_UNARY:
        setattr(ns, name, _unary_of(getattr(ns, name), name))
    return ns


def _astype_of(fallback: Any) -> Any:
    def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
        """Array-API ``astype``; float32 <-> bfloat16 of a contiguous array through
        :mod:`volta_cupy.raw_arith`."""
        if device is None and getattr(x, "dtype", None) != dtype:
            out = raw_arith.astype(x, dtype)
            if out is not None:
                return out
        return fallback(x, dtype, copy=copy, device=device)

    return astype


xp = _build()
"""The namespace: every name of ``array_api_compat.cupy``, with :func:`clip` replaced and
bfloat16 results kept bfloat16."""
