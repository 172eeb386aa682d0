"""Classification losses (cross-entropy, NLL, binary cross-entropy, KL divergence), functional
and as modules, and the helpers every loss shares (``reduction``: none, mean, sum)."""

from __future__ import annotations

import math
import warnings
from typing import Any

from ..amp.dispatch import autocast_call, autocast_op
from ..amp.state import state as _autocast_state
from ..autograd.function import Function, saved_by_pytorch
from ..autograd.grad_mode import state as _grad_state
from ..backend.kernels import get_kernel
from ..dtypes import promote_types
from ..errors import DeviceError, DTypeError, IndexOutOfRangeError, ShapeError
from ..ops import nn as _kernels  # noqa: F401 - registers the kernels' fallbacks
from ..ops._util import broadcast_shapes
from ..ops.activation import softplus
from ..ops.elementwise import exp, log, where
from ..ops.math import clamp_min
from ..ops.softmax import log_softmax, softmax
from ..ops.special import xlogy
from ..tensor import Tensor
from ._checks import (
    _REDUCTIONS,
    _check_floating,
    _check_same,
    _check_tensor,
    _no_grad_for,
    _reduce,
)
from .module import Module


def _check_reduction(op: str, reduction: str, extra: tuple[str, ...] = ()) -> None:
    if reduction not in _REDUCTIONS + extra:
        raise ValueError(f"{op}: reduction must be one of {_REDUCTIONS + extra}, got "
                         f"{reduction!r}")


def _common_dtype(op: str, tensors: tuple, dtype: str) -> tuple:
    """``tensors`` in the dtype PyTorch computes ``op`` in, by ``dtype``:

    - ``"promote"``: type promotion, which must give a floating dtype (PyTorch's kernel);
    - ``"input"``: the first one's, the others cast to it;
    - ``"same"``: all in the first one's (PyTorch's kernel refuses a mix);
    - ``"floats"``: each floating, unchanged (the ops that follow promote);
    - ``"ops"``: unchanged (PyTorch's loss is composed of ops, whose rules apply).
    """
    if dtype == "ops":
        return tensors
    if dtype != "promote":
        _check_floating(op, tensors[0])
    if dtype == "floats":
        for t in tensors[1:]:
            _check_floating(op, t)
        return tensors
    want = tensors[0].dtype
    if dtype == "same":
        for t in tensors[1:]:
            if t.dtype is not want:
                raise DTypeError(f"{op}: expected every argument in the input's dtype "
                                 f"{want.name}, got {t.dtype.name} (PyTorch refuses the mix "
                                 f"too); convert with .to({want})")
        return tensors
    if dtype == "promote":
        for t in tensors[1:]:
            want = promote_types(want, t.dtype)
        if not want.is_floating_point:
            raise DTypeError(f"{op}: expected floating-point inputs, got "
                             f"{', '.join(t.dtype.name for t in tensors)}; call .float() first")
    return tuple(t if t.dtype is want else t.to(want) for t in tensors)


def _pair_check(op: str, input: Tensor, target: Tensor, broadcast: str = "",
                dtype: str = "promote") -> tuple[Tensor, Tensor]:
    """Check a loss's input and target and return them in the dtype PyTorch computes in
    (see :func:`_common_dtype`); ``broadcast`` lets their shapes broadcast as in PyTorch:
    ``"warn"`` (with PyTorch's warning, for mse/l1/smooth_l1/huber), ``"quiet"``, or
    ``"to_input"`` (the target to the input's shape only)."""
    _check_tensor(op, input)
    _check_tensor(op, target, "target")
    if input.device is not target.device:
        _check_same(op, input, target)  # the device error
    if broadcast and input.shape != target.shape:
        if broadcast_shapes(op, input.shape, target.shape) != input.shape \
                and broadcast == "to_input":
            raise ShapeError(f"{op}: the target's shape {target.shape} does not broadcast to "
                             f"the input's shape {input.shape}")
        if broadcast == "warn":
            warnings.warn(f"{op}: using a target size ({target.shape}) that is different to "
                          f"the input size ({input.shape}); they are broadcast, which is "
                          "likely wrong: make sure they have the same size", stacklevel=3)
            # PyTorch broadcasts both first: promotion then sees no 0-d tensor
            shape = broadcast_shapes(op, input.shape, target.shape)
            input, target = input.expand(*shape), target.expand(*shape)
    elif input.shape != target.shape:
        raise ShapeError(f"{op}: input shape {input.shape} and target shape {target.shape} "
                         "differ (mismatched batch sizes?); they must be the same")
    return _common_dtype(op, (input, target), dtype)


