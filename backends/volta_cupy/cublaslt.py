"""2-d matrix products and ``linear`` (``x @ w.T + b``) through cuBLASLt, the bias added in
the product's epilogue.

CuPy's ``linear`` is two launches, a GEMM then a bias ``add`` that reads and writes the
whole output again; PyTorch's ``addmm`` adds the bias inside cuBLASLt's epilogue. Here
too: one ``cublasLtMatmul`` (called through ctypes on CuPy's own libcublasLt) computes
``x @ w.T`` and adds ``b`` before the single rounding to the output dtype (in float32 for
the 2-byte floats, as PyTorch's). On an H100 that took a bfloat16 ``(8192, 512) @ (512,
2048)`` with bias from 115 to 37 us of GPU time and a small float32 one from ~50 to ~30
us of host time. Plain 2-d products take the same call, which costs less host time than
``cupy.matmul`` (and than cuBLAS's ``cublasGemmEx`` through ctypes).

The matmul descriptor, the three matrix layouts and the algorithm cuBLASLt's heuristic
picks are made once per (shape, layouts, alignments, dtype, compute type, epilogue,
device) and cached; a call sets the bias pointer and launches on the current stream with
a workspace of our own, so it may also be captured in a CUDA graph.

It serves float32 (TF32 when ``allow_tf32`` is set), float16 and bfloat16 operands of one
dtype, C- or F-contiguous, starting on 16-byte boundaries (a bias on 256); anything else
returns None and the caller takes CuPy's path.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import cupy
import numpy as np
from cupy._core import _routines_linalg as cupy_linalg

from ._util import BFLOAT16, contiguous_flag, fortran_flag, handle_with_workspace, loaded_path
from ._util import check_cublas as _check

_F32 = np.dtype("float32")
_TYPES = {_F32: 0, np.dtype("float16"): 2}
if BFLOAT16 is not None:
    _TYPES[BFLOAT16] = 14
_R_32F = 0
_COMPUTE_32F, _COMPUTE_TF32 = 68, 77
_DESC_TRANSA, _DESC_TRANSB, _DESC_EPILOGUE, _DESC_BIAS_POINTER = 3, 4, 7, 8
_EPILOGUE_DEFAULT, _EPILOGUE_BIAS, _EPILOGUE_BGRADB = 1, 4, 512
_PREF_MAX_WORKSPACE = 1
_OP_N, _OP_T = 0, 1
_WORKSPACE_BYTES = 32 << 20
_PREF_ALIGN_A, _PREF_ALIGN_B, _PREF_ALIGN_C, _PREF_ALIGN_D = 5, 6, 7, 8
_ALIGN = 16  # bytes: operands starting elsewhere take CuPy's path
_MAX_PLANS = 4096


class _HeuristicResult(ctypes.Structure):
    # cublasLtMatmulHeuristicResult_t: the algorithm (8 words), its workspace size, the
    # status, the waves count and four reserved ints
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspace", ctypes.c_size_t),
                ("state", ctypes.c_int), ("waves", ctypes.c_float),
                ("reserved", ctypes.c_int * 4)]


_lib: list = []
_handles: dict[int, tuple] = {}  # device -> (handle, workspace)
_plans: dict[tuple, tuple] = {}  # see _plan
_lock = threading.Lock()  # a plan's descriptor takes each call's bias pointer
_ONE = ctypes.c_float(1.0)
_ZERO = ctypes.c_float(0.0)
_ONE_P, _ZERO_P = ctypes.addressof(_ONE), ctypes.addressof(_ZERO)
_available: list = []


def _library() -> Any:
    if not _lib:
        import cupy_backends.cuda.libs.cublas  # noqa: F401 - loads libcublas(Lt)

        lib = ctypes.CDLL(loaded_path("libcublasLt.so") or "libcublasLt.so")
        p, i, u64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64
        lib.cublasLtCreate.argtypes = [p]
        lib.cublasLtMatmulDescCreate.argtypes = [p, i, i]
        lib.cublasLtMatmulDescSetAttribute.argtypes = [p, i, p, ctypes.c_size_t]
        lib.cublasLtMatrixLayoutCreate.argtypes = [p, i, u64, u64, ctypes.c_int64]
        lib.cublasLtMatmulPreferenceCreate.argtypes = [p]
        lib.cublasLtMatmulPreferenceSetAttribute.argtypes = [p, i, p, ctypes.c_size_t]
        lib.cublasLtMatmulAlgoGetHeuristic.argtypes = [p, p, p, p, p, p, p, i, p, p]
        lib.cublasLtMatmul.argtypes = [p, p, p, p, p, p, p, p, p, p, p, p, p, p,
                                       ctypes.c_size_t, p]
        _lib.append(lib)
    return _lib[0]


def _handle(device: int) -> tuple:
    entry = _handles.get(device)
    if entry is None:
        entry = _handles[device] = handle_with_workspace(_library().cublasLtCreate,
                                                         "cublasLtCreate", device,
                                                         _WORKSPACE_BYTES)
    return entry


def prepare(device: int) -> None:
    """Create the handle and workspace of ``device`` now (before a capture begins)."""
    if available():
        _handle(device)


def available() -> bool:
    """Whether cuBLASLt loads here (checked once)."""
    if not _available:
        try:
            _library()
            _available.append(True)
        except (OSError, AttributeError):
            _available.append(False)
    return _available[0]


def _plan(m: int, n: int, k: int, op_b: int, op_a: int, aligns: tuple, dtype: Any,
          compute: int, epilogue: int, device: int) -> tuple | None:
    """(descriptor, layouts of cuBLAS's A, B and D, heuristic result, algorithm address)
    of a row-major ``(m, k) @ (k, n)``, which cuBLASLt computes column-major as
    ``D^T (n, m) = op(B^T) @ op(A^T)`` (see :func:`_layout`); None when the heuristic
    finds no algorithm. ``aligns``: the byte alignments of cuBLAS's A (``b``), B (``a``)
    and D, which the heuristic must not exceed."""
    key = (m, n, k, op_b, op_a, aligns, dtype, compute, epilogue, device)
    plan = _plans.get(key)
    if plan is not None or key in _plans:
        return plan
    if len(_plans) >= _MAX_PLANS:  # many shapes (dynamic ones): CuPy's path serves
        return None
    lib = _library()
    h, _ws = _handle(device)
    code = _TYPES[dtype]
    desc = ctypes.c_void_p()
    _check(lib.cublasLtMatmulDescCreate(ctypes.byref(desc), compute, _R_32F),
           "cublasLtMatmulDescCreate")
    for attr, value in ((_DESC_TRANSA, op_b), (_DESC_TRANSB, op_a),
                        (_DESC_EPILOGUE, epilogue)):
        v = ctypes.c_int32(value)
        _check(lib.cublasLtMatmulDescSetAttribute(desc, attr, ctypes.byref(v), 4),
               "cublasLtMatmulDescSetAttribute")
    layouts = []
    for rows, cols in (_layout(k, n, op_b), _layout(m, k, op_a), (n, m)):
        lay = ctypes.c_void_p()
        _check(lib.cublasLtMatrixLayoutCreate(ctypes.byref(lay), code, rows, cols, rows),
               "cublasLtMatrixLayoutCreate")
        layouts.append(lay)
    pref = ctypes.c_void_p()
    _check(lib.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)),
           "cublasLtMatmulPreferenceCreate")
    ws_bytes = ctypes.c_size_t(_WORKSPACE_BYTES)
    _check(lib.cublasLtMatmulPreferenceSetAttribute(pref, _PREF_MAX_WORKSPACE,
                                                    ctypes.byref(ws_bytes), 8),
           "cublasLtMatmulPreferenceSetAttribute")
    al_a, al_b, al_d = aligns
    for attr, value in ((_PREF_ALIGN_A, al_a), (_PREF_ALIGN_B, al_b), (_PREF_ALIGN_C, al_d),
                        (_PREF_ALIGN_D, al_d)):
        v = ctypes.c_uint32(value)
        _check(lib.cublasLtMatmulPreferenceSetAttribute(pref, attr, ctypes.byref(v), 4),
               "cublasLtMatmulPreferenceSetAttribute")
    result = _HeuristicResult()
    found = ctypes.c_int(0)
    la, lb, ld = layouts
    status = lib.cublasLtMatmulAlgoGetHeuristic(h, desc, la, lb, ld, ld, pref, 1,
                                                ctypes.byref(result), ctypes.byref(found))
    lib.cublasLtMatmulPreferenceDestroy(pref)
    plan = None
    if status == 0 and found.value > 0 and result.state == 0:
        plan = (desc, la, lb, ld, result, ctypes.addressof(result))  # algo: at offset 0
    _plans[key] = plan
    return plan


def _layout(rows: int, cols: int, op: int) -> tuple[int, int]:
    """(rows, cols) of the column-major matrix in the memory of a row-major ``(rows,
    cols)`` operand: its transpose when it is C-contiguous (``op`` N: cuBLAS reads the
    transpose back), itself when F-contiguous (``op`` T); the leading dim is the rows."""
    return (cols, rows) if op == _OP_N else (rows, cols)


def _alignment(ptr: int) -> int:
    """The largest power of two up to 256 that divides ``ptr`` (cuBLASLt's default)."""
    return min(ptr & -ptr, 256) if ptr else 256


def _operand(x: Any) -> int | None:
    """cuBLAS's op for a 2-d operand: N for C-contiguous, T for F-contiguous, None for
    other layouts."""
    if contiguous_flag(x):
        return _OP_N
    if fortran_flag(x):
        return _OP_T
    return None


def matmul(a: Any, b: Any, bias: Any = None, out: Any = None) -> Any:
    """``a @ b (+ bias)`` of 2-d operands ``(m, k)`` and ``(k, n)`` (C- or F-contiguous,
    one served dtype; ``bias`` a contiguous ``(n,)`` of that dtype) as one cuBLASLt call,
    into ``out`` (C-contiguous ``(m, n)``) when given; None where it does not serve."""
    if bias is not None and (bias.dtype != a.dtype or bias.shape != (b.shape[-1],)
                             or not contiguous_flag(bias)):
        return None
    return _gemm(a, b, out, _EPILOGUE_BIAS if bias is not None else _EPILOGUE_DEFAULT, bias)


def matmul_rowsum(a: Any, b: Any) -> tuple | None:
    """``(a @ b, a.sum(1))``, the sums in the product's epilogue (cuBLASLt's BGRADB: a
    linear layer's weight and bias gradients ``(g.T @ x, g.sum(0))`` with ``a = g.T``);
    None where it does not serve."""
    if a.ndim != 2:
        return None
    sums = cupy.empty(a.shape[0], a.dtype)
    out = _gemm(a, b, None, _EPILOGUE_BGRADB, sums)
    return None if out is None else (out, sums)


def _gemm(a: Any, b: Any, out: Any, epilogue: int, vec: Any) -> Any:
    """``a @ b`` with ``epilogue`` reading or writing the vector ``vec`` (a bias, or the
    sums BGRADB writes); None where it does not serve."""
    dtype = a.dtype
    if (dtype not in _TYPES or b.dtype != dtype or a.ndim != 2 or b.ndim != 2
            or a.shape[1] != b.shape[0] or 0 in a.shape or 0 in b.shape
            or not available()):
        return None
    m, k = a.shape
    n = b.shape[1]
    op_a, op_b = _operand(a), _operand(b)
    if op_a is None or op_b is None:
        return None
    # the heuristic takes the vector's alignment as the descriptor's pointer's (null:
    # any), so only fully aligned vectors (every allocation's start)
    if vec is not None and vec.data.ptr % 256:
        return None
    if out is None:
        out = cupy.empty((m, n), dtype)
        device = cupy.cuda.runtime.getDevice()  # where it was made
    elif out.shape == (m, n) and out.dtype == dtype and contiguous_flag(out):
        device = out.device.id
    else:
        return None
    pa, pb, d = a.data.ptr, b.data.ptr, out.data.ptr
    aligns = (_alignment(pb), _alignment(pa), _alignment(d))
    if min(aligns) < _ALIGN:
        return None
    compute = _COMPUTE_32F  # float32: CuPy's compute type (TF32 where allowed), as blas
    if dtype == _F32 and cupy_linalg.get_compute_type(dtype) == cupy_linalg.COMPUTE_TYPE_TF32:
        compute = _COMPUTE_TF32
    plan = _plan(m, n, k, op_b, op_a, aligns, dtype, compute, epilogue, device)
    if plan is None:
        return None
    desc, la, lb, ld, _result, algo = plan
    lib = _lib[0]
    h, ws = _handles[device]
    stream = cupy.cuda.get_current_stream().ptr
    if vec is None:
        _check(lib.cublasLtMatmul(h, desc, _ONE_P, pb, la, pa, lb, _ZERO_P,
                                  d, ld, d, ld, algo, ws.ptr, _WORKSPACE_BYTES, stream),
               "cublasLtMatmul")
        return out
    with _lock:  # the descriptor holds the vector's pointer until the call is made
        ptr = ctypes.c_void_p(vec.data.ptr)
        _check(lib.cublasLtMatmulDescSetAttribute(desc, _DESC_BIAS_POINTER,
                                                  ctypes.byref(ptr), 8),
               "cublasLtMatmulDescSetAttribute")
        _check(lib.cublasLtMatmul(h, desc, _ONE_P, pb, la, pa, lb, _ZERO_P,
                                  d, ld, d, ld, algo, ws.ptr, _WORKSPACE_BYTES, stream),
               "cublasLtMatmul")
    return out


def linear(xp: Any, x: Any, w: Any, b: Any = None) -> Any:
    """``x @ w.T + b`` (``x`` ``(M, K)``, ``w`` ``(N, K)``, ``b`` ``(N,)`` or None) as one
    cuBLASLt call with the bias in its epilogue, else the generic kernel (a product, then
    the bias added). Same contract as ``volta_core.nn.linear.linear_kernel``."""
    y = matmul(x, w.T, b)
    if y is not None:
        return y
    from volta_core.nn.linear import linear_kernel
    return linear_kernel(xp, x, w, b)


def linear_weight_bias_grad(xp: Any, g: Any, x: Any) -> tuple | None:
    """A linear layer's ``(g.T @ x, g.sum(0))`` as one cuBLASLt call (see
    :func:`matmul_rowsum`); None (the caller runs the product and the sums) where it does
    not serve. Same contract as ``volta_core.nn.linear.linear_weight_bias_grad``."""
    return matmul_rowsum(g.T, x)
