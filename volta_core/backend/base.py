"""The contract between the Volta core and a backend.

A backend subclasses :class:`Backend` and overrides what its library offers. The
defaults here are written against the Array API standard, so a backend whose
library already speaks it needs little more than ``namespace()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Generator:
    """A seedable random generator on one device, the interface the core relies on.

    Every method returns a backend array on the generator's device.
    """

    def manual_seed(self, seed: int) -> None:
        """Reset the generator to the stream of ``seed``."""
        raise NotImplementedError

    def get_state(self) -> dict:
        """Return the generator's state as JSON-serialisable data."""
        raise NotImplementedError

    def set_state(self, state: dict) -> None:
        """Restore a state returned by :meth:`get_state`."""
        raise NotImplementedError

    def uniform(self, shape: tuple, dtype: Any, low: float = 0.0, high: float = 1.0):
        """Samples from U[low, high)."""
        raise NotImplementedError

    def normal(self, shape: tuple, dtype: Any, mean: float = 0.0, std: float = 1.0):
        """Samples from N(mean, std^2)."""
        raise NotImplementedError

    def integers(self, low: int, high: int, shape: tuple, dtype: Any):
        """Integers drawn uniformly from [low, high)."""
        raise NotImplementedError

    def permutation(self, n: int, dtype: Any):
        """A random permutation of ``range(n)``."""
        raise NotImplementedError


class Backend:
    """One array library serving one device type.

    Subclasses set the class attributes and override the methods their library needs.

    Attributes:
        name: the backend's name, as in its entry point (``"numpy"``, ``"cupy"``).
        device_type: the device type it serves (``"cpu"``, ``"cuda"``, ``"wgpu"``).
        extra: the pip extra that installs its library (``"cupy"``), or None.
        is_gpu: whether its devices are GPUs (used by ``device="auto"``).
        kernels: extension kernels it implements, by name. Each takes ``xp`` first.
        tolerances: conformance tolerances ``{dtype name: (rtol, atol)}`` overriding
            the suite's defaults where the backend's arithmetic differs.
        unsupported: conformance cases it cannot run, ``{case pattern: reason}``.
    """

    name: str = "?"
    device_type: str = "?"
    extra: str | None = None
    is_gpu: bool = False
    kernels: dict[str, Callable] = {}
    tolerances: dict[str, tuple[float, float]] = {}
    unsupported: dict[str, str] = {}

    # -- availability ---------------------------------------------------------------
    def is_available(self) -> bool:
        """Whether the backend can run here; must not raise."""
        return self.unavailable_reason() is None

    def unavailable_reason(self) -> str | None:
        """Why the backend cannot run here (missing library, no device), or None."""
        return None

    def device_count(self) -> int:
        """How many devices of :attr:`device_type` this machine has."""
        return 1

    def device_name(self, index: int) -> str:
        """A human-readable name of device ``index`` (``"NVIDIA H100"``)."""
        return f"{self.device_type}:{index}"

    # -- arrays -----------------------------------------------------------------------
    def namespace(self, index: int) -> Any:
        """The Array-API namespace whose arrays live on device ``index``."""
        raise NotImplementedError

    def native_device(self, index: int) -> Any:
        """The namespace's device object for ``index`` (passed as ``device=``)."""
        return None

    def dtype_names(self, index: int) -> tuple[str, ...]:
        """Names of the dtypes device ``index`` supports."""
        return ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
                "float64")

    def device_properties(self, index: int) -> dict:
        """What is known of device ``index``: at least ``name``; GPU backends add
        ``major``/``minor`` (compute capability), ``total_memory`` (bytes),
        ``multi_processor_count``."""
        return {"name": self.device_name(index)}

    def native_dtype(self, index: int, name: str) -> Any:
        """The namespace's dtype object for the Volta dtype called ``name``."""
        return getattr(self.namespace(index), name)

    def dtype_name(self, native_dtype: Any) -> str:
        """The Volta dtype name of one of the namespace's dtypes."""
        name = getattr(native_dtype, "name", None)
        return name if isinstance(name, str) else str(native_dtype)

    def from_host(self, data: Any, index: int, dtype: Any = None, copy: bool | None = None):
        """Make an array on device ``index`` from host data.

        Args:
            data: a NumPy array, a nested list or scalar, or any DLPack-capable array.
            index: the device index.
            dtype: the namespace's dtype, or None to keep the data's.
            copy: as in the standard's ``asarray``: None copies only when needed.
        """
        xp = self.namespace(index)
        return xp.asarray(data, dtype=dtype, device=self.native_device(index), copy=copy)

    def to_host(self, array: Any) -> Any:
        """Return ``array`` as a NumPy array on the host (a copy unless already there)."""
        raise NotImplementedError(f"backend {self.name!r} does not implement to_host")

    def generator(self, index: int) -> Generator:
        """The random generator of device ``index`` (one per device, created once)."""
        raise NotImplementedError

    def new_generator(self, index: int) -> Generator:
        """A fresh generator on device ``index``, independent of :meth:`generator`'s
        (backs ``vt.Generator(device)``). The default makes another instance of the
        device generator's class, called with the index (the in-tree generators take it
        or a seed, which ``manual_seed`` replaces); override when yours differs."""
        return type(self.generator(index))(index)

    def synchronize(self, index: int) -> None:
        """Wait until all work queued on device ``index`` is done."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} for {self.device_type!r}>"
