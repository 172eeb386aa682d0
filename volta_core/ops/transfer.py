"""Moving tensors between devices (explicitly: nothing moves silently)."""

from __future__ import annotations

from ..autograd.function import Function, next_sequence_number
from ..autograd.grad_mode import state as _grad_state
from ..backend.device import Device
from ..tensor import Tensor


class ToDevice(Function):
    """Copy to another device; the gradient is copied back."""

    def backward(ctx, g):
        return to_device(g, ctx.src)


def _copy(array, src: Device, dst: Device):
    move = getattr(dst.backend, "from_device", None)
    if move is not None:  # a backend may know a faster path (DLPack, peer copies)
        out = move(array, src, dst.index)
        if out is not None:
            return out
    host = src.backend.to_host(array)
    return dst.backend.from_host(host, dst.index)


def to_device(x: Tensor, dst: Device) -> Tensor:
    """Return a copy of ``x`` on device ``dst``, recording the copy for autograd."""
    out = Tensor._make(_copy(x.array, x.device, dst), dst)
    if x.requires_grad and _grad_state.enabled:
        ctx = ToDevice.__new__(ToDevice)
        ctx.src, ctx.device, ctx.xp = x.device, dst, dst.xp
        ctx.parents = (x if x.grad_fn is None else x.grad_fn,)
        ctx.needs_input_grad = (True,)
        ctx._saved = None
        ctx._seq = next_sequence_number()
        out.requires_grad, out.grad_fn = True, ctx
    return out
