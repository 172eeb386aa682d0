"""Bitwise ops as functions (``bitwise_and``, ``bitwise_or``, ``bitwise_xor``,
``bitwise_not``), the named forms of ``&``, ``|``, ``^`` and ``~`` on bool and integer
tensors."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor, tensor_method


@tensor_method()
def bitwise_and(input: Tensor, other: Any) -> Tensor:
    """``input & other``."""
    return input & other


@tensor_method()
def bitwise_or(input: Tensor, other: Any) -> Tensor:
    """``input | other``."""
    return input | other


@tensor_method()
def bitwise_xor(input: Tensor, other: Any) -> Tensor:
    """``input ^ other``."""
    return input ^ other


@tensor_method()
def bitwise_not(input: Tensor) -> Tensor:
    """``~input``."""
    return ~input


__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"]
