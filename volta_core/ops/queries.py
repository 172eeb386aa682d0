"""Type and size queries as functions: ``is_tensor``, ``is_floating_point``,
``is_complex``, ``is_nonzero``, ``numel``, ``result_type``, ``can_cast``, ``typename``,
``broadcast_shapes``."""

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


def result_type(tensor1: Any, tensor2: Any) -> Any:
    """The dtype an arithmetic op on the two operands (tensors or Python numbers) gives."""
    from ..creation import tensor
    from ._util import result_type as _result_type

    def as_tensor(v: Any, other: Any) -> Tensor:
        if isinstance(v, Tensor):
            return v
        dev = other.device if isinstance(other, Tensor) else None
        return tensor(v, device=dev)

    return _result_type(as_tensor(tensor1, tensor2), as_tensor(tensor2, tensor1))


def can_cast(from_: Any, to: Any) -> bool:
    """Whether PyTorch's casting rules allow ``from_`` to ``to`` implicitly (no move to a
    lower category: float to int, or anything but bool to bool)."""
    from ..dtypes import get_dtype

    order = {"b": 0, "u": 1, "i": 1, "f": 2}
    return order[get_dtype(from_).kind] <= order[get_dtype(to).kind]


def typename(obj: Any) -> str:
    """``"torch.FloatTensor"`` for a tensor (see ``Tensor.type()``), else the type's name."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """The shape that ``shapes`` broadcast to (a ``ShapeError`` if they do not)."""
    from ._util import broadcast_shapes as _broadcast

    return _broadcast("broadcast_shapes", *[(s,) if isinstance(s, int) else tuple(s)
                                             for s in shapes])


__all__ = ["is_tensor", "is_floating_point", "is_complex", "is_nonzero", "numel",
           "result_type", "can_cast", "typename", "broadcast_shapes"]
