"""The functions of ``vt.cuda`` and ``vt.wgpu``: queries, synchronisation and memory
statistics of an accelerator's device type, as thin front-ends over the backend that
serves it (so the core imports no accelerator library).
"""

from __future__ import annotations

from typing import Any

from ..errors import DeviceError
from .device import Device
from .registry import backends


class DeviceProperties:
    """A device's properties, as ``torch.cuda.get_device_properties`` returns them."""

    _FIELDS = ("name", "major", "minor", "total_memory", "multi_processor_count",
               "L2_cache_size", "warp_size")

    def __init__(self, props: dict) -> None:
        for field in self._FIELDS:
            setattr(self, field, props.get(field))

    def __repr__(self) -> str:
        mib = None if self.total_memory is None else f"{self.total_memory >> 20}MB"
        return (f"_DeviceProperties(name={self.name!r}, major={self.major}, "
                f"minor={self.minor}, total_memory={mib}, "
                f"multi_processor_count={self.multi_processor_count})")


class Accelerator:
    """``torch.cuda``-style functions for one device type (``"cuda"``, ``"wgpu"``).

    A module binds them by name: ``memory_allocated = Accelerator("cuda").memory_allocated``.
    A ``device`` argument is None (the first device), an index, or a device string.
    """

    def __init__(self, device_type: str) -> None:
        self.device_type = device_type

    def _backend(self) -> Any:
        return Device(self.device_type).backend

    def _index(self, device: Any) -> int:
        if device is None:
            return 0
        if isinstance(device, int):
            device = f"{self.device_type}:{device}"
        return Device(device).index

    def is_available(self) -> bool:
        """Whether a backend for this device type is installed and finds a device."""
        return any(b.device_type == self.device_type and b.available for b in backends())

    def device_count(self) -> int:
        """Number of devices (0 when unavailable)."""
        return self._backend().device_count() if self.is_available() else 0

    def get_device_name(self, device: Any = None) -> str:
        """The device's name, e.g. ``NVIDIA H100 80GB HBM3``."""
        return self._backend().device_name(self._index(device))

    def get_device_properties(self, device: Any = None) -> DeviceProperties:
        """The device's properties: ``name``, ``major``/``minor`` (compute capability),
        ``total_memory`` (bytes), ``multi_processor_count`` (None where the backend does
        not tell)."""
        return DeviceProperties(self._backend().device_properties(self._index(device)))

    def get_device_capability(self, device: Any = None) -> tuple[int, int]:
        """The device's compute capability ``(major, minor)``, e.g. ``(9, 0)`` on an H100."""
        props = self.get_device_properties(device)
        return props.major, props.minor

    def synchronize(self, device: Any = None) -> None:
        """Wait for all queued work on a device."""
        self._backend().synchronize(self._index(device))

    def memory_allocated(self, device: Any = None) -> int:
        """Bytes currently held by tensors on a device."""
        return self._backend().memory_allocated(self._index(device))

    def max_memory_allocated(self, device: Any = None) -> int:
        """Peak of :func:`memory_allocated` since start or the last reset."""
        return self._backend().max_memory_allocated(self._index(device))

    def memory_reserved(self, device: Any = None) -> int:
        """Bytes held by the memory pool: allocated to tensors plus cached for reuse."""
        return self._backend().memory_reserved(self._index(device))

    def reset_peak_memory_stats(self, device: Any = None) -> None:
        """Restart tracking of :func:`max_memory_allocated` from the current allocation."""
        self._backend().reset_peak_memory_stats(self._index(device))

    def reset_max_memory_allocated(self, device: Any = None) -> None:
        """PyTorch's older name of :func:`reset_peak_memory_stats`."""
        self.reset_peak_memory_stats(device)

    def mem_get_info(self, device: Any = None) -> tuple[int, int]:
        """``(free, total)`` bytes of the device's memory, as its driver reports them."""
        backend = self._backend()
        if not hasattr(backend, "mem_get_info"):
            raise DeviceError(f"mem_get_info: the {backend.name} backend serving "
                              f"{self.device_type} does not report free device memory")
        return backend.mem_get_info(self._index(device))

    def memory_stats(self, device: Any = None) -> dict[str, int]:
        """The memory statistics Volta tracks, under PyTorch's key names
        (``allocated_bytes.all.current``/``.peak``, ``reserved_bytes.all.current``)."""
        allocated = self.memory_allocated(device)
        reserved = self.memory_reserved(device)
        return {"allocated_bytes.all.current": allocated,
                "allocated_bytes.all.peak": self.max_memory_allocated(device),
                "reserved_bytes.all.current": reserved,
                "inactive_split_bytes.all.current": reserved - allocated}

    def memory_summary(self, device: Any = None, abbreviated: bool = False) -> str:
        """A readable table of :func:`memory_stats`."""
        stats = self.memory_stats(device)
        index = self._index(device)
        rows = [("Allocated memory", stats["allocated_bytes.all.current"],
                 stats["allocated_bytes.all.peak"]),
                ("Reserved memory", stats["reserved_bytes.all.current"], None)]
        lines = [f"Memory summary of {self.device_type}:{index}",
                 f"{'':20s}{'current':>14s}{'peak':>14s}"]
        for name, cur, peak in rows:
            peak_s = "" if peak is None else f"{peak / 2**20:11.1f} MiB"
            lines.append(f"{name:20s}{cur / 2**20:10.1f} MiB{peak_s:>14s}")
        return "\n".join(lines)

    def set_per_process_memory_fraction(self, fraction: float, device: Any = None) -> None:
        """Cap the memory pool of the device at ``fraction`` of its total memory (an
        allocation beyond raises ``OutOfMemoryError``)."""
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"set_per_process_memory_fraction: fraction must be in "
                             f"[0, 1], got {fraction}")
        backend = self._backend()
        if not hasattr(backend, "set_memory_fraction"):
            raise DeviceError(f"set_per_process_memory_fraction: the {backend.name} backend "
                              f"serving {self.device_type} has no memory cap")
        backend.set_memory_fraction(fraction, self._index(device))

    def ipc_collect(self) -> None:
        """Nothing to collect: Volta shares no device memory between processes."""

    def init(self) -> None:
        """Start the backend of this device type now (it otherwise starts on first use)."""
        if self.is_available():
            Device(self.device_type).xp  # noqa: B018 - the namespace starts the backend

    def is_initialized(self) -> bool:
        """Whether this device type's backend is usable in this process."""
        return self.is_available()

    def empty_cache(self, device: Any = None) -> None:
        """Give the pool's cached, unused memory back to the driver (tensors keep theirs)."""
        backend = self._backend()
        if device is None:
            backend.empty_cache()
        else:
            backend.empty_cache(self._index(device))

    def _devices(self, device: Any = None) -> list[Device]:
        if not self.is_available():
            return []  # as PyTorch: seeding an absent accelerator is a silent no-op
        if device == "all":
            return [Device(f"{self.device_type}:{i}") for i in range(self.device_count())]
        return [Device(f"{self.device_type}:{self._index(device)}")]

    def manual_seed(self, seed: int) -> None:
        """Seed the default generator of the first device (a no-op when unavailable)."""
        from ..random import _default

        for dev in self._devices():
            _default(dev).manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        """Seed the default generators of every device of this type."""
        from ..random import _default

        for dev in self._devices("all"):
            _default(dev).manual_seed(seed)

    def seed_all(self) -> None:
        """Seed every device's default generator from the OS's entropy."""
        from ..random import entropy_seed

        self.manual_seed_all(entropy_seed())

    def seed(self) -> None:
        """Seed the first device's default generator from the OS's entropy."""
        from ..random import entropy_seed

        self.manual_seed(entropy_seed())

    def initial_seed(self) -> int:
        """The seed of the first device's default generator."""
        from ..random import _default

        return _default(Device(self.device_type)).initial_seed()

    def current_device(self) -> int:
        """The index of the current device (Volta's devices are explicit: always 0)."""
        return 0

    def set_device(self, device: Any) -> None:
        """Check that ``device`` exists (Volta's devices are explicit: nothing is current)."""
        if self.is_available():
            Device(f"{self.device_type}:{self._index(device)}")

    def is_bf16_supported(self, including_emulation: bool = True) -> bool:
        """Whether the first device has the ``bfloat16`` dtype (False when unavailable)."""
        if not self.is_available():
            return False
        return "bfloat16" in self._backend().dtype_names(0)

    def get_rng_state(self, device: Any = None):
        """The default generator's state of a device, as a ``uint8`` tensor."""
        from ..random import _default

        return _default(Device(f"{self.device_type}:{self._index(device)}")).get_state()

    def set_rng_state(self, new_state: Any, device: Any = None) -> None:
        """Restore a state returned by :meth:`get_rng_state`."""
        from ..random import _default

        _default(Device(f"{self.device_type}:{self._index(device)}")).set_state(new_state)

    def get_rng_state_all(self) -> list:
        """:func:`get_rng_state` of every device of this type."""
        return [self.get_rng_state(i) for i in range(self.device_count())]

    def set_rng_state_all(self, new_states: Any) -> None:
        """Restore the states :func:`get_rng_state_all` returned, device by device."""
        for i, state in enumerate(new_states):
            self.set_rng_state(state, i)

    def bind(self, namespace: dict) -> list[str]:
        """Put these functions into a module's ``namespace``; returns their names."""
        names = ["is_available", "device_count", "get_device_name", "get_device_properties",
                 "get_device_capability", "synchronize", "reset_max_memory_allocated",
                 "mem_get_info", "memory_stats", "memory_summary",
                 "set_per_process_memory_fraction", "ipc_collect", "init", "is_initialized",
                 "seed", "get_rng_state_all", "set_rng_state_all",
                 "memory_allocated", "max_memory_allocated", "memory_reserved",
                 "reset_peak_memory_stats", "empty_cache", "manual_seed", "manual_seed_all",
                 "seed_all", "initial_seed", "current_device", "set_device",
                 "is_bf16_supported", "get_rng_state", "set_rng_state"]
        for name in names:
            namespace[name] = getattr(self, name)
        return names
