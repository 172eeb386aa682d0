"""``vt.compile(module, mode="reduce-overhead")`` on CUDA: the module's forward and backward
replayed as CUDA graphs, which is what that mode means in PyTorch.

Each distinct call (its guard: the shapes, dtypes and ``requires_grad`` of the Tensor
arguments; which tensors are the parameters and buffers, and their shapes and dtypes; the
Python numbers, strings and flags every submodule holds as attributes, ``training`` among
them; grad mode and CUDA autocast) runs eagerly the first time, which warms up what a
capture cannot create (cuBLAS handles, cuDNN plans, kernels); the second time its forward
and backward are captured (:func:`~volta_core.cuda_graphs.graph_callable`), and from then
on each call copies its inputs into the captured ones and replays. The optimizer, the loss
and everything outside the module stay eager, as in PyTorch. The captured kernels read
the parameters' and buffers' memory as it was at capture: one that eager code gave new
memory since (an optimizer without an in-place kernel, a running statistic updated by an
eager call) has its values copied back there, and takes that memory again, before the
replay.

What a replay keeps from CUDA graphs: the Python code of the forward ran once, at capture,
so a Python number it reads from outside the modules (a global, another object) or a
branch it takes on one is frozen (what the guard holds is not: a new value makes a new
capture). What it adds for safety: the output is a copy (a later replay never overwrites
a result the caller kept), a forward called again before the previous one's backward ran
is eager (the replay would overwrite the activations that backward needs), each guard's
capture has memory of its own, and a module whose submodules have hooks, a call with
keyword or non-Tensor arguments, an output that is not one Tensor, or a forward a capture
refuses (it reads a value back, ``.item()``) runs eagerly.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from .replay import _scalar
from .tensor import Tensor

_MAX_ENTRIES = 32  # guards of one module kept at once (more: start over)
_EAGER = "eager"  # a guard whose calls run eagerly for good
_WARM = "warm"  # a guard seen once: captured on its next call


def graphs_of(module: Any) -> Any:
    """The CUDA backend's graph support when ``module``'s first parameter (or buffer)
    lives on a CUDA device, else None (the guard checks the others)."""
    first = next(iter(module.parameters()), None)
    if first is None:
        first = next(iter(module.buffers()), None)
    if first is None or first.device.type != "cuda":
        return None
    return getattr(first.device.backend, "graphs", None)


class _Entry:
    """One guard's captured forward and backward, the memory of the parameters and buffers
    they read, and whether a backward is awaited."""

    __slots__ = ("run", "bound", "awaiting")

    def __init__(self, run: Callable, bound: list) -> None:
        self.run = run
        self.bound = bound  # (tensor, its array at capture)
        self.awaiting: Any = None  # weak reference to the last replay's autograd node

    def restore(self) -> None:
        """Put back the captured memory of every parameter and buffer that eager code
        rebound since, with the current values."""
        for t, arr in self.bound:
            if t._data is not arr:
                arr[...] = t._data
                t._data = arr
                t._gen += 1  # its views re-derive

    def forward_done(self, ctx: Any) -> None:
        self.awaiting = weakref.ref(ctx)

    def backward_done(self) -> None:
        self.awaiting = None

    def busy(self) -> bool:
        """Whether a replayed forward's backward may still come (its node is alive)."""
        return self.awaiting is not None and self.awaiting() is not None


class GraphedModule:
    """The CUDA-graph replayer of one compiled module (see the module docstring).

    Args:
        module: the compiled module.
        forward: its class's forward, bound (the compiled module's ``forward`` attribute
            is the wrapper that calls this).

    Attributes:
        replays: calls served by a graph replay so far (for tests and benchmarks).
    """

    def __init__(self, module: Any, forward: Callable) -> None:
        self.module = module
        self.forward = forward
        self.entries: dict[tuple, Any] = {}
        self.replays = 0

    def __call__(self, *args: Any, **kw: Any) -> Any:
        key = self._guard(args, kw)
        if key is None:
            return self.forward(*args, **kw)
        entry = self.entries.get(key)
        if entry is None:
            if len(self.entries) >= _MAX_ENTRIES:
                self.entries.clear()
            self.entries[key] = _WARM
            return self.forward(*args)
        if entry is _EAGER:
            return self.forward(*args)
        if entry is _WARM:
            entry = self.entries[key] = self._capture(args)
            if entry is _EAGER:
                return self.forward(*args)
        if entry.busy():  # a replay would overwrite what the pending backward reads
            return self.forward(*args)
        self.replays += 1
        entry.restore()
        return entry.run(*args)

    def _guard(self, args: tuple, kw: dict) -> tuple | None:
        """The call's guard key, or None when it cannot be graphed."""
        from .amp.state import state as amp_state
        from .autograd.grad_mode import state as grad_state

        if kw or not args:
            return None
        m = self.module
        graphs = graphs_of(m)
        if graphs is None or graphs.is_capturing():
            return None
        dev = None
        key: list = []
        for a in args:
            if not isinstance(a, Tensor):
                return None
            if dev is None:
                dev = a.device
            elif a.device != dev:
                return None
            key.append((a.shape, a.dtype, a.requires_grad))
        if dev.type != "cuda":
            return None
        for t in (*m.parameters(), *m.buffers()):
            if t.device != dev or t._owner is not None:
                return None
            key.append((id(t), t.shape, t.dtype, t.requires_grad))
        modules = list(m.modules())
        for sub in modules[1:]:  # the compiled module's own hooks run outside the graph
            if (sub._forward_pre_hooks or sub._forward_hooks or sub._backward_hooks
                    or sub._backward_pre_hooks):
                return None
        # every module's Python numbers and strings (``training``, a dropout's ``p``, a
        # temperature the loop anneals): a forward that reads one is captured per value
        key.append(tuple(tuple((k, v) for k, v in sub.__dict__.items() if _scalar(v))
                         for sub in modules))
        key.append(grad_state.enabled)
        key.append(amp_state.active.get("cuda"))
        return tuple(key)

    def _capture(self, args: tuple) -> Any:
        """Capture the forward and backward for calls like ``args``; ``_EAGER`` when the
        forward cannot be captured."""
        from .cuda_graphs import graph_callable, graph_pool_handle
        from .errors import GraphCaptureError

        # private static inputs: each replay copies the call's arguments into them (the
        # caller's tensors are never written)
        static = tuple(a.detach().clone().requires_grad_(a.requires_grad) for a in args)
        params = tuple(p for p in self.module.parameters() if p.requires_grad)
        holder: list = []
        try:
            # a pool of its own: memory another guard's capture freed could hold this
            # one's saved activations while that one's backward still runs
            run = graph_callable(self.forward, static, params, 0, True, graph_pool_handle(),
                                 copy_output=True,
                                 on_forward=lambda ctx: holder[0].forward_done(ctx),
                                 on_backward=lambda: holder[0].backward_done())
        except GraphCaptureError:
            return _EAGER
        m = self.module
        entry = _Entry(run, [(t, t._data) for t in (*m.parameters(), *m.buffers())])
        holder.append(entry)
        return entry


__all__ = ["GraphedModule", "graphs_of"]
