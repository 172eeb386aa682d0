"""``out=``: PyTorch's output-argument form of the module-level functions.

``vt.add(a, b, out=c)`` computes ``vt.add(a, b)`` and writes it into ``c`` (and returns
``c``), as PyTorch does: the result is cast to ``out``'s dtype where PyTorch's casting
rules allow it, ``out`` is resized (with PyTorch's warning when it held elements) if its
shape differs, and gradients are refused (an op with ``out=`` is not recorded). Functions
that return several tensors take a tuple (``vt.max(x, 1, out=(values, indices))``).

The wrapping is done once, on the functions ``import volta_core`` exports (and
``vt.special``'s); Tensor methods and operators never take ``out=`` and keep their direct
call. Code that compares functions by identity unwraps them (``inspect.unwrap``).
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from .autograd.grad_mode import is_grad_enabled
from .errors import AutogradError, DeviceError, DTypeError, ShapeError
from .ops.queries import can_cast
from .tensor import Tensor


def write(op: str, result: Any, out: Any) -> Any:
    """Write ``result`` (a Tensor or a tuple of them) into ``out`` and return ``out``."""
    if isinstance(out, (tuple, list)):
        results = tuple(result)
        if len(results) != len(out):
            raise TypeError(f"{op}(): out= takes {len(results)} tensors, got {len(out)}")
        written = [write(op, r, o) for r, o in zip(results, out)]
        # PyTorch returns its named tuple (values, indices) when the result is one
        return type(result)(*written) if hasattr(result, "_fields") else type(out)(written)
    if not isinstance(out, Tensor) or not isinstance(result, Tensor):
        raise TypeError(f"{op}(): out= must be a Tensor (a tuple of them for several "
                        f"results), got {type(out).__name__}")
    if is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise AutogradError(f"{op}(): functions with out=... arguments don't support "
                            "automatic differentiation, but one of the arguments requires "
                            "grad; call it without out= (or under vt.no_grad())")
    if out.device is not result.device:
        raise DeviceError(f"{op}(): out= is on {out.device} but the result is on "
                          f"{result.device}; pass an out tensor on {result.device}")
    if not can_cast(result.dtype, out.dtype):
        raise DTypeError(f"{op}(): result type {result.dtype.name} can't be cast to the "
                         f"desired output type {out.dtype.name}")
    value = result if result.dtype is out.dtype else result.to(out.dtype)
    if out.shape == result.shape:
        return out.copy_(value)
    if out._is_view():
        raise ShapeError(f"{op}(): out= is a view of shape {out.shape}, the result has shape "
                         f"{result.shape}; a view can't be resized")
    if out.numel():
        warnings.warn(f"{op}(): an output with one or more elements was resized since it had "
                      f"shape {out.shape}, which does not match the required output shape "
                      f"{result.shape}; this behaviour is deprecated (PyTorch warns alike)",
                      UserWarning, stacklevel=3)
    out.data = value
    return out


_wrappers: dict[int, Callable] = {}  # id(function) -> its wrapper: aliases stay aliases
_wrapper_ids: set[int] = set()  # ids of those wrappers


def with_out(fn: Callable) -> Callable:
    """``fn`` taking an ``out=`` keyword as well (one wrapper per function, so names that
    are one function, ``vt.gt`` and ``vt.greater``, stay one object)."""
    if id(fn) in _wrappers:
        return _wrappers[id(fn)]

    @functools.wraps(fn)
    def call(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if out is None:
            return fn(*args, **kwargs)
        return write(fn.__name__, fn(*args, **kwargs), out)

    _wrappers[id(fn)] = call
    _wrapper_ids.add(id(call))
    return call


def install(namespace: dict, modules: tuple[str, ...]) -> None:
    """Give every function of ``namespace`` defined in one of ``modules`` (a prefix) that
    has no ``out`` parameter of its own the ``out=`` keyword."""
    for name, fn in list(namespace.items()):
        if (name.startswith("_") or not inspect.isfunction(fn)
                or not fn.__module__.startswith(modules)):
            continue
        if id(fn) in _wrapper_ids:  # already one of these wrappers
            continue
        # the parameter names from the code object: inspect.signature costs ~10x more,
        # and this runs for every exported function at import
        code = inspect.unwrap(fn).__code__
        if "out" not in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
            namespace[name] = with_out(fn)
