"""Recording a forward pass: which ops and layers ran, on which tensors, in which module.

A :class:`Tracer` installs itself as this thread's op hook (``Function.apply`` hands every
op to it while the trace runs), wraps each submodule's ``forward`` to know the module path
and to record the layers the exporter maps as a whole (their inner ops are not recorded),
and stands in for the creation functions whose sizes may depend on a dynamic axis
(``arange``, ``zeros``, ``Tensor.new_ones``, ...). Nothing is installed outside a trace.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

from .. import creation
from ..autograd import function as _function
from ..autograd.function import tracing
from ..tensor import Tensor


class Event:
    """One recorded step: an op (``kind="op"``), a whole layer (``"module"``) or a creation
    function (``"create"``); ``target`` is the Function class, the module or the name."""

    __slots__ = ("kind", "name", "target", "args", "kwargs", "out", "path", "arrays")

    def __init__(self, kind: str, name: str, target: Any, args: tuple, kwargs: dict,
                 out: Any, path: str) -> None:
        self.kind, self.name, self.target = kind, name, target
        self.args, self.kwargs, self.out, self.path = args, kwargs, out, path
        # each tensor's array when the step ran: arrays are never written into, so an
        # array is one value, even after an in-place op gave its tensor a new array
        self.arrays = {id(t): t._data for t in tensors_in((args, kwargs, out))}

    def __repr__(self) -> str:
        return f"Event({self.kind}, {self.name}, at {self.path or '<root>'})"


# functions recorded as one step (their sizes may follow dynamic axes, or they map to one
# ONNX node): creation functions, Tensor.new_* methods, and nn.functional functions
_CREATION = ("arange", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like",
             "rand_like", "randn_like")
_NEW = ("new_zeros", "new_ones", "new_full")
_FUNCTIONAL = ("interpolate", "pixel_shuffle")


def tensors_in(obj: Any) -> Iterator[Tensor]:
    """The tensors in a (nested) tuple/list/dict of values, in order."""
    if type(obj) is Tensor:
        yield obj
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            yield from tensors_in(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from tensors_in(o)


class Tracer:
    """Records one forward pass of ``model`` (use as a context manager around the call).

    Args:
        model: the module being traced.
        whole: says whether a module is recorded as one layer event (its ops are not).
    """

    def __init__(self, model: Any, whole: Callable[[Any], bool]) -> None:
        self.model = model
        self.whole = whole
        self.events: list[Event] = []
        self.keep: list[Any] = []  # everything an event saw stays alive, so ids stay unique
        self.path = [""]
        self._hook = self._on_op
        self._saved: list[tuple[Any, str, Any]] = []

    # -- the op hook -----------------------------------------------------------------------
    def _on_op(self, cls: type, args: tuple, kwargs: dict) -> Tensor:
        tracing.hook = None
        try:
            out = cls.apply(*args, **kwargs)
        finally:
            tracing.hook = self._hook
        self._add(Event("op", cls.__name__, cls, args, kwargs, out, self.path[-1]))
        return out

    def _add(self, ev: Event) -> None:
        self.events.append(ev)
        self.keep.append((ev.args, ev.kwargs, ev.out, ev.arrays))

    # -- module wrappers ---------------------------------------------------------------------
    def _wrap(self, mod: Any, name: str) -> Callable:
        orig = mod.forward
        whole = self.whole(mod)

        def forward(*args: Any, **kwargs: Any) -> Any:
            if tracing.hook is not self._hook:  # inside a layer recorded as a whole
                return orig(*args, **kwargs)
            self.path.append(name)
            try:
                if not whole:
                    return orig(*args, **kwargs)
                tracing.hook = None
                try:
                    out = orig(*args, **kwargs)
                finally:
                    tracing.hook = self._hook
                self._add(Event("module", type(mod).__name__, mod, args, kwargs, out, name))
                return out
            finally:
                self.path.pop()

        return forward

    def _creator(self, fn: Callable, name: str) -> Callable:
        def create(*args: Any, **kwargs: Any) -> Any:
            if tracing.hook is not self._hook:
                return fn(*args, **kwargs)
            tracing.hook = None
            try:
                out = fn(*args, **kwargs)
            finally:
                tracing.hook = self._hook
            self._add(Event("create", name, fn, args, kwargs, out, self.path[-1]))
            return out

        create.__name__ = name
        return create

    def _patch(self, owner: Any, attr: str, value: Any) -> None:
        self._saved.append((owner, attr, owner.__dict__.get(attr, _MISSING)))
        setattr(owner, attr, value) if not _is_module(owner) else object.__setattr__(
            owner, attr, value)

    def __enter__(self) -> Tracer:
        if tracing.hook is not None:
            raise RuntimeError("vt.onnx.export: a trace is already running on this thread")
        try:
            self._install()
        except BaseException:
            self._restore()
            raise
        tracing.hook = self._hook
        _function.TRACES += 1
        return self

    def _install(self) -> None:
        import volta_core

        from ..nn import functional

        for name, mod in self.model.named_modules():
            self._patch(mod, "forward", self._wrap(mod, name))
        for name in _CREATION:
            fn = getattr(creation, name)
            wrapped = self._creator(fn, name)
            self._patch(creation, name, wrapped)
            if inspect.unwrap(getattr(volta_core, name, len)) is fn:  # (vt's take out=)
                self._patch(volta_core, name, wrapped)
        for name in _FUNCTIONAL:
            self._patch(functional, name, self._creator(getattr(functional, name), name))
        for name in _NEW:
            self._patch(Tensor, name, self._creator(getattr(Tensor, name), name))

    def __exit__(self, *exc: Any) -> None:
        tracing.hook = None
        _function.TRACES -= 1
        self._restore()

    def _restore(self) -> None:
        for owner, attr, old in reversed(self._saved):
            if old is _MISSING:
                if _is_module(owner):
                    owner.__dict__.pop(attr, None)
                else:
                    delattr(owner, attr)
            elif _is_module(owner):
                object.__setattr__(owner, attr, old)
            else:
                setattr(owner, attr, old)
        self._saved.clear()


_MISSING = object()


def _is_module(obj: Any) -> bool:
    from ..nn.module import Module

    return isinstance(obj, Module)
