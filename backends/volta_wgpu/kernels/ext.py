"""Volta extension kernels (``WgpuBackend.kernels``) with the core's exact signatures.

Each function takes the namespace ``xp`` first, like the core's generic fallback of the
same name, runs a WGSL kernel where this backend has one for the dtypes involved, and
otherwise calls that fallback.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..array import Array
from . import conv as C
from . import optim as O
from . import pool as P
from . import rownorm as R
from . import scatter as S


def generic(name: str) -> Callable:
    """The core's generic fallback of kernel ``name``."""
    import volta_core.ops.indexing  # noqa: F401 - these modules register the fallbacks
    import volta_core.ops.nn  # noqa: F401
    import volta_core.ops.softmax  # noqa: F401
    import volta_core.optim.kernels  # noqa: F401
    from volta_core.backend import get_fallback

    return get_fallback(name)


def _f32(*arrays: Any) -> bool:
    return O.supported(*arrays)


def _out(size: int, k: int, s: int, lo: int, hi: int, d: int) -> int:
    return (size + lo + hi - d * (k - 1) - 1) // s + 1


def conv2d(xp: Any, x: Any, w: Any, bias: Any = None, *, stride=(1, 1), pads=(0, 0, 0, 0),
           dilation=(1, 1), groups: int = 1, algo: str = "auto") -> Any:
    """2-d cross-correlation (implicit GEMM)."""
    if not C.supported(x, w, bias) or x.dtype is not w.dtype:
        return generic("conv2d")(xp, x, w, bias, stride=stride, pads=pads,
                                 dilation=dilation, groups=groups, algo=algo)
    kh, kw = w.shape[2:]
    out_hw = (_out(x.shape[2], kh, stride[0], pads[0], pads[1], dilation[0]),
              _out(x.shape[3], kw, stride[1], pads[2], pads[3], dilation[1]))
    return C.conv2d(x, w, bias, tuple(stride), tuple(pads), tuple(dilation), groups, out_hw)


def conv2d_backward(xp: Any, grad: Any, x: Any, w: Any, *, x_shape: tuple,
                    w_shape: tuple | None = None, needs=(True, True), stride=(1, 1),
                    pads=(0, 0, 0, 0), dilation=(1, 1), groups: int = 1) -> tuple:
    """Gradients of :func:`conv2d` w.r.t. input and weight (None where not needed)."""
    w_shape = tuple(w_shape or w.shape)
    if not C.supported(grad, x, w):
        return generic("conv2d_backward")(xp, grad, x, w, x_shape=x_shape, w_shape=w_shape,
                                          needs=needs, stride=stride, pads=pads,
                                          dilation=dilation, groups=groups)
    args = (tuple(stride), tuple(pads), tuple(dilation), groups)
    gx = C.conv2d_grad_input(grad, w, tuple(x_shape), *args) if needs[0] else None
    gw = C.conv2d_grad_weight(grad, x, w_shape, *args) if needs[1] else None
    return gx, gw


def _pool_geometry(x_hw, kernel, stride, padding, dilation, ceil_mode) -> tuple:
    from volta_core.ops.nn import _pool_geometry
    return _pool_geometry(tuple(x_hw), kernel, stride, padding, dilation, ceil_mode)


def _whole(hw: tuple, kernel, padding, dilation=(1, 1)) -> bool:
    """Whether one window covers the whole unpadded ``hw`` input (global pooling)."""
    return (tuple(kernel) == tuple(hw) and tuple(padding) == (0, 0)
            and tuple(dilation) == (1, 1))


def _check_loops(op: str, x: Any, loops: int) -> None:
    """Refuse what a CPU adapter would get wrong: llvmpipe ends a shader invocation after
    65535 loop iterations in all, silently, and one thread walks a window's taps."""
    if loops > P.CPU_ADAPTER_MAX_TAPS and not x.engine.is_gpu:
        from volta_core.errors import VoltaError
        raise VoltaError(
            f"{op}: a window that long on input {tuple(x.shape)} takes more loop iterations "
            f"({loops}) than a CPU adapter ({x.engine.name}) runs in one shader invocation "
            f"({P.CPU_ADAPTER_MAX_TAPS}); use a smaller window, a GPU adapter, or the cpu "
            "device")


