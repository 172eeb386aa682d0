"""``vt.wgpu``: WebGPU device queries, synchronisation and memory statistics.

The counterpart of :mod:`volta_core.cuda` for the backend serving the ``wgpu`` device
type: thin front-ends, so the core imports no wgpu library. Memory figures are bytes of
the backend's pooled buffers (each rounded up to its pool bucket, as PyTorch's caching
allocator rounds to its blocks); an allocation that fails empties the cache and retries
by itself before raising :class:`~volta_core.errors.OutOfMemoryError`.
"""

from __future__ import annotations

from .backend.accelerator import Accelerator

__all__ = Accelerator("wgpu").bind(globals())