def _legacy(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """PyTorch's mapping of the deprecated ``size_average``/``reduce`` to ``reduction``."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _floats(op: str, *tensors: Tensor, dtype: str = "promote") -> tuple:
    """Check the tensor arguments of a loss and return them in one dtype, as
    :func:`_pair_check`."""
    for i, t in enumerate(tensors):
        _check_tensor(op, t, "input" if i == 0 else f"argument {i + 1}")
    if any(t.device is not tensors[0].device for t in tensors):
        _check_same(op, *tensors)
    return _common_dtype(op, tensors, dtype)


class _CrossEntropy(Function):
    """Fused log-softmax + NLL over rows (the ``cross_entropy`` kernel).

    It keeps the logits' values as forward saw them but does not watch the logits for an
    in-place change: PyTorch's cross_entropy keeps log_softmax's result instead, so the
    logits may change after it. (Volta never writes into an array: an in-place op rebinds
    the tensor to a new one, and the values kept here stay as they were.)
    """

    def forward(ctx, x, target, weight=None, ignore_index=-100, smoothing=0.0,
                reduction="none"):
        xp = ctx.xp
        kern = get_kernel(ctx.device.backend, "cross_entropy")
        loss, lse, row_w = kern(xp, x, target, weight, ignore_index=ignore_index,
                                label_smoothing=smoothing)
        # 'sum' and 'mean' inside this node: one node instead of three (sum, divide)
        ctx.reduction, ctx.rows = reduction, x.shape[0]
        out = loss if reduction == "none" else _reduce_rows(ctx, loss, row_w, reduction)
        if weight is None and not smoothing:
            # the common case: backward is one fused kernel from (x, lse, target, row_w)
            ctx.fused = True
            ctx.save_for_backward((x,), lse, target, row_w)  # (x,): kept, not watched
            return out
        ctx.fused = False
        n, c = x.shape
        valid = xp.astype(target != ignore_index, x.dtype)
        safe = xp.where(target != ignore_index, target, xp.zeros_like(target))
        # d loss_n / d x_n = a_n * softmax(x_n) - b_n
        wsum = float(c) if weight is None else xp.sum(weight)
        a = (1.0 - smoothing) * row_w + (smoothing / c) * wsum * valid
        b = (1.0 - smoothing) * xp.expand_dims(row_w, axis=1) * _onehot(ctx, safe, c, x.dtype)
        if smoothing:
            wrow = 1.0 if weight is None else xp.expand_dims(weight, axis=0)
            b = b + (smoothing / c) * wrow * xp.expand_dims(valid, axis=1)
        ctx.save_for_backward((x,), xp.expand_dims(a, axis=1), b, target != ignore_index)
        return out

    def backward(ctx, g):
        if ctx.fused:
            (x,), lse, target, row_w = ctx.saved_tensors
            # plain backward: one kernel (2-byte floats take the softmax op's float32 path)
            if not _grad_state.enabled and ctx.device.volta_dtype(x.dtype).itemsize != 2:
                xp = ctx.xp
                rows = g.array
                if ctx.reduction != "none":  # every row's share of the reduced loss
                    if ctx.reduction == "mean":
                        rows = xp.divide(rows, ctx.wsum)
                    rows = xp.broadcast_to(rows, (ctx.rows,))
                kern = get_kernel(ctx.device.backend, "cross_entropy_backward")
                return Tensor._make(kern(xp, rows, x, lse.array, target.array,
                                         row_w.array), ctx.device), None, None
            x = _logits(ctx, x)
            valid = row_w != 0
            safe = where(valid, target, 0)
            a = row_w.unsqueeze(1)
            b = a * Tensor._make(_onehot(ctx, safe.array, x.shape[1], x.array.dtype), x.device)
        else:
            (x,), a, b, valid = ctx.saved_tensors
            x = _logits(ctx, x)
        if ctx.reduction == "mean":
            g = g / Tensor._make(ctx.wsum, ctx.device)
        if ctx.reduction != "none":
            g = g.expand(ctx.rows)
        # ignored rows get 0 even when the mean's 0/0 (every target ignored) makes g inf
        g = where(valid, g, 0.0).unsqueeze(1)
        return g * (a * softmax(x, 1) - b), None, None


def _reduce_rows(ctx: Function, loss: Any, row_w: Any, reduction: str) -> Any:
    """The rows' loss summed, or averaged over the rows' class weights (their sum kept
    in ``ctx.wsum`` for backward); 2-byte floats summed in float32, as Volta's ``sum``."""
    xp = ctx.xp
    dtype = loss.dtype
    if ctx.device.volta_dtype(dtype).itemsize == 2:
        loss, row_w = xp.astype(loss, xp.float32), xp.astype(row_w, xp.float32)
    if reduction == "sum":
        out = xp.sum(loss)
    else:
        out, ctx.wsum = get_kernel(ctx.device.backend, "weighted_mean")(xp, loss, row_w)
        ctx.wsum = xp.astype(ctx.wsum, dtype)
    return out if out.dtype == dtype else xp.astype(out, dtype)


def _logits(ctx: Function, x: Any) -> Tensor:
    """The logits forward saw, as a Tensor that carries their history (for a backward
    that is differentiated again): the node that made them, or the leaf itself."""
    parent = ctx.parents[0]
    if parent is None or not _grad_state.enabled:
        return Tensor._make(x, ctx.device)
    if type(parent) is Tensor:  # a leaf requiring grad: it can't have changed in place
        return parent
    return Tensor._make(x, ctx.device, True, parent)


def _onehot(ctx: Function, safe: Any, c: int, dtype: Any) -> Any:
    """``(N, C)`` float rows with 1 at each row's class ``safe[n]``."""
    xp = ctx.xp
    return xp.astype(xp.expand_dims(safe, axis=1)
                     == xp.arange(c, dtype=safe.dtype, device=ctx.device.native), dtype)


def _class_target(op: str, input: Tensor, target: Tensor, ignore_index: int) -> None:
    if target.dtype.kind not in "iu":
        raise DTypeError(f"{op}: class-index targets must be integers, got "
                         f"{target.dtype.name}; use .long(), or pass class probabilities of "
                         f"the input's shape {input.shape}")
    want = input.shape[:1] + input.shape[2:] if input.ndim > 1 else ()
    if target.shape != want:
        raise ShapeError(f"{op}: expected target of shape {want} for input of shape "
                         f"{input.shape}, got {target.shape} (mismatched batch sizes?)")
    if target.device is not input.device:
        raise DeviceError(f"{op}: input is on {input.device} but target on {target.device}; "
                          f"move the target with .to('{input.device}')")
    c = input.shape[1] if input.ndim > 1 else input.shape[0]
    if target.numel() and target.device.type == "cpu":  # a host check would sync a GPU
        t = target.array
        xp = target.device.xp
        bits = 8 * t.dtype.itemsize
        if t.dtype.kind == "i" and c <= 2 ** (bits - 1):
            # the usual case in one reduction: seen unsigned, a negative index is >= c
            if int(t.view(f"uint{bits}").max()) < c:
                return
        elif 0 <= int(xp.min(t)) and int(xp.max(t)) < c:
            return
        bad = xp.logical_and(t != ignore_index, xp.logical_or(t < 0, t >= c))
        if bool(xp.any(bad)):
            low = xp.iinfo(t.dtype).min  # below every bad index: the largest one is named
            v = int(xp.max(xp.where(bad, t, xp.full_like(t, low))))
            if v == low:
                v = int(xp.min(xp.where(bad, t, xp.zeros_like(t))))
            raise IndexOutOfRangeError(f"{op}: target {v} is out of bounds for {c} classes "
                                       f"(valid: 0..{c - 1}, or ignore_index={ignore_index})")


def _rows(input: Tensor) -> Tensor:
    """``(N, C, *d)`` -> ``(N * prod(d), C)`` with the class dim last."""
    if input.ndim == 1:
        return input.unsqueeze(0)
    if input.ndim == 2:
        return input
    perm = (0,) + tuple(range(2, input.ndim)) + (1,)
    return input.permute(perm).reshape(-1, input.shape[1])


def _two_byte(t: Any) -> bool:
    """Whether ``t`` is a float16/bfloat16 tensor."""
    return type(t) is Tensor and t.dtype.kind == "f" and t.dtype.itemsize == 2


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy between logits and class indices or class probabilities.

    Args:
        input: logits ``(N, C)``, ``(N, C, d1, ...)`` or unbatched ``(C,)``.
        target: class indices ``(N,)``/``(N, d1, ...)``, or probabilities shaped as input.
        weight: optional per-class weights ``(C,)``.
        ignore_index: a target value that contributes nothing (class indices only).
        reduction: ``'none'``, ``'mean'`` (weighted mean over non-ignored targets), ``'sum'``.
        label_smoothing: mix the target with the uniform distribution by this amount.

    Shape:
        Output scalar, or the target's shape with ``reduction='none'``.
    """
    if _autocast_state.active:  # the autocast hook: one thread-local read when off
        return autocast_call(
            "cross_entropy", cross_entropy, input, target, weight, ignore_index, reduction,
            label_smoothing)
    op = "cross_entropy"
    if _two_byte(input):  # computed in float32 (as PyTorch), the loss in the 2-byte dtype
        w = None if weight is None else weight.float()
        t = target.float() if _two_byte(target) else target
        return cross_entropy(input.float(), t, w, ignore_index, reduction,
                             label_smoothing).to(input.dtype)
    _check_reduction(op, reduction)
    _check_tensor(op, input)
    _check_tensor(op, target, "target")
    _check_floating(op, input)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{op}: label_smoothing must be in [0, 1], got {label_smoothing}")
    if input.ndim == 0:
        raise ShapeError(f"{op}: input must have a class dim, got a 0-d tensor")
    c = input.shape[1] if input.ndim > 1 else input.shape[0]
    if weight is not None:
        _check_same(op, input, weight)
        if tuple(weight.shape) != (c,):
            raise ShapeError(f"{op}: weight must have shape ({c},) for {c} classes, got "
                             f"{weight.shape}")
    if target.dtype.is_floating_point:
        if target.shape != input.shape:
            raise ShapeError(f"{op}: probability targets must have the input's shape "
                             f"{input.shape}, got {target.shape} (mismatched batch sizes?)")
        _check_same(op, input, target)
        logp = log_softmax(input, 1 if input.ndim > 1 else 0)
        t = target
        if label_smoothing:
            t = t * (1.0 - label_smoothing) + label_smoothing / c
        if weight is not None:
            shape = (1, c) + (1,) * (input.ndim - 2) if input.ndim > 1 else (c,)
            t = t * weight.reshape(shape)
        loss = -(logp * t).sum(1 if input.ndim > 1 else 0)
        return _reduce(op, loss, reduction)
    _class_target(op, input, target, ignore_index)
    _no_grad_for("nll_loss", weight=weight)  # PyTorch's error names its nll_loss
    out = _CrossEntropy.apply(_rows(input), target.reshape(-1), weight,
                              ignore_index=ignore_index, smoothing=float(label_smoothing),
                              reduction=reduction)
    if reduction == "none":
        out = out.reshape(target.shape)
    saved_by_pytorch(out, target, weight, op="cross_entropy")  # as its nll_loss
    return out


@autocast_op("nll_loss")
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             ignore_index: int = -100, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices given log-probabilities.

    Args:
        input: log-probabilities ``(N, C)``, ``(N, C, d1, ...)`` or ``(C,)``.
        target: class indices ``(N,)``/``(N, d1, ...)``.
        weight: optional per-class weights ``(C,)``.
        ignore_index: a target value that contributes nothing.

    Shape:
        Output scalar, or the target's shape with ``reduction='none'``.
    """
    op = "nll_loss"
    _check_reduction(op, reduction)
    _check_tensor(op, input)
    _check_tensor(op, target, "target")
    _check_floating(op, input)
    if input.ndim == 0:
        raise ShapeError(f"{op}: input must have a class dim, got a 0-d tensor")
    _class_target(op, input, target, ignore_index)
    c = input.shape[1] if input.ndim > 1 else input.shape[0]
    if weight is not None:
        _check_same(op, input, weight)
        if tuple(weight.shape) != (c,):
            raise ShapeError(f"{op}: weight must have shape ({c},), got {weight.shape}")
        _no_grad_for(op, weight=weight)
    xp, dev = input.device.xp, input.device
    t = target.reshape(-1).array
    valid = t != ignore_index
    safe = xp.astype(xp.where(valid, t, xp.zeros_like(t)), xp.int64)
    # gather each row's target entry: a one-hot product would turn a -inf elsewhere into NaN
    picked = _rows(input).gather(1, Tensor._make(xp.expand_dims(safe, axis=1), dev)).squeeze(1)
    w = xp.astype(valid, input.array.dtype)
    if weight is not None:
        w = xp.take(weight.array, safe) * w
    w = Tensor._make(w, dev)
    rows = where(Tensor._make(valid, dev), -(picked * w), 0.0)
    if reduction == "none":
        out = rows.reshape(target.shape)
    else:
        out = rows.sum() if reduction == "sum" else rows.sum() / w.sum()
    saved_by_pytorch(out, input, target, weight, op=op)
    return out


def _weighted(op: str, loss: Tensor, weight: Tensor | None, reduction: str) -> Tensor:
    if weight is not None:
        _check_same(op, loss, weight)
        loss = loss * weight
    return _reduce(op, loss, reduction)


@autocast_op("binary_cross_entropy")
def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         reduction: str = "mean") -> Tensor:
    """``-(t log p + (1 - t) log(1 - p))`` of probabilities ``p`` (logs clamped at -100).

    Shape:
        input, target (and weight, broadcastable) the same shape.
    """
    op = "binary_cross_entropy"
    _check_reduction(op, reduction)
    input, target = _pair_check(op, input, target, dtype="same")
    if input.device.type == "cpu" and input.numel():
        lo, hi = float(input.min().item()), float(input.max().item())
        if not (lo >= 0.0 and hi <= 1.0):  # NaN fails too, as in PyTorch
            raise ValueError(f"{op}: all input values must be probabilities in [0, 1], found "
                             f"values in [{lo}, {hi}]; apply sigmoid first or use "
                             "binary_cross_entropy_with_logits")
    _no_grad_for(op, weight=weight)
    loss = -(target * clamp_min(log(input), -100.0)
             + (1.0 - target) * clamp_min(log(1.0 - input), -100.0))
    out = _weighted(op, loss, weight, reduction)
    saved_by_pytorch(out, input, target, weight, op=op)
    return out


