"""Dropout: zero random elements (or whole channels) in training, scaling the rest."""

from __future__ import annotations

from typing import Any

from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..backend.kernels import get_kernel
from ..creation import rand
from ..dtypes import float32
from ..errors import ShapeError
from ..ops import nn as _kernels  # noqa: F401 - registers the kernels' fallbacks
from ..ops.inplace import inplace as _write_into
from ..tensor import Tensor
from ._checks import _check_floating, _check_tensor
from .module import Module


def _mask(x: Tensor, shape: tuple[int, ...], p: float) -> Tensor:
    """A constant keep-mask scaled by ``1 / (1 - p)`` (the ``dropout_mask`` kernel)."""
    u = rand(*shape, dtype=x.dtype, device=x.device)
    kern = get_kernel(x.device.backend, "dropout_mask")
    return Tensor._make(kern(x.device.xp, u.array, p=p), x.device)


def _mask_to_save(ctx: Function, mask: Any, scale: float) -> Any:
    """What a backward keeps of the scaled keep-mask ``mask`` (a raw array): for 4- and
    8-byte masks only which elements were kept (1 byte each), rebuilt by
    :func:`_saved_mask`; a float16/bfloat16 mask as it is (2 bytes: rebuilding would cost
    more kernels than it saves memory)."""
    ctx.mask_scale, ctx.mask_dtype = scale, mask.dtype
    ctx.mask_whole = ctx.device.volta_dtype(mask.dtype).itemsize <= 2
    return mask if ctx.mask_whole else mask != 0


def _saved_mask(ctx: Function, saved: Tensor) -> Tensor:
    """The scaled keep-mask from what :func:`_mask_to_save` kept (``keep * scale`` in the
    mask's dtype, as ``dropout_mask`` computes it)."""
    if ctx.mask_whole:
        return saved
    xp = ctx.xp
    return Tensor._make(xp.multiply(xp.astype(saved.array, ctx.mask_dtype), ctx.mask_scale),
                        ctx.device)


class _Dropout(Function):
    """``input * mask`` (``mask`` a raw scaled keep-mask, broadcast); backward keeps what
    :func:`_mask_to_save` says, so gradients are unchanged."""

    def forward(ctx, x, mask, *, scale):
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(_mask_to_save(ctx, mask, scale))
        return x * mask

    def backward(ctx, g):
        (saved,) = ctx.saved_tensors
        return g * _saved_mask(ctx, saved), None


class _ElementDropout(Function):
    """Dropout of single elements from uniform samples of the input's shape, as one
    kernel each way (``dropout_forward``/``dropout_backward``); the backward keeps only
    which elements were kept (1 byte each)."""

    def forward(ctx, x, uniform, *, p):
        ctx.p = p
        y, keep = get_kernel(ctx.device.backend, "dropout_forward")(ctx.xp, x, uniform, p=p)
        if ctx.needs_input_grad[0]:
            ctx.save_for_backward(keep)
        return y

    def backward(ctx, g):
        (keep,) = ctx.saved_tensors
        if _grad_state.enabled:  # create_graph: a differentiable product
            scale = Tensor._make(ctx.xp.astype(keep.array, g.array.dtype), ctx.device)
            return g * scale * (1.0 / (1.0 - ctx.p)), None
        kern = get_kernel(ctx.device.backend, "dropout_backward")
        return Tensor._make(kern(ctx.xp, g.array, keep.array, p=ctx.p), ctx.device), None


