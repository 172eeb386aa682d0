"""``Function``: one differentiable op, forward and backward side by side.

``forward(ctx, *arrays, **params)`` receives backend arrays and returns one backend
array; it may call ``ctx.save_for_backward(...)`` with any of its inputs, its output or
other arrays. ``backward(ctx, grad)`` receives the gradient of the output as a
:class:`Tensor` and returns one gradient (or None) per input, written with Tensor ops
so that it runs on any device and can itself be differentiated (``create_graph``).

Backward refuses (``AutogradError``) when a tensor it needs was modified in place after
forward. "Needs" is what PyTorch's backward of the op saves, not only what this op's own
formula reads: a program that PyTorch refuses is refused here too, even where Volta's
formula could still give the right gradient. Each op declares PyTorch's saved tensors in
``pytorch_saves``; ops built from several Functions (or with several outputs) call
:func:`saved_by_pytorch` on their result instead.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any

from ..errors import AutogradError, DeviceError
from ..tensor import Tensor
from .anomaly_mode import state as _anomaly
from .grad_mode import state as _grad_state

_FREED = ()  # the saved-values marker of a node whose graph was freed
RESULT = -1  # in ``pytorch_saves``: the op's output
_NUMBERS = frozenset((int, float, bool, complex))
# PyTorch's sequence number: recorded nodes are numbered as they are made, and backward
# runs the ready node made last first (the order gradients are summed in, so rounding too)
next_sequence_number = itertools.count(1).__next__

_UNRECORDED = (False,) * 8  # needs_input_grad of an unrecorded call (up to 8 inputs)


class _Tracing(threading.local):
    """Per-thread op tracer: ``vt.onnx.export`` sets ``hook`` (and counts itself in
    ``TRACES``, so that ops check only a global int while no trace runs anywhere)."""

    hook = None


tracing = _Tracing()
TRACES = 0


class Function:
    """Base class of differentiable ops; subclass and call ``MyOp.apply(...)``.

    Attributes (set on the ``ctx`` instance by ``apply``):
        xp: the Array-API namespace of the inputs' device.
        device: the inputs' device.
        needs_input_grad: one bool per positional argument.
    """

    # the bookkeeping every call sets, as slots (cheaper to set than instance-dict entries);
    # an op's own attributes (ctx.shapes, ...) go to the instance dict
    __slots__ = ("device", "xp", "needs_input_grad", "parents", "out_meta", "_to_save",
                 "_saved", "_seq", "__dict__", "__weakref__")

    differentiable = True  # False for ops whose output has no gradient (comparisons)
    # What PyTorch's backward of this op saves (its derivatives.yaml: self, other, result),
    # as one tuple per positional argument, in order: the positions of the arguments (or
    # RESULT) kept for that argument's gradient. Only the entries of arguments whose
    # gradient is needed count (PyTorch saves no more); Python numbers are never watched.
    # Forward may set it on ctx for a form that saves differently (``x ** 2.0``), where
    # the class declares something.
    pytorch_saves: tuple = ()
    # True where forward's save_for_backward keeps exactly pytorch_saves: their version
    # check is then the one saved_tensors makes, and the op's hot path watches nothing
    # more (tests/core/test_pytorch_saves.py holds each such claim).
    saves_as_pytorch = False
    stale = False  # True for a node that must not get children (views.StaleMultiView)
    # True where forward takes ``low=`` (a bfloat16 input computed in float32): backward
    # then rounds each of its steps to that dtype, as PyTorch's bfloat16 backward does
    low_backward = False

    # engine bookkeeping, set only when the op is recorded (parents, _saved: slots above)
    hooks: list | None = None
    retained: Any = None
    _watched: Any = None  # [(version counter, version at forward)] of pytorch_saves

    # True for a subclass written as PyTorch's custom Functions (a static ``forward`` on
    # Tensors; see :mod:`.custom_function`), set when the class is made
    _pytorch_style = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        import inspect

        cls._pytorch_style = isinstance(inspect.getattr_static(cls, "forward"), staticmethod)

    def forward(ctx, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def backward(ctx, grad: Tensor) -> Any:
        raise NotImplementedError(f"{type(ctx).__name__} has no backward")

    def save_for_backward(ctx, *arrays: Any) -> None:
        """Keep arrays (inputs, the output, or others) for backward."""
        ctx._to_save = arrays

    @property
    def saved_tensors(ctx) -> tuple[Tensor, ...]:
        """The saved arrays as Tensors; inputs keep their graph, the output its node."""
        saved = ctx._saved
        if saved is _FREED:
            raise _freed_error(ctx)
        out = []
        for kind, obj, version in saved:
            if kind == 0:  # an input tensor
                if obj._version[0] != version:
                    raise _modified_error(ctx, version, obj._version[0])
                out.append(obj)
            elif kind == 1:  # the output: a fresh tensor pointing at this node
                if version[0][0] != version[1]:
                    raise _modified_error(ctx, version[1], version[0][0])
                grad_fn = ctx if _grad_state.enabled else None
                out.append(Tensor._make(obj, ctx.device, grad_fn is not None, grad_fn))
            elif kind == 2:  # another array: a constant
                out.append(Tensor._make(obj, ctx.device))
            else:  # a Python value
                out.append(obj)
        return tuple(out)

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Tensor:
        """Run the op on Tensors (and Python values), recording it when needed."""
        if TRACES and tracing.hook is not None:  # an exporter traces this thread: it records
            return tracing.hook(cls, args, kwargs)
        if cls._pytorch_style:
            from . import custom_function  # a user's Function written as for PyTorch

            return custom_function.apply(cls, args, kwargs)
        dev = None
        requires = False
        arrays = []
        for a in args:
            if type(a) is Tensor:
                # first: a stale view re-derives its values and grad_fn (Tensor.array)
                arrays.append(a._data if a._owner is None else a.array)
                if dev is None:
                    dev = a.device
                elif a.device is not dev:
                    raise _device_error(cls, dev, a.device)
                if a.requires_grad:
                    requires = True
            else:
                arrays.append(a)
        if dev is None:
            raise TypeError(f"{cls.__name__}: expected at least one Tensor argument")
        ctx = cls.__new__(cls)
        ctx.device = dev
        ctx.xp = dev.xp
        if not (requires and cls.differentiable and _grad_state.enabled):
            ctx.needs_input_grad = _UNRECORDED  # forward may read it to save less
            return Tensor._make(ctx.forward(*arrays, **kwargs), dev)
        parents = []
        needs = []
        for a in args:
            if type(a) is Tensor and a.requires_grad:
                node = a.grad_fn
                if node is None:
                    node = a
                elif node.stale:
                    raise node.error()
                parents.append(node)
                needs.append(True)
            else:
                parents.append(None)
                needs.append(False)
        # known before forward, so that forward saves only what backward will need
        ctx.needs_input_grad = tuple(needs)
        ctx._seq = next_sequence_number()
        ctx.parents = tuple(parents)
        ctx._to_save = ()
        out = ctx.forward(*arrays, **kwargs)
        ctx.out_meta = (out.shape, out.dtype)  # for error messages and graph drawings
        if _anomaly[0]:
            from .anomaly_mode import record_stack

            record_stack(ctx)
        result = Tensor._make(out, dev, True, ctx)
        if cls.pytorch_saves and not ctx.saves_as_pytorch:  # ctx: forward may override
            ctx._watched = _watch(ctx.pytorch_saves, ctx.needs_input_grad, args, result)
        if ctx._to_save:
            ctx._saved = _pack(ctx, args, out, result)
            ctx._to_save = ()
        else:
            ctx._saved = None
        return result

    @property
    def name(self) -> str:
        """The op's name, for error messages and graph drawings."""
        return type(self).__name__


