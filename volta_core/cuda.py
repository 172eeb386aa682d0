"""``vt.cuda``: CUDA device queries, synchronisation and memory statistics.

Thin front-ends over the backend that serves the ``cuda`` device type (CuPy by
default), so the core imports no CUDA library: ``is_available``, ``device_count``,
``get_device_name``, ``get_device_properties``, ``get_device_capability``,
``synchronize``, ``memory_allocated``, ``max_memory_allocated``, ``memory_reserved``,
``reset_peak_memory_stats``, ``empty_cache``; streams, events and CUDA graphs.
"""

from __future__ import annotations

from .backend.accelerator import Accelerator

__all__ = Accelerator("cuda").bind(globals())

from .amp import cuda_amp as amp  # noqa: E402 - ``vt.cuda.amp.autocast`` as in PyTorch
from .errors import OutOfMemoryError  # noqa: E402 - ``except torch.cuda.OutOfMemoryError``

__all__ = [*__all__, "amp", "OutOfMemoryError"]

from .cuda_graphs import (  # noqa: E402 - streams, events and CUDA graphs
    CUDAGraph,
    Event,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
    stream,
)

__all__ = [*__all__, "CUDAGraph", "Event", "Stream", "StreamContext", "current_stream",
           "default_stream", "graph", "graph_pool_handle", "is_current_stream_capturing",
           "make_graphed_callables", "stream"]
