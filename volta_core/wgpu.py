"""``vt.wgpu``: WebGPU device queries, synchronisation and memory statistics.

The counterpart of :mod:`volta_core.cuda` for the backend serving the ``wgpu`` device
type: thin front-ends, so the core imports no wgpu library. Memory figures are bytes of
the backend's pooled buffers (each rounded up to its pool bucket, as PyTorch's caching
allocator rounds to its blocks); an allocation that fails empties the cache and retries
by itself before raising :class:`~volta_core.errors.OutOfMemoryError`.
"""

from __future__ import annotations

from .backend.accelerator import Accelerator
from .backend.device import Device

__all__ = Accelerator("wgpu").bind(globals())


def set_lazy(enabled: bool) -> None:
    """Record elementwise ops on wgpu tensors lazily and run each chain as one fused kernel.

    A chain runs when a value is needed (a non-elementwise op, a host read, a
    synchronize); a reduction or softmax computes a pending input inside its own kernel.
    On by default; ``VOLTA_WGPU_EAGER=1`` in the environment starts with it off, to debug a
    fused kernel. Fused results equal eager ones bit for bit.

    Args:
        enabled: True for lazy fusion, False for eager execution.
    """
    Device("wgpu").backend.set_lazy(enabled)


def is_lazy() -> bool:
    """Whether wgpu elementwise ops are recorded lazily (see :func:`set_lazy`)."""
    return Device("wgpu").backend.is_lazy()


__all__ += ["set_lazy", "is_lazy"]
