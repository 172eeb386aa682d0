"""Multi-tensor optimizer steps of the CPU backend (``adam_step_multi``,
``sgd_step_multi``): a whole parameter group updated in place, in pieces spread over the
backend's threads (``parallel.py``).

Each piece runs the per-parameter kernel's operations in the same order (``adam_step`` in
``kernels.py``, the generic ``sgd_step``), in place on a slice of the flattened arrays
with one scratch array, so every value is the per-parameter kernel's. The pieces of all
the group's parameters go into one parallel loop: NumPy releases the GIL in its loops,
so two threads update two pieces at once, which a per-parameter step on new arrays
cannot do (an optimizer step is ~10 passes over every parameter).
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np
from numpy.lib.array_utils import byte_bounds

from .parallel import get_num_threads, parallel_for

# elements per piece at least: a group's elements are cut into one piece per thread,
# so each NumPy call of a piece runs long (see parallel.split)
MIN_PIECE = 1 << 16
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# elements per body call: a step's ~10 passes then run over a run of the parameter, its
# gradient, states and scratch that stays in the core's L2 cache (256 KiB each in float32)
# instead of streaming whole pieces through memory each pass: Adam over the MLP's 670k
# parameters on one thread of the 2-core development machine 2.4 -> 2.05 ms (on two
# threads, where each core streams half, ~1.6 ms either way)
CHUNK = 1 << 16


def _fits(arrays: list, dtype: np.dtype) -> bool:
    """NumPy arrays of ``dtype``."""
    return all(type(a) is np.ndarray and a.dtype == dtype for a in arrays)


def _views(*groups: list) -> tuple[list, list[bool]]:
    """Per parameter, its arrays (one from each group) flattened where all of them are
    C-contiguous (``True``: the update can be cut into pieces), else as they are."""
    views, flat = [], []
    for arrays in zip(*groups):
        ok = all(a.flags.c_contiguous for a in arrays)
        views.append([a.reshape(-1) if ok else a for a in arrays])
        flat.append(ok)
    return views, flat


def _pieces(params: list, flat: list[bool]) -> list[list[tuple[int, int, int]]]:
    """The group's work in about one piece per thread: each piece a list of
    ``(parameter index, lo, hi)`` slices of the flattened parameters, ``MIN_PIECE``
    elements at least (small parameters share a piece; a large one may be cut; one that
    is not C-contiguous stays whole). A small group is one piece: no hand-over."""
    size = max(MIN_PIECE, -(-sum(p.size for p in params) // get_num_threads()))
    pieces: list[list] = [[]]
    filled = 0
    for i, p in enumerate(params):
        n = p.size
        if n == 0:
            continue
        count = max(1, round(n / size)) if flat[i] else 1
        step = -(-n // count)
        for lo in range(0, n, step):
            if filled >= size:
                pieces.append([])
                filled = 0
            pieces[-1].append((i, lo, min(lo + step, n)))
            filled += min(lo + step, n) - lo
    return pieces


def _group_ok(params: list, grads: list, *states: list) -> bool:
    if not params or params[0].dtype not in _FLOATS:
        return False
    if sum(p.size for p in params) < 2 * MIN_PIECE:
        return False  # one piece: the checks here cost more than the in-place update saves
    dtype = params[0].dtype
    if not (_fits(params, dtype) and all(_fits(s, dtype) for s in states)
            and all(type(g) is np.ndarray and g.dtype == dtype for g in grads)):
        return False
    if not all(p.flags.writeable for p in params) or \
            not all(a.flags.writeable for s in states for a in s):
        return False
    # the updates write params and states in place: none of them may share memory with
    # another array of the group (a gradient that is its parameter, tied states)
    return not _overlap([*params, *(a for s in states for a in s)], grads)


def _root(a: Any) -> Any:
    """The object that owns ``a``'s memory (the end of its ``base`` chain)."""
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a


def _overlap(written: list, read: list) -> bool:
    """True if a ``written`` array may share memory with any other array given. Arrays
    over different memory owners cannot (the usual case, decided by identity); else by
    the byte range each spans (exact for C-contiguous arrays), one sweep over them."""
    roots = [id(_root(a)) for a in written]
    if len(set(roots)) == len(roots) and not set(roots) & {id(_root(a)) for a in read}:
        return False
    spans = []
    for arrays, w in ((written, True), (read, False)):
        for a in arrays:
            if a.nbytes:
                lo, hi = byte_bounds(a)
                spans.append((lo, hi - lo, w))
    spans.sort()
    end_all = end_written = 0
    for start, size, w in spans:
        if start < (end_all if w else end_written):
            return True
        end_all = max(end_all, start + size)
        if w:
            end_written = max(end_written, start + size)
    return False


