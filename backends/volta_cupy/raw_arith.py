"""Arithmetic (add, subtract, multiply, divide) of bfloat16 and float32 arrays, and
float32 <-> bfloat16 casts, as raw kernels launched through :mod:`volta_cupy.launch`.

CuPy's bfloat16 loops (ufuncs, ``astype``, ElementwiseKernels) move one 2-byte element
per thread step and run at about a third of the GPU's bandwidth: a 4M-element bfloat16
``add`` takes 22 us on an H100, PyTorch's 8. The bfloat16 kernels here take
``__nv_bfloat162`` pairs. For float32 the GPU side is CuPy's, but the host's is not: a
CuPy ufunc call costs ~17 us on the H200 machine, a launch here ~5 us (and PyTorch's
whole ``add`` ~10 us).

Every kernel computes in float32 and rounds once to nearest even, which is what CuPy's
loops compute (and PyTorch's opmath): the results are the same bits, but that the float32
kernels keep subnormal numbers, as PyTorch does, where CuPy's loops flush them to zero. A
Python number operand is a float32 kernel argument, as NumPy's weak scalars are (a number
beyond float32's range is left to CuPy).

They serve C-contiguous operands of one shape (bfloat16: starting on a pair boundary),
or an array and a row (a bias) broadcast over its rows; everything else returns None and
the caller uses CuPy's own loop.
"""

from __future__ import annotations

import functools
from typing import Any

import cupy
import numpy as np

from ._util import BFLOAT16, contiguous_flag
from .launch import THREADS, blocks_for, launch, pointwise, run

_ndarray = cupy.ndarray

_F32 = np.dtype("float32")

_HEAD = r"""
#include <cuda_bf16.h>
typedef __nv_bfloat16 bf;
typedef __nv_bfloat162 bf2;
"""

# name -> C expression of float a, float b
_BINARY = {"add": "a + b", "subtract": "a - b", "multiply": "a * b", "divide": "a / b"}

_GRID = r"""
  long long stride = (long long)gridDim.x * blockDim.x;
  long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x;
"""

# y repeats every y_period elements (bf16: pairs): the same shape as x, or one row
# broadcast over x's rows
_KERNELS = {
    ("bf16", "array"): _HEAD + r"""
__device__ __forceinline__ float op(float a, float b) { return EXPR; }
extern "C" __global__ void NAME(const bf* x, const bf* y, bf* z, long long y_period,
                                long long n) {
  const bf2* x2 = (const bf2*)x; const bf2* y2 = (const bf2*)y; bf2* z2 = (bf2*)z;
  long long pairs = n / 2;""" + _GRID + r"""
  for (long long i = first; i < pairs; i += stride) {
    float2 a = __bfloat1622float2(x2[i]), b = __bfloat1622float2(y2[i % y_period]);
    z2[i] = __floats2bfloat162_rn(op(a.x, b.x), op(a.y, b.y));
  }
  if ((n & 1) && first == 0)
    z[n - 1] = __float2bfloat16_rn(op(__bfloat162float(x[n - 1]), __bfloat162float(y[n - 1])));
}
""",
    ("bf16", "scalar"): _HEAD + r"""
__device__ __forceinline__ float op(float a, float b) { return EXPR; }
extern "C" __global__ void NAME(const bf* x, float s, bf* z, long long n) {
  const bf2* x2 = (const bf2*)x; bf2* z2 = (bf2*)z;
  long long pairs = n / 2;""" + _GRID + r"""
  for (long long i = first; i < pairs; i += stride) {
    float2 a = __bfloat1622float2(x2[i]);
    z2[i] = __floats2bfloat162_rn(OPS(a.x), OPS(a.y));
  }
  if ((n & 1) && first == 0) z[n - 1] = __float2bfloat16_rn(OPS(__bfloat162float(x[n - 1])));
}
""",
}

