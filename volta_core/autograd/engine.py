"""The backward engine: iterative topological order, each node called once."""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..amp.state import suspended as _autocast_suspended
from ..errors import AutogradError, DeviceError, ShapeError
from ..tensor import Tensor
from . import anomaly_mode
from .anomaly_mode import state as _anomaly
from .function import _FREED, Function, check_saved_versions
from .grad_mode import set_grad_enabled
from .grad_mode import state as _grad_state

_queued = threading.local()  # per thread: one list of callbacks per running backward()


def queue_callback(callback: Callable[[], None]) -> None:
    """Run ``callback()`` once the backward() that is running now has finished.

    Called from a hook during backward (as PyTorch's
    ``Variable._execution_engine.queue_callback``): FullyShardedDataParallel uses it to
    reduce the gradients of parameters that got none when the whole pass is done.

    Raises:
        AutogradError: if no backward() is running in this thread.
    """
    stack = getattr(_queued, "stack", None)
    if not stack:
        raise AutogradError("queue_callback: no backward() is running in this thread; "
                            "call it from a hook that runs during backward")
    stack[-1].append(callback)


def _ones_like(t: Tensor) -> Tensor:
    xp = t.device.xp
    return Tensor._make(xp.ones(t.array.shape, dtype=t.array.dtype, device=t.device.native),
                        t.device)


def _initial_grads(outputs: Sequence[Tensor], grads: Sequence[Any] | None) -> list[Tensor]:
    result = []
    for i, t in enumerate(outputs):
        if not t.requires_grad:
            raise AutogradError(f"element {i} of tensors does not require grad and does not "
                                "have a grad_fn; did you forget requires_grad=True?")
        g = None if grads is None else grads[i]
        if g is None:
            if t.numel() != 1:
                raise AutogradError(f"grad can be implicitly created only for scalar outputs; "
                                    f"output {i} has shape {t.shape}: pass gradient=")
            g = _ones_like(t)
        elif not isinstance(g, Tensor):
            g = Tensor(g, dtype=t.dtype, device=t.device)
        if g.shape != t.shape:
            raise ShapeError(f"backward: gradient of shape {g.shape} does not match output "
                             f"shape {t.shape}")
        if g.device is not t.device:
            raise DeviceError(f"backward: gradient {i} is on {g.device} but its output is on "
                              f"{t.device}; move it with .to('{t.device}')")
        if g.dtype is not t.dtype:  # PyTorch casts the gradient to the output's dtype
            g = g.to(t.dtype)
        result.append(g)
    return result


def _order(roots: list[Function]) -> tuple[dict[Function, int], dict[int, int]]:
    """Count the recorded consumers of each node and each leaf reachable from ``roots``."""
    deps: dict[Function, int] = {}
    leaf_deps: dict[int, int] = {}
    stack = list(roots)
    # a node is visited when first counted (roots are visited already)
    is_root = set(roots).__contains__
    while stack:
        node = stack.pop()
        for p in node.parents:
            if p is None:
                continue
            if type(p) is Tensor:
                key = id(p)
                leaf_deps[key] = leaf_deps.get(key, 0) + 1
                continue
            d = deps.get(p)
            if d is None:
                deps[p] = 1
                if not is_root(p):
                    stack.append(p)
            else:
                deps[p] = d + 1
    return deps, leaf_deps


