"""CUDA streams, events and CUDA graphs with PyTorch's API: ``vt.cuda.Stream``,
``vt.cuda.Event``, ``vt.cuda.stream``, ``vt.cuda.CUDAGraph``, ``vt.cuda.graph``,
``vt.cuda.make_graphed_callables``.

A CUDA graph records the kernels that a region of code launches once (the capture) and
launches them all again with one call (``replay``), with no Python, no argument checks and
no per-kernel launch cost: what small, launch-bound training steps need. As in PyTorch,
a replay repeats exactly the captured work on exactly the captured memory:

- inputs are *static*: copy new data into the tensors the capture read
  (``static_x.copy_(batch)``), then ``replay()``; outputs are the tensors the capture
  produced, overwritten by each replay;
- tensors allocated during the capture come from the graph's private memory pool, so
  their addresses stay valid for replays and eager code never reuses them;
- nothing in the region may wait for the GPU (``.item()``, printing a tensor,
  ``synchronize``) or upload a host value; Python numbers passed to kernels (a learning
  rate) are frozen into the graph; optimizers need ``capturable=True`` (their step
  counts live on the GPU).

Warm up on a side stream before capturing (a few eager iterations), so that lazily
created state (kernels, optimizer state, cuBLAS handles) exists before the capture.
The core imports no CUDA library: the work is done by the ``cuda`` backend's ``graphs``.
"""

from __future__ import annotations

import gc
from typing import Any

from .autograd.function import Function
from .backend.device import Device
from .errors import GraphCaptureError
from .tensor import Tensor
from .views import write_values


def _backend_graphs(device: Any = None) -> tuple[Any, int]:
    dev = Device("cuda" if device is None else
                 f"cuda:{device}" if isinstance(device, int) else device)
    backend = dev.backend
    graphs = getattr(backend, "graphs", None)
    if graphs is None:
        raise GraphCaptureError(f"CUDA graphs: the {backend.name} backend serving {dev} has "
                                "no streams or graph capture; install the cupy extra")
    return graphs, dev.index


class Stream:
    """A CUDA stream: an ordered queue of GPU work (``torch.cuda.Stream``).

    Work queued on different streams may run concurrently; order them with
    :meth:`wait_stream`. Make a stream current with :func:`stream`.

    Args:
        device: the GPU (None: the first).
        priority: accepted for PyTorch compatibility (every stream has the default
            priority).
    """

    def __init__(self, device: Any = None, priority: int = 0, *, _native: Any = None) -> None:
        graphs, index = _backend_graphs(device)
        self._graphs, self.device_index = graphs, index
        self.native = graphs.new_stream(index) if _native is None else _native

    @property
    def cuda_stream(self) -> int:
        """The raw ``cudaStream_t`` handle, as an int."""
        return int(self.native.ptr)

    def wait_stream(self, stream: Stream) -> None:
        """Make all future work on this stream wait for the work queued on ``stream``."""
        self._graphs.wait_stream(self.native, stream.native)

    def synchronize(self) -> None:
        """Wait for all work queued on this stream."""
        if self._graphs.is_capturing(self.native):
            raise GraphCaptureError("Stream.synchronize() on a stream that is capturing a "
                                    "CUDA graph; synchronize after the capture")
        self.native.synchronize()

    def query(self) -> bool:
        """Whether all work queued on this stream has finished."""
        return bool(self.native.done)

    def record_event(self, event: Event | None = None) -> Event:
        """Record ``event`` (a new one when None) on this stream; returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event: Event) -> None:
        """Make all future work on this stream wait for ``event``."""
        event.wait(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream

    def __hash__(self) -> int:
        return hash(self.cuda_stream)

    def __repr__(self) -> str:
        return f"<vt.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event: a marker in a stream's queue (``torch.cuda.Event``), to time GPU work
    or to make a stream wait for another's work up to that point.

    Example:
        >>> start, end = vt.cuda.Event(enable_timing=True), vt.cuda.Event(enable_timing=True)
        >>> start.record()
        >>> y = x @ x
        >>> end.record()
        >>> end.synchronize()
        >>> ms = start.elapsed_time(end)

    Args:
        enable_timing: whether :meth:`elapsed_time` may use the event.
        blocking: whether :meth:`synchronize` blocks the thread (rather than spinning).
        interprocess: events shared between processes are not supported (False only).
    """

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        if interprocess:
            raise ValueError("vt.cuda.Event: interprocess events are not supported; share "
                             "tensors between processes through vt.distributed instead")
        self._graphs, self.device_index = _backend_graphs(None)
        self.enable_timing = enable_timing
        self.native = self._graphs.new_event(enable_timing, blocking)

    def record(self, stream: Stream | None = None) -> None:
        """Mark the current point of ``stream``'s queue (default: the current stream)."""
        stream = current_stream(self.device_index) if stream is None else stream
        self.native.record(stream.native)

    def wait(self, stream: Stream | None = None) -> None:
        """Make all future work on ``stream`` (default: the current one) wait for this
        event."""
        stream = current_stream(self.device_index) if stream is None else stream
        stream.native.wait_event(self.native)

    def query(self) -> bool:
        """Whether the work recorded before this event has finished."""
        return bool(self.native.done)

    def synchronize(self) -> None:
        """Wait for the work recorded before this event."""
        self.native.synchronize()

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds of GPU time between this event and ``end_event`` (both recorded,
        both made with ``enable_timing=True``)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Event.elapsed_time: both events must be created with "
                             "enable_timing=True")
        return self._graphs.elapsed_ms(self.native, end_event.native)

    def __repr__(self) -> str:
        return f"<vt.cuda.Event device=cuda:{self.device_index} timing={self.enable_timing}>"


