"""``vt.cuda``: CUDA device queries, synchronisation and memory statistics.

Thin front-ends over the backend that serves the ``cuda`` device type (CuPy by
default), so the core imports no CUDA library.
"""

from __future__ import annotations

from .backend.device import Device
from .backend.registry import backends, get_backend


def _backend():
    return Device("cuda").backend


def _index(device) -> int:
    return 0 if device is None else Device(device if not isinstance(device, int)
                                           else f"cuda:{device}").index


def is_available() -> bool:
    """Whether a CUDA backend is installed and sees at least one GPU."""
    return any(b.device_type == "cuda" and b.available for b in backends())


def device_count() -> int:
    """Number of CUDA devices (0 when unavailable)."""
    return get_backend("cupy").device_count() if is_available() else 0


def get_device_name(device=None) -> str:
    """The name of a CUDA device, e.g. ``NVIDIA H100 80GB HBM3``."""
    return _backend().device_name(_index(device))


def synchronize(device=None) -> None:
    """Wait for all queued work on a CUDA device."""
    _backend().synchronize(_index(device))


def memory_allocated(device=None) -> int:
    """Bytes currently held by tensors on a CUDA device."""
    return _backend().memory_allocated(_index(device))


def max_memory_allocated(device=None) -> int:
    """Peak of :func:`memory_allocated` since start or the last reset."""
    return _backend().max_memory_allocated(_index(device))


def memory_reserved(device=None) -> int:
    """Bytes held by the memory pool (allocated plus cached)."""
    return _backend().memory_reserved(_index(device))


def reset_peak_memory_stats(device=None) -> None:
    """Restart tracking of :func:`max_memory_allocated`."""
    _backend().reset_peak_memory_stats(_index(device))


def empty_cache() -> None:
    """Give cached, unused blocks of the memory pool back to the driver."""
    _backend().empty_cache()


__all__ = ["is_available", "device_count", "get_device_name", "synchronize",
           "memory_allocated", "max_memory_allocated", "memory_reserved",
           "reset_peak_memory_stats", "empty_cache"]