def run_backward(outputs: Sequence[Tensor], grads: Sequence[Any] | None, retain_graph: bool,
                 create_graph: bool, capture: dict | None = None,
                 on_leaf: Callable[[Tensor, Tensor], None] | None = None) -> dict:
    """Propagate gradients from ``outputs`` to every reachable leaf.

    Args:
        outputs: tensors to differentiate.
        grads: their gradients (None for scalars).
        retain_graph: keep saved values for another backward.
        create_graph: record the backward ops.
        capture: if given, ``{node or leaf: None}``; gradients of these are returned in
            it instead of being accumulated into leaves' ``.grad``.
        on_leaf: called with ``(leaf, gradient)`` as soon as a leaf's gradient is final
            (while the rest of the graph is still running, so DDP can overlap
            communication); such leaves are left out of the returned dict.

    Returns:
        ``{leaf tensor: total gradient}`` for every leaf reached (``capture`` if given).
    """
    initial = _initial_grads(outputs, grads)
    # backward ops run in their forward's dtypes: never autocast (as in PyTorch)
    with set_grad_enabled(create_graph), _autocast_suspended():
        node_grads: dict[Function, Tensor] = {}
        leaf_grads: dict[int, list] = {}
        roots = []
        for t, g in zip(outputs, initial):
            if t.grad_fn is None:
                _add_leaf(leaf_grads, t, g)
                continue
            prev = node_grads.get(t.grad_fn)
            node_grads[t.grad_fn] = g if prev is None else _plus(prev, g)
            if t.grad_fn not in roots:
                roots.append(t.grad_fn)
        deps, leaf_deps = _order(roots)
        # the ready node made last runs first, as in PyTorch (heap keys: -sequence number);
        # a node that becomes ready while no other is waiting runs next without the heap
        ready = [(-getattr(r, "_seq", 0), i, r) for i, r in enumerate(roots) if r not in deps]
        heapq.heapify(ready)
        tie = itertools.count(len(roots))  # orders nodes without a number (none recorded)
        node = None
        while node is not None or ready:
            if node is None:
                node = heapq.heappop(ready)[2]
            g = node_grads.pop(node, None)
            if g is not None:
                if node.hooks:
                    for hook in node.hooks:
                        new = hook(g)
                        g = g if new is None else new
                if node.retained is not None:
                    t = node.retained()
                    if t is not None:  # PyTorch: a copy first, then accumulated
                        new = g if create_graph else g.detach()
                        t.grad = new.clone() if t.grad is None else t.grad + new
                if capture is not None and node in capture:
                    capture[node] = g
                watched = node._watched
                if watched is not None:  # what PyTorch's backward saves, unchanged?
                    check_saved_versions(node)
                in_grads = node.backward(g)
                if type(in_grads) is not tuple:
                    in_grads = (in_grads,)
                if _anomaly[0]:
                    anomaly_mode.check(node, in_grads)
                if not retain_graph:
                    if node._saved is not None:
                        node._saved = _FREED
                    if watched is not None:
                        node._watched = _FREED
            else:
                in_grads = (None,) * len(node.parents)
            # each input gradient is dropped as soon as it is handed on, so that leaf hooks
            # (FSDP's reduce-scatter, DDP's buckets) don't run while its siblings are alive
            g, in_grads, nxt = None, list(in_grads), None
            parents = node.parents
            if len(in_grads) < len(parents):  # a backward that leaves out trailing inputs
                parents = parents[:len(in_grads)]
            for i, p in enumerate(parents):
                if p is None:
                    continue
                ig = in_grads[i]
                in_grads[i] = None
                if type(p) is Tensor:
                    if ig is not None:
                        _add_leaf(leaf_grads, p, ig)
                    key = id(p)
                    leaf_deps[key] -= 1
                    if on_leaf is not None and leaf_deps[key] == 0 and key in leaf_grads:
                        on_leaf(*leaf_grads.pop(key))
                    continue
                if ig is not None:
                    prev = node_grads.get(p)
                    node_grads[p] = ig if prev is None else _plus(prev, ig)
                d = deps[p] - 1
                deps[p] = d
                if d == 0:
                    if nxt is None and not ready:
                        nxt = p
                    else:
                        if nxt is not None:
                            heapq.heappush(ready, (-getattr(nxt, "_seq", 0), next(tie), nxt))
                            nxt = None
                        heapq.heappush(ready, (-getattr(p, "_seq", 0), next(tie), p))
            node = nxt
        if capture is not None:
            for leaf, g in leaf_grads.values():
                if leaf in capture:
                    capture[leaf] = _run_leaf_hooks(leaf, g)
            return capture
        return {id(leaf): (leaf, g) for leaf, g in leaf_grads.values()}


def _add_leaf(leaf_grads: dict, leaf: Tensor, g: Tensor) -> None:
    entry = leaf_grads.get(id(leaf))
    leaf_grads[id(leaf)] = (leaf, g) if entry is None else (leaf, _plus(entry[1], g))