def once_differentiable(backward: Any) -> Any:
    """Decorate a custom Function's ``backward`` that is not itself differentiable: it runs
    with gradients off (PyTorch's ``torch.autograd.function.once_differentiable``)."""
    import functools

    from .grad_mode import no_grad

    @functools.wraps(backward)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        with no_grad():
            return backward(ctx, *grads)

    return wrapper


def _pack(ctx: Function, args: tuple, out: Any, result: Tensor) -> list:
    saved = []
    for s in ctx._to_save:
        if s is out:
            saved.append((1, s, (result._version, result._version[0])))
            continue
        if s is None or type(s) in _NUMBERS:  # never a tensor's array
            saved.append((3, s, None))
            continue
        match = None
        for a in args:
            if type(a) is Tensor and a._data is s:
                if match is None:
                    match = a
                    saved.append((0, a, a._version[0]))
                elif a._version is not match._version:
                    # one array as two tensors (x.mul_(x): x and in-place's snapshot of it):
                    # which one forward saved is unknown, so a change of either counts
                    entry = [(a._version, a._version[0])]
                    ctx._watched = entry if ctx._watched is None else ctx._watched + entry
        if match is None:
            saved.append((2 if hasattr(s, "shape") else 3, s, None))
    return saved


def _watch(saves: tuple, needs: tuple, args: tuple, result: Tensor) -> list | None:
    """(counter, version now) of the tensors ``saves`` names for the needed gradients."""
    watched = []
    for need, positions in zip(needs, saves):
        if need:
            for p in positions:
                t = result if p == RESULT else args[p] if p < len(args) else None
                if type(t) is Tensor:
                    watched.append((t._version, t._version[0]))
    return watched or None


