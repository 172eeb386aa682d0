"""NumPy overrides of the core's extension kernels (the table ``KERNELS``; convolution
in ``conv.py``, max pooling in ``pooling.py``).

Same signatures and results as the generic fallbacks in ``volta_core.ops``; they use
NumPy-only tools (in-place temporaries, bit tricks, ``np.add.at`` scatter). Everything
stays in the input's dtype (no float64 upcasts).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from volta_core.nn import attention as generic_attention
from volta_core.nn import linear as generic_linear
from volta_core.ops import elementwise as generic_elementwise
from volta_core.ops import math as generic_math
from volta_core.ops import nn as generic
from volta_core.ops.softmax import softmax_backward_kernel, softmax_kernel
from volta_core.optim import kernels as optim_generic

from . import rnn
from .conv import conv2d, conv2d_backward
from .namespace import matmul_2d
from .normalization import layer_norm, layer_norm_backward
from .optim import adam_step_multi, sgd_step_multi
from .parallel import by_rows, chunks, parallel_for, split
from .pooling import has_negzero, max_pool2d, max_pool2d_backward
from .rowsum import row_sum


def embedding_backward(xp: Any, grad: Any, indices: Any, *, num_weights: int,
                       padding_idx: int | None = None) -> np.ndarray:
    """Scatter-add rows with ``np.add.at``'s values: each table row sums its gradient rows
    in their order, starting from zero. ``np.add.at`` takes ~10 ns per element; here the
    rows are sorted by index (stably) and added in rounds, round ``r`` adding every
    index's ``r``-th row with one fancy-indexed add (the indices of a round are unique),
    ~6x faster where no index repeats often (token batches)."""
    out = np.zeros((num_weights, grad.shape[1]), dtype=grad.dtype)
    m = indices.shape[0]
    if m >= _ROUNDS_MIN_ROWS and grad.ndim == 2 and indices.ndim == 1:
        order = np.argsort(indices, kind="stable")
        s = indices[order]
        pos = np.arange(m)
        first = np.empty(m, dtype=bool)
        first[0] = True
        np.not_equal(s[1:], s[:-1], out=first[1:])
        rank = pos - np.maximum.accumulate(np.where(first, pos, 0))  # place among equals
        rounds = int(rank.max()) + 1
        if rounds <= _MAX_ROUNDS:
            rows = grad[order]
            for r in range(rounds):
                sel = rank == r
                out[s[sel]] += rows[sel]
            if padding_idx is not None:
                out[padding_idx] = 0
            return out
    np.add.at(out, indices, grad)
    if padding_idx is not None:
        out[padding_idx] = 0
    return out


_ROUNDS_MIN_ROWS = 64  # fewer rows: np.add.at is as fast
_MAX_ROUNDS = 32  # an index repeated more often: np.add.at (each round reads every row)


_ERF_CHUNK = 65536  # elements per thread's block at least

# erf(x) = sign(x) * -expm1(a * T(a)) with a = min(|x|, 4) and T(a) = log(erfc(a)) / a, a
# polynomial of degree 9 (constant term first; T(0) = -2/sqrt(pi), then -2/pi): fitted by
# weighted least squares (Lawson's iterations) on 6000 Chebyshev nodes of [0, 4] against
# math.erfc, each node weighted by what an error there moves float32 erf in ulps. The fit
# is ~100x finer than float32; evaluated in float32, the result is within 2.8 ulp of the
# exact erf (0.4 ulp on average; the two-branch generic kernel: 3.3 and 0.4). Beyond 4,
# float32 erf is +-1 (erfc(3.92) is half an ulp of 1).
_ERF_T = np.array([
    -1.128379225730896, -0.6366198062896729, -0.10277127474546432,
    0.019117696210741997, 0.00025305908638983965, -0.0017993515357375145,
    0.0007406843360513449, -0.00016748032066971064, 2.135445538442582e-05,
    -1.1932864936170517e-06], dtype=np.float32)


def erf(xp: Any, x: Any) -> np.ndarray:
    """float32/float16 ``erf`` as ``-expm1(a * T(a))`` (see ``_ERF_T``): one expm1 and a
    Horner polynomial, ~23 NumPy passes against the generic kernel's ~60 (two branches,
    both evaluated everywhere, then a select). float16 is computed in float32 and rounded
    once, as PyTorch does. One block per thread."""
    if x.dtype not in (np.float32, np.float16) or x.size == 0:
        return generic_math.erf_kernel(xp, x)
    xf = np.ascontiguousarray(x, dtype=np.float32).reshape(-1)
    out = np.empty_like(xf)
    parallel_for(lambda lo, hi: _erf_block(xf[lo:hi], out[lo:hi]),
                 split(xf.size, _ERF_CHUNK))
    return out.reshape(x.shape).astype(x.dtype, copy=False)


def _erf_block(xc: np.ndarray, out: np.ndarray, near_zero: bool = True) -> None:
    """``out = erf(xc)`` for one float32 block (``out`` may be ``xc``).

    ``near_zero=False`` trades the relative accuracy of tiny results for speed: ``exp - 1``
    (1e-7 absolute) in place of ``expm1`` (NumPy's float32 ``expm1`` is scalar, ~8x an
    ``exp``), enough where ``erf`` is added to 1 (GELU).
    """
    a = np.abs(xc)
    np.minimum(a, 4.0, out=a)  # NaN stays NaN
    p = np.multiply(a, _ERF_T[-1])
    p += _ERF_T[-2]
    for c in _ERF_T[-3::-1]:
        p *= a
        p += c
    p *= a
    if near_zero:
        np.expm1(p, out=p)  # -erf(|x|), exact near 0 (no 1 - exp cancellation)
    else:
        np.exp(p, out=p)
        p -= 1.0
    np.copysign(p, xc, out=out)


def gelu_erf(xp: Any, x: Any) -> tuple | None:
    """GELU's forward ``(0.5 * x * (1 + e), e)`` with ``e = erf(x * sqrt(1/2))``: the core's
    operations (with this backend's ``erf``) in place, one block per thread."""
    if type(x) is not np.ndarray or x.dtype not in (np.float32, np.float16) or x.size == 0:
        return None
    xf = np.ascontiguousarray(x).reshape(-1)
    y, e = np.empty_like(xf), np.empty_like(xf)
    half = x.dtype == np.float16

    def run(lo: int, hi: int) -> None:
        xc, ec, yc = xf[lo:hi], e[lo:hi], y[lo:hi]
        u = np.multiply(xc, _SQRT_HALF)  # in x's dtype, as the core's steps
        if half:  # erf in float32, rounded once
            u = u.astype(np.float32)
            _erf_block(u, u, near_zero=False)
            ec[...] = u
        else:
            _erf_block(u, ec, near_zero=False)
        np.multiply(xc, 0.5, out=yc)  # 0.5 * x
        yc *= np.add(ec, 1.0)  # times 1 + e

    parallel_for(run, split(xf.size, _ERF_CHUNK))
    return y.reshape(x.shape), e.reshape(x.shape)


def gelu_erf_backward(xp: Any, x: Any, e: Any, g: Any) -> Any:
    """GELU's backward ``g * (0.5 * (1 + e) + x * pdf(x))`` as the core computes it, one
    block per thread."""
    if not (type(x) is type(e) is type(g) is np.ndarray and x.dtype == e.dtype == g.dtype
            and x.dtype in (np.float32, np.float16) and x.shape == e.shape == g.shape
            and x.size):
        return None
    xf, ef, gf = (np.ascontiguousarray(a).reshape(-1) for a in (x, e, g))
    out = np.empty_like(xf)

    def run(lo: int, hi: int) -> None:
        xc, oc = xf[lo:hi], out[lo:hi]
        pdf = np.multiply(xc, xc)
        pdf *= -0.5
        np.exp(pdf, out=pdf)
        pdf *= _INV_SQRT_2PI
        pdf *= xc
        np.add(ef[lo:hi], 1.0, out=oc)  # 1 + e
        oc *= 0.5
        oc += pdf
        oc *= gf[lo:hi]

    parallel_for(run, split(xf.size, _ERF_CHUNK))
    return out.reshape(x.shape)


_SQRT_HALF = math.sqrt(0.5)  # volta_core.ops.activation's constants
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def adam_step(xp: Any, param: Any, grad: Any, exp_avg: Any, exp_avg_sq: Any,
              max_exp_avg_sq: Any, *, step: int, lr: float, beta1: float, beta2: float,
              eps: float, weight_decay: float, amsgrad: bool, maximize: bool,
              decoupled: bool) -> tuple:
    """The generic Adam/AdamW step (same operations in the same order, so the same
    values) with four new arrays instead of about ten: temporaries are reused in place.
    New arrays are still returned; the inputs are left untouched."""
    if amsgrad or param.dtype not in (np.float32, np.float64) or param.shape == ():
        return optim_generic.adam_step(
            xp, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step=step, lr=lr,
            beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
            maximize=maximize, decoupled=decoupled)
    g = -grad if maximize else grad
    if weight_decay != 0:
        if decoupled:
            param = param * (1.0 - lr * weight_decay)
        else:
            g = g + weight_decay * param
    m = np.subtract(g, exp_avg)  # exp_avg + (1 - beta1) * (g - exp_avg)
    m *= 1.0 - beta1
    m += exp_avg
    v = np.multiply(exp_avg_sq, beta2)  # beta2 * exp_avg_sq + (1 - beta2) * (g * g)
    t = np.multiply(g, g)
    t *= 1.0 - beta2
    v += t
    bias1 = 1.0 - beta1 ** step
    bias2_sqrt = math.sqrt(1.0 - beta2 ** step)
    np.sqrt(v, out=t)  # denom = sqrt(v) / bias2_sqrt + eps
    t /= bias2_sqrt
    t += eps
    np.divide(m, t, out=t)
    t *= lr / bias1
    return np.subtract(param, t), m, v, max_exp_avg_sq


def relu(xp: Any, x: Any) -> np.ndarray:
    """The generic ``where(x < 0, 0, x)`` as ``np.maximum(zeros, x)`` against a block of
    zeros (NumPy's SIMD loop needs two array operands: with a scalar 0 it runs ~2.5x
    slower; a masked ``where`` ~10x). Where this NumPy's ``maximum`` returns its second
    operand on a tie and NaN as is (checked once, :func:`_maximum_keeps_x`), -0.0 and NaN
    keep their bits as in PyTorch; elsewhere an input holding -0.0 takes the generic
    kernel. (One thread: two threads on a memory-bound pass of LeNet's size were
    slower.)"""
    if x.dtype.kind != "f" or x.size == 0 or (not _maximum_keeps_x(x.dtype)
                                               and has_negzero(x)):
        return generic_elementwise.relu_kernel(xp, x)
    zeros = _zeros(x.dtype)
    xf = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(xf)
    for lo, hi in chunks(xf.size, zeros.size):
        np.maximum(zeros[:hi - lo], xf[lo:hi], out=out[lo:hi])
    return out.reshape(x.shape)


_KEEPS_X: dict[np.dtype, bool] = {}


def _maximum_keeps_x(dtype: np.dtype) -> bool:
    """True if ``np.maximum(0, x)`` gives ``x``'s own bits for ``x`` = -0.0 and NaN of
    either sign, in every position of an array (SIMD body, unaligned head and tail)."""
    ok = _KEEPS_X.get(dtype)
    if ok is None:
        bits = np.dtype(f"u{np.dtype(dtype).itemsize}")
        probe = np.array([-0.0, np.nan, -np.nan, 0.0, 1.0, -1.0, 0.5] * 19, dtype)
        want = np.where(probe < 0, 0, probe).astype(dtype)
        ok = all(np.array_equal(np.maximum(np.zeros(len(probe) - s, dtype), probe[s:])
                                .view(bits), want[s:].view(bits)) for s in range(8))
        _KEEPS_X[dtype] = ok
    return ok


_ZEROS: dict[np.dtype, np.ndarray] = {}  # per dtype, read-only after creation


def _zeros(dtype: np.dtype) -> np.ndarray:
    z = _ZEROS.get(dtype)
    if z is None:
        z = _ZEROS[dtype] = np.zeros(1 << 16, dtype)
        z.flags.writeable = False
    return z


def channel_sum(xp: Any, x: Any) -> np.ndarray:
    """The generic ``channel_sum`` (a convolution's bias gradient) by ``np.einsum``'s
    sum-of-products loop over ``(N, C, L)``: 2-3x faster than ``np.sum`` over axes
    ``(0, 2, 3)`` for LeNet's shapes."""
    if x.dtype not in (np.float32, np.float64) or x.ndim < 2:
        return generic.channel_sum(xp, x)
    return np.einsum("ncl->c", x.reshape(x.shape[0], x.shape[1], math.prod(x.shape[2:])))


def relu_backward(xp: Any, grad: Any, y: Any) -> np.ndarray:
    """The generic ``where(y <= 0, 0, grad)`` as a select on the bits: ``grad``'s bits
    AND a mask of all ones where ``y <= 0`` is false (NaN included), zeros elsewhere (+0.0,
    the generic 0). The same bits for every input, ~2x faster than a product with the
    mask plus the checks it needs (NaN, infinities, -0.0)."""
    bits = _INT_OF_FLOAT.get(np.dtype(grad.dtype)) if type(grad) is np.ndarray else None
    if bits is None or type(y) is not np.ndarray or grad.dtype != y.dtype \
            or grad.shape != y.shape:
        return generic_elementwise.relu_backward_kernel(xp, grad, y)
    # 1 where the gradient is 0 (out=: a 0-d compare would give a NumPy scalar)
    m = np.less_equal(y, 0, out=np.empty(y.shape, bool)).view(np.int8).astype(bits)
    m -= 1  # then all zeros there, all ones elsewhere
    m &= (grad if grad.flags.c_contiguous else np.ascontiguousarray(grad)).view(bits)
    return m.view(grad.dtype)


# the signed integer of each float's width (bit selects)
_INT_OF_FLOAT = {np.dtype(np.float16): np.int16, np.dtype(np.float32): np.int32,
                 np.dtype(np.float64): np.int64}


def tanh_backward(xp: Any, grad: Any, y: Any) -> np.ndarray:
    """``grad * (1 - y * y)`` with ``1 - y * y`` rounded once in float64, as PyTorch's CPU
    kernel (a fused multiply-add ``fma(-y, y, 1)``): near ``|y| = 1`` the rounding of
    ``y * y`` is a large part of the result (1e-9 of the gradient at ``tanh(10)``).
    Emulated with error-free transformations: Dekker's split gives the exact error of
    ``y * y``, Knuth's two-sum that of ``1 - y * y``. Other dtypes take the generic
    formula, whose rounding stays inside their own precision."""
    if y.dtype != np.float64 or grad.dtype != np.float64:
        return generic_elementwise.tanh_backward_kernel(xp, grad, y)
    split = y * 134217729.0  # 2**27 + 1
    hi = split - (split - y)
    lo = y - hi
    p = y * y
    p_err = ((hi * hi - p) + 2.0 * hi * lo) + lo * lo  # y * y == p + p_err exactly
    s = 1.0 - p
    back = s - 1.0
    s_err = (1.0 - (s - back)) + (-p - back)  # 1 - p == s + s_err exactly
    return grad * (s + (s_err - p_err))


# -- softmax and cross entropy with one (N, C) temporary -------------------------------------
# The generic kernels' formulas, step for step, in place on one array of their own (each
# fresh (N, C) array costs a page fault per 4 KiB on first touch), with the row sums by
# ``rowsum.row_sum`` (the same values up to the order of summation).

# row-wise kernels over at least this many elements run in row blocks on the threads
_ROW_SPLIT = 1 << 17


def softmax(xp: Any, x: Any, dim: int) -> np.ndarray:
    """The generic ``exp(x - max) / sum`` along ``dim``, in place on ``x - max``; along the
    last dimension with fast row sums, in row blocks over the backend's threads."""
    if x.dtype.kind != "f":
        return softmax_kernel(xp, x, dim)
    if x.size == 0:  # no row to reduce (a zero-length row has no maximum)
        return np.empty_like(x)
    if x.ndim == 0 or dim not in (-1, x.ndim - 1) or x.size == 0 or not _f32_or_f64(x):
        e = np.subtract(x, np.max(x, axis=dim, keepdims=True))
        np.exp(e, out=e)
        e /= np.sum(e, axis=dim, keepdims=True)
        return e
    rows = np.reshape(x, (-1, x.shape[-1]))
    out = np.empty(rows.shape, dtype=x.dtype)

    def run(lo: int, hi: int) -> None:
        e = out[lo:hi]
        np.subtract(rows[lo:hi], np.max(rows[lo:hi], axis=1, keepdims=True), out=e)
        np.exp(e, out=e)
        e /= row_sum(e)[:, None]

    by_rows(run, *rows.shape, _ROW_SPLIT)
    return out.reshape(x.shape)


def softmax_backward(xp: Any, grad: Any, y: Any, dim: int) -> np.ndarray:
    """The generic ``g * y - y * sum(g * y)`` along the last dimension with fast row sums,
    in place on ``g * y``."""
    if not (type(grad) is type(y) is np.ndarray and grad.dtype == y.dtype
            and grad.shape == y.shape and y.ndim and dim in (-1, y.ndim - 1) and y.size
            and _f32_or_f64(y)):
        return softmax_backward_kernel(xp, grad, y, dim)
    c = y.shape[-1]
    ys = np.ascontiguousarray(y).reshape(-1, c)
    gy = np.multiply(grad, y).reshape(-1, c)

    def run(lo: int, hi: int) -> None:
        t = np.multiply(ys[lo:hi], row_sum(gy[lo:hi])[:, None])
        gy[lo:hi] -= t

    # two cheap passes a row: split only large inputs (attention's 262K elements ran
    # 162 us in one call, 211 us in two blocks)
    by_rows(run, *gy.shape, 1 << 19)
    return gy.reshape(y.shape)


def _f32_or_f64(a: np.ndarray) -> bool:  # the fast row sums: float32 and float64 only
    return a.dtype in (np.float32, np.float64)


def linear(xp: Any, x: Any, w: Any, b: Any = None) -> Any:
    """The generic ``x @ w.T + b`` with the bias added in place, in each block of a
    threaded product while the block is in cache (no second pass over a new array).
    float16/bfloat16 run as float32 (BLAS), the bias added before the one rounding, as
    PyTorch's GEMM does (a rounded product plus a bias cancels to nonsense in 2 bytes)."""
    if (type(x) is type(w) is np.ndarray and x.ndim == 2 and w.ndim == 2
            and x.dtype == w.dtype and x.dtype.itemsize == 2 and x.dtype.kind in "fV"):
        f32 = np.float32
        y = linear(xp, x.astype(f32), w.astype(f32), None if b is None else b.astype(f32))
        return y.astype(x.dtype)
    if not (type(x) is type(w) is np.ndarray and x.ndim == 2 and w.ndim == 2
            and x.dtype == w.dtype and x.dtype in (np.float32, np.float64)
            and (b is None or (type(b) is np.ndarray and b.dtype == x.dtype
                               and b.shape == (w.shape[0],)))):
        return generic_linear.linear_kernel(xp, x, w, b)
    return matmul_2d(x, w.T, b)


def zero_masked_rows(xp: Any, scores: Any, p: Any) -> np.ndarray:
    """The generic kernel only where some row may be fully masked: such a row's softmax
    is NaN throughout (``exp(-inf - -inf)``), so a row whose first probability is a
    number is not one. Checking that column skips the row max and the select (~0.4 ms
    per attention call of ``benchmarks/train_step.py``'s small GPT)."""
    if p.size == 0:
        return p
    if (type(p) is not np.ndarray or p.ndim == 0 or np.isnan(p[..., 0]).any()):
        return generic_attention.zero_masked_rows(xp, scores, p)
    return p


def cross_entropy(xp: Any, logits: Any, target: Any, weight: Any = None, *,
                  ignore_index: int = -100, label_smoothing: float = 0.0) -> tuple:
    """The generic kernel without class weights or smoothing: the log-sum-exp in place (in
    row blocks over the threads, fast row sums), and the target's log-probability
    picked by index (+ 0.0, as the generic masked row sum turns -0.0 into +0.0), not
    through an (N, C) mask."""
    if (weight is not None or label_smoothing or logits.dtype.kind != "f"
            or logits.ndim != 2):
        return generic.cross_entropy(xp, logits, target, weight, ignore_index=ignore_index,
                                     label_smoothing=label_smoothing)
    lse = np.empty((logits.shape[0], 1), dtype=logits.dtype)
    fast = _f32_or_f64(logits)

    def run(lo: int, hi: int) -> None:
        x = logits[lo:hi]
        m = np.max(x, axis=1, keepdims=True)
        finite = np.isfinite(m)
        if not finite.all():
            m = np.where(finite, m, np.zeros_like(m))
        z = np.subtract(x, m)
        np.exp(z, out=z)
        np.add(np.log(row_sum(z)[:, None] if fast else np.sum(z, axis=1, keepdims=True)), m,
               out=lse[lo:hi])

    by_rows(run, *logits.shape, _ROW_SPLIT)
    valid = target != ignore_index
    vf = valid.astype(logits.dtype)
    if valid.all():  # every row counts: the masks below change no bit (-1.0 * 1.0 * v)
        picked = (logits[np.arange(logits.shape[0]), target] - lse[:, 0]) + 0.0
        return np.negative(picked), lse, vf
    safe = np.where(valid, target, np.zeros_like(target))
    picked = (logits[np.arange(logits.shape[0]), safe] - lse[:, 0]) + 0.0
    loss = -(1.0 - label_smoothing) * vf * picked
    return np.where(valid, loss, np.zeros_like(loss)), lse, vf


def cross_entropy_backward(xp: Any, g: Any, logits: Any, lse: Any, target: Any,
                           row_w: Any) -> np.ndarray:
    """The generic ``g * row_w * (softmax - onehot)`` with one (N, C) temporary, in row
    blocks over the threads: the onehot is subtracted at the targets only (elsewhere it
    is 0.0, and ``v - 0.0`` is ``v``), so the values are the generic kernel's."""
    if not (isinstance(logits, np.ndarray) and logits.dtype.kind == "f"
            and logits.dtype == lse.dtype == row_w.dtype == g.dtype and logits.ndim == 2):
        return generic.cross_entropy_backward(xp, g, logits, lse, target, row_w)
    valid = row_w != 0
    hit = valid.astype(logits.dtype)
    if valid.all():  # every row counts: the selects below would change nothing
        cols, scale = target, (g * row_w)[:, None]
    else:
        cols = np.where(valid, target, 0)
        scale = np.where(valid, g * row_w, np.zeros_like(row_w))[:, None]
    p = np.empty(logits.shape, dtype=logits.dtype)

    def run(lo: int, hi: int) -> None:
        pc = p[lo:hi]
        np.subtract(logits[lo:hi], lse[lo:hi], out=pc)
        np.exp(pc, out=pc)
        pc[np.arange(hi - lo), cols[lo:hi]] -= hit[lo:hi]
        pc *= scale[lo:hi]

    by_rows(run, *logits.shape, _ROW_SPLIT)
    return p


KERNELS = {
    "softmax": softmax,
    "softmax_backward": softmax_backward,
    "linear": linear,
    "zero_masked_rows": zero_masked_rows,
    "cross_entropy": cross_entropy,
    "cross_entropy_backward": cross_entropy_backward,
    "relu": relu,
    "channel_sum": channel_sum,
    "relu_backward": relu_backward,
    "tanh_backward": tanh_backward,
    "adam_step": adam_step,
    "adam_step_multi": adam_step_multi,
    "sgd_step_multi": sgd_step_multi,
    "erf": erf,
    "gelu_erf": gelu_erf,
    "gelu_erf_backward": gelu_erf_backward,
    "layer_norm": layer_norm,
    "layer_norm_backward": layer_norm_backward,
    "conv2d": conv2d,
    "conv2d_backward": conv2d_backward,
    "max_pool2d": max_pool2d,
    "max_pool2d_backward": max_pool2d_backward,
    "embedding_backward": embedding_backward,
    "lstm_steps": rnn.lstm_steps,
    "lstm_steps_backward": rnn.lstm_steps_backward,
    "rnn_steps": rnn.rnn_steps,
    "rnn_steps_backward": rnn.rnn_steps_backward,
}