def _check_p(op: str, p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, got {p}")


def _drop(op: str, input: Tensor, p: float, training: bool,
          mask_shape: tuple[int, ...], inplace: bool = False) -> Tensor:
    """In training, multiply ``input`` by a keep-mask of ``mask_shape`` (broadcast); with
    ``inplace``, the result is written into ``input`` (PyTorch's ``dropout_``)."""
    if not training or p == 0.0:
        return input
    if inplace:
        return _write_into(input, f"{op}_", lambda s: _drop(op, s, p, training, mask_shape))
    _check_floating(op, input)
    if p == 1.0:
        return input * 0.0
    if tuple(mask_shape) == tuple(input.shape):
        # float32 samples for float16/bfloat16 inputs: PyTorch draws the keep-mask in float
        low = input.dtype.itemsize == 2
        u = rand(*mask_shape, dtype=float32 if low else input.dtype, device=input.device)
        return _ElementDropout.apply(input, u.array, p=p)
    return _Dropout.apply(input, _mask(input, mask_shape, p).array, scale=1.0 / (1.0 - p))


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    Args:
        input: any floating tensor.
        p: probability of an element to be zeroed.
        training: apply dropout (when False, return ``input``).
        inplace: write the result into ``input``.
    """
    _check_tensor("dropout", input)
    _check_p("dropout", p)
    return _drop("dropout", input, p, training, input.shape, inplace)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels with probability ``p`` (scaling the rest by ``1 / (1 - p)``).

    Shape:
        Input ``(N, C, H, W)`` or ``(C, H, W)``; output the same.
    """
    _check_tensor("dropout2d", input)
    _check_p("dropout2d", p)
    if input.ndim not in (3, 4):
        raise ShapeError(f"dropout2d: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, "
                         f"got shape {input.shape}")
    return _drop("dropout2d", input, p, training, input.shape[:-2] + (1, 1), inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels with probability ``p`` (scaling the rest by ``1 / (1 - p)``).

    Shape:
        Input ``(N, C, D, H, W)`` or ``(C, D, H, W)``; output the same.
    """
    _check_tensor("dropout3d", input)
    _check_p("dropout3d", p)
    if input.ndim not in (4, 5):
        raise ShapeError(f"dropout3d: expected a 4-D (C, D, H, W) or 5-D (N, C, D, H, W) "
                         f"input, got shape {input.shape}")
    return _drop("dropout3d", input, p, training, input.shape[:-3] + (1, 1, 1),
                 inplace)


def _dropout(x: Tensor, p: float, training: bool = True) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``."""
    if not training or p == 0.0:
        return x
    return dropout(x, p, training)


class Dropout(Module):
    """During training, zero elements with probability ``p`` and scale by ``1/(1-p)``.

    Args:
        p: probability of an element to be zeroed.
        inplace: write the result into the input.

    Shape:
        Input any; output the same.
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        _check_p("Dropout", p)
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Dropout):
    """During training, zero whole channels with probability ``p``.

    Shape:
        Input ``(N, C, H, W)`` or ``(C, H, W)``; output the same.
    """

    def forward(self, input: Tensor) -> Tensor:
        return dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """During training, zero whole channels of volumes with probability ``p``.

    Shape:
        Input ``(N, C, D, H, W)`` or ``(C, D, H, W)``; output the same.
    """

    def forward(self, input: Tensor) -> Tensor:
        return dropout3d(input, self.p, self.training, self.inplace)


_ALPHA_PRIME = 1.7580993408473766  # -SELU's negative saturation, scale * alpha


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    """Zero whole channels with probability ``p`` (scaling the rest by ``1 / (1 - p)``).

    Shape:
        Input ``(N, C, L)`` or ``(C, L)``; output the same.
    """
    _check_tensor("dropout1d", input)
    _check_p("dropout1d", p)
    if input.ndim not in (2, 3):
        raise ShapeError(f"dropout1d: expected a 2-D (C, L) or 3-D (N, C, L) input, got "
                         f"shape {input.shape}")
    return _drop("dropout1d", input, p, training, input.shape[:-1] + (1,), inplace)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU activations at zero mean and unit variance.

    Dropped elements are set to SELU's negative saturation ``-alpha'`` and the result is
    transformed by ``a * x + b`` with ``a = ((1 - p) (1 + p alpha'^2))^-1/2`` and
    ``b = a alpha' p``, so that mean and variance are preserved (Klambauer et al., 2017).

    Args:
        input: any floating tensor.
        p: probability of an element to be dropped.
        training: apply dropout (when False, the default as in PyTorch, return ``input``).
        inplace: write the result into ``input``.
    """
    _check_tensor("alpha_dropout", input)
    _check_p("alpha_dropout", p)
    if not training or p == 0.0:
        return input
    if inplace:
        return _write_into(input, "alpha_dropout_", lambda s: alpha_dropout(s, p, training))
    _check_floating("alpha_dropout", input)
    if p == 1.0:
        return input * 0.0
    keep = (rand(*input.shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
    a = ((1.0 - p) * (1.0 + p * _ALPHA_PRIME ** 2)) ** -0.5
    # kept: a * x + a alpha' p; dropped: a * (-alpha') + a alpha' p
    return input * (keep * a) + (keep - 1.0) * (_ALPHA_PRIME * a) + _ALPHA_PRIME * a * p


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """Alpha dropout of whole channels: every ``(sample, channel)`` of ``(N, C, *)`` is
    kept or set to SELU's saturation together (see :func:`alpha_dropout`)."""
    _check_tensor("feature_alpha_dropout", input)
    _check_p("feature_alpha_dropout", p)
    if not training or p == 0.0:
        return input
    if inplace:
        return _write_into(input, "feature_alpha_dropout_",
                           lambda s: feature_alpha_dropout(s, p, training))
    _check_floating("feature_alpha_dropout", input)
    if input.ndim < 2:
        raise ShapeError("feature_alpha_dropout: expected an input with at least 2 dims "
                         f"(N, C, *), got shape {input.shape}")
    if p == 1.0:
        return input * 0.0
    shape = (*input.shape[:2], *(1,) * (input.ndim - 2))
    keep = (rand(*shape, dtype=input.dtype, device=input.device) >= p).to(input.dtype)
    a = ((1.0 - p) * (1.0 + p * _ALPHA_PRIME ** 2)) ** -0.5
    return input * (keep * a) + (keep - 1.0) * (_ALPHA_PRIME * a) + _ALPHA_PRIME * a * p


class Dropout1d(Dropout):
    """During training, zero whole channels of ``(N, C, L)`` inputs with probability ``p``.

    Shape:
        Input ``(N, C, L)`` or ``(C, L)``; output the same.
    """

    def forward(self, input: Tensor) -> Tensor:
        return dropout1d(input, self.p, self.training, self.inplace)


class AlphaDropout(Dropout):
    """Alpha dropout for SELU networks; see :func:`alpha_dropout`.

    Args:
        p: probability of an element to be dropped.
        inplace: write the result into the input.

    Shape:
        Input any; output the same.
    """

    def forward(self, input: Tensor) -> Tensor:
        return alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(Dropout):
    """Alpha dropout of whole channels; see :func:`feature_alpha_dropout`."""

    def forward(self, input: Tensor) -> Tensor:
        return feature_alpha_dropout(input, self.p, self.training, self.inplace)


__all__ = ["Dropout", "Dropout2d", "Dropout3d", "Dropout1d", "AlphaDropout",
           "FeatureAlphaDropout"]