def saved_by_pytorch(out: Tensor, *tensors: Any, op: str | None = None) -> None:
    """Make the backward through ``out`` refuse if one of ``tensors`` is modified in place
    from now on, as PyTorch's backward of the op that made ``out`` does: for ops built from
    several Functions, or with several outputs (``aminmax``, ``max(dim)``'s indices),
    where ``pytorch_saves`` of one Function cannot name them. Non-tensors are skipped;
    ``op`` names the op in the error (default: ``out``'s node)."""
    node = out.grad_fn
    if node is None or node.stale or node._watched is _FREED:
        return
    if op is not None:
        node.saves_for = op
    entries = [(t._version, t._version[0]) for t in tensors if type(t) is Tensor]
    if entries:
        node._watched = entries if node._watched is None else node._watched + entries


def carry_saved(inner: Tensor, out: Tensor, *copies: tuple[Any, Any]) -> None:
    """``out`` is ``inner`` cast back (an op computed in float32 for bfloat16, say), and
    each ``(copy, original)`` an operand cast for it: what PyTorch's backward of the op
    saves is then ``out`` and the originals, which ``inner``'s node cannot watch itself."""
    node = inner.grad_fn
    if node is None:
        return
    stand_in = {id(c._version): o for c, o in copies if type(c) is Tensor and c is not o}
    if out is not inner:
        stand_in[id(inner._version)] = out
    originals = [stand_in.get(id(c)) for c in _counters(node)]
    if any(o is not None for o in originals):
        saved_by_pytorch(out, *originals, op=None if node is out.grad_fn else node.name)


def _counters(node: Function) -> list:
    """The version counters that ``node``'s backward checks: what it watches for PyTorch's
    sake and what it saved itself (inputs and its output)."""
    out = [c for c, _ in node._watched] if node._watched else []
    if node._saved:
        out += [obj._version if kind == 0 else v[0] for kind, obj, v in node._saved
                if kind < 2]
    return out


def check_saved_versions(node: Function) -> None:
    """Raise if a tensor that PyTorch's backward of ``node`` saves was modified in place
    since forward (the engine calls it before ``node.backward``)."""
    watched = node._watched
    if watched is _FREED:
        raise _freed_error(node)
    for counter, version in watched:
        if counter[0] != version:
            raise _modified_error(node, version, counter[0])


def rebind_output(node: Function | None, old: list, new: list) -> None:
    """An in-place op's node: its output is now the tensor written in place, whose version
    counter is ``new`` (it was ``old``, the counter of the out-of-place result), so a later
    in-place change of that tensor makes its backward refuse, as in PyTorch."""
    if node is None:
        return
    if node._saved:
        node._saved = [(k, obj, (new, new[0])) if k == 1 and v[0] is old else (k, obj, v)
                       for k, obj, v in node._saved]
    if node._watched:
        node._watched = [(new, new[0]) if c is old else (c, v) for c, v in node._watched]


def no_derivative(op: str, fix: str) -> AutogradError:
    """The error of a backward through ``op``, whose derivative PyTorch does not implement
    (its backward raises, while its forward works and its output requires grad)."""
    return AutogradError(
        f"{op}: the derivative is not implemented, as in PyTorch (its backward raises "
        f"'derivative for aten::{op.split('(')[0]} is not implemented'); {fix}")


def _freed_error(ctx: Function) -> AutogradError:
    return AutogradError(
        f"trying to backward through the graph a second time ({type(ctx).__name__}): "
        "its saved values were freed after the first backward. Pass "
        "retain_graph=True to the first backward if you need to backward twice.")


def _device_error(cls: type, a: Any, b: Any) -> DeviceError:
    return DeviceError(
        f"{cls.__name__}: expected all tensors on the same device, found {a} and {b}; "
        f"move one with .to('{a}') or .to('{b}')")


def _modified_error(ctx: Function, saved: int, now: int) -> AutogradError:
    name = ctx.__dict__.get("saves_for") or type(ctx).__name__  # see saved_by_pytorch
    return AutogradError(
        f"one of the tensors needed by {name} for gradient computation was "
        f"modified by an in-place operation (version {now}, expected {saved}); use an "
        "out-of-place op or .clone() before modifying it")
