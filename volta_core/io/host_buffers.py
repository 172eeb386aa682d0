"""Host memory seen as CPU arrays, for ``vt.frombuffer`` and ``vt.asarray``: objects with
Python's buffer protocol (``bytes``, ``bytearray``, ``memoryview``, ``array.array``,
``mmap``) read without a copy, and the test for NumPy arrays and scalars handed to them.

The CPU backend's arrays are NumPy arrays, so this is where the core may touch NumPy for
host-side byte buffers (ARCHITECTURE rule 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def is_array(obj: Any) -> bool:
    """Whether ``obj`` is a NumPy array (a CPU backend array)."""
    return isinstance(obj, np.ndarray)


def is_scalar(obj: Any) -> bool:
    """Whether ``obj`` is a NumPy scalar (``np.float32(1.5)``)."""
    return isinstance(obj, np.generic)


def has_buffer(obj: Any) -> bool:
    """Whether ``obj`` exposes Python's buffer protocol."""
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def from_buffer(buffer: Any, dtype: Any, count: int = -1, offset: int = 0) -> Any:
    """The bytes of ``buffer`` from ``offset`` as ``count`` elements of the NumPy dtype
    ``dtype`` (all that fit when -1), sharing its memory."""
    return np.frombuffer(buffer, dtype=dtype, count=count, offset=offset)
