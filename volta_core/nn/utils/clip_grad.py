"""Gradient clipping and flattening parameters into one vector.

All work happens on the parameters' raw arrays through their device's namespace, so
gradients never leave their device and clipping needs no host sync (unless
``error_if_nonfinite=True``, which must read the norm).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ...autograd.function import Function
from ...errors import DeviceError, ShapeError, VoltaError
from ...tensor import Tensor

TensorOrTensors = Tensor | Iterable[Tensor]


class NonFiniteNormError(VoltaError, RuntimeError):
    """The total gradient norm is NaN or infinite (``clip_grad_norm_``)."""


def _as_list(tensors: TensorOrTensors, op: str) -> list[Tensor]:
    items = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    bad = [f"[{i}] is a {type(t).__name__}" for i, t in enumerate(items)
           if not isinstance(t, Tensor)]
    if bad:
        raise TypeError(f"{op}: expected Tensors, but item(s) " + ", ".join(bad))
    return items


def _one_device(op: str, tensors: list[Tensor]) -> Any:
    dev = tensors[0].device
    for t in tensors[1:]:
        if t.device is not dev:
            raise DeviceError(f"{op}: expected all tensors on one device, found {dev} and "
                              f"{t.device}; move them with .to('{dev}') first")
    return dev


def _norm(xp: Any, a: Any, p: float) -> Any:
    """The ``p``-norm of all elements of ``a`` as a 0-d array."""
    a = xp.abs(a)
    if p == math.inf:
        return xp.max(a)
    if p == -math.inf:
        return xp.min(a)
    if p == 0:
        return xp.sum(xp.astype(a != 0, a.dtype))
    if p == 1:
        return xp.sum(a)
    if p == 2:
        return xp.sqrt(xp.sum(a * a))
    return xp.pow(xp.sum(xp.pow(a, p)), 1.0 / p)


def clip_grad_norm_(parameters: TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    r"""Scale the gradients of ``parameters`` so that their total norm is <= ``max_norm``.

    The total norm is the ``norm_type``-norm of all gradients concatenated into one
    vector. Every gradient is multiplied in place (``.grad`` keeps its identity) by
    :math:`\min(1, \text{max\_norm} / (\text{total} + 10^{-6}))`.

    Args:
        parameters: a Tensor or an iterable of Tensors whose ``.grad`` is clipped.
        max_norm: the largest allowed norm.
        norm_type: the p of the p-norm; ``float('inf')`` for the max-norm (default: 2).
        error_if_nonfinite: raise :class:`NonFiniteNormError` if the total norm is NaN
            or infinite (this reads the norm back from the device).
        foreach: accepted for PyTorch compatibility and ignored (a backend fuses what
            it can).

    Returns:
        The total norm of the original gradients, a 0-d tensor on their device.
    """
    params = _as_list(parameters, "clip_grad_norm_")
    grads = [p.grad for p in params if p.grad is not None]
    norm_type = float(norm_type)
    if not grads:
        from ...creation import tensor

        return tensor(0.0)
    dev = _one_device("clip_grad_norm_", grads)
    xp = dev.xp
    dtype = grads[0].array.dtype
    norms = [xp.astype(_norm(xp, g.array, norm_type), dtype)
             for g in grads if g.numel() > 0]
    total = _norm(xp, xp.stack(norms), norm_type) if norms else xp.zeros((), dtype=dtype)
    if error_if_nonfinite and not bool(xp.all(xp.isfinite(total))):
        raise NonFiniteNormError(
            f"clip_grad_norm_: the total norm of order {norm_type} of the gradients of "
            f"{len(grads)} parameter(s) is {float(total)}, so they cannot be clipped; find the "
            "source of the non-finite gradients, or pass error_if_nonfinite=False to scale "
            "by the non-finite norm anyway")
    coef = xp.clip(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.array = g.array * xp.astype(coef, g.array.dtype)
        g._version[0] += 1
    return Tensor._make(total, dev)


def get_total_norm(tensors: TensorOrTensors, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """The ``norm_type``-norm of ``tensors`` seen as one concatenated vector.

    Args:
        tensors: a Tensor or an iterable of Tensors (e.g. the gradients).
        norm_type: the p of the p-norm; ``float('inf')`` for the max-norm.
        error_if_nonfinite: raise :class:`NonFiniteNormError` if the norm is NaN or inf.
        foreach: accepted for PyTorch compatibility and ignored.
    """
    ts = [t for t in _as_list(tensors, "get_total_norm") if t is not None]
    norm_type = float(norm_type)
    if not ts:
        from ...creation import tensor

        return tensor(0.0)
    dev = _one_device("get_total_norm", ts)
    xp = dev.xp
    dtype = ts[0].array.dtype
    norms = [xp.astype(_norm(xp, t.array, norm_type), dtype) for t in ts if t.numel() > 0]
    total = _norm(xp, xp.stack(norms), norm_type) if norms else xp.zeros((), dtype=dtype)
    if error_if_nonfinite and not bool(xp.all(xp.isfinite(total))):
        raise NonFiniteNormError(f"get_total_norm: the total norm of order {norm_type} is "
                                 f"{float(total)}")
    return Tensor._make(total, dev)


def clip_grads_with_norm_(parameters: TensorOrTensors, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale the gradients of ``parameters`` by ``min(1, max_norm / (total_norm + 1e-6))``
    in place (the second half of :func:`clip_grad_norm_`)."""
    grads = [p.grad for p in _as_list(parameters, "clip_grads_with_norm_")
             if p.grad is not None]
    if not grads:
        return
    xp = grads[0].device.xp
    coef = xp.clip(max_norm / (total_norm.array + 1e-6), max=1.0)
    for g in grads:
        g.array = g.array * xp.astype(coef, g.array.dtype)
        g._version[0] += 1


