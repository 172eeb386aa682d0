"""Type and size queries as functions: ``is_tensor``, ``is_floating_point``,
``is_complex``, ``is_nonzero``, ``numel``, ``result_type``, ``can_cast``, ``typename``,
``broadcast_shapes``; and the Tensor's own queries PyTorch programs ask (``is_signed()``,
``data_ptr()``, ``nbytes``, ``layout``, ``is_sparse``, ...), with the layout and memory
format names (``vt.strided``, ``vt.contiguous_format``, ...)."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor, tensor_method


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


class _Name:
    """A layout or memory format: only its name (Volta's tensors are all dense and
    row-major, so these are accepted and compared, never acted on)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


strided = _Name("strided")
contiguous_format = _Name("contiguous_format")
preserve_format = _Name("preserve_format")
channels_last = _Name("channels_last")
channels_last_3d = _Name("channels_last_3d")


@tensor_method()
def is_signed(self: Tensor) -> bool:
    """True for signed dtypes (floats and signed integers; not bool or uint8)."""
    return self.dtype.kind in "fi"


@tensor_method()
def is_pinned(self: Tensor) -> bool:
    """False: Volta's host tensors are not page-locked."""
    return False


@tensor_method()
def is_shared(self: Tensor) -> bool:
    """False: no tensor lives in shared memory."""
    return False


@tensor_method()
def is_inference(self: Tensor) -> bool:
    """False: tensors made under ``inference_mode`` are ordinary tensors in Volta."""
    return False


@tensor_method()
def data_ptr(self: Tensor) -> int:
    """The address of the first element: the storage's address (CPU and CUDA arrays) plus
    the offset of a view, so views of one storage compare as PyTorch's do; on devices that
    expose no address, a number unique to the storage stands for it."""
    from ..views import layout, storage

    base = storage(self).array
    info = (getattr(base, "__array_interface__", None)
            or getattr(base, "__cuda_array_interface__", None))
    start = info["data"][0] if info else id(base) * 4096
    return start + layout(self)[1] * self.dtype.itemsize


def _prop(name: str, fn: Any, doc: str) -> None:
    fn.__doc__ = doc
    setattr(Tensor, name, property(fn))


_prop("nbytes", lambda t: t.numel() * t.dtype.itemsize, "Bytes of the elements.")
_prop("itemsize", lambda t: t.dtype.itemsize, "Bytes per element.")
_prop("layout", lambda t: strided, "``vt.strided``: every tensor is dense.")
def _matrix_h(t: Tensor) -> Tensor:
    if t.ndim != 2:
        from ..errors import ShapeError

        raise ShapeError(f"tensor.H is only supported on matrices (2-D tensors), got "
                         f"{t.ndim}-D; use .mH for batches")
    return t.T


_prop("H", _matrix_h, "The conjugate transpose of a matrix (real tensors: its transpose).")
_prop("mH", lambda t: t.mT, "The conjugate transpose of the last two dims (real: ``mT``).")
for _flag in ("is_sparse", "is_quantized", "is_meta", "is_mps", "is_xpu", "is_mkldnn"):
    _prop(_flag, lambda t: False, "False: Volta has no such tensors.")


__all__ = ["is_tensor", "is_floating_point", "is_complex", "is_nonzero", "numel",
           "result_type", "can_cast", "typename", "broadcast_shapes", "strided",
           "contiguous_format", "preserve_format", "channels_last", "channels_last_3d"]
