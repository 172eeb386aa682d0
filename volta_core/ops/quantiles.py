"""Quantiles: ``quantile`` and ``nanquantile``, by sorting and interpolating between the
two nearest order statistics (differentiable through the sort's gather)."""

from __future__ import annotations

import math
from typing import Any

from ..errors import DTypeError, ShapeError
from ..tensor import Tensor, tensor_method
from ._util import normalize_dim

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(op: str, x: Tensor, q: Any, dim: int | None, keepdim: bool,
              interpolation: str, ignore_nan: bool) -> Tensor:
    from ..creation import tensor
    from .elementwise import where

    if x.dtype.name not in ("float32", "float64"):  # PyTorch's check: no 2-byte floats
        raise DTypeError(f"{op}() input tensor must be either float or double dtype, got "
                         f"{x.dtype.name}; convert it with .float()")
    if interpolation not in _MODES:
        raise ValueError(f"{op}() interpolation must be one of {', '.join(_MODES)}. Got "
                         f"'{interpolation}'")
    scalar_q = not isinstance(q, Tensor)
    qt = tensor(float(q), dtype=x.dtype, device=x.device) if scalar_q else q.to(x.dtype)
    if qt.ndim > 1:
        raise ShapeError(f"{op}() q must be a scalar or 1D tensor, got shape {qt.shape}")
    if bool(((qt < 0) | (qt > 1)).any()):
        raise ValueError(f"{op}() q values must be in the range [0, 1]")
    if x.ndim == 0 and dim is not None:  # dim 0 or -1 of a 0-d tensor: all of it
        normalize_dim(op, dim, 1)
        dim = None
    if dim is None:
        work, d = x.reshape(-1), 0
    else:
        d = normalize_dim(op, dim, x.ndim)
        work = x
    values = work.sort(dim=d).values.movedim(d, -1)  # NaNs sort last
    n = values.shape[-1]
    nans = values.isnan().sum(-1, keepdim=True)
    count = (n - nans) if ignore_nan else values.new_full(nans.shape, n).to("int64")
    last = (count - 1).clamp(min=0).to(x.dtype)
    qs = qt.reshape(-1)
    pos = last.unsqueeze(-1) * qs  # (..., 1, Q)
    lo, hi = pos.floor(), pos.ceil()
    if interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    elif interpolation == "nearest":
        lo = hi = pos.round()
    flat = values.unsqueeze(-2).expand(*values.shape[:-1], qs.shape[0], n)
    below = flat.gather(-1, lo.to("int64").reshape(*lo.shape[:-2], -1, 1)).squeeze(-1)
    above = flat.gather(-1, hi.to("int64").reshape(*hi.shape[:-2], -1, 1)).squeeze(-1)
    frac = (pos - lo).reshape(below.shape)
    if interpolation == "midpoint":
        frac = where(hi.reshape(below.shape) > lo.reshape(below.shape), 0.5, 0.0)
    if interpolation in ("linear", "midpoint"):  # PyTorch's two-sided lerp: next to -inf
        out = below.lerp(above, frac.to(below.dtype))  # it gives -inf, not NaN
    else:  # an order statistic itself (inf stays inf)
        out = below
    has_nan = (nans > 0) if not ignore_nan else (count == 0)
    out = where(has_nan.expand(*out.shape[:-1], 1), math.nan, out)
    out = out.movedim(-1, 0)  # (Q, ...)
    if keepdim:
        out = out.unsqueeze(d + 1) if dim is not None else out.reshape(
            out.shape[0], *(1,) * x.ndim)
    return out.squeeze(0) if scalar_q else out


@tensor_method()
def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The ``q``-th quantiles of ``input`` (over all elements, or along ``dim``).

    Args:
        q: a probability in [0, 1] or a 1-d tensor of them (a leading result dim).
        interpolation: ``linear``, ``lower``, ``higher``, ``midpoint`` or ``nearest``
            (round half to even, as PyTorch).
    Any NaN in a slice makes its quantiles NaN (see :func:`nanquantile`).
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


@tensor_method()
def nanquantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """:func:`quantile` ignoring NaNs (a slice of only NaNs gives NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


__all__ = ["quantile", "nanquantile"]
