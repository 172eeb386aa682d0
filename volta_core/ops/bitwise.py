"""Bitwise ops as functions (``bitwise_and``, ``bitwise_or``, ``bitwise_xor``,
``bitwise_not``, ``bitwise_left_shift``, ``bitwise_right_shift``), the named forms of
``&``, ``|``, ``^``, ``~``, ``<<`` and ``>>`` on bool and integer tensors."""

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


@tensor_method()
def bitwise_left_shift(input: Any, other: Any) -> Tensor:
    """``input << other``: a count outside ``[0, bits)`` gives 0, as in PyTorch."""
    return input << other


@tensor_method()
def bitwise_right_shift(input: Any, other: Any) -> Tensor:
    """``input >> other`` (arithmetic: a count outside ``[0, bits)`` gives the sign, 0 or
    -1, as in PyTorch)."""
    return input >> other


__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
           "bitwise_right_shift"]
