"""``vt.backends``: list the backends (call it) and hold backend settings (attributes).

``vt.backends()`` lists every discovered backend; ``vt.backends.cuda.matmul.allow_tf32``
is the opt-in for TF32 matmuls on CUDA (off by default, as in PyTorch).
"""

from __future__ import annotations

from .registry import BackendInfo
from .registry import backends as _list_backends


class _MatmulSettings:
    """Settings of CUDA matrix products."""

    def __init__(self) -> None:
        self._allow_tf32 = False

    @property
    def allow_tf32(self) -> bool:
        """Whether float32 matmuls may use TF32 tensor cores (faster, ~10-bit mantissa)."""
        return self._allow_tf32

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        self._allow_tf32 = bool(value)
        from .registry import _by_type, plugin_manager

        plugin_manager()
        backend = _by_type.get("cuda")
        apply = getattr(backend, "set_allow_tf32", None)
        if apply is not None and backend.unavailable_reason() is None:
            apply(self._allow_tf32)


class _CudaSettings:
    def __init__(self) -> None:
        self.matmul = _MatmulSettings()


class BackendList(list):
    """A list of :class:`BackendInfo` that prints one backend per line."""

    def __repr__(self) -> str:
        return "\n".join(str(b) for b in self)

    __str__ = __repr__


class Backends:
    """Call to list backends; attributes hold per-backend settings."""

    def __init__(self) -> None:
        self.cuda = _CudaSettings()

    def __call__(self) -> list[BackendInfo]:
        """List every discovered backend with its availability, reason and devices."""
        return BackendList(_list_backends())

    def __repr__(self) -> str:
        return "\n".join(str(b) for b in _list_backends())


backends = Backends()
