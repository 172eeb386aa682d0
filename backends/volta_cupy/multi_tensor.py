"""Multi-tensor optimizer steps on CUDA: one launch updates every parameter of a group.

A small launch-bound model spends much of its optimizer step launching one kernel per
parameter. These kernels take a table of ``(param, grad, state..., numel)`` addresses,
one row per parameter, and loop over the rows with ``blockIdx.y``. The table travels in
the launch's own parameter block, passed by value as a struct (as PyTorch's multi-tensor
kernels do), so a step uploads nothing: gradients land at new addresses from step to step,
and a device table would cost an allocation and a host-to-device copy every time. Groups
of more than :data:`_ROWS` parameters take one launch per :data:`_ROWS`.

The arithmetic is the per-parameter kernels' of :mod:`volta_cupy.fused`, statement for
statement, so both paths give the same bits. They serve float32/float64 groups whose
state exists (not the first step) outside CUDA graph captures (a capture takes the
per-parameter kernels, whose arguments are plain arrays); otherwise they return False
and the optimizer updates parameter by parameter.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import cupy
import numpy as np

from . import graphs
from ._util import contiguous_flag

_THREADS = 256
_MAX_BLOCKS = 1024

# rows per launch: the table stays under 4 KB, CUDA's classic limit for kernel parameters
_ROWS = 96

_HEAD = """
typedef {T} T;
typedef {A} A;
struct Table {{ unsigned long long v[{rows} * {width}]; }};
extern "C" __global__ void {name}(const Table tab, {params}) {{
    const unsigned long long* row = tab.v + (long long)blockIdx.y * {width};
    const long long n = (long long)row[{width} - 1];
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {{
{body}
    }}
}}
"""

_SGD_PARAMS = "const A lr, const A wd, const A mom, const A damp, const int nesterov, " \
    "const int maximize"
_SGD_BODY = """
        T* p = (T*)row[0];
        const T* g = (const T*)row[1];
        A gv = (A)g[i];
        if (maximize) gv = -gv;
        A pv = (A)p[i];
        if (wd != 0) gv += wd * pv;
        if (mom != 0) {
            T* buf = (T*)row[2];
            const A bv = mom * (A)buf[i] + ((A)1 - damp) * gv;
            buf[i] = (T)bv;
            gv = nesterov ? gv + mom * bv : bv;
        }
        p[i] = (T)(pv - lr * gv);
"""

_ADAM_PARAMS = "const A lr, const A b1, const A b2, const A eps, const A wd, " \
    "const A step_size, const A bc2, const int maximize, const int decoupled"
_ADAM_BODY = """
        T* p = (T*)row[0];
        const T* g = (const T*)row[1];
        T* m = (T*)row[2];
        T* v = (T*)row[3];
        A gv = (A)g[i];
        if (maximize) gv = -gv;
        A pv = (A)p[i];
        if (wd != 0) {
            if (decoupled) pv = pv * ((A)1 - lr * wd);
            else gv += wd * pv;
        }
        const A mv = (A)m[i] + ((A)1 - b1) * (gv - (A)m[i]);
        A vv = b2 * (A)v[i] + ((A)1 - b2) * (gv * gv);
        m[i] = (T)mv;
        v[i] = (T)vv;
        p[i] = (T)(pv - step_size * (mv / (sqrt(vv) / bc2 + eps)));
"""


@functools.cache
def _kernel(kind: str, dtype: str) -> cupy.RawKernel:
    t = "double" if dtype == "float64" else "float"
    params, body, width = {"sgd": (_SGD_PARAMS, _SGD_BODY, 4),
                           "adam": (_ADAM_PARAMS, _ADAM_BODY, 5)}[kind]
    name = f"volta_multi_{kind}_{dtype}"
    code = _HEAD.format(T=t, A=t, name=name, params=params, width=width, rows=_ROWS,
                        body=body)
    return cupy.RawKernel(code, name)


@functools.cache
def _table_type(width: int) -> np.dtype:
    """The NumPy dtype of the ``Table`` struct: ``_ROWS * width`` addresses."""
    return np.dtype([("v", np.uint64, (_ROWS * width,))])


def _servable(lists: tuple) -> str | None:
    """The common dtype name when every array is a float32/float64 array of it."""
    first = lists[0][0]
    dtype = first.dtype
    if dtype != np.float32 and dtype != np.float64:
        return None
    for arrays in lists:
        for a, p in zip(arrays, lists[0]):
            if (not isinstance(a, cupy.ndarray) or a.dtype != dtype or a.size != p.size
                    or not contiguous_flag(a)):
                return None
    return dtype.name


def _table(lists: tuple, width: int, start: int) -> Any:
    """Rows ``start`` to ``start + _ROWS`` of the address table, as the struct's value."""
    params = lists[0][start:start + _ROWS]
    tab = np.zeros((_ROWS, width), dtype=np.uint64)
    for j, arrays in enumerate(lists):
        tab[:len(params), j] = [a.data.ptr for a in arrays[start:start + _ROWS]]
    tab[:len(params), width - 1] = [p.size for p in params]
    return tab.reshape(-1).view(_table_type(width))[0]


def _launch(kind: str, dtype: str, lists: tuple, width: int, args: tuple) -> None:
    params = lists[0]
    scalar = np.float64 if dtype == "float64" else np.float32
    conv = tuple(np.int32(a) if isinstance(a, bool) else scalar(a) for a in args)
    kernel = _kernel(kind, dtype)
    for start in range(0, len(params), _ROWS):
        rows = params[start:start + _ROWS]
        biggest = max(p.size for p in rows)
        blocks = max(1, min((biggest + _THREADS - 1) // _THREADS, _MAX_BLOCKS))
        kernel((blocks, len(rows)), (_THREADS,), (_table(lists, width, start), *conv))


def sgd_step_multi(xp: Any, params: list, grads: list, momentum_buffers: list, *, lr: float,
                   momentum: float, dampening: float, weight_decay: float, nesterov: bool,
                   maximize: bool) -> bool:
    """Same contract as ``volta_core.optim.kernels.sgd_step_multi`` (one launch)."""
    if not params or graphs.is_capturing():
        return False
    lists = (params, grads) + ((momentum_buffers,) if momentum != 0 else ())
    if momentum != 0 and any(b is None for b in momentum_buffers):
        return False
    dtype = _servable(lists)
    if dtype is None:
        return False
    if momentum == 0:
        lists = (params, grads, params)  # the unused buffer column
    _launch("sgd", dtype, lists, 4, (lr, weight_decay, momentum, dampening, bool(nesterov),
                                     bool(maximize)))
    return True


def adam_step_multi(xp: Any, params: list, grads: list, exp_avgs: list, exp_avg_sqs: list,
                    *, step: int, lr: float, beta1: float, beta2: float, eps: float,
                    weight_decay: float, maximize: bool, decoupled: bool) -> bool:
    """Same contract as ``volta_core.optim.kernels.adam_step_multi`` (one launch)."""
    if not params or graphs.is_capturing():
        return False
    lists = (params, grads, exp_avgs, exp_avg_sqs)
    dtype = _servable(lists)
    if dtype is None:
        return False
    bias1 = 1.0 - beta1 ** step
    bias2_sqrt = math.sqrt(1.0 - beta2 ** step)
    _launch("adam", dtype, lists, 5, (lr, beta1, beta2, eps, weight_decay, lr / bias1,
                                      bias2_sqrt, bool(maximize), bool(decoupled)))
    return True
