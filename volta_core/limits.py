"""Numeric limits of dtypes: ``vt.finfo`` and ``vt.iinfo``, as PyTorch's."""

from __future__ import annotations

from typing import Any

from .dtypes import get_default_dtype, get_dtype
from .errors import DTypeError

# bits, eps, max, tiny (smallest normal), resolution
_FLOAT = {
    "float16": (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 0.001),
    "bfloat16": (16, 2.0 ** -7, 3.3895313892515355e38, 2.0 ** -126, 0.01),
    "float32": (32, 2.0 ** -23, 3.4028234663852886e38, 2.0 ** -126, 1e-06),
    "float64": (64, 2.0 ** -52, 1.7976931348623157e308, 2.0 ** -1022, 1e-15),
}


class finfo:  # noqa: N801 - named as PyTorch's
    """Limits of a floating dtype: ``bits``, ``eps``, ``max``, ``min``, ``tiny`` (=
    ``smallest_normal``), ``resolution``. The default dtype when none is given."""

    def __init__(self, type: Any = None) -> None:  # noqa: A002
        dt = get_default_dtype() if type is None else get_dtype(type)
        if dt.name not in _FLOAT:
            raise DTypeError(f"torch.finfo() requires a floating point input type, got "
                             f"{dt.name}. Use vt.iinfo to handle it")
        self.dtype = dt.name
        self.bits, self.eps, self.max, self.tiny, self.resolution = _FLOAT[dt.name]
        self.min = -self.max
        self.smallest_normal = self.tiny

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:  # noqa: N801 - named as PyTorch's
    """Limits of an integer dtype: ``bits``, ``max``, ``min``."""

    def __init__(self, type: Any) -> None:  # noqa: A002
        dt = get_dtype(type)
        if dt.kind not in "iub":
            raise DTypeError(f"torch.iinfo() requires an integer input type, got {dt.name}. "
                             "Use vt.finfo to handle it")
        self.dtype = dt.name
        self.bits = 8 * dt.itemsize
        if dt.kind == "b":
            self.min, self.max = 0, 1
        elif dt.kind == "u":
            self.min, self.max = 0, 2 ** self.bits - 1
        else:
            self.min, self.max = -(2 ** (self.bits - 1)), 2 ** (self.bits - 1) - 1

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


__all__ = ["finfo", "iinfo"]