def current_stream(device: Any = None) -> Stream:
    """The stream that CUDA work of ``device`` is queued on now."""
    graphs, index = _backend_graphs(device)
    return Stream(index, _native=graphs.current_stream(index))


def default_stream(device: Any = None) -> Stream:
    """The default (legacy) stream of ``device``."""
    graphs, index = _backend_graphs(device)
    return Stream(index, _native=graphs.default_stream(index))


class StreamContext:
    """Context manager that makes a stream current (``torch.cuda.StreamContext``).

    Args:
        stream: the stream; None makes the context a no-op.
    """

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream

    def __enter__(self) -> Stream | None:
        if self.stream is not None:
            self.stream.native.__enter__()
        return self.stream

    def __exit__(self, *exc: Any) -> None:
        if self.stream is not None:
            self.stream.native.__exit__(*exc)


def stream(stream: Stream | None) -> StreamContext:
    """Queue the CUDA work of the ``with`` block on ``stream``.

    Example:
        >>> s = vt.cuda.Stream()
        >>> s.wait_stream(vt.cuda.current_stream())
        >>> with vt.cuda.stream(s):
        ...     y = model(x)
        >>> vt.cuda.current_stream().wait_stream(s)
    """
    return StreamContext(stream)


def is_current_stream_capturing() -> bool:
    """Whether a CUDA graph is being captured on the current stream."""
    try:
        graphs, _ = _backend_graphs()
    except Exception:
        return False
    return graphs.is_capturing()


def write_state(t: Tensor, value: Any) -> None:
    """Give a state tensor that a forward updates (running statistics, a batch count) the
    values of the backend array ``value``.

    Eagerly the tensor takes the new array; while its device captures a CUDA graph the
    values are copied into its own memory (see ``volta_core.views.write_values``).
    """
    if t._owner is None:
        write_values(t, value)
    else:
        t.array = value
    t._version[0] += 1


class _PoolHandle:
    """An opaque handle to a graph memory pool; pass it as ``pool=`` to share the pool."""

    def __init__(self, native: Any) -> None:
        self.native = native


def graph_pool_handle() -> _PoolHandle:
    """A new memory pool handle, for several captures that share one pool.

    Graphs sharing a pool must be replayed in the order they were captured.
    """
    graphs, _ = _backend_graphs()
    return _PoolHandle(graphs.new_pool())


