"""Scatter-adds on CUDA with ``atomicAdd``: ``scatter_add``, ``index_add`` and
``embedding_backward``.

float32 and float64 accumulate in place; float16 accumulates in a float32 copy and is
cast back. Destinations outside the target are skipped (no bounds error: that would
need a host sync). Atomic adds make the summation order, and so the last bits of
float results, vary between runs: under ``vt.use_deterministic_algorithms(True)`` the
generic sort-based kernels serve instead (the same bits every run, as PyTorch's
deterministic variants).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import cupy
import numpy as np

from volta_core.determinism import are_deterministic_algorithms_enabled
from volta_core.ops import _scatter as generic_scatter
from volta_core.ops import nn as generic

from ._util import contiguous, is_float


def _acc_dtype(dtype):
    return np.dtype("float32") if dtype == np.float16 else dtype


@functools.cache
def _scatter_add_kernel(ndim: int, dim: int) -> cupy.ElementwiseKernel:
    """Kernel over the elements of a C-contiguous ``index`` (shape ``s0..``) adding ``src``
    into a C-contiguous target (element strides ``t0..``) along ``dim``."""
    params = ["raw S src", "raw I index", "int64 tdim"]
    params += [f"int64 s{d}, int64 t{d}" for d in range(ndim)]
    body = ["long long r = i, pos = 0, c = 0;", "bool ok = true;"]
    for d in reversed(range(ndim)):
        body.append(f"c = r % s{d}; r /= s{d};")
        if d == dim:
            body.append("c = (long long)index[i]; ok = c >= 0 && c < tdim;")
        body.append(f"pos += c * t{d};")
    body.append("if (ok) atomicAdd(&out[pos], (O)src[i]);")
    return cupy.ElementwiseKernel(", ".join(params), "raw O out", "\n".join(body),
                                  f"volta_scatter_add_{ndim}_{dim}")


_INDEX_ADD = cupy.ElementwiseKernel(
    "raw S src, raw I index, int64 k, int64 d, int64 inner", "raw O out",
    """
    const long long b = i % inner;
    const long long r = i / inner;
    const long long j = r % k;
    const long long a = r / k;
    const long long dst = (long long)index[j];
    if (dst >= 0 && dst < d) atomicAdd(&out[(a * d + dst) * inner + b], (O)src[i]);
    """, "volta_index_add")

_EMBEDDING_BWD = cupy.ElementwiseKernel(
    "raw S grad, raw I indices, int64 num, int64 dim, int64 pad, int32 has_pad",
    "raw O out",
    """
    const long long m = i / dim;
    const long long col = i % dim;
    const long long row = (long long)indices[m];
    if (row >= 0 && row < num && !(has_pad && row == pad))
        atomicAdd(&out[row * dim + col], (O)grad[i]);
    """, "volta_embedding_backward")


def _finish(out: Any, dtype) -> Any:
    return out if out.dtype == dtype else out.astype(dtype)


def scatter_add(xp: Any, target: Any, dim: int, index: Any, src: Any) -> Any:
    """Same contract as the ``scatter_add`` fallback (``torch.scatter_add``)."""
    ok = (is_float(target, src) and isinstance(index, cupy.ndarray)
          and index.dtype.kind in "iu" and index.ndim == target.ndim == src.ndim
          and target.ndim > 0 and not are_deterministic_algorithms_enabled())
    if not ok:
        return generic_scatter._scatter_add_kernel(xp, target, dim, index, src)
    dim = dim % target.ndim
    out = target.astype(_acc_dtype(target.dtype), order="C", copy=True)
    if index.size == 0:
        return _finish(out, target.dtype)
    if tuple(src.shape) != tuple(index.shape):
        src = src[tuple(slice(0, s) for s in index.shape)]
    strides = [1] * target.ndim
    for d in range(target.ndim - 2, -1, -1):
        strides[d] = strides[d + 1] * target.shape[d + 1]
    geom = [v for d in range(target.ndim) for v in (index.shape[d], strides[d])]
    kern = _scatter_add_kernel(target.ndim, dim)
    kern(contiguous(src), contiguous(index), target.shape[dim], *geom, out, size=index.size)
    return _finish(out, target.dtype)


def index_add(xp: Any, target: Any, dim: int, index: Any, src: Any) -> Any:
    """Same contract as the ``index_add`` fallback (``torch.index_add``, 1-d index)."""
    ok = (is_float(target, src) and isinstance(index, cupy.ndarray)
          and index.dtype.kind in "iu" and index.ndim == 1 and target.ndim > 0
          and src.ndim == target.ndim
          and all(s == t or d == dim % target.ndim
                  for d, (s, t) in enumerate(zip(src.shape, target.shape)))
          and src.shape[dim] == index.shape[0] and not are_deterministic_algorithms_enabled())
    if not ok:
        return generic_scatter._index_add_kernel(xp, target, dim, index, src)
    dim = dim % target.ndim
    out = target.astype(_acc_dtype(target.dtype), order="C", copy=True)
    if index.size == 0 or src.size == 0:
        return _finish(out, target.dtype)
    inner = math.prod(target.shape[dim + 1:])
    _INDEX_ADD(contiguous(src), contiguous(index), index.shape[0], target.shape[dim], inner,
               out, size=src.size)
    return _finish(out, target.dtype)


def embedding_backward(xp: Any, grad: Any, indices: Any, *, num_weights: int,
                       padding_idx: int | None = None) -> Any:
    """Same contract as ``volta_core.ops.nn.embedding_backward``."""
    ok = (is_float(grad) and grad.ndim == 2 and isinstance(indices, cupy.ndarray)
          and indices.dtype.kind in "iu" and indices.shape == grad.shape[:1]
          and not are_deterministic_algorithms_enabled())
    if not ok:
        return generic.embedding_backward(xp, grad, indices, num_weights=num_weights,
                                          padding_idx=padding_idx)
    d = grad.shape[1]
    out = cupy.zeros((num_weights, d), dtype=_acc_dtype(grad.dtype))
    if grad.size:
        pad = -1 if padding_idx is None else int(padding_idx)
        _EMBEDDING_BWD(contiguous(grad), contiguous(indices), num_weights, d, pad,
                       int(padding_idx is not None), out, size=grad.size)
    return _finish(out, grad.dtype)
