"""Matrix products through cuBLAS called directly (ctypes): in CUDA graph captures, for
the 2-byte floats, and for batches of products.

CuPy refuses every cuBLAS call while a stream captures ("calling cuBLAS API during stream
capture is currently unsupported"), although cuBLAS itself can be captured when its
workspace is set by the caller. :func:`matmul` is ``cupy.matmul`` except for 2-d floating
operands during a capture (or always, with :data:`DIRECT` set), which go to
``cublasGemmEx`` on a handle of our own, with a fixed workspace and the current stream.
Float32 follows CuPy's compute type (TF32 when ``allow_tf32`` is set).
"""

from __future__ import annotations

import ctypes
from typing import Any

import cupy
import numpy as np

from . import cublaslt, graphs
from ._util import BFLOAT16, contiguous_flag, fortran_flag, handle_with_workspace, loaded_path
from ._util import check_cublas as _check

#: use cuBLAS directly outside captures too (``[False]``: only while capturing)
DIRECT = [False]

_WORKSPACE_BYTES = 32 << 20
_TYPES = {np.dtype("float32"): 0, np.dtype("float64"): 1, np.dtype("float16"): 2}
if BFLOAT16 is not None:
    _TYPES[BFLOAT16] = 14
_COMPUTE_32F, _COMPUTE_TF32, _COMPUTE_64F = 68, 77, 70
_lib: list = []
_handles: dict[int, tuple] = {}
_streams: dict[int, int] = {}  # handle -> the stream it was last set to


def _library() -> Any:
    """The libcublas that CuPy loaded (found in this process's memory map)."""
    if not _lib:
        import cupy_backends.cuda.libs.cublas  # noqa: F401 - loads libcublas

        lib = ctypes.CDLL(loaded_path("libcublas.so") or "libcublas.so")
        lib.cublasGemmEx.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
            ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
            ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
            ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.cublasGemmStridedBatchedEx.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
            ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
            ctypes.c_longlong, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_longlong,
            ctypes.c_int, ctypes.c_int, ctypes.c_int]
        lib.cublasSetStream_v2.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.cublasSetWorkspace_v2.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        _lib.append(lib)
    return _lib[0]


def _handle(device: int) -> tuple:
    """(handle, workspace) of ``device``, created once (never during a capture)."""
    entry = _handles.get(device)
    if entry is None:
        lib = _library()
        h, ws = handle_with_workspace(lib.cublasCreate_v2, "cublasCreate", device,
                                      _WORKSPACE_BYTES)
        _check(lib.cublasSetWorkspace_v2(h, ctypes.c_void_p(ws.ptr), _WORKSPACE_BYTES),
               "cublasSetWorkspace")
        entry = _handles[device] = (h, ws)
    return entry


def prepare(device: int) -> None:
    """Create the handle of ``device`` now (before a capture begins)."""
    _handle(device)


def _operand(x: Any) -> tuple[Any, int, int] | None:
    """(array, op, ld) of a row-major 2-d operand read as cuBLAS's transposed operand."""
    rows, cols = x.shape
    if contiguous_flag(x):
        return x, 0, max(cols, 1)
    if fortran_flag(x):
        return x, 1, max(rows, 1)
    return None


def _gemm_setup(c: Any) -> tuple:
    """(library, handle, compute type, alpha, beta) for a GEMM writing ``c``, the handle
    set to the current stream. float32 follows CuPy's compute type (TF32 when allowed)."""
    lib = _library()
    h, _ = _handle(c.device.id)
    if c.dtype == np.float64:
        compute = _COMPUTE_64F
        alpha, beta = ctypes.c_double(1.0), ctypes.c_double(0.0)
    else:
        compute = _COMPUTE_32F
        if c.dtype == np.float32:
            from cupy._core import _routines_linalg as linalg

            if linalg.get_compute_type(c.dtype) == linalg.COMPUTE_TYPE_TF32:
                compute = _COMPUTE_TF32
        alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
    stream = cupy.cuda.get_current_stream().ptr
    if _streams.get(h.value) != stream:  # set only when it changed (a few us a call)
        _check(lib.cublasSetStream_v2(h, ctypes.c_void_p(stream)), "cublasSetStream")
        _streams[h.value] = stream
    return lib, h, compute, alpha, beta