class CUDAGraph:
    """A captured CUDA graph (``torch.cuda.CUDAGraph``); usually built with :class:`graph`.

    Example:
        >>> g = vt.cuda.CUDAGraph()
        >>> with vt.cuda.graph(g):
        ...     static_y = model(static_x)
        >>> static_x.copy_(batch); g.replay()   # static_y now holds model(batch)
    """

    def __init__(self, keep_graph: bool = False) -> None:
        self._graphs, self._index = _backend_graphs()
        self._graph: Any = None
        self._pool: _PoolHandle | None = None
        self._stream: Any = None

    def capture_begin(self, pool: _PoolHandle | None = None,
                      capture_error_mode: str = "global") -> None:
        """Start capturing the work queued on the current stream.

        Args:
            pool: share the memory pool of another graph (:meth:`pool`) or of
                :func:`graph_pool_handle`; None gives this graph its own.
            capture_error_mode: accepted for PyTorch compatibility (the capture runs in
                CUDA's relaxed mode).
        """
        if self._graph is not None:
            raise GraphCaptureError("CUDAGraph.capture_begin: this graph was already "
                                    "captured; call reset() first or make a new CUDAGraph")
        native = self._graphs.current_stream(self._index)
        if native.ptr == 0:
            raise GraphCaptureError(
                "CUDAGraph.capture_begin: the current stream is the default stream, which "
                "CUDA cannot capture; capture inside `with vt.cuda.graph(g):` or under "
                "`with vt.cuda.stream(vt.cuda.Stream()):`")
        if self._graphs.is_capturing(native):
            raise GraphCaptureError("CUDAGraph.capture_begin: the current stream is already "
                                    "capturing a graph; graphs cannot be nested")
        self._pool = pool if pool is not None else _PoolHandle(self._graphs.new_pool())
        backend = Device(f"cuda:{self._index}").backend
        backend.set_capture_pool(self._pool.native)
        try:
            self._graphs.begin(native)
        except BaseException:
            backend.set_capture_pool(None)
            raise
        self._stream = native

    def capture_end(self) -> None:
        """End the capture begun by :meth:`capture_begin`."""
        if self._stream is None:
            raise GraphCaptureError("CUDAGraph.capture_end without capture_begin")
        native, self._stream = self._stream, None
        try:
            self._graph = self._graphs.end(native)
        except Exception as exc:
            raise _capture_error(self._graphs, exc) from exc
        finally:
            Device(f"cuda:{self._index}").backend.set_capture_pool(None)

    def _abort(self) -> None:
        """End a capture that failed, discarding what was recorded."""
        if self._stream is None:
            return
        native, self._stream = self._stream, None
        try:
            self._graphs.end(native)
        except Exception:
            pass  # an invalidated capture reports its error here: the first one is raised
        finally:
            Device(f"cuda:{self._index}").backend.set_capture_pool(None)

    def replay(self) -> None:
        """Launch the captured work on the current stream."""
        if self._graph is None:
            raise GraphCaptureError("CUDAGraph.replay: nothing captured yet; capture with "
                                    "`with vt.cuda.graph(g): ...` first")
        self._graphs.launch(self._graph, self._graphs.current_stream(self._index))

    def reset(self) -> None:
        """Free the captured graph (tensors it produced keep their memory)."""
        self._graph = None
        self._pool = None

    def pool(self) -> _PoolHandle:
        """This graph's memory pool, for ``capture_begin(pool=...)`` of another graph."""
        if self._pool is None:
            raise GraphCaptureError("CUDAGraph.pool: the graph has no pool before its capture")
        return self._pool

    def enable_debug_mode(self) -> None:
        """Accepted for PyTorch compatibility (no effect)."""

    def debug_dump(self, path: str) -> None:
        """Not supported by the CuPy backend."""
        raise GraphCaptureError("CUDAGraph.debug_dump is not supported by Volta's CUDA backend")


def _capture_error(graphs: Any, exc: BaseException) -> BaseException:
    if isinstance(exc, GraphCaptureError) or not graphs.is_capture_error(exc):
        return exc
    return GraphCaptureError(
        f"CUDA graph capture failed: {exc}. Something in the captured region waited for "
        "the GPU or copied between host and device (.item(), printing a tensor, a boolean "
        "mask index, vt.tensor(...) of host data, a data-dependent shape); move it out of "
        "the region, and warm up on a side stream before capturing")


