"""Backend discovery through entry points, and the registry of device types.

Nothing is imported at ``import volta_core``: the entry points of the group
``volta.backends`` are loaded on first device use. A plugin that fails to import is
kept as an unavailable backend with the import error as its reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import pluggy

from ..errors import BackendUnavailableError, DeviceError
from . import hookspecs
from .base import Backend
from .plugins import checked_reason, env_list, install_hint, load_plugins

ENTRY_POINT_GROUP = "volta.backends"

_pm: pluggy.PluginManager | None = None
_by_type: dict[str, Backend] = {}
_by_name: dict[str, Backend] = {}
_broken: dict[str, str] = {}  # entry-point name -> why its plugin failed to load


class _BrokenBackend(Backend):
    """Stands in for a plugin whose module could not be imported."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.device_type = name
        self._reason = reason

    def unavailable_reason(self) -> str:
        return self._reason


def plugin_manager() -> pluggy.PluginManager:
    """Return the plugin manager, loading the ``volta.backends`` entry points once."""
    global _pm
    if _pm is None:
        blocked = set(env_list("VOLTA_BLOCK_BACKENDS"))
        pm, broken = load_plugins(ENTRY_POINT_GROUP, hookspecs, blocked)
        for name in blocked:
            pm.set_blocked(name)
        _broken.update(broken)
        _pm = pm
        _collect()
    return _pm


def _collect() -> None:
    _by_type.clear()
    _by_name.clear()
    for name, reason in _broken.items():
        _by_name[name] = _BrokenBackend(name, reason)
    for backends in _pm.hook.volta_backends():
        for backend in backends or ():
            _add(backend)


def _add(backend: Backend) -> None:
    other = _by_type.get(backend.device_type)
    if other is not None and other.name != backend.name:
        raise DeviceError(
            f"backends {other.name!r} and {backend.name!r} both serve device type "
            f"{backend.device_type!r}; block one with VOLTA_BLOCK_BACKENDS={backend.name}")
    _by_type[backend.device_type] = backend
    _by_name[backend.name] = backend


def register_plugin(plugin: object, name: str | None = None) -> None:
    """Register a plugin object or module at run time (tests, notebooks).

    Args:
        plugin: an object or module implementing hooks of ``volta_core.backend.hookspecs``.
        name: the plugin's name; defaults to pluggy's.
    """
    pm = plugin_manager()
    pm.register(plugin, name=name)
    _collect()
    from . import kernels  # the kernel cache may hold a result this plugin overrides

    kernels.clear_cache()


def unregister_plugin(name: str) -> None:
    """Remove a plugin registered by :func:`register_plugin`."""
    pm = plugin_manager()
    pm.unregister(name=name)
    _collect()
    from .device import forget_devices
    from .kernels import clear_cache

    clear_cache()
    forget_devices(keep=set(_by_type.values()))


def backend_for_type(device_type: str) -> Backend:
    """Return the backend that serves ``device_type``, checking it can run here."""
    plugin_manager()
    backend = _by_type.get(device_type)
    if backend is None:
        known = sorted(_by_type)
        raise DeviceError(f"unknown device type {device_type!r}; installed backends serve "
                          f"{known}. See volta_core.backends() for what is installed.")
    reason = backend.unavailable_reason()
    if reason is not None:
        hint = install_hint(backend.extra)
        raise BackendUnavailableError(
            f"backend {backend.name!r} for device {device_type!r} is unavailable: {reason}{hint}")
    return backend


def get_backend(name: str) -> Backend:
    """Return the backend called ``name`` (``"numpy"``, ``"cupy"``, ...), available or not."""
    plugin_manager()
    if name not in _by_name:
        raise DeviceError(f"no backend named {name!r}; discovered: {sorted(_by_name)}")
    return _by_name[name]


@dataclass(frozen=True)
class BackendInfo:
    """One row of :func:`backends`: a discovered backend and whether it can run here."""

    name: str
    device_type: str
    available: bool
    reason: str | None
    devices: tuple[str, ...]

    def __str__(self) -> str:
        state = (f"available {list(self.devices)}" if self.available
                 else f"unavailable: {self.reason}")
        return f"{self.name} ({self.device_type}): {state}"


def backends() -> list[BackendInfo]:
    """List every discovered backend with its availability, reason and devices."""
    plugin_manager()
    rows = []
    for backend in _by_name.values():
        reason = checked_reason(backend)
        devices: tuple[str, ...] = ()
        if reason is None:
            n = backend.device_count()
            devices = tuple(f"{backend.device_type}:{i}" for i in range(n))
        rows.append(BackendInfo(backend.name, backend.device_type, reason is None, reason,
                                devices))
    return rows
