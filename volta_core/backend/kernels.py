"""Extension kernels: what the Array API standard lacks, with a generic fallback.

A kernel is a function whose first argument is the Array-API namespace ``xp``,
followed by backend arrays and keyword parameters. The core registers the generic
fallback of every kernel with :func:`fallback`; :func:`get_kernel` resolves, per
backend and once: a plugin's ``volta_kernel`` hook, else the backend's own
``kernels[name]``, else the fallback.
"""

from __future__ import annotations

from collections.abc import Callable

from .base import Backend
from .registry import plugin_manager

_fallbacks: dict[str, Callable] = {}
_cache: dict[tuple[str, str], Callable] = {}


def fallback(name: str) -> Callable[[Callable], Callable]:
    """Register the generic Array-API implementation of kernel ``name``.

    Args:
        name: the kernel's name, the key backends use in ``Backend.kernels``.
    """

    def register(fn: Callable) -> Callable:
        if name in _fallbacks:
            raise ValueError(f"kernel {name!r} already has a fallback: {_fallbacks[name]}")
        _fallbacks[name] = fn
        return fn

    return register


def get_kernel(backend: Backend, name: str) -> Callable:
    """Return the implementation of kernel ``name`` to use on ``backend``."""
    fn = _cache.get((backend.name, name))
    if fn is None:
        fn = plugin_manager().hook.volta_kernel(backend=backend, name=name)
        if fn is None:
            fn = backend.kernels.get(name)
        if fn is None:
            fn = get_fallback(name)
        _cache[(backend.name, name)] = fn
    return fn


def get_fallback(name: str) -> Callable:
    """Return the generic Array-API implementation of kernel ``name`` (the reference)."""
    fn = _fallbacks.get(name)
    if fn is None:
        raise KeyError(f"no kernel named {name!r}; known kernels: {sorted(_fallbacks)}")
    return fn


def kernel_names() -> list[str]:
    """Names of every declared extension kernel."""
    return sorted(_fallbacks)


def clear_cache() -> None:
    """Forget resolved kernels (after a plugin is registered or removed)."""
    _cache.clear()
