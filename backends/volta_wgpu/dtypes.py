"""Dtype objects of the wgpu namespace, type promotion, ``finfo``/``iinfo``, ``isdtype``.

WGSL has no 8- or 16-bit integers in storage buffers and no ``bool`` storage, so
``bool`` is stored as one ``u32`` per element. ``float16`` and ``float64`` exist only
when the device enabled the matching feature (``shader-f16``, ``shader-f64``); see
:func:`volta_wgpu.engine.get_engine`.

``int64`` exists on every adapter. With ``shader-int64`` it is a real ``i64``. Without
it (OpenGL/GLES, WebGPU itself, many mobile GPUs) it is *emulated*: each element is a
``vec2<u32>`` of its low and high words (the bytes of a little-endian int64), and the
kernels do 64-bit arithmetic on the pair (:mod:`volta_wgpu.kernels.int64_emu`), so every
int64 value and result is exact, as on a device with ``i64``.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any

import numpy as np


class DType:
    """An element type of :class:`volta_wgpu.Array`.

    Attributes:
        name: Array-API name (``"float32"``).
        kind: ``"b"`` bool, ``"i"`` signed, ``"u"`` unsigned, ``"f"`` floating.
        itemsize: bytes per element on the device (4 for bool).
        np: the matching NumPy dtype on the host.
        wgsl: the WGSL type used in arithmetic (``bool`` for bool).
        storage: the WGSL type of the storage-buffer element.
        feature: the device feature it needs, or None.
        emu: True for ``int64`` emulated as a ``vec2<u32>`` pair (the device lacks
            ``shader-int64``).
    """

    __slots__ = ("name", "kind", "itemsize", "np", "wgsl", "storage", "feature", "bits",
                 "emu")

    def __init__(self, name: str, kind: str, itemsize: int, npdt: str, wgsl: str,
                 storage: str, feature: str | None = None) -> None:
        self.name = name
        self.kind = kind
        self.itemsize = itemsize
        self.np = np.dtype(npdt)
        self.wgsl = wgsl
        self.storage = storage
        self.feature = feature
        self.bits = np.dtype(npdt).itemsize * 8
        self.emu = False  # a (lo, hi) vec2<u32> on the device (int64 without shader-int64)

    def __repr__(self) -> str:
        return f"volta_wgpu.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return other is self
        if isinstance(other, str):
            return other == self.name
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)


bool = DType("bool", "b", 4, "bool", "bool", "u32")  # noqa: A001 - Array-API name
int32 = DType("int32", "i", 4, "int32", "i32", "i32")
uint32 = DType("uint32", "u", 4, "uint32", "u32", "u32")
float32 = DType("float32", "f", 4, "float32", "f32", "f32")
float16 = DType("float16", "f", 2, "float16", "f16", "f16", "shader-f16")
float64 = DType("float64", "f", 8, "float64", "f64", "f64", "shader-f64")
int64 = DType("int64", "i", 8, "int64", "i64", "i64", "shader-int64")

ALL = (bool, int32, uint32, float32, float16, float64, int64)
_BY_NAME = {d.name: d for d in ALL}
_BY_NP = {d.np: d for d in ALL}


def _by_name(name: str) -> DType:
    return _BY_NAME[name]


def configure(features: Any) -> None:
    """Fit ``int64`` to a device's features: a real ``i64``, or emulated as a ``vec2<u32>``
    pair when ``shader-int64`` is missing. Called once per new engine."""
    emu = "shader-int64" not in features
    int64.emu = emu
    int64.wgsl = int64.storage = "vec2<u32>" if emu else "i64"


def supported(features: Any = None) -> tuple[DType, ...]:
    """The dtypes available on a device with the given enabled features."""
    if features is None:
        from .engine import get_engine
        features = get_engine().features
    return tuple(d for d in ALL if d is int64 or d.feature is None or d.feature in features)


def default_int() -> DType:
    """``int64`` (emulated where the device lacks ``shader-int64``)."""
    return int64


def default_float() -> DType:
    """The default floating dtype, ``float32``."""
    return float32


def check_supported(dtype: DType, op: str = "") -> DType:
    """Raise a DTypeError when the device lacks ``dtype``'s feature."""
    if dtype.feature is not None and dtype is not int64 and dtype not in supported():
        from ._errors import DTypeError
        raise DTypeError(f"{op or 'wgpu'}: dtype {dtype.name} needs the device feature "
                         f"{dtype.feature!r}, which this adapter does not offer; "
                         f"use float32/int32 instead")
    return dtype