def clip_grad_norm(parameters: TensorOrTensors, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated alias of :func:`clip_grad_norm_` (as in PyTorch)."""
    import warnings

    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters: TensorOrTensors, clip_value: float,
                     foreach: bool | None = None) -> None:
    """Clamp every gradient of ``parameters`` in place to ``[-clip_value, clip_value]``.

    Args:
        parameters: a Tensor or an iterable of Tensors whose ``.grad`` is clipped.
        clip_value: the largest allowed absolute value of a gradient element.
        foreach: accepted for PyTorch compatibility and ignored.
    """
    clip_value = float(clip_value)
    if clip_value < 0:
        raise ValueError(f"clip_grad_value_: clip_value must be >= 0, got {clip_value}")
    for p in _as_list(parameters, "clip_grad_value_"):
        g = p.grad
        if g is not None:
            g.array = p.device.xp.clip(g.array, min=-clip_value, max=clip_value)
            g._version[0] += 1


class _FlattenCat(Function):
    """Concatenate flattened arrays; the backward splits and reshapes the gradient."""

    def forward(ctx, *arrays):
        xp = ctx.xp
        ctx.shapes = [tuple(a.shape) for a in arrays]
        return xp.concat([xp.reshape(a, (-1,)) for a in arrays])

    def backward(ctx, grad):
        out, start = [], 0
        for shape in ctx.shapes:
            n = math.prod(shape)
            piece = ctx.xp.reshape(grad.array[start:start + n], shape)
            out.append(Tensor._make(piece, grad.device))
            start += n
        return tuple(out)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Flatten ``parameters`` into one 1-D tensor (differentiable).

    Args:
        parameters: an iterable of Tensors on one device.

    Returns:
        a 1-D tensor holding every element of every parameter, in order.
    """
    params = _as_list(parameters, "parameters_to_vector")
    if not params:
        raise ValueError("parameters_to_vector: got no parameters")
    _one_device("parameters_to_vector", params)
    return _FlattenCat.apply(*params)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy the slices of the 1-D tensor ``vec`` into ``parameters`` (the inverse of
    :func:`parameters_to_vector`). Each parameter's dtype is kept.

    Args:
        vec: a 1-D tensor with as many elements as all parameters together.
        parameters: an iterable of Tensors on ``vec``'s device.
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"vector_to_parameters: expected vec to be a Tensor, got "
                        f"{type(vec).__name__}")
    params = _as_list(parameters, "vector_to_parameters")
    if vec.ndim != 1:
        raise ShapeError(f"vector_to_parameters: expected a 1-D vec, got shape {vec.shape}")
    total = sum(p.numel() for p in params)
    if vec.numel() != total:
        raise ShapeError(f"vector_to_parameters: vec has {vec.numel()} elements but the "
                         f"{len(params)} parameters hold {total}")
    _one_device("vector_to_parameters", [vec, *params])
    xp = vec.device.xp
    start = 0
    for p in params:
        n = p.numel()
        piece = xp.reshape(vec.array[start:start + n], p.shape)
        p.array = xp.astype(piece, p.array.dtype, copy=False)
        p._version[0] += 1
        start += n


__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_",
           "clip_grad_norm", "parameters_to_vector",
           "vector_to_parameters", "NonFiniteNormError"]