def _plus(a: Tensor, b: Tensor) -> Tensor:
    """The sum of two gradients of one tensor. A plain backward records nothing, so where
    the Tensor op's result is the arrays' sum as is (same device, dtype and shape) it is
    taken on the arrays, without an op dispatch; else (create_graph, promotion,
    broadcasting) the Tensor op."""
    if not _grad_state.enabled and a.device is b.device:
        x, y = a.array, b.array
        if x.dtype == y.dtype and x.shape == y.shape:
            return Tensor._make(a.device.xp.add(x, y), a.device)
    return a + b


def _run_leaf_hooks(leaf: Tensor, g: Tensor) -> Tensor:
    if leaf._hooks:
        for hook in leaf._hooks:
            new = hook(g)
            g = g if new is None else new
    return g


def backward(outputs: Sequence[Tensor], grads: Sequence[Any] | None = None,
             retain_graph: bool = False, create_graph: bool = False,
             inputs: Sequence[Tensor] | None = None) -> None:
    """Accumulate gradients of ``outputs`` into the ``.grad`` of the leaves.

    Args:
        outputs: tensors to differentiate.
        grads: gradients w.r.t. each output (None for scalar outputs).
        retain_graph: keep the graph for another backward.
        create_graph: record the backward pass for higher-order gradients.
        inputs: if given, only these leaves receive gradients.
    """
    if isinstance(outputs, Tensor):
        outputs = [outputs]
    if isinstance(grads, Tensor):
        grads = [grads]
    allowed = None if inputs is None else {id(t) for t in inputs}

    def accumulate(leaf: Tensor, g: Tensor) -> None:
        if allowed is not None and id(leaf) not in allowed:
            return
        g = _run_leaf_hooks(leaf, g)
        if not create_graph:
            # the values without the history, and not a view of the gradient either: the
            # same gradient may be the caller's `gradient=` or another leaf's (x + y), and
            # an in-place change of x.grad must not reach them (PyTorch clones there)
            g = Tensor._make(g.array, g.device)
        if g.array.shape != leaf.array.shape:
            raise ShapeError(f"backward: gradient of shape {g.shape} for a leaf of shape "
                             f"{leaf.shape}")
        if g.dtype is not leaf.dtype:  # PyTorch's engine casts each gradient to its input's
            g = g.to(leaf.dtype)
        leaf.grad = g if leaf.grad is None else leaf.grad + g
        if leaf._post_hooks:
            for hook in leaf._post_hooks:
                hook(leaf)

    stack = _queued.__dict__.setdefault("stack", [])
    stack.append([])
    try:
        rest = run_backward(outputs, grads, retain_graph, create_graph, on_leaf=accumulate)
        for leaf, g in rest.values():  # leaves that were themselves outputs
            accumulate(leaf, g)
    finally:
        callbacks = stack.pop()
    for callback in callbacks:  # queued by hooks (see queue_callback)
        callback()


def grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
         grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool | None = None,
         materialize_grads: bool = False) -> tuple[Tensor | None, ...]:
    """Return the gradients of ``outputs`` with respect to ``inputs`` (no ``.grad`` change).

    Args:
        outputs: tensor(s) to differentiate.
        inputs: tensor(s) to differentiate with respect to (leaves or not).
        grad_outputs: gradient(s) w.r.t. each output (None for scalars).
        retain_graph: keep the graph; defaults to ``create_graph``.
        create_graph: record the backward pass, so the result can be differentiated.
        allow_unused: return None for an input the outputs do not depend on, instead of
            raising (default: False, or True with ``materialize_grads``).
        materialize_grads: return zeros instead of None for such inputs.
    """
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    keys = []
    for t in inputs:
        if not t.requires_grad:
            raise AutogradError("autograd.grad: one of the inputs does not require grad")
        keys.append(t if t.grad_fn is None else t.grad_fn)
    capture = {k: None for k in keys}
    retain = create_graph if retain_graph is None else retain_graph
    run_backward(outputs, grad_outputs, retain, create_graph, capture)
    result = []
    for i, k in enumerate(keys):
        g = capture[k]
        if g is None and not allow_unused:
            raise AutogradError(f"autograd.grad: input {i} was not used to compute the "
                                "outputs; pass allow_unused=True if this is expected")
        if g is None and materialize_grads:
            g = inputs[i].detach().new_zeros(inputs[i].shape)
        result.append(g)  # as PyTorch: grad_outputs[i] itself when it passed unchanged
    return tuple(result)