class graph:
    """Context manager that captures the CUDA work of its block into ``cuda_graph``.

    It synchronizes the device, makes ``stream`` (default: a stream shared by all
    captures) current, and captures; on exit the graph is ready to ``replay()``.

    Args:
        cuda_graph: the :class:`CUDAGraph` to capture into.
        pool: a memory pool to share (``other_graph.pool()`` or
            :func:`graph_pool_handle`).
        stream: the stream to capture on.
        capture_error_mode: accepted for PyTorch compatibility.

    Example:
        >>> g = vt.cuda.CUDAGraph()
        >>> opt.zero_grad(set_to_none=True)
        >>> with vt.cuda.graph(g):
        ...     static_loss = loss_fn(model(static_x), static_y)
        ...     static_loss.backward()
        ...     opt.step()
        >>> for x, y in loader:
        ...     static_x.copy_(x); static_y.copy_(y); g.replay()
    """

    default_capture_stream: Stream | None = None

    def __init__(self, cuda_graph: CUDAGraph, pool: _PoolHandle | None = None,
                 stream: Stream | None = None, capture_error_mode: str = "global") -> None:
        if stream is None:
            if graph.default_capture_stream is None:
                graph.default_capture_stream = Stream()
            stream = graph.default_capture_stream
        self.cuda_graph = cuda_graph
        self.pool = pool
        self.capture_stream = stream
        self._ctx = StreamContext(stream)

    def __enter__(self) -> None:
        from .cuda import synchronize

        synchronize()
        gc.collect()  # garbage freed during the capture would go back to the main pool
        self._ctx.__enter__()
        try:
            self.cuda_graph.capture_begin(self.pool)
        except BaseException:
            self._ctx.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        try:
            if exc is not None:
                self.cuda_graph._abort()
                err = _capture_error(self.cuda_graph._graphs, exc)
                if err is not exc:
                    raise err from exc
                return False
            self.cuda_graph.capture_end()
        finally:
            self._ctx.__exit__(None, None, None)
        return False


# -- make_graphed_callables -----------------------------------------------------------------

def make_graphed_callables(callables: Any, sample_args: Any, num_warmup_iters: int = 3,
                           allow_unused_input: bool = False, pool: _PoolHandle | None = None
                           ) -> Any:
    """Graphed versions of callables (functions or Modules): their forward and backward
    each run as one CUDA graph replay (``torch.cuda.make_graphed_callables``).

    Each callable must return one Tensor; its inputs are static (the graphed callable
    copies the tensors it is given into the captured inputs) and its Module's parameters
    are used in place (an optimizer step between calls is seen by the next replay).

    Args:
        callables: a callable or a tuple of them.
        sample_args: a tuple of Tensor arguments per callable (a tuple of tuples when
            ``callables`` is a tuple), shaped and typed like the real arguments.
        num_warmup_iters: eager iterations before capturing (default 3).
        allow_unused_input: allow inputs the output does not depend on.
        pool: a memory pool to capture into.

    Returns:
        the graphed callable, or a tuple of them.
    """
    just_one = not isinstance(callables, tuple)
    if just_one:
        callables, sample_args = (callables,), (sample_args,)
    if len(callables) != len(sample_args):
        raise GraphCaptureError(f"make_graphed_callables: {len(callables)} callables but "
                                f"{len(sample_args)} tuples of sample arguments")
    mempool = pool if pool is not None else graph_pool_handle()
    out = []
    for fn, args in zip(callables, sample_args):
        for i, a in enumerate(args):
            if not isinstance(a, Tensor):
                raise GraphCaptureError(f"make_graphed_callables: sample argument {i} is a "
                                        f"{type(a).__name__}; only Tensors are supported")
        params = tuple(p for p in fn.parameters() if p.requires_grad) \
            if hasattr(fn, "parameters") else ()
        graphed = graph_callable(fn, tuple(args), params, num_warmup_iters,
                                 allow_unused_input, mempool)
        if hasattr(fn, "forward") and hasattr(fn, "parameters"):
            fn.forward = graphed  # as PyTorch: the module's forward is the graphed one
            graphed = fn
        out.append(graphed)
    return out[0] if just_one else tuple(out)


