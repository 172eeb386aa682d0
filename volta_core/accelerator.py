"""``vt.accelerator``: the machine's accelerator, as ``torch.accelerator``.

The accelerator is the device type ``vt.device("auto")`` picks when it is not the CPU:
CUDA when available, else a wgpu GPU adapter (a software adapter such as lavapipe does
not count). With none, :func:`current_accelerator` is None and :func:`is_available` False,
so ``dev = vt.accelerator.current_accelerator() if vt.accelerator.is_available() else
"cpu"`` works as in PyTorch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .backend.accelerator import Accelerator
from .backend.device import Device, _auto

_index = 0  # the current device index, set by set_device_index


def current_accelerator(check_available: bool = False) -> Device | None:
    """The accelerator's device type as a device (``device(type='cuda')``), or None."""
    type_, _ = _auto()
    return None if type_ == "cpu" else Device(type_)


def is_available() -> bool:
    """Whether an accelerator is present."""
    return current_accelerator() is not None


def _require() -> Accelerator:
    acc = current_accelerator()
    if acc is None:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return Accelerator(acc.type)


def device_count() -> int:
    """Number of accelerator devices (0 when none)."""
    acc = current_accelerator()
    return 0 if acc is None else Accelerator(acc.type).device_count()


def current_device_index() -> int:
    """The index of the current accelerator device."""
    _require()
    return _index


def set_device_index(device: Any, /) -> None:
    """Make ``device`` (an index, or a device of the accelerator's type) the current one."""
    global _index
    acc = _require()
    index = Device(device).index if not isinstance(device, int) else device
    if not 0 <= index < acc.device_count():
        raise RuntimeError(f"set_device_index: device index {index} is out of range for "
                           f"{acc.device_count()} {acc.device_type} device(s)")
    _index = index


current_device_idx = current_device_index
set_device_idx = set_device_index


@contextlib.contextmanager
def device_index(device: Any, /) -> Iterator[None]:
    """Make ``device`` current inside the ``with`` block (None leaves it unchanged)."""
    global _index
    old = _index
    if device is not None:
        set_device_index(device)
    try:
        yield
    finally:
        _index = old


def synchronize(device: Any = None, /) -> None:
    """Wait for all queued work on an accelerator device (the current one when None)."""
    _require().synchronize(_index if device is None else device)


def empty_cache() -> None:
    """Give the accelerator's cached, unused memory back to the driver."""
    if is_available():
        _require().empty_cache()


def memory_allocated(device: Any = None, /) -> int:
    """Bytes currently held by tensors on an accelerator device."""
    return _require().memory_allocated(_index if device is None else device)


def max_memory_allocated(device: Any = None, /) -> int:
    """Peak of :func:`memory_allocated` since start or the last reset."""
    return _require().max_memory_allocated(_index if device is None else device)


def memory_reserved(device: Any = None, /) -> int:
    """Bytes held by the accelerator's memory pool."""
    return _require().memory_reserved(_index if device is None else device)


def reset_peak_memory_stats(device: Any = None, /) -> None:
    """Restart tracking of :func:`max_memory_allocated`."""
    _require().reset_peak_memory_stats(_index if device is None else device)


__all__ = ["current_accelerator", "is_available", "device_count", "current_device_index",
           "set_device_index", "current_device_idx", "set_device_idx", "device_index",
           "synchronize", "empty_cache", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "reset_peak_memory_stats"]