@autocast_op("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid + binary cross entropy in one numerically stable expression.

    Args:
        pos_weight: weight of positive examples, broadcast along the last (class) dim.

    Shape:
        input and target the same shape.
    """
    op = "binary_cross_entropy_with_logits"
    _check_reduction(op, reduction)
    _check_tensor(op, input)
    _check_floating(op, input)
    if not target.dtype.is_floating_point:
        raise DTypeError(f"{op}: expected a floating-point target, got {target.dtype.name}; "
                         "convert it with .float()")
    x, t = _pair_check(op, input, target)
    _no_grad_for(op, weight=weight, pos_weight=pos_weight)
    # log(1 + exp(-x)), stably and with the right gradient at x = 0 (|x| has none there)
    soft = softplus(-x, threshold=math.inf)
    if pos_weight is not None:
        _check_same(op, x, pos_weight)
        loss = (1.0 - t) * x + ((pos_weight - 1.0) * t + 1.0) * soft
    else:
        loss = (1.0 - t) * x + soft
    out = _weighted(op, loss, weight, reduction)
    if out.dtype is not target.dtype:  # PyTorch's loss is built in place on (1 - target)
        out = out.to(target.dtype)
    saved_by_pytorch(out, input, target, weight, pos_weight, op=op)
    return out


@autocast_op("kl_div")
def kl_div(input: Tensor, target: Tensor, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence ``target * (log target - input)``, ``input`` in log space.

    Args:
        reduction: also ``'batchmean'`` (sum divided by the batch size; the true KL).
        log_target: the target is given in log space too.
    """
    op = "kl_div"
    _check_reduction(op, reduction, ("batchmean",))
    input, target = _pair_check(op, input, target, "quiet", dtype="floats")
    if log_target:
        loss = exp(target) * (target - input)
    else:  # PyTorch's xlogy(t, t) - t * input (0 * -inf input is NaN there too)
        loss = xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(op, loss, reduction)


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        _check_reduction(type(self).__name__, reduction, self._extra)
        self.reduction = reduction

    _extra: tuple[str, ...] = ()

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}" if self.reduction != "mean" else ""


