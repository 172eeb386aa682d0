"""Counting and covariance: ``bincount``, ``isin``, ``cov``, ``corrcoef``."""

from __future__ import annotations

from typing import Any

from ..autograd.grad_mode import no_grad
from ..errors import DTypeError, ShapeError
from ..tensor import Tensor, tensor_method


@tensor_method()
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each value ``0..max`` occurs in the 1-d non-negative int ``input`` (or
    the sum of ``weights`` at each value)."""
    if input.ndim != 1 or input.dtype.kind not in "iu":
        raise DTypeError(f"bincount only supports 1-d non-negative integral inputs, got "
                         f"{input.dtype.name} of shape {input.shape}")
    if input.numel() and int(input.min()) < 0:
        raise ValueError("bincount only supports 1-d non-negative integral inputs.")
    n = max(int(input.max()) + 1 if input.numel() else 0, minlength)
    if weights is None:  # int64 counts whatever the input's dtype (uint8 would wrap at 256)
        idx = input.to("int64")
        with no_grad():
            return idx.new_zeros((n,)).scatter_add(0, idx, idx.new_ones(idx.shape))
    if weights.shape != input.shape:
        raise ShapeError(f"bincount: weights {weights.shape} must have input's shape "
                         f"{input.shape}")
    if not input.numel():  # PyTorch's counts, int64, whatever the weights' dtype
        return input.new_zeros((n,), dtype="int64")
    # PyTorch sums float32 and float64 weights in their dtype, all others in float64
    w = weights if weights.dtype.name in ("float32", "float64") else weights.to("float64")
    return w.new_zeros((n,)).scatter_add(0, input.to("int64"), w)


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """For each element of ``elements``, whether it occurs in ``test_elements``."""
    from ..creation import tensor

    ref = elements if isinstance(elements, Tensor) else test_elements
    e = elements if isinstance(elements, Tensor) else tensor(elements, device=ref.device)
    t = test_elements if isinstance(test_elements, Tensor) else tensor(
        test_elements, device=ref.device)
    with no_grad():
        hit = (e.reshape(*e.shape, 1) == t.reshape(-1)).any(-1) if t.numel() else \
            e.new_zeros(e.shape).to("bool")
        return ~hit if invert else hit


@tensor_method()
def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input`` (observations in
    the columns); differentiable."""
    if input.ndim > 2:
        raise ShapeError(f"cov(): expected input to have two or fewer dimensions but got "
                         f"an input with {input.ndim} dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    if not x.dtype.is_floating_point:
        x = x.to("float32")
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights.to(x.dtype)
    if w is None:
        total = x.shape[1]
        avg = x.mean(1, keepdim=True)
        norm = total - correction
    else:
        total = w.sum()
        avg = (x * w).sum(1, keepdim=True) / total
        if correction == 0:
            norm = total
        elif aweights is None:
            norm = total - correction
        else:
            norm = total - correction * (w * aweights.to(x.dtype)).sum() / total
    xc = x - avg
    xw = xc if w is None else xc * w
    out = xw.matmul(xc.t()) / norm
    return out.reshape(()) if x.shape[0] == 1 else out  # one variable: a scalar, as PyTorch


@tensor_method()
def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the variables in the rows of ``input``."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal().sqrt()
    return (c / d.unsqueeze(1) / d.unsqueeze(0)).clamp(-1, 1)


__all__ = ["bincount", "isin", "cov", "corrcoef"]
