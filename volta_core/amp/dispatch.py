"""The autocast hook of the ops on PyTorch's lists (see ``policy``).

An op opts in with ``@autocast_op("name")``, or, for the hottest ops (matmul, linear,
conv2d, the norms, softmax, the main losses, sum), inline::

    if _autocast_state.active:
        return autocast_call("linear", linear, input, weight, bias)

Either way, when no autocast block is active in the thread the hook costs one
thread-local read (plus a call frame for the decorator form); ops off the lists have no
hook at all. Under autocast it casts the op's tensor arguments by the op's policy for
their device type, then runs the op with autocast suspended, so that the op is one unit
as in PyTorch (``cross_entropy``'s inner ``log_softmax`` is not cast again).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..errors import DTypeError
from .policy import BANNED, KEEP, LOWER, POLICIES, PROMOTE
from .state import _EMPTY, state


def autocast_op(name: str) -> Callable[[Callable], Callable]:
    """Give the decorated op the autocast policy listed under ``name`` (see ``policy``)."""

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def op(*args: Any, **kwargs: Any) -> Any:
            if state.active:
                return _autocast(name, fn, args, kwargs)
            return fn(*args, **kwargs)

        return op

    return decorate


def _tensors(args: tuple, kwargs: dict) -> list:
    """The tensor arguments (also inside list and tuple arguments), in order."""
    from ..tensor import Tensor

    found = []
    for v in (*args, *kwargs.values()) if kwargs else args:
        if isinstance(v, Tensor):
            found.append(v)
        elif isinstance(v, (list, tuple)):
            found.extend(w for w in v if isinstance(w, Tensor))
    return found


def _map(values: tuple, cast: Callable) -> tuple:
    from ..tensor import Tensor

    out = []
    for v in values:
        if isinstance(v, Tensor):
            v = cast(v)
        elif isinstance(v, (list, tuple)) and any(isinstance(w, Tensor) for w in v):
            v = type(v)(cast(w) if isinstance(w, Tensor) else w for w in v)
        out.append(v)
    return tuple(out)


def _needs_cast(t: Any, dtype: Any, device_type: str) -> bool:
    """Whether ``t`` is an eligible floating tensor (never float64) not in ``dtype``."""
    dt = t.dtype
    return not (dt is dtype or dt.kind != "f" or dt.itemsize == 8
                or t.device.type != device_type)


_cast_op: list = []  # ops.elementwise.cast, bound on first use (that module imports this)


def _cast_to(t: Any, dtype: Any, device_type: str) -> Any:
    """``t`` in ``dtype`` when it is an eligible floating tensor (never float64)."""
    if not _needs_cast(t, dtype, device_type):
        return t
    cache = state.cache
    cacheable = cache is not None and t.grad_fn is None and t.requires_grad
    if cacheable:  # parameters: cast once per autocast region, as PyTorch does
        hit = cache.get(id(t))
        if hit is not None and hit[1] == t._version[0] and hit[2] is dtype:
            return hit[3]
    if not _cast_op:
        from ..ops.elementwise import cast

        _cast_op.append(cast)
    out = _cast_op[0](t, dtype)
    if cacheable:
        cache[id(t)] = (t, t._version[0], dtype, out)
    return out


def _autocast(name: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
    tensors = _tensors(args, kwargs)
    kind = None
    if tensors:
        first = tensors[0]
        device_type = first.device.type
        low = state.active.get(device_type)
        if low is not None:
            kind = POLICIES.get(device_type, POLICIES["cuda"]).get(name)
    if kind == BANNED:
        raise DTypeError(
            f"{name}: unsafe to autocast (its float16 gradient can overflow); use the "
            f"*_with_logits form, which is safe, or leave the autocast block for this op "
            f"(vt.autocast('{device_type}', enabled=False)) and pass float32 inputs")
    if kind is not None:
        if kind == LOWER:
            target = low
        elif kind == PROMOTE:
            target = None
            for t in tensors:
                dt = t.dtype
                if dt.kind == "f":
                    target = dt if target is None else _wider(target, dt)
        else:  # FP32 and KEEP compute in float32
            from ..dtypes import float32 as target
        # most calls have nothing to cast (a float32 op of float32 tensors)
        if target is not None and any(_needs_cast(t, target, device_type) for t in tensors):
            def cast(t: Any) -> Any:
                return _cast_to(t, target, device_type)

            args = _map(args, cast)
            if kwargs:
                kwargs = dict(zip(kwargs, _map(tuple(kwargs.values()), cast)))
    # the op runs as one unit with autocast off (and the inline hooks do not recurse)
    prev = state.active
    state.active = _EMPTY
    try:
        out = fn(*args, **kwargs)
    finally:
        state.active = prev
    if kind == KEEP and first.dtype is not target and hasattr(out, "dtype"):
        out = _cast_to(out, first.dtype, device_type)
    return out


def _wider(a: Any, b: Any) -> Any:
    from ..dtypes import promote_types

    return promote_types(a, b)


def autocast_call(name: str, fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """Run ``fn`` under the autocast policy of ``name``: the inline form of the hook.

    The hottest ops check ``state.active`` themselves (no extra call when autocast is
    off) and, when it is on, return ``autocast_call("op", op, ...)``, which casts the
    arguments and calls ``op`` again with autocast suspended.
    """
    return _autocast(name, fn, args, kwargs)