class _LegacyLoss(_Loss):
    def __init__(self, size_average: bool | None = None, reduce: bool | None = None,
                 reduction: str = "mean") -> None:
        super().__init__(_legacy(size_average, reduce, reduction))


class CrossEntropyLoss(_Loss):
    """Cross entropy of logits; see :func:`cross_entropy`.

    Args:
        weight: per-class weights ``(C,)`` (a buffer, moved with the module).
        ignore_index: target value to ignore.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.
        label_smoothing: amount of uniform smoothing of the target.

    Shape:
        Input ``(N, C)`` or ``(N, C, d1, ...)``; target ``(N,)``/``(N, d1, ...)`` indices or
        probabilities shaped as the input.
    """

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return cross_entropy(input, target, self.weight, self.ignore_index, self.reduction,
                             self.label_smoothing)


class NLLLoss(_Loss):
    """Negative log-likelihood; see :func:`nll_loss`.

    Args:
        weight: per-class weights ``(C,)``.
        ignore_index: target value to ignore.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.
    """

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100,
                 reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class BCELoss(_Loss):
    """Binary cross entropy of probabilities; see :func:`binary_cross_entropy`.

    Args:
        weight: a rescaling weight broadcast to the input.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.
    """

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross entropy; see :func:`binary_cross_entropy_with_logits`.

    Args:
        weight: a rescaling weight broadcast to the input.
        reduction: ``'none'``, ``'mean'`` or ``'sum'``.
        pos_weight: weight of positive examples per class.
    """

    def __init__(self, weight: Tensor | None = None, reduction: str = "mean",
                 pos_weight: Tensor | None = None) -> None:
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy_with_logits(input, target, self.weight, self.reduction,
                                                self.pos_weight)


class KLDivLoss(_Loss):
    """KL divergence with the input in log space; see :func:`kl_div`.

    Args:
        reduction: ``'none'``, ``'mean'``, ``'sum'`` or ``'batchmean'``.
        log_target: the target is in log space.
    """

    _extra = ("batchmean",)

    def __init__(self, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return kl_div(input, target, self.reduction, self.log_target)


__all__ = ["CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss"]
