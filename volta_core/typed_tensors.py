"""PyTorch's legacy typed-tensor constructors: ``vt.FloatTensor``, ``vt.LongTensor``, ...

Each is a callable that builds a CPU tensor of its dtype, ``FloatTensor([1, 2])`` from
data or ``FloatTensor(2, 3)`` of a size (zero-filled, where PyTorch leaves the memory
uninitialised), and a class for ``isinstance`` checks: ``isinstance(t, vt.FloatTensor)``
is True for a float32 CPU tensor, as in PyTorch. ``Tensor.type()`` names them.
"""

from __future__ import annotations

from typing import Any

from .dtypes import DType, get_dtype
from .errors import DTypeError
from .tensor import Tensor

_NAMES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
          "BFloat16Tensor": "bfloat16", "LongTensor": "int64", "IntTensor": "int32",
          "ShortTensor": "int16", "CharTensor": "int8", "ByteTensor": "uint8",
          "BoolTensor": "bool"}
_BY_DTYPE = {dtype: name for name, dtype in _NAMES.items()}


class _TensorType(type):
    """The metaclass: calling builds a tensor; ``isinstance`` checks dtype and device."""

    dtype_name: str

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:
        from .creation import tensor, zeros

        dtype = get_dtype(cls.dtype_name)
        if not args:
            return zeros(0, dtype=dtype, device=device)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return zeros(*args, dtype=dtype, device=device)
        if len(args) == 1:
            data = args[0]
            if isinstance(data, Tensor):
                if data.dtype is not dtype:
                    raise DTypeError(f"{cls.__name__}(tensor): expected a {dtype.name} "
                                     f"tensor, got {data.dtype.name}; use "
                                     f"tensor.to({dtype.name}) to convert")
                return data
            return tensor(data, dtype=dtype, device=device)
        raise TypeError(f"{cls.__name__}() takes sizes (ints) or one sequence of data, got "
                        f"{tuple(type(a).__name__ for a in args)}")

    def __instancecheck__(cls, obj: Any) -> bool:
        return (isinstance(obj, Tensor) and obj.dtype.name == cls.dtype_name
                and obj.device.type == "cpu")

    def __repr__(cls) -> str:
        return f"<class 'volta_core.{cls.__name__}'>"


def _make(name: str) -> type:
    return _TensorType(name, (), {"dtype_name": _NAMES[name], "__module__": "volta_core",
                                  "__doc__": f"A {_NAMES[name]} CPU tensor constructor."})


FloatTensor = _make("FloatTensor")
DoubleTensor = _make("DoubleTensor")
HalfTensor = _make("HalfTensor")
BFloat16Tensor = _make("BFloat16Tensor")
LongTensor = _make("LongTensor")
IntTensor = _make("IntTensor")
ShortTensor = _make("ShortTensor")
CharTensor = _make("CharTensor")
ByteTensor = _make("ByteTensor")
BoolTensor = _make("BoolTensor")


class Size(tuple):
    """``torch.Size``: a tuple of dimension sizes. Volta's ``Tensor.shape`` is a plain
    tuple, which compares equal to a ``Size`` of the same sizes."""

    def numel(self) -> int:
        """The number of elements of a tensor of this shape."""
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"volta_core.Size({list(self)})"


def type_name(t: Tensor) -> str:
    """``Tensor.type()``: ``"torch.FloatTensor"``, ``"torch.cuda.LongTensor"``, ..."""
    name = _BY_DTYPE.get(t.dtype.name, f"{t.dtype.name}Tensor")
    return f"torch.{name}" if t.device.type == "cpu" else f"torch.{t.device.type}.{name}"


def tensor_type(spec: Any) -> DType:
    """The dtype named by ``Tensor.type(spec)``: a dtype, a typed class, or its name."""
    if isinstance(spec, _TensorType):
        return get_dtype(spec.dtype_name)
    if isinstance(spec, str):
        short = spec.rsplit(".", 1)[-1]
        if short in _NAMES:
            return get_dtype(_NAMES[short])
    try:
        return get_dtype(spec)
    except (TypeError, ValueError):
        raise DTypeError(f"Tensor.type(): invalid type {spec!r}; pass a dtype, a class such "
                         f"as vt.LongTensor, or a name such as 'torch.LongTensor'") from None


__all__ = [*_NAMES, "Size"]
