"""The NumPy backend: the CPU reference every other backend is compared with."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from volta_core.backend import Backend, Generator

# NumPy warns where IEEE arithmetic gives inf or NaN (log(0), 0/0, inf - inf, ...); PyTorch
# is silent there, and a log(tril(...)) mask or top-k sampling hits it in correct code.
# Ignored only for calls made from Volta's own modules, so users' NumPy code still warns;
# a filter costs nothing per op, unlike np.errstate around every call.
_QUIET_MODULES = r"(volta_core|volta_numpy|array_api_compat)(\.|$)"


def quiet_numpy_warnings() -> None:
    """Ignore NumPy's floating-point RuntimeWarnings raised from Volta's modules."""
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=_QUIET_MODULES)


quiet_numpy_warnings()


class NumpyGenerator(Generator):
    """A NumPy PCG64 generator, seedable and with a JSON-serialisable state."""

    def __init__(self, seed: int = 0) -> None:
        self.manual_seed(seed)

    def manual_seed(self, seed: int) -> None:
        self._rng = np.random.Generator(np.random.PCG64(seed))

    def get_state(self) -> dict:
        state = self._rng.bit_generator.state
        return {"state": {k: int(v) for k, v in state["state"].items()},
                "has_uint32": int(state["has_uint32"]), "uinteger": int(state["uinteger"])}

    def set_state(self, state: dict) -> None:
        self._rng.bit_generator.state = {"bit_generator": "PCG64", **state}

    def uniform(self, shape, dtype, low=0.0, high=1.0):
        if dtype in (np.float32, np.float64):
            out = self._rng.random(shape, dtype=dtype)
        else:
            out = self._rng.random(shape).astype(dtype)
        if low != 0.0 or high != 1.0:
            out = (out * (high - low) + low).astype(dtype, copy=False)
        return np.asarray(out)

    def normal(self, shape, dtype, mean=0.0, std=1.0):
        if dtype in (np.float32, np.float64):
            out = self._rng.standard_normal(shape, dtype=dtype)
        else:
            out = self._rng.standard_normal(shape).astype(dtype)
        if mean != 0.0 or std != 1.0:
            out = (out * std + mean).astype(dtype, copy=False)
        return np.asarray(out)

    def integers(self, low, high, shape, dtype):
        return np.asarray(self._rng.integers(low, high, size=shape, dtype=dtype))

    def permutation(self, n, dtype):
        return self._rng.permutation(n).astype(dtype, copy=False)


class NumpyBackend(Backend):
    """NumPy on the CPU, through array-api-compat's NumPy namespace."""

    name = "numpy"
    device_type = "cpu"
    extra = None

    def __init__(self) -> None:
        self._xp = None
        self._generator: NumpyGenerator | None = None

    def unavailable_reason(self) -> str | None:
        return None

    @property
    def kernels(self) -> dict:
        """NumPy-specific extension kernels (conv, pooling, embedding)."""
        from .kernels import KERNELS

        return KERNELS

    def device_name(self, index: int) -> str:
        import platform

        return platform.processor() or platform.machine() or "cpu"

    def namespace(self, index: int) -> Any:
        if self._xp is None:
            from . import malloc
            from .namespace import make
            from .threads import apply_default

            apply_default()  # BLAS on the cores this process has, not the host's
            malloc.apply_default()  # reuse freed array memory (see malloc.py)
            self._xp = make()  # array-api-compat's NumPy, large matmuls threaded
        return self._xp

    def get_num_threads(self) -> int:
        """The thread count of NumPy's BLAS (``vt.get_num_threads``)."""
        from .threads import get_num_threads

        return get_num_threads()

    def set_num_threads(self, n: int) -> None:
        """Set the thread count of NumPy's BLAS (``vt.set_num_threads``)."""
        from .threads import set_num_threads

        set_num_threads(n)

    def native_device(self, index: int) -> Any:
        return "cpu"

    def dtype_names(self, index: int) -> tuple[str, ...]:
        names = ("bool", "uint8", "int8", "int16", "int32", "int64", "uint32", "float16",
                 "float32", "float64")
        return names + ("bfloat16",) if _bfloat16() is not None else names

    def native_dtype(self, index: int, name: str) -> Any:
        if name == "bfloat16":
            return np.dtype(_bfloat16())
        return np.dtype(name)

    def dtype_name(self, native_dtype: Any) -> str:
        return np.dtype(native_dtype).name

    def from_host(self, data, index, dtype=None, copy=None):
        if copy is False:
            arr = np.asarray(data)
            if dtype is not None and arr.dtype != dtype:
                raise ValueError(f"cannot convert {arr.dtype} to {dtype} without a copy")
            return arr
        return np.array(data, dtype=dtype, copy=True if copy else None)

    def to_host(self, array) -> np.ndarray:
        return np.asarray(array)

    def generator(self, index: int) -> NumpyGenerator:
        if self._generator is None:
            self._generator = NumpyGenerator()
        return self._generator


def _bfloat16():
    try:
        import ml_dtypes
    except ImportError:
        return None
    return ml_dtypes.bfloat16