def _direct(a: Any, b: Any, out: Any) -> Any:
    dtype = a.dtype
    code = _TYPES.get(dtype)
    if (code is None or b.dtype != dtype or a.ndim != 2 or b.ndim != 2
            or a.shape[1] != b.shape[0] or 0 in a.shape or 0 in b.shape):
        return None
    m, k = a.shape
    n = b.shape[1]
    if out is not None and not (out.shape == (m, n) and out.dtype == dtype
                                and contiguous_flag(out)):
        return None
    pa = _operand(a) or _operand(cupy.ascontiguousarray(a))
    pb = _operand(b) or _operand(cupy.ascontiguousarray(b))
    a, op_a, lda = pa
    b, op_b, ldb = pb
    c = cupy.empty((m, n), dtype) if out is None else out
    lib, h, compute, alpha, beta = _gemm_setup(c)
    # row-major C = A @ B is column-major C^T = B^T @ A^T
    _check(lib.cublasGemmEx(h, op_b, op_a, n, m, k, ctypes.byref(alpha), b.data.ptr, code,
                            ldb, a.data.ptr, code, lda, ctypes.byref(beta), c.data.ptr, code,
                            max(n, 1), compute, -1), "cublasGemmEx")
    return c


def _batched_operand(x: Any) -> tuple[int, int, int] | None:
    """(op, ld, batch stride) of an N-d operand whose matrices are row- or column-major and
    evenly spaced in memory (a contiguous array, or one with its last two dims swapped)."""
    rows, cols = x.shape[-2:]
    item = x.itemsize
    s_r, s_c = x.strides[-2:]
    if s_c == item and s_r == cols * item:
        op, ld = 0, max(cols, 1)
    elif s_r == item and s_c == rows * item:
        op, ld = 1, max(rows, 1)
    else:
        return None
    step = rows * cols * item  # every batch dim must advance by whole matrices
    for dim, stride in zip(reversed(x.shape[:-2]), reversed(x.strides[:-2])):
        if dim != 1 and stride != step:
            return None
        step *= dim
    return op, ld, rows * cols


def batched_matmul(a: Any, b: Any) -> Any:
    """``a @ b`` for N-d operands of one batch shape, as one ``cublasGemmStridedBatchedEx``,
    or None for other shapes or dtypes. CuPy has no bfloat16 batched matmul and copies a
    transposed operand (``k.mT``) before its own; here transposed matrices are read in
    place. An operand whose matrices are not evenly spaced (a head slice of packed
    projections) is copied contiguous first."""
    dtype = a.dtype
    code = _TYPES.get(dtype)
    if (code is None or b.dtype != dtype or a.ndim < 3 or a.shape[:-2] != b.shape[:-2]
            or a.shape[-1] != b.shape[-2] or 0 in a.shape or 0 in b.shape):
        return None
    pa = _batched_operand(a)
    if pa is None:
        a = cupy.ascontiguousarray(a)
        pa = _batched_operand(a)
    pb = _batched_operand(b)
    if pb is None:
        b = cupy.ascontiguousarray(b)
        pb = _batched_operand(b)
    if pa is None or pb is None:  # a layout it cannot describe even contiguous: CuPy's
        return None
    (op_a, lda, sa), (op_b, ldb, sb) = pa, pb
    m, k = a.shape[-2:]
    n = b.shape[-1]
    batch = a.size // (m * k)
    c = cupy.empty(a.shape[:-2] + (m, n), dtype)
    lib, h, compute, alpha, beta = _gemm_setup(c)
    # row-major C = A @ B is column-major C^T = B^T @ A^T, matrix by matrix
    _check(lib.cublasGemmStridedBatchedEx(
        h, op_b, op_a, n, m, k, ctypes.byref(alpha), b.data.ptr, code, ldb, sb, a.data.ptr,
        code, lda, sa, ctypes.byref(beta), c.data.ptr, code, max(n, 1), m * n, batch,
        compute, -1), "cublasGemmStridedBatchedEx")
    return c


def matmul(a: Any, b: Any, out: Any = None) -> Any:
    """``cupy.matmul``, with 2-d products through cuBLASLt (:mod:`.cublaslt`) or else cuBLAS
    directly during a capture and for float16/bfloat16 (CuPy's own call costs about 13 us
    more host time there)."""
    if a.ndim == 2 and b.ndim == 2:
        c = cublaslt.matmul(a, b, out=out)
        if c is not None:
            return c
    if DIRECT[0] or a.dtype.itemsize == 2 or graphs.is_capturing():
        c = _direct(a, b, out)
        if c is not None:
            return c
    return cupy.matmul(a, b) if out is None else cupy.matmul(a, b, out=out)

