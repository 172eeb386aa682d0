"""``Function``: one differentiable op, forward and backward side by side.

``forward(ctx, *arrays, **params)`` receives backend arrays and returns one backend
array; it may call ``ctx.save_for_backward(...)`` with any of its inputs, its output or
other arrays. ``backward(ctx, grad)`` receives the gradient of the output as a
:class:`Tensor` and returns one gradient (or None) per input, written with Tensor ops
so that it runs on any device and can itself be differentiated (``create_graph``).
"""

from __future__ import annotations

import threading
from typing import Any

from ..errors import AutogradError, DeviceError
from ..tensor import Tensor
from .grad_mode import state as _grad_state

_FREED = ()  # the saved-values marker of a node whose graph was freed


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

    differentiable = True  # False for ops whose output has no gradient (comparisons)
    stale = False  # True for a node that must not get children (views.StaleMultiView)

    # engine bookkeeping, set only when the op is recorded
    parents: tuple = ()
    hooks: list | None = None
    retained: Any = None
    _saved: Any = None
    _to_save: tuple = ()
    # forward may read it to save less; what an unrecorded call sees (up to 8 inputs)
    needs_input_grad: tuple = (False,) * 8

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
            raise AutogradError(
                f"trying to backward through the graph a second time ({type(ctx).__name__}): "
                "its saved values were freed after the first backward. Pass "
                "retain_graph=True to the first backward if you need to backward twice.")
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
        ctx = cls.__new__(cls)
        dev = None
        requires = False
        arrays = []
        for a in args:
            if type(a) is Tensor:
                # first: a stale view re-derives its values and grad_fn (Tensor.array)
                arrays.append(a._data if a._base is None else a.array)
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
        ctx.device = dev
        ctx.xp = dev.xp
        if not (requires and _grad_state.enabled and cls.differentiable):
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
        out = ctx.forward(*arrays, **kwargs)
        ctx.parents = tuple(parents)
        ctx.out_meta = (out.shape, out.dtype)  # for error messages and graph drawings
        result = Tensor._make(out, dev, True, ctx)
        if ctx._to_save:
            ctx._saved = _pack(ctx._to_save, args, out, result)
            ctx._to_save = ()
        return result

    @property
    def name(self) -> str:
        """The op's name, for error messages and graph drawings."""
        return type(self).__name__


def _pack(to_save: tuple, args: tuple, out: Any, result: Tensor) -> list:
    saved = []
    for s in to_save:
        if s is out:
            saved.append((1, s, (result._version, result._version[0])))
            continue
        for a in args:
            if type(a) is Tensor and a._data is s:
                saved.append((0, a, a._version[0]))
                break
        else:
            saved.append((2 if hasattr(s, "shape") else 3, s, None))
    return saved


def _device_error(cls: type, a: Any, b: Any) -> DeviceError:
    return DeviceError(
        f"{cls.__name__}: expected all tensors on the same device, found {a} and {b}; "
        f"move one with .to('{a}') or .to('{b}')")


def _modified_error(ctx: Function, saved: int, now: int) -> AutogradError:
    return AutogradError(
        f"one of the tensors needed by {type(ctx).__name__} for gradient computation was "
        f"modified by an in-place operation (version {now}, expected {saved}); use an "
        "out-of-place op or .clone() before modifying it")
