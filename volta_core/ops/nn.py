"""Extension kernels of the neural-network layers, with generic Array-API fallbacks.

Each kernel takes the namespace ``xp`` first, then backend arrays and keyword
parameters, and works on raw arrays (autograd lives in ``volta_core.nn``). A backend
overrides the ones it can do faster (``volta_numpy`` does conv and pooling with
``as_strided`` and one GEMM).

Conventions: images are NCHW; ``pads`` is ``(top, bottom, left, right)``; ``stride`` and
``dilation`` are ``(h, w)`` pairs; conv weights are ``[out, in / groups, kh, kw]``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from ..backend.kernels import fallback

Pair = tuple[int, int]
Pads = tuple[int, int, int, int]


def _zeros(xp: Any, shape: tuple, like: Any, fill: float = 0.0) -> Any:
    dev = getattr(like, "device", None)
    if fill == 0.0:
        return xp.zeros(shape, dtype=like.dtype, device=dev)
    return xp.full(shape, fill, dtype=like.dtype, device=dev)


def pad2d(xp: Any, x: Any, pads: Pads, fill: float = 0.0) -> Any:
    """Pad the last two dims of ``x`` by ``(top, bottom, left, right)`` with ``fill``."""
    pt, pb, pl, pr = pads
    if not (pt or pb or pl or pr):
        return x
    h, w = x.shape[-2:]
    out = _zeros(xp, (*x.shape[:-2], h + pt + pb, w + pl + pr), x, fill)
    out[..., pt:pt + h, pl:pl + w] = x
    return out


def out_size(size: int, k: int, s: int, p_lo: int, p_hi: int, d: int) -> int:
    """Output length of a sliding window over ``size`` (PyTorch's floor formula)."""
    return (size + p_lo + p_hi - d * (k - 1) - 1) // s + 1


def _window(i: int, j: int, out_hw: Pair, stride: Pair, dilation: Pair) -> tuple:
    """The slice of a padded input that kernel tap ``(i, j)`` sees for every output."""
    (ho, wo), (sh, sw), (dh, dw) = out_hw, stride, dilation
    return (..., slice(i * dh, i * dh + sh * (ho - 1) + 1, sh),
            slice(j * dw, j * dw + sw * (wo - 1) + 1, sw))


def im2col(xp: Any, x: Any, kernel: Pair, out_hw: Pair, stride: Pair, dilation: Pair) -> Any:
    """Stack the kernel taps of a padded ``x``: ``(N, C, kh*kw, Ho, Wo)``."""
    kh, kw = kernel
    taps = [x[_window(i, j, out_hw, stride, dilation)] for i in range(kh) for j in range(kw)]
    return xp.stack(taps, axis=2)


def col2im(xp: Any, cols: Any, padded_hw: Pair, kernel: Pair, stride: Pair,
           dilation: Pair) -> Any:
    """Sum ``cols`` ``(N, C, kh*kw, Ho, Wo)`` back into a padded image (im2col's adjoint)."""
    n, c, _, ho, wo = cols.shape
    out = _zeros(xp, (n, c, *padded_hw), cols)
    kh, kw = kernel
    for i in range(kh):
        for j in range(kw):
            win = _window(i, j, (ho, wo), stride, dilation)
            out[win] = out[win] + cols[:, :, i * kw + j, ...]
    return out


def _crop(x: Any, pads: Pads, hw: Pair) -> Any:
    pt, _, pl, _ = pads
    return x[..., pt:pt + hw[0], pl:pl + hw[1]]


def conv_out_hw(x_hw: Pair, kernel: Pair, stride: Pair, pads: Pads, dilation: Pair) -> Pair:
    """Output height and width of a 2-d convolution."""
    return (out_size(x_hw[0], kernel[0], stride[0], pads[0], pads[1], dilation[0]),
            out_size(x_hw[1], kernel[1], stride[1], pads[2], pads[3], dilation[1]))


def choose_conv_algo(x_shape: tuple, w_shape: tuple, out_hw: Pair) -> str:
    """``"auto"``: im2col + GEMM unless its column buffer would be large, then direct."""
    n, c = x_shape[:2]
    kh, kw = w_shape[2:]
    cols = n * c * kh * kw * out_hw[0] * out_hw[1]
    return "im2col" if cols <= (1 << 26) else "direct"


@fallback("conv2d")
def conv2d(xp: Any, x: Any, w: Any, bias: Any = None, *, stride: Pair = (1, 1),
           pads: Pads = (0, 0, 0, 0), dilation: Pair = (1, 1), groups: int = 1,
           algo: str = "auto") -> Any:
    """2-d cross-correlation of ``x`` ``(N, C, H, W)`` with ``w`` ``(O, C/g, kh, kw)``.

    Args:
        algo: ``"im2col"`` (stack the taps, one batched GEMM), ``"direct"`` (accumulate
            one small GEMM per kernel tap, no column buffer) or ``"auto"``.
    """
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    out_hw = conv_out_hw((h, wd), (kh, kw), stride, pads, dilation)
    xpad = pad2d(xp, x, pads)
    g, og = groups, o // groups
    if algo == "auto":
        algo = choose_conv_algo(x.shape, w.shape, out_hw)
    length = out_hw[0] * out_hw[1]
    if algo == "direct":
        wg = xp.reshape(w, (g, og, cg, kh * kw))
        y = None
        for i in range(kh):
            for j in range(kw):
                tap = xp.reshape(xpad[_window(i, j, out_hw, stride, dilation)],
                                 (n, g, cg, length))
                part = xp.matmul(wg[..., i * kw + j], tap)
                y = part if y is None else y + part
    else:
        cols = xp.reshape(im2col(xp, xpad, (kh, kw), out_hw, stride, dilation),
                          (n, g, cg * kh * kw, length))
        y = xp.matmul(xp.reshape(w, (g, og, cg * kh * kw)), cols)
    y = xp.reshape(y, (n, o, *out_hw))
    if bias is not None:
        y = y + xp.reshape(bias, (1, o, 1, 1))
    return y


@fallback("conv2d_backward")
def conv2d_backward(xp: Any, grad: Any, x: Any, w: Any, *, x_shape: tuple,
                    w_shape: tuple | None = None, needs: tuple[bool, bool] = (True, True),
                    stride: Pair = (1, 1),
                    pads: Pads = (0, 0, 0, 0), dilation: Pair = (1, 1),
                    groups: int = 1) -> tuple[Any, Any]:
    """Gradients of :func:`conv2d` w.r.t. its input and weight (None where not needed).

    ``x`` may be None when only the input gradient is wanted; ``x_shape`` gives its shape
    (which also fixes the output size of a transposed convolution).
    """
    n, c, h, wd = x_shape
    o, cg, kh, kw = w_shape or w.shape
    g, og = groups, o // groups
    ho, wo = grad.shape[2:]
    length = ho * wo
    padded = (h + pads[0] + pads[1], wd + pads[2] + pads[3])
    g4 = xp.reshape(grad, (n, g, og, length))
    gx = gw = None
    if needs[0]:
        wg = xp.reshape(w, (g, og, cg * kh * kw))
        dcols = xp.matmul(xp.matrix_transpose(wg), g4)  # (N, G, Cg*K, L)
        dcols = xp.reshape(dcols, (n, c, kh * kw, ho, wo))
        gx = _crop(col2im(xp, dcols, padded, (kh, kw), stride, dilation), pads, (h, wd))
    if needs[1]:
        cols = im2col(xp, pad2d(xp, x, pads), (kh, kw), (ho, wo), stride, dilation)
        cols = xp.reshape(cols, (n, g, cg * kh * kw, length))
        gw = xp.sum(xp.matmul(g4, xp.matrix_transpose(cols)), axis=0)
        gw = xp.reshape(gw, (o, cg, kh, kw))
    return gx, gw


def pool_out_size(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """Output length of a pooling window (PyTorch's rule, incl. ``ceil_mode``)."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


@functools.lru_cache(maxsize=1024)
def _pool_geometry(x_hw: Pair, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair,
                   ceil_mode: bool) -> tuple[Pair, Pads]:
    """Output size and the padding (extra bottom/right for ``ceil_mode``) of a pool (tuple
    arguments: made once per geometry, which every step repeats)."""
    out = []
    pads = []
    for ax in range(2):
        o = pool_out_size(x_hw[ax], kernel[ax], stride[ax], padding[ax], dilation[ax],
                          ceil_mode)
        need = (o - 1) * stride[ax] + dilation[ax] * (kernel[ax] - 1) + 1
        hi = max(need - x_hw[ax] - padding[ax], padding[ax])
        out.append(o)
        pads += [padding[ax], hi]
    return (out[0], out[1]), (pads[0], pads[1], pads[2], pads[3])


@fallback("max_pool2d")
def max_pool2d(xp: Any, x: Any, *, kernel: Pair, stride: Pair, padding: Pair = (0, 0),
               dilation: Pair = (1, 1), ceil_mode: bool = False) -> tuple[Any, Any]:
    """Max over windows of ``x`` ``(N, C, H, W)``; returns ``(values, tap index)``.

    The tap index (``i * kw + j`` of the winning kernel tap, an int32 array) is what
    ``max_pool2d_backward`` needs. As in PyTorch, the first maximum wins and a NaN
    propagates: the window's last NaN wins.
    """
    out_hw, pads = _pool_geometry(x.shape[2:], kernel, stride, padding, dilation, ceil_mode)
    xpad = pad2d(xp, x, pads, -float("inf"))
    best = idx = None
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            v = xpad[_window(i, j, out_hw, stride, dilation)]
            if best is None:
                best = v
                idx = xp.zeros(v.shape, dtype=xp.int32, device=getattr(v, "device", None))
                continue
            better = xp.logical_or(v > best, xp.isnan(v))
            best = xp.where(better, v, best)
            idx = xp.where(better, xp.asarray(i * kernel[1] + j, dtype=xp.int32), idx)
    if any(pads):
        first = first_real_tap(xp, out_hw, kernel, stride, padding, dilation,
                               device=getattr(best, "device", None))
        idx = xp.where(best == -float("inf"), first, idx)
    return best, idx


def first_real_tap(xp: Any, out_hw: Pair, kernel: Pair, stride: Pair, padding: Pair,
                   dilation: Pair, device: Any = None) -> Any:
    """The first tap of each window that lies inside the input, ``(Ho, Wo)`` int32.

    PyTorch's scan starts there, so a window whose real elements are all -inf indexes
    that element; a scan from tap 0 would pick the padding (index -1, gradient lost).
    """
    def first(ax: int) -> list[int]:
        # the smallest tap t with o * s - p + t * d >= 0
        return [max(0, -(-(padding[ax] - o * stride[ax]) // dilation[ax]))
                for o in range(out_hw[ax])]

    rows = xp.reshape(xp.asarray(first(0), dtype=xp.int32, device=device), (-1, 1))
    cols = xp.reshape(xp.asarray(first(1), dtype=xp.int32, device=device), (1, -1))
    return rows * kernel[1] + cols


@fallback("max_pool2d_backward")
def max_pool2d_backward(xp: Any, grad: Any, idx: Any, *, x_shape: tuple, kernel: Pair,
                        stride: Pair, padding: Pair = (0, 0), dilation: Pair = (1, 1),
                        ceil_mode: bool = False) -> Any:
    """Route each output gradient to the input element that won its window."""
    out_hw, pads = _pool_geometry(x_shape[2:], kernel, stride, padding, dilation, ceil_mode)
    padded = (x_shape[2] + pads[0] + pads[1], x_shape[3] + pads[2] + pads[3])
    zero = xp.asarray(0, dtype=grad.dtype)
    taps = [xp.where(idx == k, grad, zero) for k in range(kernel[0] * kernel[1])]
    cols = xp.stack(taps, axis=2)
    return _crop(col2im(xp, cols, padded, kernel, stride, dilation), pads, x_shape[2:])


def _avg_divisor(xp: Any, like: Any, x_hw: Pair, out_hw: Pair, pads: Pads, kernel: Pair,
                 stride: Pair, padding: Pair, count_include_pad: bool) -> Any:
    """Per-output element count of an average pool, shape ``(Ho, Wo)``."""
    h, w = x_hw
    if count_include_pad:  # padding counts, the ceil_mode overhang does not
        ones = _zeros(xp, (h + 2 * padding[0], w + 2 * padding[1]), like, 1.0)
        ones = pad2d(xp, ones, (0, pads[1] - padding[0], 0, pads[3] - padding[1]))
    else:
        ones = pad2d(xp, _zeros(xp, (h, w), like, 1.0), pads)
    total = None
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            v = ones[_window(i, j, out_hw, stride, (1, 1))]
            total = v if total is None else total + v
    return total


@fallback("avg_pool2d")
def avg_pool2d(xp: Any, x: Any, *, kernel: Pair, stride: Pair, padding: Pair = (0, 0),
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Any:
    """Mean over windows of ``x`` ``(N, C, H, W)``."""
    out_hw, pads = _pool_geometry(x.shape[2:], kernel, stride, padding, (1, 1), ceil_mode)
    xpad = pad2d(xp, x, pads)
    total = None
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            v = xpad[_window(i, j, out_hw, stride, (1, 1))]
            total = v if total is None else total + v
    if divisor_override:
        return total / divisor_override
    return total / _avg_divisor(xp, x, x.shape[2:], out_hw, pads, kernel, stride, padding,
                                count_include_pad)


@fallback("avg_pool2d_backward")
def avg_pool2d_backward(xp: Any, grad: Any, *, x_shape: tuple, kernel: Pair, stride: Pair,
                        padding: Pair = (0, 0), ceil_mode: bool = False,
                        count_include_pad: bool = True,
                        divisor_override: int | None = None) -> Any:
    """Spread each output gradient evenly over its window."""
    out_hw, pads = _pool_geometry(x_shape[2:], kernel, stride, padding, (1, 1), ceil_mode)
    if divisor_override:
        g = grad / divisor_override
    else:
        g = grad / _avg_divisor(xp, grad, x_shape[2:], out_hw, pads, kernel, stride, padding,
                                count_include_pad)
    k = kernel[0] * kernel[1]
    cols = xp.broadcast_to(xp.expand_dims(g, axis=2), (*g.shape[:2], k, *g.shape[2:]))
    padded = (x_shape[2] + pads[0] + pads[1], x_shape[3] + pads[2] + pads[3])
    return _crop(col2im(xp, cols, padded, kernel, (stride[0], stride[1]), (1, 1)), pads,
                 x_shape[2:])


@fallback("embedding_backward")
def embedding_backward(xp: Any, grad: Any, indices: Any, *, num_weights: int,
                       padding_idx: int | None = None) -> Any:
    """Sum the rows of ``grad`` ``(M, D)`` into a ``(num_weights, D)`` table by ``indices``.

    The fallback multiplies by a one-hot matrix (no scatter in the standard); backends
    override it with a scatter-add.
    """
    dev = getattr(grad, "device", None)
    classes = xp.arange(num_weights, dtype=indices.dtype, device=dev)
    onehot = xp.astype(xp.expand_dims(indices, axis=1) == classes, grad.dtype)
    if padding_idx is not None:
        onehot = onehot * xp.astype(classes != padding_idx, grad.dtype)
    return xp.matmul(xp.matrix_transpose(onehot), grad)


def _logsumexp_rows(xp: Any, x: Any) -> Any:
    m = xp.max(x, axis=1, keepdims=True)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    return xp.log(xp.sum(xp.exp(x - m), axis=1, keepdims=True)) + m


@fallback("cross_entropy_backward")
def cross_entropy_backward(xp: Any, g: Any, logits: Any, lse: Any, target: Any,
                           row_w: Any) -> Any:
    """Gradient of :func:`cross_entropy`'s per-row loss (no class weights, no smoothing)
    for the row gradients ``g`` ``(N,)``: ``g * row_w * (softmax(logits) - onehot)``;
    rows with weight 0 (ignored) get 0 even where ``g`` is inf or NaN."""
    n, c = logits.shape
    dev = getattr(logits, "device", None)
    gw = xp.where(row_w != 0, g * row_w, xp.zeros_like(row_w))
    onehot = xp.expand_dims(target, axis=1) == xp.arange(c, dtype=target.dtype, device=dev)
    p = xp.exp(logits - lse)
    return xp.expand_dims(gw, axis=1) * (p - xp.astype(onehot, logits.dtype))


@fallback("cross_entropy")
def cross_entropy(xp: Any, logits: Any, target: Any, weight: Any = None, *,
                  ignore_index: int = -100, label_smoothing: float = 0.0) -> tuple:
    """Per-row cross entropy of ``logits`` ``(N, C)`` against class indices ``(N,)``.

    Returns ``(loss, lse, row_weight)``: the weighted loss of each row (0 where ignored),
    the rows' log-sum-exp ``(N, 1)``, and each row's class weight (0 where ignored),
    whose sum is the denominator of the mean.
    """
    n, c = logits.shape
    lse = _logsumexp_rows(xp, logits)
    logp = logits - lse
    dev = getattr(logits, "device", None)
    valid = target != ignore_index
    safe = xp.where(valid, target, xp.zeros_like(target))
    onehot = xp.expand_dims(safe, axis=1) == xp.arange(c, dtype=target.dtype, device=dev)
    zero = xp.asarray(0, dtype=logits.dtype)
    picked = xp.sum(xp.where(onehot, logp, zero), axis=1)
    vf = xp.astype(valid, logits.dtype)
    if weight is None:
        row_w = vf
        smooth = xp.sum(logp, axis=1)
    else:
        row_w = xp.sum(xp.where(onehot, weight, zero), axis=1) * vf
        smooth = xp.sum(logp * weight, axis=1)
    loss = -(1.0 - label_smoothing) * row_w * picked
    if label_smoothing:
        loss = loss - (label_smoothing / c) * smooth * vf
    # an ignored row is 0 even when its logits hold -inf (0 * -inf would be NaN)
    return xp.where(valid, loss, xp.zeros_like(loss)), lse, row_w


@fallback("layer_norm")
def layer_norm(xp: Any, x: Any, weight: Any = None, bias: Any = None, *, ndim: int = 1,
               eps: float = 1e-5) -> tuple[Any, Any, Any]:
    """Normalise over the last ``ndim`` dims; returns ``(y, mean, rstd)``."""
    axes = tuple(range(x.ndim - ndim, x.ndim))
    mean = xp.mean(x, axis=axes, keepdims=True)
    xc = x - mean
    rstd = 1.0 / xp.sqrt(xp.mean(xc * xc, axis=axes, keepdims=True) + eps)
    y = xc * rstd
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y, mean, rstd


@fallback("dropout_mask")
def dropout_mask(xp: Any, uniform: Any, *, p: float) -> Any:
    """The scaled keep-mask of dropout from uniform samples: ``(u >= p) / (1 - p)``."""
    keep = xp.astype(uniform >= p, uniform.dtype)
    return keep * (1.0 / (1.0 - p))


def _dropout_math(xp: Any, x: Any) -> Any:
    """The dtype dropout multiplies in: float32 for float16/bfloat16 (PyTorch's opmath)."""
    return x.dtype if x.dtype in (xp.float32, xp.float64) else xp.float32


@fallback("dropout_forward")
def dropout_forward(xp: Any, x: Any, uniform: Any, *, p: float) -> tuple:
    """Dropout of ``x`` from uniform samples of its shape: ``(y, keep)`` with ``keep =
    uniform >= p`` (bool) and ``y = x * keep / (1 - p)``, multiplied in float32 for
    float16/bfloat16 and rounded once, as PyTorch's dropout kernels."""
    keep = uniform >= p
    return dropout_backward(xp, x, keep, p=p), keep


@fallback("dropout_backward")
def dropout_backward(xp: Any, grad: Any, keep: Any, *, p: float) -> Any:
    """The gradient of :func:`dropout_forward`: ``grad * keep / (1 - p)`` (same math)."""
    dt = _dropout_math(xp, grad)
    mask = xp.astype(keep, dt) * (1.0 / (1.0 - p))
    out = (grad if dt == grad.dtype else xp.astype(grad, dt)) * mask
    return out if dt == grad.dtype else xp.astype(out, grad.dtype)


@fallback("weighted_mean")
def weighted_mean(xp: Any, values: Any, weights: Any) -> tuple[Any, Any]:
    """``(sum(values) / sum(weights), sum(weights))`` of two 1-d float arrays of one dtype,
    as 0-d arrays: the mean of a loss whose rows carry weights (``cross_entropy``)."""
    total = xp.sum(weights)
    return xp.divide(xp.sum(values), total), total


@fallback("sum_leading")
def sum_leading(xp: Any, x: Any) -> Any:
    """Sum a 2-d ``x`` ``(M, N)`` over its rows: ``(N,)`` (bias gradients).

    A backend may do this as a GEMV, which reads rows coalesced.
    """
    return xp.sum(x, axis=0)


@fallback("channel_sum")
def channel_sum(xp: Any, x: Any) -> Any:
    """Sum an ``(N, C, *spatial)`` ``x`` over every dim but the channels: ``(C,)`` (a
    convolution's bias gradient)."""
    return xp.sum(x, axis=(0, *range(2, x.ndim)))


@fallback("layer_norm_backward")
def layer_norm_backward(xp: Any, grad: Any, x: Any, weight: Any, mean: Any, rstd: Any, *,
                        ndim: int = 1, needs: tuple = (True, True, True)) -> tuple:
    """Gradients of :func:`layer_norm` w.r.t. ``x``, ``weight`` and ``bias``.

    ``mean`` and ``rstd`` are the statistics the forward returned (trailing dims of size 1).
    Entries not asked for in ``needs`` are None.
    """
    axes = tuple(range(x.ndim - ndim, x.ndim))
    lead = tuple(range(x.ndim - ndim))
    xhat = (x - mean) * rstd
    gx = gw = gb = None
    if needs[0]:
        gh = grad * weight if weight is not None else grad
        gx = rstd * (gh - xp.mean(gh, axis=axes, keepdims=True)
                     - xhat * xp.mean(gh * xhat, axis=axes, keepdims=True))
    if needs[1]:
        gw = xp.sum(grad * xhat, axis=lead) if lead else grad * xhat
    if needs[2]:
        gb = xp.sum(grad, axis=lead) if lead else grad
    return gx, gw, gb


@fallback("batch_norm")
def batch_norm(xp: Any, x: Any, weight: Any = None, bias: Any = None, *,
               eps: float = 1e-5) -> tuple:
    """Training batch norm of ``x`` ``(N, C, *)`` over all dims but 1.

    Returns ``(y, mean, var, rstd)``; the statistics have shape ``(C,)`` and ``var`` is
    the biased batch variance. A float16/bfloat16 ``x`` takes float32 (or no) ``weight``
    and ``bias``: it is normalised in float32, with float32 statistics, and ``y`` has
    ``x``'s dtype (PyTorch's mixed-dtype batch norm).
    """
    if x.dtype not in (xp.float32, xp.float64):
        y, mean, var, rstd = batch_norm(xp, xp.astype(x, xp.float32), weight, bias, eps=eps)
        return xp.astype(y, x.dtype), mean, var, rstd
    dims = (0,) + tuple(range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    mean = xp.mean(x, axis=dims, keepdims=True)
    xc = x - mean
    var = xp.mean(xc * xc, axis=dims, keepdims=True)
    rstd = 1.0 / xp.sqrt(var + eps)
    y = xc * rstd
    if weight is not None:
        y = y * xp.reshape(weight, shape)
    if bias is not None:
        y = y + xp.reshape(bias, shape)
    c = x.shape[1]
    return y, xp.reshape(mean, (c,)), xp.reshape(var, (c,)), xp.reshape(rstd, (c,))


@fallback("batch_norm_running")
def batch_norm_running(xp: Any, running_mean: Any, running_var: Any, mean: Any, var: Any, *,
                       momentum: float, n: int) -> tuple:
    """New running statistics of training batch norm: ``(1 - momentum) * running +
    momentum * batch_stat``, the batch variance made unbiased (``n`` values per channel).

    Either running buffer may be None (its entry in the result is None); ``mean`` and
    ``var`` are cast to the buffer's dtype first.
    """
    out = []
    for buf, value, factor in ((running_mean, mean, momentum),
                               (running_var, var, momentum * n / (n - 1))):
        if buf is None:
            out.append(None)
            continue
        value = value if value.dtype == buf.dtype else xp.astype(value, buf.dtype)
        out.append(buf * (1.0 - momentum) + value * factor)
    return tuple(out)


@fallback("batch_norm_train")
def batch_norm_train(xp: Any, x: Any, weight: Any = None, bias: Any = None,
                     running_mean: Any = None, running_var: Any = None, *, eps: float = 1e-5,
                     momentum: float = 0.1) -> tuple:
    """:func:`batch_norm` and :func:`batch_norm_running` in one call (a backend may fuse
    them): ``(y, mean, var, rstd, new_running_mean, new_running_var)``, the new running
    statistics None where the buffer is None."""
    y, mean, var, rstd = batch_norm(xp, x, weight, bias, eps=eps)
    if running_mean is None and running_var is None:
        return y, mean, var, rstd, None, None
    n = math.prod(x.shape) // x.shape[1]
    return (y, mean, var, rstd, *batch_norm_running(xp, running_mean, running_var, mean, var,
                                                    momentum=momentum, n=n))


@fallback("batch_norm_backward")
def batch_norm_backward(xp: Any, grad: Any, x: Any, weight: Any, mean: Any, rstd: Any, *,
                        needs: tuple = (True, True, True)) -> tuple:
    """Gradients of training :func:`batch_norm` w.r.t. ``x``, ``weight`` and ``bias`` (for a
    float16/bfloat16 ``x``: computed in float32, the input gradient in ``x``'s dtype)."""
    if x.dtype not in (xp.float32, xp.float64):
        gx, gw, gb = batch_norm_backward(xp, xp.astype(grad, xp.float32),
                                         xp.astype(x, xp.float32), weight, mean, rstd,
                                         needs=needs)
        return (None if gx is None else xp.astype(gx, x.dtype)), gw, gb
    dims = (0,) + tuple(range(2, x.ndim))
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    m = 1
    for d in dims:
        m *= x.shape[d]
    r = xp.reshape(rstd, shape)
    xhat = (x - xp.reshape(mean, shape)) * r
    sg = xp.sum(grad, axis=dims)
    sgx = xp.sum(grad * xhat, axis=dims)
    gx = None
    if needs[0]:
        scale = r if weight is None else r * xp.reshape(weight, shape)
        gx = scale * (grad - xp.reshape(sg, shape) / m - xhat * xp.reshape(sgx, shape) / m)
    return gx, (sgx if needs[1] else None), (sg if needs[2] else None)


__all__: list[str] = []
