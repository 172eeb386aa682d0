"""Closeness and equality tests: ``isclose``, ``allclose``, ``equal``."""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..errors import DTypeError
from ..tensor import Tensor, tensor_method


def _pair(op: str, input: Tensor, other: Tensor) -> None:
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(f"{op}(): expected two tensors, got {type(input).__name__} and "
                        f"{type(other).__name__}")
    if input.dtype is not other.dtype:
        raise DTypeError(f"{op}(): {input.dtype.name} did not match {other.dtype.name}; "
                         f"cast one with .to({input.dtype.name})")


@tensor_method()
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (equal values, including
    equal infinities, are close; NaNs only with ``equal_nan``)."""
    _pair("isclose", input, other)
    if rtol < 0 or atol < 0:
        raise ValueError(f"isclose(): rtol ({rtol}) and atol ({atol}) must be non-negative")
    with no_grad():
        a, b = input.detach(), other.detach()
        same = a == b
        if not a.dtype.is_floating_point:
            if rtol == 0 and atol == 0 or a.dtype.name == "bool":
                return same
            a, b = a.to("float64"), b.to("float64")
        from .elementwise import where

        finite = a.isfinite() & b.isfinite()
        both_nan = a.isnan() & b.isnan()
        a, b = where(finite, a, 0.0), where(finite, b, 0.0)  # no inf - inf warnings
        close = same | (finite & ((a - b).abs() <= atol + rtol * b.abs()))
        if equal_nan:
            close = close | both_nan
        return close


@tensor_method()
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """True if every element of ``input`` is close to ``other``'s (see :func:`isclose`)."""
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


@tensor_method()
def equal(input: Tensor, other: Tensor) -> bool:
    """True if the tensors have the same shape and the same values (NaN != NaN)."""
    if input.shape != other.shape:
        return False
    with no_grad():
        return bool((input.detach() == other.detach()).all())


__all__ = ["isclose", "allclose", "equal"]
