"""The strict backend: ``array_api_strict`` as the namespace, nothing else.

Only what the standard defines is available, so any non-standard call in the core
fails here loudly: that is the point of this backend.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from volta_numpy.backend import NumpyGenerator

from volta_core.backend import Backend

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "uint32", "float32", "float64")


def _xp():
    import array_api_strict

    return array_api_strict


class StrictGenerator(NumpyGenerator):
    """The reference backend's PCG64 draws, as array-api-strict arrays (the standard has
    no random numbers); seeding and state come from :class:`NumpyGenerator`."""

    def _wrap(self, values: np.ndarray, dtype: Any):
        return _xp().asarray(np.ascontiguousarray(values), dtype=dtype)

    def uniform(self, shape, dtype, low=0.0, high=1.0):
        return self._wrap(self._rng.uniform(low, high, size=shape), dtype)

    def normal(self, shape, dtype, mean=0.0, std=1.0):
        return self._wrap(self._rng.normal(mean, std, size=shape), dtype)

    def integers(self, low, high, shape, dtype):
        return self._wrap(self._rng.integers(low, high, size=shape), dtype)

    def permutation(self, n, dtype):
        return self._wrap(self._rng.permutation(n), dtype)


class StrictBackend(Backend):
    """array-api-strict on its default device, served as device type ``strict``."""

    name = "strict"
    device_type = "strict"
    extra = None

    def __init__(self) -> None:
        self._generator: StrictGenerator | None = None

    def unavailable_reason(self) -> str | None:
        try:
            import array_api_strict  # noqa: F401
        except ImportError as exc:
            return f"array-api-strict is not installed ({exc}); pip install array-api-strict"
        return None

    def device_name(self, index: int) -> str:
        return "array-api-strict CPU_DEVICE"

    def namespace(self, index: int) -> Any:
        return _xp()

    def native_device(self, index: int) -> Any:
        return _xp().Device("CPU_DEVICE")

    def dtype_names(self, index: int) -> tuple[str, ...]:
        return DTYPES

    def native_dtype(self, index: int, name: str) -> Any:
        return getattr(_xp(), name)

    def dtype_name(self, native_dtype: Any) -> str:
        return str(native_dtype).rsplit(".", 1)[-1]

    def from_host(self, data: Any, index: int, dtype: Any = None, copy: bool | None = None):
        xp = _xp()
        host = np.asarray(data)
        if dtype is not None:
            host = host.astype(self.dtype_name(dtype), copy=False)
        return xp.asarray(host, dtype=dtype, device=self.native_device(index),
                          copy=True if copy is None else copy)

    def to_host(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    def generator(self, index: int) -> StrictGenerator:
        if self._generator is None:
            self._generator = StrictGenerator()
        return self._generator