def graph_callable(fn: Any, args: tuple, params: tuple, warmup: int, allow_unused: bool,
                   pool: _PoolHandle, copy_output: bool = False,
                   on_forward: Any = None, on_backward: Any = None) -> Any:
    """``fn``'s forward and backward captured as two CUDA graphs (see
    :func:`make_graphed_callables`): a function of Tensors shaped like ``args`` (the
    static inputs, whose memory each call overwrites) that replays them, differentiable
    with respect to those arguments that require grad and ``params``.

    ``copy_output``: return a copy of the static output (a later replay then cannot
    overwrite a result the caller kept). ``on_forward(ctx)`` and ``on_backward()`` are
    called after each replay of the forward (with grad recorded) and of the backward.
    """
    from .autograd.engine import grad as autograd_grad
    from .autograd.grad_mode import state as grad_state
    from .creation import empty_like
    from .errors import VoltaError

    diff = tuple(a for a in args if a.requires_grad) + params

    def run_backward(y: Tensor, gy: Tensor) -> tuple:
        if not diff:
            return ()
        return autograd_grad(y, diff, grad_outputs=gy, allow_unused=True)

    side = Stream()
    side.wait_stream(current_stream())
    with stream(side):
        for _ in range(warmup):
            y = fn(*args)
            if not isinstance(y, Tensor):
                raise GraphCaptureError("make_graphed_callables: the callable must return one "
                                        f"Tensor, got {type(y).__name__}")
            if y.requires_grad:
                grads = run_backward(y, y.detach() * 0 + 1)
                if not allow_unused and any(g is None for g in grads[:len(diff)]):
                    raise GraphCaptureError(
                        "make_graphed_callables: an input that requires grad is unused by "
                        "the callable; pass allow_unused_input=True")
            del y
    current_stream().wait_stream(side)

    fwd, bwd = CUDAGraph(), CUDAGraph()
    with graph(fwd, pool=pool):
        static_out = fn(*args)
    if not isinstance(static_out, Tensor):
        raise GraphCaptureError("graphed callable: the callable must return one Tensor, "
                                f"got {type(static_out).__name__}")
    needs_grad = static_out.requires_grad
    static_gy = empty_like(static_out.detach()) if needs_grad else None
    static_grads: tuple = ()
    if needs_grad:
        with graph(bwd, pool=pool):
            static_grads = tuple(run_backward(static_out, static_gy))
    static_value = static_out.detach()
    n_args = len(args)
    arg_needs = tuple(a.requires_grad for a in args)

    class Graphed(Function):
        def forward(ctx, *arrays: Any) -> Any:
            for a, x in zip(args, arrays[:n_args]):
                if a.array is not x:
                    a.array[...] = x  # static inputs keep their addresses
            fwd.replay()
            if on_forward is not None and any(ctx.needs_input_grad):
                on_forward(ctx)
            if copy_output:
                return ctx.xp.asarray(static_value.array, copy=True)
            return static_value.array

        def backward(ctx, g: Tensor) -> Any:
            if not needs_grad:
                return (None,) * (n_args + len(params))
            if grad_state.enabled:
                raise VoltaError("backward(create_graph=True) through a CUDA-graphed "
                                 "forward: the replayed backward records no graph, so "
                                 "higher-order gradients would be missing; run this "
                                 "module without CUDA graphs (not compiled with "
                                 "mode='reduce-overhead', not graphed)")
            static_gy.array[...] = g.array
            bwd.replay()
            if on_backward is not None:
                on_backward()
            grads = iter(static_grads)
            res = [next(grads) if need else None for need in arg_needs]
            res += [next(grads) for _ in params]
            # copies: the static gradients are overwritten by the next replay
            return tuple(None if r is None else r.detach().clone() for r in res)

    def graphed(*call_args: Tensor) -> Tensor:
        if len(call_args) != n_args:
            raise GraphCaptureError(f"graphed callable: takes {n_args} arguments, got "
                                    f"{len(call_args)}")
        for i, (a, x) in enumerate(zip(args, call_args)):
            if not isinstance(x, Tensor) or x.shape != a.shape or x.dtype != a.dtype:
                raise GraphCaptureError(
                    f"graphed callable: argument {i} must be a Tensor of shape "
                    f"{tuple(a.shape)} and dtype {a.dtype.name} like its sample, got "
                    f"{getattr(x, 'shape', type(x).__name__)}")
        return Graphed.apply(*call_args, *params)

    return graphed


__all__ = ["Stream", "StreamContext", "stream", "current_stream", "default_stream",
           "is_current_stream_capturing", "CUDAGraph", "graph", "graph_pool_handle",
           "make_graphed_callables"]