def _covering(kernel, stride, dilation=(1, 1)) -> int:
    """Windows that cover one input pixel at most (a backward thread walks them)."""
    return (-(-(dilation[0] * (kernel[0] - 1) + 1) // stride[0])
            * -(-(dilation[1] * (kernel[1] - 1) + 1) // stride[1]))


def _global_max(xp: Any, x: Any) -> tuple[Any, Any]:
    """Max pooling with one window over the whole map, by reductions: PyTorch's winner
    (the first maximum, or with NaNs the last NaN) as the pool kernel picks it."""
    n, c, h, w = x.shape
    flat = xp.reshape(x, (n, c, h * w))
    first = xp.argmax(flat, axis=2, keepdims=True)  # the first maximum, or first NaN
    nan = xp.isnan(flat)
    last = (h * w - 1) - xp.argmax(xp.astype(xp.flip(nan, axis=2), xp.int32), axis=2,
                                   keepdims=True)
    idx = xp.where(xp.any(nan, axis=2, keepdims=True), last, first)
    y = xp.take_along_axis(flat, idx, axis=2)
    return xp.reshape(y, (n, c, 1, 1)), xp.reshape(xp.astype(idx, xp.int32), (n, c, 1, 1))


def max_pool2d(xp: Any, x: Any, *, kernel, stride, padding=(0, 0), dilation=(1, 1),
               ceil_mode: bool = False) -> tuple[Any, Any]:
    """Max pooling: ``(values, tap index)``."""
    if not C.supported(x):
        return generic("max_pool2d")(xp, x, kernel=kernel, stride=stride, padding=padding,
                                     dilation=dilation, ceil_mode=ceil_mode)
    if _whole(x.shape[2:], kernel, padding, dilation):  # global: reductions, not a walk
        return _global_max(xp, x)
    _check_loops("max_pool2d", x, kernel[0] * kernel[1] + kernel[0])
    out_hw, _ = _pool_geometry(x.shape[2:], kernel, stride, padding, dilation, ceil_mode)
    return P.run("max", x, x.shape, out_hw, tuple(kernel), tuple(stride), tuple(padding),
                 tuple(dilation))


def max_pool2d_backward(xp: Any, grad: Any, idx: Any, *, x_shape: tuple, kernel, stride,
                        padding=(0, 0), dilation=(1, 1), ceil_mode: bool = False) -> Any:
    """Route each output gradient to the input element that won its window."""
    if not C.supported(grad):
        return generic("max_pool2d_backward")(xp, grad, idx, x_shape=x_shape, kernel=kernel,
                                              stride=stride, padding=padding,
                                              dilation=dilation, ceil_mode=ceil_mode)
    out_hw = tuple(grad.shape[2:])
    _check_loops("max_pool2d backward", grad, _covering(kernel, stride, dilation))
    return P.run("max_bwd", grad, tuple(x_shape), out_hw, tuple(kernel), tuple(stride),
                 tuple(padding), tuple(dilation), idx=idx)


def avg_pool2d(xp: Any, x: Any, *, kernel, stride, padding=(0, 0), ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Any:
    """Average pooling."""
    if not C.supported(x):
        return generic("avg_pool2d")(xp, x, kernel=kernel, stride=stride, padding=padding,
                                     ceil_mode=ceil_mode, count_include_pad=count_include_pad,
                                     divisor_override=divisor_override)
    if _whole(x.shape[2:], kernel, padding) and not divisor_override:
        # global: a mean over H and W (split reductions, not one thread per window)
        return xp.mean(x, axis=(2, 3), keepdims=True)
    # the window's taps, then its divisor's count of rows and columns
    _check_loops("avg_pool2d", x, kernel[0] * kernel[1] + 2 * kernel[0] + kernel[1])
    out_hw, _ = _pool_geometry(x.shape[2:], kernel, stride, padding, (1, 1), ceil_mode)
    return P.run("avg", x, x.shape, out_hw, tuple(kernel), tuple(stride), tuple(padding),
                 count_include_pad=count_include_pad, divisor_override=divisor_override)


def avg_pool2d_backward(xp: Any, grad: Any, *, x_shape: tuple, kernel, stride,
                        padding=(0, 0), ceil_mode: bool = False,
                        count_include_pad: bool = True,
                        divisor_override: int | None = None) -> Any:
    """Spread each output gradient evenly over its window."""
    if not C.supported(grad):
        return generic("avg_pool2d_backward")(
            xp, grad, x_shape=x_shape, kernel=kernel, stride=stride, padding=padding,
            ceil_mode=ceil_mode, count_include_pad=count_include_pad,
            divisor_override=divisor_override)
    if _whole(tuple(x_shape[2:]), kernel, padding) and not divisor_override:
        # global: every pixel gets its map's gradient over the pixel count
        from ..namespace.elementwise import contiguous_copy
        g = xp.divide(grad, float(x_shape[2] * x_shape[3]))
        return contiguous_copy(xp.broadcast_to(g, tuple(x_shape)))
    _check_loops("avg_pool2d backward", grad,
                 _covering(kernel, stride) * (kernel[0] + kernel[1] + 2))
    return P.run("avg_bwd", grad, tuple(x_shape), tuple(grad.shape[2:]), tuple(kernel),
                 tuple(stride), tuple(padding), count_include_pad=count_include_pad,
                 divisor_override=divisor_override)


def scatter_add(xp: Any, target: Any, dim: int, index: Any, src: Any) -> Any:
    """``target`` with ``src`` added at ``index`` along ``dim`` (torch.scatter_add)."""
    if not S.supported(target, src) or not isinstance(index, Array) \
            or index.dtype.kind not in "iu":
        return generic("scatter_add")(xp, target, dim, index, src)
    return S.scatter_add(target, dim % max(target.ndim, 1), index, src)


def embedding_backward(xp: Any, grad: Any, indices: Any, *, num_weights: int,
                       padding_idx: int | None = None) -> Any:
    """Sum the rows of ``grad`` into a ``(num_weights, D)`` table by ``indices``."""
    if not _f32(grad) or grad.ndim != 2 or not isinstance(indices, Array) \
            or indices.ndim != 1:
        return generic("embedding_backward")(xp, grad, indices, num_weights=num_weights,
                                             padding_idx=padding_idx)
    return S.embedding_backward(grad, indices, num_weights, padding_idx)


def cross_entropy(xp: Any, logits: Any, target: Any, weight: Any = None, *,
                  ignore_index: int = -100, label_smoothing: float = 0.0) -> tuple:
    """Fused log-softmax + NLL per row: ``(loss, lse, row_weight)``."""
    if not _f32(logits, weight) or logits.ndim != 2 or not isinstance(target, Array) \
            or target.dtype.kind not in "iu":
        return generic("cross_entropy")(xp, logits, target, weight, ignore_index=ignore_index,
                                        label_smoothing=label_smoothing)
    return R.cross_entropy(logits, target, weight, ignore_index, label_smoothing)


def layer_norm(xp: Any, x: Any, weight: Any = None, bias: Any = None, *, ndim: int = 1,
               eps: float = 1e-5) -> tuple[Any, Any, Any]:
    """Normalise over the last ``ndim`` dims: ``(y, mean, rstd)``."""
    norm = tuple(x.shape[x.ndim - ndim:]) if isinstance(x, Array) else ()
    ok = _f32(x, weight, bias) and all(a is None or tuple(a.shape) == norm
                                       for a in (weight, bias))
    if not ok:
        return generic("layer_norm")(xp, x, weight, bias, ndim=ndim, eps=eps)
    return R.layer_norm(x, weight, bias, ndim, eps)


def layer_norm_backward(xp: Any, grad: Any, x: Any, weight: Any, mean: Any, rstd: Any, *,
                        ndim: int = 1, needs: tuple = (True, True, True)) -> tuple:
    """Gradients of ``layer_norm`` (see ``volta_core.ops.nn.layer_norm_backward``): the
    input's from one fused row kernel; the weight's and bias's are column sums of fused
    elementwise chains."""
    if not (needs[0] and _f32(grad, x, weight, mean, rstd) and grad.shape == x.shape):
        return generic("layer_norm_backward")(xp, grad, x, weight, mean, rstd, ndim=ndim,
                                              needs=needs)
    gx = R.layer_norm_dx(grad, x, weight, mean, rstd, ndim)
    gw = gb = None
    if needs[1] or needs[2]:
        _, gw, gb = generic("layer_norm_backward")(xp, grad, x, weight, mean, rstd,
                                                   ndim=ndim, needs=(False, *needs[1:]))
    return gx, gw, gb


def softmax_backward(xp: Any, grad: Any, y: Any, dim: int) -> Any:
    """Softmax's input gradient (see ``volta_core.ops.softmax``), one pass per row."""
    from .softmax import softmax_backward as fused
    out = fused(grad, y, dim) if isinstance(grad, Array) and isinstance(y, Array) else None
    return out if out is not None else generic("softmax_backward")(xp, grad, y, dim)


def sgd_step(xp: Any, param: Any, grad: Any, momentum_buffer: Any, *, lr: float,
             momentum: float, dampening: float, weight_decay: float, nesterov: bool,
             maximize: bool) -> tuple:
    """Fused SGD step (see ``volta_core.optim.kernels.sgd_step``)."""
    hp = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
              nesterov=nesterov, maximize=maximize)
    if not _f32(param, grad, momentum_buffer):
        return generic("sgd_step")(xp, param, grad, momentum_buffer, **hp)
    return O.sgd_step(param, grad, momentum_buffer, **hp)


def adam_step(xp: Any, param: Any, grad: Any, exp_avg: Any, exp_avg_sq: Any,
              max_exp_avg_sq: Any, *, step: int, lr: float, beta1: float, beta2: float,
              eps: float, weight_decay: float, amsgrad: bool, maximize: bool,
              decoupled: bool) -> tuple:
    """Fused Adam/AdamW step (see ``volta_core.optim.kernels.adam_step``)."""
    hp = dict(step=step, lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
              amsgrad=amsgrad, maximize=maximize, decoupled=decoupled)
    if not _f32(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq) or \
            (amsgrad and max_exp_avg_sq is None):
        return generic("adam_step")(xp, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq,
                                    **hp)
    return O.adam_step(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, **hp)


def sgd_step_multi(xp: Any, params: list, grads: list, momentum_buffers: list, *, lr: float,
                   momentum: float, dampening: float, weight_decay: float, nesterov: bool,
                   maximize: bool) -> bool:
    """SGD over a group in place (see ``volta_core.optim.kernels.sgd_step_multi``); False
    where the arrays do not fit (then the optimizer steps parameter by parameter)."""
    return O.sgd_step_multi(params, grads, momentum_buffers, lr=lr, momentum=momentum,
                            dampening=dampening, weight_decay=weight_decay,
                            nesterov=nesterov, maximize=maximize)


def adam_step_multi(xp: Any, params: list, grads: list, exp_avgs: list, exp_avg_sqs: list,
                    *, step: int, lr: float, beta1: float, beta2: float, eps: float,
                    weight_decay: float, maximize: bool, decoupled: bool) -> bool:
    """Adam/AdamW over a group in place (see ``volta_core.optim.kernels.adam_step_multi``);
    False where the arrays do not fit."""
    return O.adam_step_multi(params, grads, exp_avgs, exp_avg_sqs, step=step, lr=lr,
                             beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
                             maximize=maximize, decoupled=decoupled)


def rmsprop_step(xp: Any, param: Any, grad: Any, square_avg: Any, grad_avg: Any,
                 momentum_buffer: Any, *, lr: float, alpha: float, eps: float,
                 weight_decay: float, momentum: float, centered: bool,
                 maximize: bool) -> tuple:
    """Fused RMSprop step (see ``volta_core.optim.kernels.rmsprop_step``)."""
    hp = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
              centered=centered, maximize=maximize)
    if not _f32(param, grad, square_avg, grad_avg, momentum_buffer) or \
            (centered and grad_avg is None) or (momentum > 0 and momentum_buffer is None):
        return generic("rmsprop_step")(xp, param, grad, square_avg, grad_avg,
                                       momentum_buffer, **hp)
    return O.rmsprop_step(param, grad, square_avg, grad_avg, momentum_buffer, **hp)


def adagrad_step(xp: Any, param: Any, grad: Any, state_sum: Any, *, step: int, lr: float,
                 lr_decay: float, weight_decay: float, eps: float, maximize: bool) -> tuple:
    """Fused Adagrad step (see ``volta_core.optim.kernels.adagrad_step``)."""
    hp = dict(step=step, lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
              maximize=maximize)
    if not _f32(param, grad, state_sum):
        return generic("adagrad_step")(xp, param, grad, state_sum, **hp)
    return O.adagrad_step(param, grad, state_sum, **hp)


def adamax_step(xp: Any, param: Any, grad: Any, exp_avg: Any, exp_inf: Any, *, step: int,
                lr: float, beta1: float, beta2: float, eps: float, weight_decay: float,
                maximize: bool) -> tuple:
    """Fused Adamax step (see ``volta_core.optim.kernels.adamax_step``)."""
    hp = dict(step=step, lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
              maximize=maximize)
    if not _f32(param, grad, exp_avg, exp_inf):
        return generic("adamax_step")(xp, param, grad, exp_avg, exp_inf, **hp)
    return O.adamax_step(param, grad, exp_avg, exp_inf, **hp)


def radam_step(xp: Any, param: Any, grad: Any, exp_avg: Any, exp_avg_sq: Any, *, step: int,
               lr: float, beta1: float, beta2: float, eps: float, weight_decay: float,
               maximize: bool, decoupled: bool) -> tuple:
    """Fused RAdam step (see ``volta_core.optim.kernels.radam_step``)."""
    hp = dict(step=step, lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
              maximize=maximize, decoupled=decoupled)
    if not _f32(param, grad, exp_avg, exp_avg_sq):
        return generic("radam_step")(xp, param, grad, exp_avg, exp_avg_sq, **hp)
    return O.radam_step(param, grad, exp_avg, exp_avg_sq, **hp)


def nadam_step(xp: Any, param: Any, grad: Any, exp_avg: Any, exp_avg_sq: Any, *, step: int,
               lr: float, beta1: float, beta2: float, eps: float, weight_decay: float,
               mu: float, mu_next: float, mu_product: float, mu_product_next: float,
               maximize: bool, decoupled: bool) -> tuple:
    """Fused NAdam step (see ``volta_core.optim.kernels.nadam_step``)."""
    hp = dict(step=step, lr=lr, beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
              mu=mu, mu_next=mu_next, mu_product=mu_product, mu_product_next=mu_product_next,
              maximize=maximize, decoupled=decoupled)
    if not _f32(param, grad, exp_avg, exp_avg_sq):
        return generic("nadam_step")(xp, param, grad, exp_avg, exp_avg_sq, **hp)
    return O.nadam_step(param, grad, exp_avg, exp_avg_sq, **hp)


def erf(xp: Any, x: Any) -> Any:
    """``erf``: float16 computes the generic series in float32 and rounds once, as
    PyTorch does (in float16 throughout it was off by 0.1%)."""
    import volta_core.ops.math  # noqa: F401 - registers the fallback
    if x.dtype is xp.float16:
        return xp.astype(generic("erf")(xp, xp.astype(x, xp.float32)), xp.float16)
    return generic("erf")(xp, x)


KERNELS: dict[str, Callable] = {f.__name__: f for f in (
    conv2d, conv2d_backward, max_pool2d, max_pool2d_backward, avg_pool2d,
    avg_pool2d_backward, scatter_add, embedding_backward, cross_entropy, layer_norm,
    layer_norm_backward, softmax_backward,
    sgd_step, adam_step, sgd_step_multi, adam_step_multi, rmsprop_step, adagrad_step,
    adamax_step, radam_step, nadam_step, erf)}

