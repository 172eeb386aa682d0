"""``vt.cpu``: the CPU counterpart of ``vt.cuda`` (``vt.cpu.amp.autocast``)."""

from __future__ import annotations

from .amp import cpu_amp as amp

__all__ = ["amp", "is_available", "device_count", "synchronize"]


def is_available() -> bool:
    """Always True: the NumPy reference backend serves the CPU."""
    return True


def device_count() -> int:
    """Always 1, as in PyTorch."""
    return 1


def synchronize(device=None) -> None:
    """A no-op on the CPU (its ops finish before they return)."""