def _contiguous(grads: list) -> list:
    """The gradients, a C-contiguous copy of any that is not (same values)."""
    return [g if g.flags.c_contiguous else np.ascontiguousarray(g) for g in grads]


_local = threading.local()


def _scratch(p: np.ndarray) -> np.ndarray:
    """A scratch array of ``p``'s shape and dtype: for a run of at most ``CHUNK`` elements
    a view of the thread's own buffer, which stays in its cache (a new array of 256 KiB
    is fresh pages from the system each time, whose first writes fault)."""
    if p.ndim != 1 or p.size > CHUNK:
        return np.empty_like(p)
    buffers = _local.__dict__
    buf = buffers.get(p.dtype)
    if buf is None:
        buf = buffers[p.dtype] = np.empty(CHUNK, p.dtype)
    return buf[:p.size]


def _run(params: list, flat: list[bool], body) -> None:
    """``body(i, lo, hi)`` over every slice, the pieces on the backend's threads; a
    flattened slice in runs of at most ``CHUNK`` elements."""
    pieces = _pieces(params, flat)

    def run(piece: list) -> None:
        for i, lo, hi in piece:
            if flat[i]:
                for start in range(lo, hi, CHUNK):
                    body(i, start, min(start + CHUNK, hi))
            else:
                body(i, lo, hi)

    if len(pieces) == 1:
        run(pieces[0])
        return
    parallel_for(lambda a, b: [run(pieces[k]) for k in range(a, b)],
                 [(k, k + 1) for k in range(len(pieces))])


def adam_step_multi(xp: Any, params: list, grads: list, exp_avgs: list, exp_avg_sqs: list,
                    *, step: int, lr: float, beta1: float, beta2: float, eps: float,
                    weight_decay: float, maximize: bool, decoupled: bool) -> bool:
    """Adam/AdamW (no AMSGrad) over a group in place; the values of ``adam_step``."""
    grads = _contiguous(grads)
    if not _group_ok(params, grads, exp_avgs, exp_avg_sqs):
        return False
    bias1 = 1.0 - beta1 ** step
    bias2_sqrt = math.sqrt(1.0 - beta2 ** step)
    step_size = lr / bias1
    views, flat = _views(params, grads, exp_avgs, exp_avg_sqs)

    def body(i: int, lo: int, hi: int) -> None:
        p, g, m, v = (a[lo:hi] for a in views[i]) if flat[i] else views[i]
        t = _scratch(p)
        if maximize:
            g = np.negative(g)
        if weight_decay != 0:
            if decoupled:
                p *= 1.0 - lr * weight_decay
            else:
                wd = np.multiply(p, weight_decay)  # g + weight_decay * param
                wd += g
                g = wd
        np.subtract(g, m, out=t)  # m + (1 - beta1) * (g - m)
        t *= 1.0 - beta1
        m += t
        v *= beta2  # beta2 * v + (1 - beta2) * (g * g)
        np.multiply(g, g, out=t)
        t *= 1.0 - beta2
        v += t
        np.sqrt(v, out=t)  # p - lr / bias1 * m / (sqrt(v) / bias2_sqrt + eps)
        t /= bias2_sqrt
        t += eps
        np.divide(m, t, out=t)
        t *= step_size
        p -= t

    _run(params, flat, body)
    return True


def sgd_step_multi(xp: Any, params: list, grads: list, momentum_buffers: list, *, lr: float,
                   momentum: float, dampening: float, weight_decay: float, nesterov: bool,
                   maximize: bool) -> bool:
    """SGD over a group in place (every momentum buffer made already, when momentum is
    used); the values of the generic ``sgd_step``."""
    bufs = momentum_buffers if momentum != 0 else []
    if momentum != 0 and any(b is None for b in bufs):
        return False
    grads = _contiguous(grads)
    if not _group_ok(params, grads, bufs):
        return False
    views, flat = _views(params, grads, *([bufs] if bufs else []))

    def body(i: int, lo: int, hi: int) -> None:
        p, g, *buf = (a[lo:hi] for a in views[i]) if flat[i] else views[i]
        if maximize:
            g = np.negative(g)
        if weight_decay != 0:
            wd = np.multiply(p, weight_decay)  # g + weight_decay * param
            wd += g
            g = wd
        if momentum != 0:
            buf = buf[0]
            buf *= momentum  # momentum * buf + (1 - dampening) * g
            buf += np.multiply(g, 1.0 - dampening)
            if nesterov:
                g = np.add(g, np.multiply(buf, momentum))  # g + momentum * buf
            else:
                g = buf
        p -= np.multiply(g, lr)  # p - lr * g

    _run(params, flat, body)
    return True
