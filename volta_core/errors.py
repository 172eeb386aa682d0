"""Volta's error hierarchy.

Every error is a :class:`VoltaError` and also a subclass of the matching builtin, so
``except ValueError`` keeps working for code written against PyTorch or NumPy.
"""

from __future__ import annotations


class VoltaError(Exception):
    """Base class of every error Volta raises on purpose."""


class ShapeError(VoltaError, ValueError):
    """Shapes that do not fit together (broadcasting, matmul, reshape, ...)."""


class DTypeError(VoltaError, TypeError):
    """A dtype the op or the backend cannot handle."""


class DeviceError(VoltaError, RuntimeError):
    """Tensors on different devices, or an unknown device string."""


class BackendUnavailableError(VoltaError, RuntimeError):
    """A backend that is installed but cannot run here (missing library or hardware)."""


class AutogradError(VoltaError, RuntimeError):
    """Misuse of the autograd engine (freed graph, in-place change of a saved tensor, ...)."""


class IndexOutOfRangeError(VoltaError, IndexError):
    """An index outside the dimension it indexes."""


class DivisionByZeroError(VoltaError, ZeroDivisionError):
    """Integer division or remainder by zero (floats give inf or NaN instead)."""


class CheckpointError(VoltaError, RuntimeError):
    """A checkpoint file that is truncated, corrupt or of an unknown format."""


class OutOfMemoryError(VoltaError, MemoryError):
    """A device allocation that does not fit in the device's memory."""


class GraphCaptureError(VoltaError, RuntimeError):
    """Work that a CUDA graph capture cannot record (a host sync), or a misused graph."""


class LinAlgError(VoltaError, RuntimeError):
    """A factorisation that cannot be completed: a singular matrix, or one that is not
    positive-definite (``vt.linalg.LinAlgError``, as ``torch.linalg.LinAlgError``)."""


__all__ = [
    "VoltaError", "ShapeError", "DTypeError", "DeviceError", "BackendUnavailableError",
    "AutogradError", "IndexOutOfRangeError", "CheckpointError", "OutOfMemoryError",
    "DivisionByZeroError", "GraphCaptureError", "LinAlgError",
]
