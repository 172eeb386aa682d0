"""``vt.backends``: list the backends (call it) and hold backend flags (submodules).

``vt.backends()`` lists every discovered backend with its availability and reason, as
``volta info`` prints it. The submodules hold PyTorch's flags:
``vt.backends.cuda.matmul.allow_tf32`` (TF32 matmuls, off by default) and
``vt.backends.cudnn`` (``enabled``, ``allow_tf32`` (on by default), ``benchmark``,
``deterministic``, ``is_available()``, ``version()``).
"""

from __future__ import annotations

import sys
import types

from ..backend.registry import BackendInfo
from ..backend.registry import backends as _list_backends
from . import cuda, cudnn  # noqa: F401 - ``vt.backends.cuda.matmul``, ``vt.backends.cudnn``

__all__ = ["BackendList", "cuda", "cudnn"]


class BackendList(list):
    """A list of :class:`BackendInfo` that prints one backend per line."""

    def __repr__(self) -> str:
        return "\n".join(str(b) for b in self)

    __str__ = __repr__


class _BackendsModule(types.ModuleType):
    """This package, callable: ``vt.backends()`` lists the backends."""

    def __call__(self) -> list[BackendInfo]:
        """List every discovered backend with its availability, reason and devices."""
        return BackendList(_list_backends())


sys.modules[__name__].__class__ = _BackendsModule
