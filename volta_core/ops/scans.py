"""Scans beyond cumsum/cumprod: ``logcumsumexp``, ``cummax`` and ``cummin``.

Each runs as a Hillis-Steele scan: log2(n) vector steps along the dim, each combining an
element with the one ``2**k`` before it (no loop over elements). ``logcumsumexp``
combines with a stable ``logaddexp``, so a tiny early term is not lost to a global shift.
``cummax``/``cummin`` find indices (the last one reaching the running extremum, as in
PyTorch; a NaN stays the extremum from where it appears) and gather the values there,
so the gradient goes to those indices.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from ..autograd.function import RESULT, Function, saved_by_pytorch
from ..errors import DTypeError
from ..limits import finfo
from ..tensor import Tensor, tensor_method
from ._util import normalize_dim
from .elementwise import in_float32, where
from .indexing import Gather
from .joining import flip

CummaxResult = namedtuple("CummaxResult", ["values", "indices"])
CumminResult = namedtuple("CumminResult", ["values", "indices"])


def _scan(xp: Any, a: Any, axis: int, combine: Any) -> Any:
    """Inclusive scan of ``a`` along ``axis`` with the associative ``combine``."""
    n = a.shape[axis]
    s = 1
    while s < n:
        head = tuple(slice(None, s) if k == axis else slice(None) for k in range(a.ndim))
        tail = tuple(slice(s, None) if k == axis else slice(None) for k in range(a.ndim))
        prev = tuple(slice(None, n - s) if k == axis else slice(None) for k in range(a.ndim))
        a = xp.concat([a[head], combine(a[tail], a[prev])], axis=axis)
        s *= 2
    return a


def _logaddexp(xp: Any, a: Any, b: Any) -> Any:
    hi = xp.maximum(a, b)
    d = xp.where(a == b, xp.zeros_like(hi), -xp.abs(a - b))  # no inf - inf
    return hi + xp.log1p(xp.exp(d))


class LogCumSumExp(Function):
    pytorch_saves = ((0, RESULT),)

    def forward(ctx, x, dim=0):
        xp = ctx.xp
        y = _scan(xp, x, dim, lambda a, b: _logaddexp(xp, a, b))
        ctx.dim = dim
        ctx.save_for_backward(x, y)
        return y

    def backward(ctx, g):
        # dy_j/dx_i = exp(x_i - y_j) for i <= j: a reversed logcumsumexp of log|g| - y,
        # split by the sign of g so that every log is of a positive number. As PyTorch,
        # the other entries take the dtype's lowest value, minus y too (a NaN in y spreads)
        x, y = ctx.saved_tensors
        d = ctx.dim
        lowest = finfo(x.dtype).min
        out = None
        for sign in (1.0, -1.0):
            part = g * sign
            pos = part > 0
            logs = where(pos, where(pos, part, 1.0).log(), lowest) - y
            rev = flip(LogCumSumExp.apply(flip(logs, (d,)), dim=d), (d,))
            term = (rev + x).exp() * sign
            out = term if out is None else out + term
        return out


@tensor_method()
def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input), dim))``, computed stably.

    Args:
        input: a floating tensor.
        dim: the dimension to scan.
    """
    if not input.dtype.is_floating_point:
        raise DTypeError(f"logcumsumexp: expected a floating tensor, got {input.dtype.name}; "
                         "call .float() first")
    d = normalize_dim("logcumsumexp", dim, input.ndim)  # a 0-d tensor takes -1 and 0 only
    if input.ndim == 0:
        out = input.clone()
        saved_by_pytorch(out, input, out, op="logcumsumexp")  # as PyTorch's keeps both
        return out
    if input.dtype.itemsize == 2:  # float16/bfloat16: in float32, rounded once (PyTorch)
        return in_float32(LogCumSumExp.apply, input, dim=d)
    return LogCumSumExp.apply(input, dim=d)


def _cum_extremum(op: str, x: Tensor, dim: int, high: bool) -> tuple[Tensor, Tensor]:
    if x.ndim == 0:  # dims -1 and 0 only, as in PyTorch
        normalize_dim(op, dim, 0)
    if x.ndim == 0 or x.numel() == 0:  # PyTorch checks no dim when there is nothing
        values, index = x.clone(), x.new_zeros(x.shape, dtype="int64")
        saved_by_pytorch(values, x, index, op=op)  # its backward keeps both, as always
        return values, index
    d = normalize_dim(op, dim, x.ndim)
    xp, dev = x.device.xp, x.device
    a = x.array
    best = _scan(xp, a, d, xp.maximum if high else xp.minimum)
    # the running extremum is reached (or tied) here; a NaN always counts
    reached = a == best
    if x.dtype.is_floating_point:
        reached = reached | xp.isnan(a)
    i64 = dev.native_dtype("int64")
    n = a.shape[d]
    pos = xp.reshape(xp.arange(n, dtype=i64, device=dev.native),
                     tuple(n if k == d else 1 for k in range(a.ndim)))
    marks = xp.where(reached, pos, xp.full_like(pos, -1))
    index = Tensor._make(_scan(xp, marks, d, xp.maximum), dev)
    return Gather.apply(x, index, dim=d), index


@tensor_method()
def cummax(input: Tensor, dim: int) -> CummaxResult:
    """Running maximum along ``dim`` and the index where it was (last) reached."""
    return CummaxResult(*_cum_extremum("cummax", input, dim, True))


@tensor_method()
def cummin(input: Tensor, dim: int) -> CumminResult:
    """Running minimum along ``dim`` and the index where it was (last) reached."""
    return CumminResult(*_cum_extremum("cummin", input, dim, False))


__all__ = ["CummaxResult", "CumminResult", "logcumsumexp", "cummax", "cummin"]
