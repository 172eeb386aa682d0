"""array-api-compat's CuPy namespace with one sync-free replacement: ``clip``.

array-api-compat's generic ``clip`` writes the bounds through boolean masks
(``out[ia] = a[ia]``); on CuPy a boolean-mask read needs the number of True entries on
the host, so every ``xp.clip`` call blocks until the GPU catches up. The core calls it
in ``clip_grad_norm_``, ``clip_grad_value_``, Muon's Newton-Schulz step and replicate
padding. The version here is ``maximum``/``minimum`` (same NaN propagation, same
result dtype), all on the device.

It also keeps bfloat16 results bfloat16: CuPy (>= 14, through ml_dtypes) has no
bfloat16 loops for many ufuncs and reductions and computes them in float32, returning
float32 where the Array API (and PyTorch) give bfloat16. The functions in
:data:`_BF16_KEEPS` cast such a result back.

To use it, ``CupyBackend.namespace`` returns :data:`xp` instead of
``array_api_compat.cupy``.
"""

from __future__ import annotations

import types
from typing import Any

import array_api_compat.cupy as _compat
import cupy


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
    "sin", "sinh", "square", "sqrt", "subtract", "tan", "tanh", "trunc", "where", "sum",
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
            return out.astype(bf16)
        return out

    wrapped.__name__ = wrapped.__qualname__ = getattr(fn, "__name__", "wrapped")
    wrapped.__doc__ = fn.__doc__
    return wrapped


def _matmul_of(compat_matmul: Any) -> Any:
    from . import blas

    def matmul(x1: Any, x2: Any, /) -> Any:
        """Array-API ``matmul``; 2-d products go through :func:`volta_cupy.blas.matmul`
        (capturable in a CUDA graph)."""
        if x1.ndim == 2 and x2.ndim == 2:
            return blas.matmul(x1, x2)
        return compat_matmul(x1, x2)

    return matmul


def _build() -> types.ModuleType:
    ns = types.ModuleType("volta_cupy.xp", _compat.__doc__)
    ns.__dict__.update({k: v for k, v in vars(_compat).items() if not k.startswith("__")})
    ns.__all__ = list(getattr(_compat, "__all__", ()))
    ns.clip = clip
    ns.matmul = _matmul_of(_compat.matmul)
    from ._util import BFLOAT16

    if BFLOAT16 is not None:
        for name in _BF16_KEEPS:
            if hasattr(ns, name):
                setattr(ns, name, _keeps_bfloat16(getattr(ns, name), cupy.dtype(BFLOAT16)))
    return ns


xp = _build()
"""The namespace: every name of ``array_api_compat.cupy``, with :func:`clip` replaced and
bfloat16 results kept bfloat16."""