def as_dtype(dtype: Any) -> DType:
    """Return our DType for a DType, a name, a NumPy dtype or a Python type."""
    if isinstance(dtype, DType):
        return dtype
    if dtype is builtins_bool:
        return bool
    if dtype is int:
        return default_int()
    if dtype is float:
        return float32
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None)
    if isinstance(name, str) and name in _BY_NAME:
        return _BY_NAME[name]
    try:
        npdt = np.dtype(dtype)
    except TypeError:
        npdt = None
    if npdt is not None and npdt in _BY_NP:
        return _BY_NP[npdt]
    from ._errors import DTypeError
    raise DTypeError(f"wgpu: unsupported dtype {dtype!r}; supported: "
                     f"{[d.name for d in ALL]}")


builtins_bool = builtins.bool

_INT_RANK = {"int32": 1, "uint32": 2, "int64": 3}


def promote(a: DType, b: DType) -> DType:
    """Array-API type promotion of two dtypes (mixed kinds go to the wider kind)."""
    if a is b:
        return a
    ka, kb = "bui f".index(a.kind), "bui f".index(b.kind)
    if a.kind in "ui" and b.kind in "ui":
        if {a.name, b.name} == {"int32", "uint32"}:
            return int64
        return a if _INT_RANK[a.name] >= _INT_RANK[b.name] else b
    if a.kind == "f" and b.kind == "f":
        return a if a.itemsize >= b.itemsize else b
    return a if ka > kb else b


def result_type(*arrays_and_dtypes: Any) -> DType:
    """The dtype of an op over the given arrays, dtypes and Python scalars."""
    dts = [x.dtype if hasattr(x, "dtype") and not isinstance(x, np.generic) else x
           for x in arrays_and_dtypes if not isinstance(x, (int, float, complex))]
    scalars = [x for x in arrays_and_dtypes if isinstance(x, (int, float))]
    if not dts:
        from ._errors import DTypeError
        raise DTypeError("result_type: need at least one array or dtype")
    out = as_dtype(dts[0])
    for d in dts[1:]:
        out = promote(out, as_dtype(d))
    for s in scalars:
        out = scalar_promote(out, s)
    return out


def scalar_promote(dtype: DType, scalar: Any) -> DType:
    """The dtype of an op between an array of ``dtype`` and a Python scalar."""
    if isinstance(scalar, builtins_bool):
        return dtype
    if isinstance(scalar, int):
        return default_int() if dtype.kind == "b" else dtype
    if isinstance(scalar, float):
        return dtype if dtype.kind == "f" else float32
    from ._errors import DTypeError
    raise DTypeError(f"wgpu: expected a Python bool, int or float, got {type(scalar).__name__}")


def isdtype(dtype: DType, kind: Any) -> builtins_bool:
    """Array-API ``isdtype``: test a dtype against a dtype or a kind name (or a tuple)."""
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, DType):
        return dtype is kind
    table = {"bool": "b", "signed integer": "i", "unsigned integer": "u",
             "integral": "iu", "real floating": "f", "numeric": "iuf"}
    if kind == "complex floating":
        return False
    if kind not in table:
        raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of {sorted(table)}")
    return dtype.kind in table[kind]


@dataclass(frozen=True)
class finfo_object:  # noqa: N801 - Array-API name
    """Machine limits of a floating dtype."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


@dataclass(frozen=True)
class iinfo_object:  # noqa: N801 - Array-API name
    """Machine limits of an integer dtype."""

    bits: int
    max: int
    min: int
    dtype: DType


def finfo(type: Any) -> finfo_object:  # noqa: A002 - Array-API signature
    """Machine limits of a floating dtype (or an array of one)."""
    d = as_dtype(getattr(type, "dtype", type))
    if d.kind != "f":
        raise ValueError(f"finfo: {d.name} is not a floating dtype; use iinfo")
    f = np.finfo(d.np)
    return finfo_object(d.bits, float(f.eps), float(f.max), float(f.min),
                        float(f.smallest_normal), d)


def iinfo(type: Any) -> iinfo_object:  # noqa: A002 - Array-API signature
    """Machine limits of an integer dtype (or an array of one)."""
    d = as_dtype(getattr(type, "dtype", type))
    if d.kind not in "iu":
        raise ValueError(f"iinfo: {d.name} is not an integer dtype; use finfo")
    f = np.iinfo(d.np)
    return iinfo_object(d.bits, int(f.max), int(f.min), d)
