"""Error classes: Volta's hierarchy when ``volta_core`` is importable, else builtins."""

from __future__ import annotations

try:
    from volta_core.errors import (
        DeviceError,
        DTypeError,
        IndexOutOfRangeError,
        OutOfMemoryError,
        ShapeError,
    )
except ImportError:  # pragma: no cover - volta_wgpu used on its own
    class ShapeError(ValueError):  # type: ignore[no-redef]
        """Shapes that do not fit together."""

    class DTypeError(TypeError):  # type: ignore[no-redef]
        """A dtype the op or the device cannot handle."""

    class IndexOutOfRangeError(IndexError):  # type: ignore[no-redef]
        """An index outside the dimension it indexes."""

    class OutOfMemoryError(MemoryError):  # type: ignore[no-redef]
        """An allocation larger than the adapter allows."""

    class DeviceError(RuntimeError):  # type: ignore[no-redef]
        """The device failed to run the work."""

__all__ = ["ShapeError", "DTypeError", "IndexOutOfRangeError", "OutOfMemoryError",
           "DeviceError"]
