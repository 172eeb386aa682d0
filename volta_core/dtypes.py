"""Volta's dtypes and PyTorch-style type promotion.

A :class:`DType` is a backend-independent name; each backend maps it to its own array
dtype (``getattr(xp, dtype.name)`` for namespaces that follow the Array API standard).
"""

from __future__ import annotations

from .errors import DTypeError


class DType:
    """A tensor element type, such as ``volta_core.float32``.

    Args:
        name: the Array-API name of the dtype (``"float32"``, ``"int64"``, ``"bool"``).
        kind: ``"b"`` bool, ``"u"`` unsigned, ``"i"`` signed integer, ``"f"`` floating.
        itemsize: bytes per element.
    """

    __slots__ = ("name", "kind", "itemsize")

    def __init__(self, name: str, kind: str, itemsize: int) -> None:
        self.name = name
        self.kind = kind
        self.itemsize = itemsize

    @property
    def is_floating_point(self) -> bool:
        """True for float16, bfloat16, float32 and float64."""
        return self.kind == "f"

    @property
    def is_signed(self) -> bool:
        """True for signed integers and floats."""
        return self.kind in "if"

    def __repr__(self) -> str:
        return f"volta.{self.name}"

    def __reduce__(self):
        return (get_dtype, (self.name,))


bool_ = DType("bool", "b", 1)
uint8 = DType("uint8", "u", 1)
int8 = DType("int8", "i", 1)
int16 = DType("int16", "i", 2)
int32 = DType("int32", "i", 4)
int64 = DType("int64", "i", 8)
uint32 = DType("uint32", "u", 4)
float16 = DType("float16", "f", 2)
bfloat16 = DType("bfloat16", "f", 2)
float32 = DType("float32", "f", 4)
float64 = DType("float64", "f", 8)

ALL_DTYPES = (bool_, uint8, int8, int16, int32, int64, uint32, float16, bfloat16, float32, float64)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_ALIASES = {"float": float32, "double": float64, "half": float16, "long": int64, "int": int32,
            "short": int16, "bool_": bool_}

_default_float = float32


def get_dtype(dtype) -> DType:
    """Return the :class:`DType` for a DType, a name (``"float32"``) or a Python type.

    Args:
        dtype: a ``DType``, a dtype name, ``float``, ``int`` or ``bool``, or any object
            whose ``str()`` or ``.name`` is a dtype name (NumPy, CuPy dtypes).
    """
    if isinstance(dtype, DType):
        return dtype
    if dtype is float:
        return _default_float
    if dtype is int:
        return int64
    if dtype is bool:
        return bool_
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None) or str(dtype)
    found = _BY_NAME.get(name) or _ALIASES.get(name)
    if found is None:
        raise DTypeError(f"unknown dtype {dtype!r}; expected one of {sorted(_BY_NAME)}")
    return found


def get_default_dtype() -> DType:
    """Return the dtype of floating tensors made from Python floats (float32 by default)."""
    return _default_float


def set_default_dtype(dtype) -> None:
    """Set the default floating dtype.

    Args:
        dtype: a floating dtype (``volta_core.float32`` or ``volta_core.float64``, ...).
    """
    global _default_float
    d = get_dtype(dtype)
    if not d.is_floating_point:
        raise DTypeError(f"set_default_dtype: expected a floating dtype, got {d.name}")
    _default_float = d


_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2}
_SIGNED_BY_SIZE = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}


def promote_types(a: DType, b: DType) -> DType:
    """Return the dtype PyTorch gives to an op between tensors of dtypes ``a`` and ``b``.

    The higher category (bool < integer < floating) wins; within a category the wider
    type wins. An unsigned and a signed integer give a signed type wide enough for both
    (``uint8`` with ``int8`` is ``int16``); ``float16`` with ``bfloat16`` is ``float32``.

    Args:
        a: first dtype.
        b: second dtype.
    """
    if a is b:
        return a
    ka, kb = _ORDER[a.kind], _ORDER[b.kind]
    if ka != kb:
        return a if ka > kb else b
    if a.kind == "b":
        return a
    if a.kind == "f":
        if {a.name, b.name} == {"float16", "bfloat16"}:
            return float32
        return a if a.itemsize >= b.itemsize else b
    if a.kind == b.kind:  # both signed or both unsigned
        return a if a.itemsize >= b.itemsize else b
    signed, unsigned = (a, b) if a.kind == "i" else (b, a)
    if signed.itemsize > unsigned.itemsize:
        return signed
    return _BY_NAME[_SIGNED_BY_SIZE.get(unsigned.itemsize * 2, "int64")]


def scalar_result_type(t: DType, scalar) -> DType:
    """Return the dtype of an op between a tensor of dtype ``t`` and a Python scalar.

    As in PyTorch, a scalar only changes the category: an int tensor with a float
    scalar becomes the default float dtype, a bool tensor with an int becomes int64.

    Args:
        t: the tensor's dtype.
        scalar: a Python bool, int or float.
    """
    if isinstance(scalar, bool):
        return t
    if isinstance(scalar, int):
        return int64 if t.kind == "b" else t
    if isinstance(scalar, float):
        return t if t.kind == "f" else _default_float
    raise DTypeError(f"expected a Python number, got {type(scalar).__name__}")


_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
              "float32": 3.4028234663852886e38}


def checked_scalar(op: str, dtype: DType, value, floats: bool = False, fill: bool = False):
    """``value`` converted for an integer ``dtype`` as PyTorch checks it (``full``,
    ``clamp``, ``where``, ``pow``): NaN, inf and numbers out of range raise a
    ``DTypeError``; unsigned types also take the ints ``-max..-1``, which wrap. With
    ``floats`` (the ops whose PyTorch converts the number to a floating ``dtype`` with a
    check: ``clamp``, ``masked_fill``, ``hardtanh``, an ``alpha``, ``fill_`` and ``full``
    of several elements), a finite number beyond the dtype's largest value raises too.
    With ``fill`` (a number written by ``__setitem__``, ``fill_`` or ``full`` of one
    element), only float32 checks its range: PyTorch rounds a float16 or bfloat16 number
    to inf unchecked there. Other dtypes take any value.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if dtype.kind == "f":
        top = _FLOAT_MAX.get(dtype.name if floats or dtype.name == "float32" else "")
        if (floats or fill) and top is not None and abs(value) > top and \
                abs(value) != float("inf"):
            raise DTypeError(f"{op}: value {value!r} cannot be converted to {dtype.name} "
                             "without overflow")
        return value
    if dtype.kind not in "iu":
        return value
    bits = 8 * dtype.itemsize
    hi = 2 ** bits - 1 if dtype.kind == "u" else 2 ** (bits - 1) - 1
    lo = -hi if dtype.kind == "u" else -hi - 1
    if isinstance(value, float) and dtype.kind == "u":
        lo = 0  # a float must lie in the range itself (-1.5 does not wrap into uint8)
    if value != value or not lo <= value <= hi:  # NaN fails the first test
        raise DTypeError(f"{op}: value {value!r} cannot be converted to {dtype.name} without "
                         "overflow")
    if dtype.kind == "u" and isinstance(value, int) and value < 0:
        return value + 2 ** bits
    return value


__all__ = [
    "DType", "bool_", "uint8", "int8", "int16", "int32", "int64", "uint32", "float16",
    "bfloat16", "float32", "float64", "get_dtype", "get_default_dtype", "set_default_dtype",
    "promote_types", "scalar_result_type", "ALL_DTYPES",
]
