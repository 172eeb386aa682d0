"""``vt.wgpu``: WebGPU device queries, synchronisation and memory statistics.

The counterpart of :mod:`volta_core.cuda` for the backend serving the ``wgpu`` device
type: thin front-ends, so the core imports no wgpu library. Memory figures are bytes of
the backend's pooled buffers (each rounded up to its pool bucket, as PyTorch's caching
allocator rounds to its blocks).
"""

from __future__ import annotations

from .backend.device import Device
from .backend.registry import backends


def _backend():
    return Device("wgpu").backend


def _index(device) -> int:
    if device is None:
        return 0
    return Device(device if not isinstance(device, int) else f"wgpu:{device}").index


def is_available() -> bool:
    """Whether a wgpu backend is installed and finds a WebGPU adapter."""
    return any(b.device_type == "wgpu" and b.available for b in backends())


def device_count() -> int:
    """Number of wgpu devices (0 when unavailable)."""
    return _backend().device_count() if is_available() else 0


def get_device_name(device=None) -> str:
    """The adapter's name, e.g. ``llvmpipe (LLVM 15.0.6, 256 bits)``."""
    return _backend().device_name(_index(device))


def synchronize(device=None) -> None:
    """Wait for all queued work on a wgpu device."""
    _backend().synchronize(_index(device))


def memory_allocated(device=None) -> int:
    """Bytes currently held by tensors on a wgpu device."""
    return _backend().memory_allocated(_index(device))


def max_memory_allocated(device=None) -> int:
    """Peak of :func:`memory_allocated` since start or the last reset."""
    return _backend().max_memory_allocated(_index(device))


def memory_reserved(device=None) -> int:
    """Bytes held by the buffer pool: allocated to tensors plus cached for reuse."""
    return _backend().memory_reserved(_index(device))


def reset_peak_memory_stats(device=None) -> None:
    """Restart tracking of :func:`max_memory_allocated` from the current allocation."""
    _backend().reset_peak_memory_stats(_index(device))


def empty_cache(device=None) -> None:
    """Give the pool's cached, unused buffers back to the driver.

    Tensors keep their memory; an allocation that fails empties the cache and retries
    by itself before raising :class:`~volta_core.errors.OutOfMemoryError`.
    """
    _backend().empty_cache(_index(device))


__all__ = ["is_available", "device_count", "get_device_name", "synchronize",
           "memory_allocated", "max_memory_allocated", "memory_reserved",
           "reset_peak_memory_stats", "empty_cache"]
