"""Small helpers shared by the CUDA kernels: dtype checks and cached kernel builders.

Kernels are built lazily (first call) and cached per accumulator type, so importing
this package needs no GPU. Every kernel is launched on CuPy's current stream and never
reads a value back to the host.
"""

from __future__ import annotations

import functools
from typing import Any

import cupy
import numpy as np

FLOATS = (np.dtype("float16"), np.dtype("float32"), np.dtype("float64"))
"""dtypes the fused kernels serve; anything else goes to the generic fallback."""

try:  # bfloat16 (CuPy >= 14 holds ml_dtypes' bfloat16): the kernels compute in float (A)
    import ml_dtypes

    BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
    FLOATS = (*FLOATS, BFLOAT16)
except ImportError:
    BFLOAT16 = None

def is_float(*arrays) -> bool:
    """Whether every array (None is skipped) has the first one's floating dtype."""
    first = None
    for a in arrays:
        if a is None:
            continue
        if not isinstance(a, cupy.ndarray):
            return False
        if first is None:
            first = a.dtype
            if first not in FLOATS:
                return False
        elif a.dtype != first:
            return False
    return first is not None


def acc_type(dtype) -> str:
    """The C type to accumulate in: double for float64, float otherwise."""
    return "double" if dtype == np.float64 else "float"


def scalar_type(dtype) -> str:
    """CuPy's name of the scalar-parameter type matching :func:`acc_type`."""
    return "float64" if dtype == np.float64 else "float32"


@functools.cache
def elementwise(name: str, acc: str, in_params: str, out_params: str,
                body: str) -> cupy.ElementwiseKernel:
    """An ElementwiseKernel whose body may use ``A`` (the accumulator type).

    ``F`` in ``in_params`` is replaced by the scalar type matching ``acc``. Bodies must
    not ``return`` (they run inside CuPy's grid-stride loop).
    """
    f = "float64" if acc == "double" else "float32"
    params = ", ".join(_split_types(in_params, f))
    code = f"typedef {acc} A;\n{body}"
    return cupy.ElementwiseKernel(params, out_params, code, f"volta_{name}_{acc}")


def _split_types(params: str, f: str) -> list[str]:
    """Replace a leading ``F`` type of each comma-separated parameter by ``f``."""
    out = []
    for p in params.split(","):
        words = p.split()
        if words and words[0] == "F":
            words[0] = f
        out.append(" ".join(words))
    return out


def launch_1d(count: int, threads: int = 256) -> tuple[tuple[int], tuple[int]]:
    """Grid and block for ``count`` work items, one thread each."""
    blocks = max(1, min((count + threads - 1) // threads, 1 << 30))
    return (blocks,), (threads,)


if hasattr(cupy.ndarray, "_c_contiguous") and hasattr(cupy.ndarray, "_f_contiguous"):
    def contiguous_flag(a: Any) -> bool:
        """Whether the CuPy array ``a`` is C-contiguous (CuPy's own flag: reading
        ``a.flags`` builds a flags object first, ~0.2-0.6 us of host time per call)."""
        return a._c_contiguous

    def fortran_flag(a: Any) -> bool:
        """Whether the CuPy array ``a`` is F-contiguous (CuPy's own flag)."""
        return a._f_contiguous
else:  # a CuPy without the attributes
    def contiguous_flag(a: Any) -> bool:
        """Whether the CuPy array ``a`` is C-contiguous."""
        return a.flags.c_contiguous

    def fortran_flag(a: Any) -> bool:
        """Whether the CuPy array ``a`` is F-contiguous."""
        return a.flags.f_contiguous


def contiguous(a):
    """``a`` as a C-contiguous array (no copy when it already is)."""
    return a if contiguous_flag(a) else cupy.ascontiguousarray(a)


NEG_INF = "((A)__int_as_float(0xff800000))"
"""-inf in the accumulator type, for kernel bodies."""


def loaded_path(stem: str) -> str | None:
    """The path of the library ``stem`` (``"libcublas.so"``) that this process has loaded
    (CuPy's own copy), from the process's memory map; None when it is not loaded."""
    with open("/proc/self/maps") as maps:
        for line in maps:
            name = line.rsplit(None, 1)[-1]
            if name.rsplit("/", 1)[-1].startswith(stem):
                return name
    return None


def check_cublas(status: int, what: str) -> None:
    """Raise when a cuBLAS(Lt) call called through ctypes returned an error status."""
    if status != 0:
        raise RuntimeError(f"{what} failed with cuBLAS status {status}")


def handle_with_workspace(create: Any, what: str, device: int, nbytes: int) -> tuple:
    """``(handle, workspace)``: a cuBLAS(Lt) handle made by ``create`` (through ctypes) and
    ``nbytes`` of workspace on ``device``, allocated outside every graph pool."""
    import ctypes

    h = ctypes.c_void_p()
    check_cublas(create(ctypes.byref(h)), what)
    with cupy.cuda.Device(device):
        ws = cupy.cuda.memory.alloc(nbytes)
    return h, ws
