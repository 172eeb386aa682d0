"""Raw kernel launches at the driver's cost, and elementwise raw kernels built on them.

A ``cupy.RawKernel`` call converts each argument through CuPy's generic parameter
machinery, and a CuPy ufunc or ``ElementwiseKernel`` call also resolves types, broadcasts
and builds an indexer: on the H200 machine's host a ufunc ``add`` of two small arrays
costs ~17 us, a ``RawKernel`` launch ~8 us, the driver's ``cuLaunchKernel`` itself ~4 us,
and PyTorch's whole ``add`` ~10 us. Launches here write the arguments into a per-thread
buffer of 8-byte slots and hand the driver pointers to the slots, which is ~4.5 us.

A kernel launched here takes only device pointers (CuPy arrays, or ``numpy.uint64``
addresses), ``numpy.int64``, ``numpy.int32``, ``numpy.uint32``, ``numpy.float32``,
``numpy.float64`` or ``bool`` arguments. The driver
copies the arguments when the launch is made, so the buffer is free again when the call
returns; launches go to CuPy's current stream, so they are captured in CUDA graphs as
CuPy's own are.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import cupy
import numpy as np
from cupy.cuda import driver, runtime

from ._util import FLOATS, contiguous_flag

_SLOTS = 32  # arguments a kernel may take
THREADS = 256
MAX_BLOCKS = 1 << 16


class _Buffers(threading.local):
    """A thread's argument slots (int64, seen also as int32/uint32/float32/float64/bool) and the
    array of pointers to them that the driver reads."""

    def __init__(self) -> None:
        self.slots = np.zeros(_SLOTS, np.int64)
        self.f32 = self.slots.view(np.float32)
        self.i32 = self.slots.view(np.int32)
        self.u32 = self.slots.view(np.uint32)
        self.f64 = self.slots.view(np.float64)
        self.u8 = self.slots.view(np.uint8)
        base = self.slots.ctypes.data
        self.pointers = np.arange(base, base + 8 * _SLOTS, 8, dtype=np.uint64)
        self.address = self.pointers.ctypes.data


_buffers = _Buffers()
_functions: dict[tuple[int, int], int] = {}  # (id of a RawKernel, device) -> CUfunction
_kernels: list = []  # keeps the kernels of _functions alive (their ids stay theirs)
_ndarray = cupy.ndarray


def _function(kernel: cupy.RawKernel) -> int:
    """The kernel's CUfunction on the current device (compiled there on first use)."""
    key = (id(kernel), runtime.getDevice())
    fn = _functions.get(key)
    if fn is None:
        fn = _functions[key] = kernel.kernel.ptr
        _kernels.append(kernel)
    return fn


def launch(kernel: cupy.RawKernel, blocks: int, threads: int, args: tuple,
           blocks_y: int = 1) -> None:
    """``kernel((blocks, blocks_y), (threads,), args)`` on the current stream, through the
    driver."""
    b = _buffers
    slots = b.slots
    for i, a in enumerate(args):
        t = type(a)
        if t is _ndarray:
            slots[i] = a.data.ptr
        elif t is np.int64 or t is np.uint64:  # uint64: a raw address (0: null)
            slots[i] = a
        elif t is np.float32:
            b.f32[2 * i] = a
        elif t is np.int32:
            b.i32[2 * i] = a
        elif t is np.uint32:
            b.u32[2 * i] = a
        elif t is np.float64:
            b.f64[i] = a
        elif t is bool or t is np.bool_:
            b.u8[8 * i] = a
        else:
            raise TypeError(f"launch: unsupported kernel argument {t.__name__}")
    driver.launchKernel(_function(kernel), blocks, blocks_y, 1, threads, 1, 1, 0,
                        cupy.cuda.get_current_stream().ptr, b.address, 0)


