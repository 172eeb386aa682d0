"""A complete backend for any library whose namespace follows the Array API standard.

Replace ``LIBRARY`` (array-api-strict works out of the box), the names, and the host
transfers if your arrays live off the CPU. Override ``kernels`` only for speed: every
extension kernel has a generic fallback in the core.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from volta_core.backend import Backend, Generator

LIBRARY = "array_api_strict"  # the module that is your Array-API namespace


def _xp() -> Any:
    return importlib.import_module(LIBRARY)


class MyGenerator(Generator):
    """NumPy draws moved to the device; use your library's seedable generator if it has one."""

    def __init__(self, seed: int = 0) -> None:
        self.manual_seed(seed)

    def manual_seed(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)

    def get_state(self) -> dict:
        return self._rng.bit_generator.state

    def set_state(self, state: dict) -> None:
        self._rng.bit_generator.state = state

    def uniform(self, shape, dtype, low=0.0, high=1.0):
        return _xp().asarray(self._rng.uniform(low, high, size=shape), dtype=dtype)

    def normal(self, shape, dtype, mean=0.0, std=1.0):
        return _xp().asarray(self._rng.normal(mean, std, size=shape), dtype=dtype)

    def integers(self, low, high, shape, dtype):
        return _xp().asarray(self._rng.integers(low, high, size=shape), dtype=dtype)

    def permutation(self, n, dtype):
        return _xp().asarray(self._rng.permutation(n), dtype=dtype)


class MyBackend(Backend):
    """Serves device type ``mydevice`` (``vt.zeros(3, device="mydevice")``)."""

    name = "mybackend"  # the entry point's name
    device_type = "mydevice"  # what users write in device strings
    extra = None  # a pip extra that installs your library, if any
    tolerances: dict = {}  # e.g. {"float32": (1e-4, 1e-5)} if your math differs
    unsupported: dict = {}  # e.g. {"conv*[float64]": "no float64 convolutions"}

    _generator: MyGenerator | None = None

    def unavailable_reason(self) -> str | None:
        try:
            _xp()
        except ImportError as exc:
            return f"{LIBRARY} is not installed: {exc}"
        return None

    def namespace(self, index: int) -> Any:
        return _xp()

    def dtype_names(self, index: int) -> tuple[str, ...]:
        return ("bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64")

    def dtype_name(self, native_dtype: Any) -> str:
        return str(native_dtype).rsplit(".", 1)[-1]

    def from_host(self, data: Any, index: int, dtype: Any = None, copy: bool | None = None):
        return _xp().asarray(np.asarray(data), dtype=dtype, copy=copy)

    def to_host(self, array: Any) -> np.ndarray:
        return np.asarray(array)  # or np.from_dlpack(array) for DLPack-capable arrays

    def generator(self, index: int) -> MyGenerator:
        if self._generator is None:
            self._generator = MyGenerator()
        return self._generator
