"""Signal windows, as PyTorch makes them: ``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window`` (periodic by default: the window of
``length + 1`` points without its last, as spectral analysis wants)."""

from __future__ import annotations

import math
from typing import Any

from ..tensor import Tensor


def _window(name: str, length: int, periodic: bool, dtype: Any, device: Any,
            requires_grad: bool, shape: Any) -> Tensor:
    from ..creation import arange, ones, zeros
    from ..dtypes import get_default_dtype

    if length < 0:
        raise ValueError(f"{name} requires non-negative window_length, got "
                         f"window_length={length}")
    dtype = dtype or get_default_dtype()
    if length <= 1:
        out = (ones if length else zeros)(length, dtype=dtype, device=device)
    else:
        n = length + 1 if periodic else length
        x = arange(length, dtype=dtype, device=device) * (2 * math.pi / (n - 1))
        out = shape(x)
    return out.requires_grad_() if requires_grad else out


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                device: Any = None, requires_grad: bool = False) -> Tensor:
    """``0.5 - 0.5 cos(2 pi n / (N - 1))`` for ``n < window_length`` (``N`` is
    ``window_length + 1`` when ``periodic``)."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda x: 0.5 - 0.5 * x.cos())


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Tensor:
    """``alpha - beta cos(2 pi n / (N - 1))`` (``N`` as in :func:`hann_window`)."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda x: alpha - beta * x.cos())


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    device: Any = None, requires_grad: bool = False) -> Tensor:
    """``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda x: 0.42 - 0.5 * x.cos() + 0.08 * (2 * x).cos())


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    device: Any = None, requires_grad: bool = False) -> Tensor:
    """The triangle ``1 - |2 n / (N - 1) - 1|``."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda x: 1 - (x / math.pi - 1).abs())


__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window"]
