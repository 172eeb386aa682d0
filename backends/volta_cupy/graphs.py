"""CUDA streams and CUDA graph capture for the CuPy backend (``vt.cuda.CUDAGraph``).

A capture runs on a non-blocking CuPy stream (CUDA refuses to capture the legacy default
stream) in CUDA's relaxed capture mode, so that the memory pool may still grow with
``cudaMalloc`` during a capture. Every array allocated while a capture is under way
comes from the graph's private pool (a ``cupy.cuda.MemoryPool``): its blocks are never
handed to eager code, so the addresses that the captured kernels read and write stay
valid for every replay, as with PyTorch's graph pools.
"""

from __future__ import annotations

from typing import Any

import cupy

#: CUDA errors that mean "this call is not allowed while a stream captures"
_CAPTURE_ERRORS = ("cudaErrorStreamCaptureUnsupported", "cudaErrorStreamCaptureInvalidated",
                   "cudaErrorStreamCaptureImplicit", "cudaErrorStreamCaptureUnjoined",
                   "cudaErrorStreamCaptureIsolation", "cudaErrorStreamCaptureWrongThread",
                   "cudaErrorCapturedEvent", "cudaErrorNotPermitted", "during stream capture",
                   "stream is capturing")  # CuPy's own refusals (a device-to-host copy)


def new_stream(index: int) -> Any:
    """A new non-blocking stream on GPU ``index``."""
    with cupy.cuda.Device(index):
        return cupy.cuda.Stream(non_blocking=True)


def current_stream(index: int) -> Any:
    """CuPy's current stream of GPU ``index`` (the legacy default stream unless set)."""
    with cupy.cuda.Device(index):
        return cupy.cuda.get_current_stream()


def default_stream(index: int) -> Any:
    """The legacy default stream."""
    return cupy.cuda.Stream.null


def use_stream(stream: Any) -> Any:
    """A context manager making ``stream`` CuPy's current stream of its device."""
    return stream


def new_event(enable_timing: bool, blocking: bool) -> Any:
    """A CUDA event (timing only when asked: a timing event costs more to record)."""
    return cupy.cuda.Event(block=blocking, disable_timing=not enable_timing)


def elapsed_ms(start: Any, end: Any) -> float:
    """Milliseconds between two recorded timing events."""
    return float(cupy.cuda.get_elapsed_time(start, end))


def wait_stream(stream: Any, other: Any) -> None:
    """Make future work on ``stream`` wait for the work queued on ``other`` so far."""
    if stream.ptr != other.ptr:
        stream.wait_event(other.record())


def is_capturing(stream: Any | None = None) -> bool:
    """Whether ``stream`` (default: the current one) is capturing a graph."""
    stream = cupy.cuda.get_current_stream() if stream is None else stream
    if stream.ptr == 0:
        return False
    return bool(stream.is_capturing())


def new_pool() -> Any:
    """A private memory pool for graph captures."""
    return cupy.cuda.MemoryPool()


def _refuse_pinned(size: int) -> Any:
    """The pinned-memory allocator during a capture: CuPy stages every host-to-device copy
    of host data through pinned memory, and a captured copy would re-read that recycled
    buffer on each replay, so the copy is refused."""
    from volta_core.errors import GraphCaptureError

    raise GraphCaptureError(
        "a host-to-device copy (vt.tensor(...) or .to('cuda') of host data, a NumPy array "
        "or list passed to an op) during a CUDA graph capture: a replay would not copy "
        "the data again; create the tensor before capturing and copy_() new values into "
        "it between replays")


def begin(stream: Any) -> None:
    """Start capturing ``stream`` (relaxed mode: the pool may grow with cudaMalloc)."""
    from . import batch_norm, blas, cublaslt

    device = cupy.cuda.runtime.getDevice()
    blas.prepare(device)  # the handles and workspaces: not captured
    cublaslt.prepare(device)
    batch_norm.prepare(stream)
    cupy.cuda.set_pinned_memory_allocator(_refuse_pinned)
    try:
        stream.begin_capture()
    except BaseException:
        _restore_pinned()
        raise


def _restore_pinned() -> None:
    cupy.cuda.set_pinned_memory_allocator(cupy.get_default_pinned_memory_pool().malloc)


def end(stream: Any) -> Any:
    """Stop capturing ``stream``; returns the graph (``cupy.cuda.graph.Graph``)."""
    try:
        return stream.end_capture()
    finally:
        _restore_pinned()


def launch(graph: Any, stream: Any) -> None:
    """Replay ``graph`` on ``stream``."""
    graph.launch(stream)


def is_capture_error(exc: BaseException) -> bool:
    """Whether ``exc`` is CUDA refusing a call because a stream captures."""
    text = str(exc)
    return any(name in text for name in _CAPTURE_ERRORS)
