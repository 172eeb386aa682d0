"""``Parameter``: a tensor that a :class:`Module` registers as one of its learnable weights.

A parameter *is* a plain :class:`~volta_core.Tensor` (``type(p) is Tensor``), so every op
and the autograd engine treat it at full speed with no subclass checks. What makes it a
parameter is that it was made by ``Parameter(...)``: the tensor is remembered (weakly),
and ``isinstance(p, nn.Parameter)`` is True for it, which is how ``Module.__setattr__``
tells ``self.weight = nn.Parameter(...)`` from a plain tensor attribute.
"""

from __future__ import annotations

import weakref
from typing import Any

from ..tensor import Tensor

_registry: dict[int, weakref.ref] = {}


def _forget(key: int, ref: weakref.ref) -> None:
    if _registry.get(key) is ref:
        del _registry[key]


def _mark(t: Tensor) -> Tensor:
    key = id(t)
    _registry[key] = weakref.ref(t, lambda r, k=key: _forget(k, r))
    return t


def is_parameter(obj: Any) -> bool:
    """Return True if ``obj`` is a tensor made by :class:`Parameter`."""
    ref = _registry.get(id(obj))
    return ref is not None and ref() is obj


class _ParameterMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return is_parameter(obj)

    def __call__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Tensor:
        if data is None:
            from ..creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter: expected a Tensor, got {type(data).__name__}; "
                            "wrap the values with vt.tensor(...) first")
        t = Tensor._make(data.array, data.device)
        if requires_grad:
            t.requires_grad_(True)
        return _mark(t)


class Parameter(metaclass=_ParameterMeta):
    """A tensor that is a module's learnable weight; it requires grad by default.

    ``Parameter(data)`` returns a leaf :class:`Tensor` sharing ``data``'s values, cut off
    from any graph. Assigning it to a module attribute registers it as a parameter, so it
    appears in ``parameters()`` and ``state_dict()``.

    Args:
        data: the initial values (an empty tensor when None).
        requires_grad: whether the parameter requires gradient.

    Example::

        >>> w = nn.Parameter(vt.randn(3, 4))
        >>> isinstance(w, nn.Parameter), type(w) is vt.Tensor
        (True, True)
    """


class _BufferMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        ref = _buffers.get(id(obj))
        return ref is not None and ref[0]() is obj

    def __call__(cls, data: Tensor, persistent: bool = True) -> Tensor:
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer: expected a Tensor, got {type(data).__name__}")
        t = data.detach() if data.requires_grad else data
        key = id(t)
        _buffers[key] = (weakref.ref(t, lambda r, k=key: _buffers.pop(k, None)), persistent)
        return t


_buffers: dict[int, tuple[weakref.ref, bool]] = {}


class Buffer(metaclass=_BufferMeta):
    """Marks a tensor to register as a buffer when assigned to a module attribute.

    ``self.running_mean = nn.Buffer(vt.zeros(3))`` is ``register_buffer``.

    Args:
        data: the tensor (detached if it requires grad).
        persistent: whether the buffer is part of ``state_dict()``.
    """


def buffer_persistence(obj: Any) -> bool | None:
    """Return the ``persistent`` flag of a tensor made by :class:`Buffer`, else None."""
    entry = _buffers.get(id(obj))
    if entry is None or entry[0]() is not obj:
        return None
    return entry[1]


__all__ = ["Parameter", "Buffer"]
