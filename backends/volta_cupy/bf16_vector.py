"""bfloat16 elementwise kernels that read and write two elements at a time.

CuPy's bfloat16 loops (its ufuncs, ``astype`` and ElementwiseKernels alike) move one
2-byte element per thread step and run at about a third of the GPU's bandwidth: a
bfloat16 ``add`` of 4M elements takes as long as a float32 one (22 us on an H100, where
PyTorch takes 8), and a launch costs 11-15 us of host time. Autocast steps are made of
such ops (casts of activations and gradients, residual adds, products). The kernels here
take ``__nv_bfloat162`` pairs, compute in float32 and round once to nearest even, which is
what CuPy's loops and PyTorch's compute; a RawKernel launch also costs about half the
host time of a ufunc call.

They serve C-contiguous operands of one shape that start on a pair boundary (a binary op
also takes a row, a bias, broadcast over the other operand's rows); everything else
returns None and the caller uses CuPy's own loop.
"""

from __future__ import annotations

import functools
from typing import Any

import cupy
import numpy as np

from ._util import BFLOAT16

_F32 = np.dtype("float32")

_HEAD = r"""
#include <cuda_bf16.h>
typedef __nv_bfloat16 bf;
typedef __nv_bfloat162 bf2;
"""

# name -> C expression of float a, float b
_BINARY = {"add": "a + b", "subtract": "a - b", "multiply": "a * b", "divide": "a / b"}

_BINARY_KERNEL = _HEAD + r"""
__device__ __forceinline__ float op(float a, float b) { return EXPR; }
// y repeats every y_pairs pairs: the same shape as x, or one row broadcast over x's rows
extern "C" __global__ void NAME(const bf* x, const bf* y, bf* z, long long y_pairs,
                                long long n) {
  const bf2* x2 = (const bf2*)x; const bf2* y2 = (const bf2*)y; bf2* z2 = (bf2*)z;
  long long pairs = n / 2, stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < pairs; i += stride) {
    float2 a = __bfloat1622float2(x2[i]), b = __bfloat1622float2(y2[i % y_pairs]);
    z2[i] = __floats2bfloat162_rn(op(a.x, b.x), op(a.y, b.y));
  }
  if ((n & 1) && blockIdx.x == 0 && threadIdx.x == 0)
    z[n - 1] = __float2bfloat16_rn(op(__bfloat162float(x[n - 1]), __bfloat162float(y[n - 1])));
}
"""

_CASTS = {
    (_F32, "bf16"): _HEAD + r"""
extern "C" __global__ void volta_f32_to_bf16(const float* x, bf* z, long long n) {
  const float2* x2 = (const float2*)x; bf2* z2 = (bf2*)z;
  long long pairs = n / 2, stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < pairs; i += stride)
    z2[i] = __float22bfloat162_rn(x2[i]);
  if ((n & 1) && blockIdx.x == 0 && threadIdx.x == 0) z[n - 1] = __float2bfloat16_rn(x[n - 1]);
}
""",
    ("bf16", _F32): _HEAD + r"""
extern "C" __global__ void volta_bf16_to_f32(const bf* x, float* z, long long n) {
  const bf2* x2 = (const bf2*)x; float2* z2 = (float2*)z;
  long long pairs = n / 2, stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < pairs; i += stride)
    z2[i] = __bfloat1622float2(x2[i]);
  if ((n & 1) && blockIdx.x == 0 && threadIdx.x == 0) z[n - 1] = __bfloat162float(x[n - 1]);
}
""",
}


@functools.cache
def _binary_kernel(name: str) -> cupy.RawKernel:
    fn = f"volta_bf16x2_{name}"
    return cupy.RawKernel(_BINARY_KERNEL.replace("EXPR", _BINARY[name]).replace("NAME", fn),
                          fn)


@functools.cache
def _cast_kernel(key: tuple) -> cupy.RawKernel:
    src = _CASTS[key]
    return cupy.RawKernel(src, src.split("void ", 1)[1].split("(", 1)[0])


def _aligned(x: Any) -> bool:
    """C-contiguous and starting on a pair boundary (a view may start mid-pair)."""
    return x.flags.c_contiguous and x.data.ptr % (2 * x.itemsize) == 0


def _launch(kernel: cupy.RawKernel, n: int, *args: Any) -> None:
    threads = 256
    blocks = max(1, min((n // 2 + threads - 1) // threads, 4096))
    kernel((blocks,), (threads,), (*args, np.int64(n)))


def binary(name: str, x1: Any, x2: Any) -> Any:
    """``name`` (add, subtract, multiply, divide) of two C-contiguous bfloat16 arrays of
    one shape, or of an array and a row of its last dim (a bias) broadcast over its rows;
    None for other operands."""
    if not (BFLOAT16 is not None and type(x1) is cupy.ndarray and type(x2) is cupy.ndarray
            and x1.dtype == BFLOAT16 and x2.dtype == BFLOAT16 and x1.size
            and _aligned(x1) and _aligned(x2)):
        return None
    if x1.shape == x2.shape:
        period = (x1.size + 1) // 2
    elif x2.ndim == 1 and x1.ndim > 1 and x2.shape[0] == x1.shape[-1] and x2.size % 2 == 0:
        period = x2.size // 2
    else:
        return None
    out = cupy.empty(x1.shape, BFLOAT16)
    _launch(_binary_kernel(name), x1.size, x1, x2, out, np.int64(period))
    return out


def astype(x: Any, dtype: Any) -> Any:
    """A new C-contiguous copy of ``x`` in ``dtype`` for float32 <-> bfloat16, or None."""
    if BFLOAT16 is None or type(x) is not cupy.ndarray or not x.size:
        return None
    dtype = np.dtype(dtype)
    if x.dtype == _F32 and dtype == BFLOAT16:
        key = (_F32, "bf16")
    elif x.dtype == BFLOAT16 and dtype == _F32:
        key = ("bf16", _F32)
    else:
        return None
    if not _aligned(x):
        return None
    out = cupy.empty(x.shape, dtype)
    _launch(_cast_kernel(key), x.size, x, out)
    return out
