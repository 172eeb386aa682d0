"""The CPU backend's array namespace: array-api-compat's NumPy namespace, with a
``matmul`` whose large products run on the backend's threads (``parallel.py``).

A multi-threaded OpenBLAS call has every thread wait for the others in a spin loop, and
its idle threads keep spinning for a while after each call: on a machine whose other
cores are busy (a shared 2-core box, or PyTorch's own threads in the same process) a
product then waits for a descheduled thread, up to 10x slower than on one thread. Here a
large product is cut into row (or column) blocks, each a single-threaded BLAS call, and
the blocks are shared by the caller and the backend's workers, which sleep when idle; a
busy core only means the caller computes more blocks itself. One block per thread (each
block packs the other operand again): on one thread a product is one plain call, so its
last bits may differ from a run on more threads, as with any threaded BLAS.

Handing a block to a sleeping worker costs ~30 us on each side (its wake-up, then the
caller's), so a product of less than ~16M multiply-adds gains nothing from blocks (an
LSTM step's (20, 256) @ (256, 1024) is slower in two). Such a product runs on one BLAS
thread: OpenBLAS's own threads would be faster on an idle machine, but they keep
spinning after each call and then slow down the backend's workers in the kernels that
follow (measured on 2 shared cores: the training-step benchmarks 1.1-1.5x slower).
"""

from __future__ import annotations

import math
import types
from typing import Any

import array_api_compat.numpy as _compat
import numpy as np

from .parallel import blas_held, get_num_threads, lead_blocks, one_blas_thread, parallel_for

# 2-d products of at least this many multiply-adds are cut into blocks; from the second
# (OpenBLAS's own threshold for using more than one thread) on, smaller ones run on one
# BLAS thread; batches of products are split from the third on
_SPLIT_MACS = 1 << 24
_BLAS_THREADS_MACS = 1 << 18
_SPLIT_BATCH_MACS = 1 << 22
_MIN_BLOCK = 8  # rows (or columns) of a block at least
# a module's own attributes, not copied (``__array_api_version__`` and the like are)
_MODULE_ATTRS = {"__name__", "__doc__", "__loader__", "__spec__", "__file__", "__path__",
                 "__package__", "__builtins__", "__cached__"}


def matmul(x1: Any, x2: Any, /, **kwargs: Any) -> Any:
    """``x1 @ x2`` (array API ``matmul``); a large 2-d floating product in blocks, a large
    batch of products (same batch shape) split along its first dimension."""
    if (kwargs or type(x1) is not np.ndarray or type(x2) is not np.ndarray
            or x1.dtype != x2.dtype or x1.dtype not in (np.float32, np.float64)):
        return _compat.matmul(x1, x2, **kwargs)
    if x1.ndim > 2 and x1.ndim == x2.ndim:
        return _batched(x1, x2)
    if x1.ndim != 2 or x2.ndim != 2 or x1.shape[1] != x2.shape[0]:
        return _compat.matmul(x1, x2, **kwargs)
    return matmul_2d(x1, x2)


def matmul_2d(x1: np.ndarray, x2: np.ndarray, bias: np.ndarray | None = None,
              out: np.ndarray | None = None) -> np.ndarray:
    """``x1 @ x2 (+ bias)`` of two 2-d float arrays of one dtype (``bias`` a row of that
    dtype, added in place: in each block while it is in cache when the product runs in
    blocks), into ``out`` if given."""
    (m, k), n = x1.shape, x2.shape[1]
    blocks = get_num_threads()
    macs = m * n * k
    if blocks < 2 or macs < _SPLIT_MACS or max(m, n) < blocks * _MIN_BLOCK:
        if blocks < 2 or macs < _BLAS_THREADS_MACS or blas_held():
            out = np.matmul(x1, x2, out=out)
        else:
            with one_blas_thread():
                out = np.matmul(x1, x2, out=out)
        if bias is not None:
            out += bias
        return out
    if out is None:
        out = np.empty((m, n), dtype=x1.dtype)
    # cut the longer side: each block packs the operand it shares again, and that one is
    # then the smaller (row blocks share x2, k * n; column blocks share x1, m * k)
    if m >= n:
        def run(lo: int, hi: int) -> None:
            np.matmul(x1[lo:hi], x2, out=out[lo:hi])
            if bias is not None:
                out[lo:hi] += bias
    else:
        def run(lo: int, hi: int) -> None:
            np.matmul(x1, x2[:, lo:hi], out=out[:, lo:hi])
            if bias is not None:
                out[:, lo:hi] += bias[lo:hi]
    parallel_for(run, lead_blocks(max(m, n), blocks))
    return out


def _batched(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """A batch of products; each product is computed as by one ``np.matmul`` of the whole
    batch (the same values), the batch's first dimension cut into one block per thread."""
    batch, (m, k), n = x1.shape[:-2], x1.shape[-2:], x2.shape[-1]
    blocks = get_num_threads()
    if (blocks < 2 or batch != x2.shape[:-2] or x2.shape[-2] != k or batch[0] < 2
            or math.prod(batch) * m * n * k < _SPLIT_BATCH_MACS):
        return np.matmul(x1, x2)
    out = np.empty((*batch, m, n), dtype=x1.dtype)

    def run(lo: int, hi: int) -> None:
        np.matmul(x1[lo:hi], x2[lo:hi], out=out[lo:hi])

    parallel_for(run, lead_blocks(batch[0], blocks))
    return out


# calls whose inf - inf (or overflow) NumPy reports from its own modules, where the
# backend's warning filter (``backend.quiet_numpy_warnings``) does not reach: PyTorch gives
# the NaN (or inf) silently (reductions; ``full`` of a float16 number rounding to inf)
_QUIET_CALLS = ("sum", "mean", "std", "var", "cumulative_sum", "full")


def _quiet(fn: Any) -> Any:
    def quiet(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(invalid="ignore", over="ignore"):
            return fn(*args, **kwargs)

    quiet.__name__ = quiet.__qualname__ = fn.__name__
    quiet.__doc__ = fn.__doc__
    return quiet


def make() -> types.ModuleType:
    """A module holding every name of array-api-compat's NumPy namespace, with this
    module's ``matmul`` and reductions (and ``full``) that don't warn where PyTorch is
    silent."""
    ns = types.ModuleType("volta_numpy.xp", __doc__)
    ns.__dict__.update({k: v for k, v in vars(_compat).items() if k not in _MODULE_ATTRS})
    ns.matmul = matmul
    for name in _QUIET_CALLS:
        setattr(ns, name, _quiet(getattr(_compat, name)))
    return ns
