"""``vt.backends.cudnn``: cuDNN flags, with PyTorch's names and defaults.

The CUDA backend runs convolutions and fused attention through cuDNN (NVIDIA's
``nvidia-cudnn-frontend`` package) when it is installed and ``enabled`` is True, and
through its own CuPy kernels otherwise.

Attributes:
    enabled: use cuDNN where it is available (default True).
    allow_tf32: let float32 convolutions use TF32 tensor cores (default True, as in
        PyTorch; matmuls have their own flag, ``vt.backends.cuda.matmul.allow_tf32``).
    benchmark: try several algorithms per new shape and keep the fastest (default False).
    deterministic: use only deterministic algorithms (default False).
"""

from __future__ import annotations

import sys
import types

_FLAGS = {"enabled": True, "allow_tf32": True, "benchmark": False, "deterministic": False}


def is_available() -> bool:
    """Whether cuDNN can be used: a CUDA device and the cuDNN frontend are present."""
    return version() is not None


def version() -> int | None:
    """cuDNN's version as an int (``91900`` for 9.19.0), or None when it is unavailable."""
    from ._notify import cuda_backend

    backend = cuda_backend()
    get = getattr(backend, "cudnn_version", None) if backend is not None else None
    return None if get is None else get()


def _flag(name: str) -> property:
    def get(self) -> bool:
        return _FLAGS[name]

    def set_(self, value: bool) -> None:
        _FLAGS[name] = bool(value)
        from ._notify import apply_flags

        apply_flags()

    return property(get, set_, doc=f"cuDNN flag ``{name}``.")


class _CudnnModule(types.ModuleType):
    enabled = _flag("enabled")
    allow_tf32 = _flag("allow_tf32")
    benchmark = _flag("benchmark")
    deterministic = _flag("deterministic")


sys.modules[__name__].__class__ = _CudnnModule

__all__ = ["is_available", "version"]  # and the flags, properties of this module
