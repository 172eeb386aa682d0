"""Floating-point ``floor_divide`` and ``remainder`` with PyTorch's (and NumPy's) rules.

CuPy computes ``floor(a / b)`` and ``a - b * floor(a / b)``, which differ from PyTorch
where an operand is infinite: ``inf // 2.5`` is NaN in PyTorch (inf in CuPy), ``1 // -inf``
is -1 (CuPy -0) and ``2.5 % inf`` is 2.5 (CuPy NaN). Both functions here start from
``fmod``, which is exact, and correct its sign, as PyTorch's ``div_floor_floating`` and
NumPy's ``divmod`` do. float16 is computed in float32 (exact for ``fmod``, one rounding
for the quotient); bfloat16 in float32 and rounded back; other dtypes go to CuPy.
"""

from __future__ import annotations

from typing import Any

import cupy

from ._util import FLOATS

_PREAMBLE = r"""
template <typename T> struct _vwide { typedef T type; };
template <> struct _vwide<float16> { typedef float type; };
"""

_floor_divide = cupy.ElementwiseKernel(
    "T a, T b", "T out", r"""
    typedef typename _vwide<T>::type F;
    F x = (F)a, y = (F)b;
    if (y == (F)0) {
        out = (T)(x / y);
    } else {
        F m = fmod(x, y);
        F d = (x - m) / y;
        if (m != (F)0 && ((y < (F)0) != (m < (F)0))) d -= (F)1;
        F f;
        if (d != (F)0) {
            f = floor(d);
            if (d - f > (F)0.5) f += (F)1;
        } else {
            f = copysign((F)0, x / y);
        }
        out = (T)f;
    }
    """, "volta_floor_divide", preamble=_PREAMBLE)

_remainder = cupy.ElementwiseKernel(
    "T a, T b", "T out", r"""
    typedef typename _vwide<T>::type F;
    F x = (F)a, y = (F)b;
    F m = fmod(x, y);
    if (m != (F)0 && ((y < (F)0) != (m < (F)0))) m += y;
    out = (T)m;
    """, "volta_remainder", preamble=_PREAMBLE)

_KERNEL_DTYPES = frozenset(cupy.dtype(n) for n in ("float16", "float32", "float64"))


def _of(kernel: Any, fallback: Any) -> Any:
    f32 = cupy.dtype("float32")

    def op(x1: Any, x2: Any, /) -> Any:
        dt = cupy.result_type(x1, x2)
        if dt not in FLOATS:
            return fallback(x1, x2)
        wide = dt if dt in _KERNEL_DTYPES else f32  # bfloat16: computed in float32
        out = kernel(cupy.asarray(x1, dtype=wide), cupy.asarray(x2, dtype=wide))
        return out if wide == dt else out.astype(dt)

    op.__name__ = op.__qualname__ = fallback.__name__
    op.__doc__ = fallback.__doc__
    return op


def floor_divide_of(fallback: Any) -> Any:
    """Array-API ``floor_divide``: PyTorch's rounding for floats, ``fallback`` otherwise."""
    return _of(_floor_divide, fallback)


def remainder_of(fallback: Any) -> Any:
    """Array-API ``remainder``: PyTorch's sign rule for floats, ``fallback`` otherwise."""
    return _of(_remainder, fallback)
