"""Argument checks and the loss reduction shared by the layers' functional forms.

Each layer file (``conv.py``, ``pooling.py``, ...) holds its functional form next to its
module; :mod:`volta_core.nn.functional` gathers them so users find them in one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import AutogradError, DeviceError, DTypeError, ShapeError
from ..tensor import Tensor


def _ntuple(op: str, value: int | Sequence[int], n: int, name: str) -> tuple[int, ...]:
    """``value`` as an ``n``-tuple of ints (an int is repeated)."""
    if isinstance(value, int):
        return (value,) * n
    out = tuple(int(v) for v in value)
    if len(out) != n:
        raise ValueError(f"{op}: {name} must be an int or a tuple of {n} ints, got {value!r}")
    return out


def _pair(op: str, value: int | Sequence[int], name: str) -> tuple[int, int]:
    return _ntuple(op, value, 2, name)  # type: ignore[return-value]


def _check_tensor(op: str, x: Any, name: str = "input") -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")
    return x


def _check_rank(op: str, x: Tensor, ranks: Sequence[int], layout: str) -> None:
    """Raise a ShapeError naming ``op`` unless ``x.ndim`` is one of ``ranks``."""
    if x.ndim not in ranks:
        want = " or ".join(f"{r}-D" for r in ranks)
        raise ShapeError(f"{op}: expected a {want} input {layout}, got a {x.ndim}-D input of "
                         f"shape {x.shape}; reshape it (e.g. unsqueeze(0) for one sample)")


def _check_same(op: str, x: Tensor, *others: Tensor | None) -> None:
    """Raise unless the parameters ``others`` share ``x``'s device and dtype."""
    for w in others:
        if w is None:
            continue
        if w.device is not x.device:
            raise DeviceError(f"{op}: input is on {x.device} but the weights are on "
                              f"{w.device}; move the input with .to('{w.device}') or the "
                              f"module with .to('{x.device}')")
        if w.array.dtype != x.array.dtype:
            raise DTypeError(f"{op}: input dtype {x.dtype.name} does not match weight dtype "
                             f"{w.dtype.name}; convert the input with .to({w.dtype.name}) or "
                             f"the module with .to({x.dtype.name})")


def _check_floating(op: str, x: Tensor) -> None:
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{op}: expected a floating-point input, got {x.dtype.name}; "
                         "call .float() first")


def _no_grad_for(op: str, **tensors: Tensor | None) -> None:
    """Refuse, as PyTorch does at the call, a tensor argument requiring grad that ``op`` is
    not differentiable with respect to (a loss's class weights or target)."""
    from ..autograd.grad_mode import state

    if not state.enabled:
        return
    for name, t in tensors.items():
        if isinstance(t, Tensor) and t.requires_grad:
            raise AutogradError(
                f"{op}: not differentiable with respect to argument '{name}' (PyTorch "
                f"refuses it too); pass {name}.detach() or a tensor without requires_grad")


_REDUCTIONS = ("none", "mean", "sum")


def _reduce(op: str, loss: Tensor, reduction: str) -> Tensor:
    """Apply a loss reduction (``none``, ``mean``, ``sum``)."""
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{op}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
