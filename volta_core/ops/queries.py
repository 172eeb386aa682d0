"""Type and size queries as functions: ``is_tensor``, ``is_floating_point``,
``is_complex``, ``is_nonzero``, ``numel``."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor


def is_tensor(obj: Any) -> bool:
    """True if ``obj`` is a Volta tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:
    """True if ``input`` has a floating dtype."""
    return input.dtype.is_floating_point


def is_complex(input: Tensor) -> bool:
    """Always False: Volta has no complex dtypes."""
    return False


def is_nonzero(input: Tensor) -> bool:
    """The truth of a one-element tensor (raises for any other size, as PyTorch)."""
    if input.numel() != 1:
        many = "no" if input.numel() == 0 else "more than one"
        raise RuntimeError(f"Boolean value of Tensor with {many} values is ambiguous")
    return bool(input.item())


def numel(input: Tensor) -> int:
    """The number of elements of ``input``."""
    return input.numel()


__all__ = ["is_tensor", "is_floating_point", "is_complex", "is_nonzero", "numel"]