_CASTS = {
    (_F32, "bf16"): _HEAD + r"""
extern "C" __global__ void volta_f32_to_bf16(const float* x, bf* z, long long n) {
  const float2* x2 = (const float2*)x; bf2* z2 = (bf2*)z;
  long long pairs = n / 2;""" + _GRID + r"""
  for (long long i = first; i < pairs; i += stride) z2[i] = __float22bfloat162_rn(x2[i]);
  if ((n & 1) && first == 0) z[n - 1] = __float2bfloat16_rn(x[n - 1]);
}
""",
    ("bf16", _F32): _HEAD + r"""
extern "C" __global__ void volta_bf16_to_f32(const bf* x, float* z, long long n) {
  const bf2* x2 = (const bf2*)x; float2* z2 = (float2*)z;
  long long pairs = n / 2;""" + _GRID + r"""
  for (long long i = first; i < pairs; i += stride) z2[i] = __bfloat1622float2(x2[i]);
  if ((n & 1) && first == 0) z[n - 1] = __bfloat162float(x[n - 1]);
}
""",
}


@functools.cache
def _kernel(kind: str, form: str, name: str, reverse: bool = False) -> cupy.RawKernel:
    fn = f"volta_raw_{kind}_{form}_{'r' if reverse else ''}{name}"
    # OPS(v): the operation with the number s on its side
    side = "#define OPS(v) op(s, (v))\n" if reverse else "#define OPS(v) op((v), s)\n"
    src = side + _KERNELS[kind, form].replace("EXPR", _BINARY[name]).replace("NAME", fn)
    return cupy.RawKernel(src, fn)


@functools.cache
def _cast_kernel(key: tuple) -> cupy.RawKernel:
    src = _CASTS[key]
    return cupy.RawKernel(src, src.split("void ", 1)[1].split("(", 1)[0])


def _kind(x: Any) -> str | None:
    """"f32" or "bf16" for a C-contiguous array starting on a pair boundary, else None."""
    if type(x) is not _ndarray or not x.size or not contiguous_flag(x):
        return None
    dt = x.dtype
    if dt == BFLOAT16 and x.data.ptr % 4 == 0:
        return "bf16"
    if dt == _F32 and x.data.ptr % 8 == 0:
        return "f32"  # a cast's source
    return None


