"""volta_wgpu: an Array-API array library over wgpu buffers, and Volta's WebGPU backend.

``import volta_wgpu as xp`` gives the namespace (``xp.asarray``, ``xp.add``, ...).
Importing it does not import wgpu; the device is opened on first use.
"""

from __future__ import annotations

import math as _math

from . import dtypes as _dtypes
from . import linalg  # the linalg extension
from .array import Array, Device, to_numpy
from .dtypes import (
    bool,
    finfo,
    float16,
    float32,
    float64,
    iinfo,
    int32,
    int64,
    isdtype,
    result_type,
    uint32,
)
from .engine import synchronize
from .lazy import is_lazy, set_lazy
from .namespace import *  # noqa: F403
from .namespace import __all__ as _ns_all

__array_api_version__ = "2023.12"

e = _math.e
pi = _math.pi
inf = _math.inf
nan = _math.nan
newaxis = None


def can_cast(from_: object, to: object, /) -> bool:
    """Whether ``from_`` (a dtype or array) converts to ``to`` without loss of kind."""
    f = _dtypes.as_dtype(getattr(from_, "dtype", from_))
    t = _dtypes.as_dtype(to)
    return _dtypes.promote(f, t) is t


class _Info:
    """What :func:`__array_namespace_info__` returns."""

    def capabilities(self) -> dict:
        return {"boolean indexing": True, "data-dependent shapes": True}

    def default_device(self) -> Device:
        return Device(0)

    def devices(self) -> list[Device]:
        return [Device(0)]

    def default_dtypes(self, *, device: object = None) -> dict:
        return {"real floating": float32, "integral": _dtypes.default_int(),
                "indexing": _dtypes.default_int()}

    def dtypes(self, *, device: object = None, kind: object = None) -> dict:
        # the standard's dtypes only: float16 (where the adapter has it) is an extra,
        # see volta_wgpu.dtypes.supported()
        return {d.name: d for d in _dtypes.supported()
                if d is not float16 and (kind is None or isdtype(d, kind))}


def __array_namespace_info__() -> _Info:
    """Array-API inspection object (devices and dtypes)."""
    return _Info()


__all__ = sorted(set(_ns_all) | {
    "Array", "Device", "to_numpy", "synchronize", "bool", "int32", "uint32", "int64",
    "float16", "float32", "float64", "finfo", "iinfo", "isdtype", "result_type", "can_cast",
    "e", "pi", "inf", "nan", "newaxis", "__array_namespace_info__", "linalg",
    "set_lazy", "is_lazy"})