def blocks_for(n: int) -> int:
    """Blocks of :data:`THREADS` threads for a grid-stride loop over ``n`` elements."""
    return max(1, min((n + THREADS - 1) // THREADS, MAX_BLOCKS))


def run(kernel: cupy.RawKernel, n: int, arrays: tuple, scalars: tuple = (),
        wide: bool = False) -> None:
    """Launch a :func:`pointwise` kernel over ``n`` elements whose parameters are
    ``arrays``, then ``scalars`` (``float``, or ``double`` where ``wide``), then ``n``: the
    per-op path of :func:`launch`, without its per-argument type dispatch."""
    b = _buffers
    slots = b.slots
    i = 0
    for a in arrays:
        slots[i] = a.data.ptr
        i += 1
    if scalars:
        view = b.f64 if wide else b.f32
        step = 1 if wide else 2
        for v in scalars:
            view[step * i] = v
            i += 1
    slots[i] = n
    driver.launchKernel(_function(kernel), blocks_for(n), 1, 1, THREADS, 1, 1, 0,
                        cupy.cuda.get_current_stream().ptr, b.address, 0)


# C types of the dtypes the pointwise kernels serve (they compute in float, or double for
# float64, and round once)
_CTYPES = {"float16": "__half", "float32": "float", "float64": "double",
           "bfloat16": "__nv_bfloat16"}
_HEAD = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
_DTYPES = frozenset(FLOATS)


@functools.cache
def pointwise(name: str, dtype_name: str, params: str, body: str,
              prelude: str = "") -> cupy.RawKernel:
    """A grid-stride kernel over ``long long n`` elements: ``params`` (C parameters, ``T``
    the element type, ``A`` the type to compute in), then ``n``; ``body`` runs for each
    index ``i``; ``prelude``: C code ahead of the kernel (helper functions)."""
    t = _CTYPES[dtype_name]
    a = "double" if dtype_name == "float64" else "float"
    fn = f"volta_pw_{name}_{dtype_name}"
    src = (f"{_HEAD}typedef {t} T;\ntypedef {a} A;\n{prelude}\n"
           f'extern "C" __global__ void {fn}({params}, const long long n) {{\n'
           "  const long long stride = (long long)gridDim.x * blockDim.x;\n"
           "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;"
           " i += stride) {\n"
           f"    {body}\n  }}\n}}\n")
    return cupy.RawKernel(src, fn)


def pointwise_ok(*arrays: Any) -> bool:
    """Whether every array is a C-contiguous CuPy array of the first one's shape and dtype
    (one the pointwise kernels serve)."""
    first = arrays[0]
    if type(first) is not _ndarray:
        return False
    dt = first.dtype
    if dt not in _DTYPES or not contiguous_flag(first):
        return False
    if len(arrays) > 1:
        shape = first.shape
        for a in arrays[1:]:
            if (type(a) is not _ndarray or not contiguous_flag(a) or a.dtype != dt
                    or a.shape != shape):
                return False
    return True


_mapped: dict[tuple, cupy.RawKernel] = {}
_F64 = np.dtype("float64")


def mapped(name: str, body: str, *arrays: Any, scalars: tuple = ()) -> Any:
    """A new array like ``arrays[0]`` from one launch of a pointwise kernel: ``body`` reads
    ``a[i]``, ``b[i]``, ... (the arrays, in order), the numbers ``s0``, ``s1``, ... (of
    type ``A``) and writes ``out[i]``; ``name`` names one body. Callers check
    :func:`pointwise_ok` first."""
    first = arrays[0]
    dt = first.dtype
    key = (name, dt, len(arrays), len(scalars))
    kernel = _mapped.get(key)
    if kernel is None:
        params = ", ".join([f"const T* {'abcdefgh'[k]}" for k in range(len(arrays))]
                           + ["T* out"] + [f"const A s{k}" for k in range(len(scalars))])
        kernel = _mapped[key] = pointwise(name, dt.name, params, body)
    out = _ndarray(first.shape, dt)
    run(kernel, first.size, (*arrays, out), scalars, dt == _F64)
    return out