def _launch(kernel: cupy.RawKernel, n: int, *args: Any) -> None:
    # each thread takes pairs
    launch(kernel, max(1, min((n // 2 + THREADS - 1) // THREADS, 4096)), THREADS,
           (*args, np.int64(n)))


def binary(name: str, x1: Any, x2: Any) -> Any:
    """``name`` of two bfloat16 arrays (one shape, or the second a row broadcast over the
    first's rows), or of one and a Python number; None otherwise."""
    t1, t2 = type(x1), type(x2)
    if t2 is float or t2 is int:
        return _scalar(name, x1, x2, False) if _kind(x1) == "bf16" else None
    if t1 is float or t1 is int:
        return _scalar(name, x2, x1, True) if _kind(x2) == "bf16" else None
    if _kind(x1) != "bf16" or _kind(x2) != "bf16":
        return None
    if x1.shape == x2.shape:
        period = (x1.size + 1) // 2
    elif x2.ndim == 1 and x1.ndim > 1 and x2.shape[0] == x1.shape[-1] and x2.size % 2 == 0:
        period = x2.size // 2
    else:
        return None
    out = cupy.empty(x1.shape, x1.dtype)
    _launch(_kernel("bf16", "array", name), x1.size, x1, x2, out, np.int64(period))
    return out


def _scalar(name: str, x: Any, s: float, reverse: bool) -> Any:
    out = cupy.empty(x.shape, x.dtype)
    _launch(_kernel("bf16", "scalar", name, reverse), x.size, x, np.float32(s), out)
    return out


def astype(x: Any, dtype: Any) -> Any:
    """A new C-contiguous copy of ``x`` in ``dtype`` for float32 <-> bfloat16, or None."""
    kind = _kind(x)
    if kind is None or BFLOAT16 is None:
        return None
    if kind == "f32" and dtype == BFLOAT16:
        key = (_F32, "bf16")
    elif kind == "bf16" and dtype == _F32:
        key = ("bf16", _F32)
    else:
        return None
    out = cupy.empty(x.shape, _F32 if kind == "bf16" else BFLOAT16)
    _launch(_cast_kernel(key), x.size, x, out)
    return out


def convert(x: Any, dtype: Any) -> Any:
    """``x.astype(dtype)``, float32 <-> bfloat16 through :func:`astype` where it serves
    (CuPy's own bfloat16 ``astype`` costs ~20-40 us of host time, a launch here ~5)."""
    out = astype(x, dtype)
    return x.astype(dtype) if out is None else out


# float32: the forms of :func:`binary_f32` (params, body), one element per thread step
_F32_FORMS = {
    "array": ("const T* x, const T* y, T* z", "z[i] = op(x[i], y[i]);"),
    "row": ("const T* x, const T* y, T* z, const long long p", "z[i] = op(x[i], y[i % p]);"),
    "scalar": ("const T* x, T* z, const float s", "z[i] = op(x[i], s);"),
    "rscalar": ("const T* x, T* z, const float s", "z[i] = op(s, x[i]);"),
}
_F32_MAX = float(np.finfo(np.float32).max)
# the operations as PTX instructions without ``.ftz``: CuPy compiles every kernel with
# -ftz=true, which flushes subnormal operands and results to zero; PyTorch's kernels keep
# them, and so do these
_PTX = {"add": "add.rn.f32", "subtract": "sub.rn.f32", "multiply": "mul.rn.f32",
        "divide": "div.rn.f32"}


@functools.cache
def _f32_kernel(name: str, form: str) -> cupy.RawKernel:
    params, body = _F32_FORMS[form]
    prelude = ("__device__ __forceinline__ float op(float a, float b) {\n"
               f'  float r; asm("{_PTX[name]} %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));'
               " return r;\n}")
    return pointwise(f"{name}_{form}", "float32", params, body, prelude)


def binary_f32(name: str, x1: Any, x2: Any) -> Any:
    """``name`` of two C-contiguous float32 arrays (one shape, or the second a row
    broadcast over the first's rows), or of one and a Python number within float32's
    range; None otherwise. (Each CuPy array attribute read costs the host ~0.1-0.6 us:
    this reads as few as it can.)"""
    t1, t2 = type(x1), type(x2)
    if t1 is _ndarray:
        if t2 is _ndarray:
            return _f32_arrays(name, x1, x2)
        if t2 is not float and t2 is not int:
            return None
        x, s, form = x1, x2, "scalar"
    elif t2 is _ndarray and (t1 is float or t1 is int):
        x, s, form = x2, x1, "rscalar"
    else:
        return None
    if x.dtype != _F32 or not -_F32_MAX <= s <= _F32_MAX or not contiguous_flag(x):
        return None
    n = x.size
    if not n:
        return None
    out = _ndarray(x.shape, _F32)
    run(_f32_kernel(name, form), n, (x, out), (s,))
    return out


def _f32_arrays(name: str, x1: Any, x2: Any) -> Any:
    if (x1.dtype != _F32 or x2.dtype != _F32 or not contiguous_flag(x1)
            or not contiguous_flag(x2)):
        return None
    shape, n = x1.shape, x1.size
    if not n:
        return None
    if shape == x2.shape:
        out = _ndarray(shape, _F32)
        run(_f32_kernel(name, "array"), n, (x1, x2, out))
        return out
    if x2.ndim == 1 and len(shape) > 1 and x2.shape[0] == shape[-1]:
        out = _ndarray(shape, _F32)
        launch(_f32_kernel(name, "row"), blocks_for(n), THREADS,
               (x1, x2, out, np.int64(x2.size), np.int64(n)))
        return out
    return None
