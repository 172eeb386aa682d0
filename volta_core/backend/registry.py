"""Backend discovery through entry points, and the registry of device types.

Nothing is imported at ``import volta_core``: the entry points of the group
``volta.backends`` are loaded on first device use. A plugin that fails to import is
kept as an unavailable backend with the import error as its reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pluggy

from ..errors import BackendUnavailableError, DeviceError
from . import hookspecs
from .base import Backend
from .plugins import call_each, checked_reason, env_list, install_hint, load_plugins

ENTRY_POINT_GROUP = "volta.backends"

# device types served by the backends Volta ships: a plugin cannot take them over
BUILTIN_TYPES = {"cpu": "numpy", "cuda": "cupy", "wgpu": "wgpu"}

_pm: pluggy.PluginManager | None = None
_by_type: dict[str, Backend] = {}
_by_name: dict[str, Backend] = {}
_broken: dict[str, str] = {}  # entry-point name -> why its plugin failed to load
_conflicts: dict[str, str] = {}  # device type -> why no backend serves it
_found: dict[str, Any] = {}  # plugin name -> what its volta_backends hook returned


class _BrokenBackend(Backend):
    """Stands in for a plugin (or a backend) that failed: its row says why."""

    def __init__(self, name: str, reason: str, device_type: str | None = None) -> None:
        self.name = name
        self.device_type = device_type or "?"
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
    """Gather every plugin's backends; a plugin that fails is reported, never raised."""
    _by_type.clear()
    _by_name.clear()
    _conflicts.clear()
    for name, reason in _broken.items():
        _by_name[name] = _BrokenBackend(name, reason)
    results, failed = call_each(_pm.hook.volta_backends, _found)
    for name, reason in failed.items():
        _by_name[name] = _BrokenBackend(name, f"plugin {name!r} failed: {reason}")
    claims: dict[str, list[Backend]] = {}
    for plugin, found in results:
        for backend in _valid_backends(plugin, found):
            if backend.name in _by_name:
                _by_name[f"{backend.name} ({plugin})"] = _BrokenBackend(
                    backend.name, f"plugin {plugin!r} provides a second backend named "
                    f"{backend.name!r}; ignored", backend.device_type)
                continue
            _by_name[backend.name] = backend
            claims.setdefault(backend.device_type, []).append(backend)
    for device_type, claimants in claims.items():
        _settle(device_type, claimants)


def _valid_backends(plugin: str, found: Any) -> list[Backend]:
    """The well-formed backends a plugin's hook returned; nonsense becomes a broken row."""
    if found is None:
        return []
    items = list(found) if isinstance(found, (list, tuple)) else None
    bad = "" if items is not None else f"returned {found!r}, not a list of Backends"
    for b in items or ():
        if not isinstance(b, Backend) or not isinstance(getattr(b, "name", None), str) \
                or not isinstance(getattr(b, "device_type", None), str) or not b.device_type:
            bad = f"returned {b!r} in its list, not a Backend with a name and device_type"
    if bad:
        _by_name[plugin] = _BrokenBackend(plugin, f"plugin {plugin!r} is broken: its hook "
                                                  f"volta_backends {bad}")
        return []
    return items


def _settle(device_type: str, claimants: list[Backend]) -> None:
    """Give ``device_type`` to its one claimant; settle conflicts without a silent winner."""
    builtin = [b for b in claimants if BUILTIN_TYPES.get(device_type) == b.name]
    if len(claimants) == 1:
        _by_type[device_type] = claimants[0]
        return
    names = [b.name for b in claimants]
    if builtin:  # Volta's own backend keeps its type; the others are refused
        _by_type[device_type] = builtin[0]
        for b in claimants:
            if b is not builtin[0]:
                _by_name[b.name] = _BrokenBackend(
                    b.name, f"it claims device type {device_type!r}, which Volta's built-in "
                    f"backend {builtin[0].name!r} serves; a plugin cannot take it over "
                    "(use a device type of its own)", device_type)
        return
    _conflicts[device_type] = (
        f"backends {names} all claim device type {device_type!r}; block all but one with "
        f"VOLTA_BLOCK_BACKENDS (e.g. VOLTA_BLOCK_BACKENDS={names[-1]})")
    for b in claimants:
        _by_name[b.name] = _BrokenBackend(b.name, _conflicts[device_type], device_type)


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
    _found.pop(name, None)
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
        if device_type in _conflicts:
            raise DeviceError(f"device type {device_type!r} cannot be used: "
                              f"{_conflicts[device_type]}")
        raise DeviceError(f"unknown device type {device_type!r}; installed backends serve "
                          f"{sorted(_by_type)}{_why_missing(device_type)}. See "
                          "volta_core.backends() for what is installed.")
    reason = checked_reason(backend)
    if reason is not None:
        hint = install_hint(backend.extra)
        raise BackendUnavailableError(
            f"backend {backend.name!r} for device {device_type!r} is unavailable: {reason}{hint}")
    return backend


def _why_missing(device_type: str) -> str:
    """What may have kept a backend for ``device_type`` away: a failed or blocked plugin."""
    notes = []
    failed = [(n, b.unavailable_reason()) for n, b in _by_name.items()
              if isinstance(b, _BrokenBackend) and b.device_type in ("?", device_type)]
    if failed:
        notes.append("plugins that failed (one may serve it): "
                     + "; ".join(f"{n}: {why}" for n, why in failed))
    blocked = env_list("VOLTA_BLOCK_BACKENDS")
    if blocked:
        owner = BUILTIN_TYPES.get(device_type)
        lead = (f"its backend {owner!r} is blocked by" if owner in blocked
                else "blocked backends may serve it:")
        notes.append(f"{lead} VOLTA_BLOCK_BACKENDS={','.join(blocked)}")
    return "; " + "; ".join(notes) if notes else ""


def device_count(backend: Backend) -> int:
    """``backend.device_count()``, or a ``BackendUnavailableError`` saying why it failed."""
    try:
        n = backend.device_count()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        raise BackendUnavailableError(f"backend {backend.name!r} could not count its "
                                      f"{backend.device_type} devices: {exc!r}") from None
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise BackendUnavailableError(f"backend {backend.name!r}: device_count() returned "
                                      f"{n!r}, not a count")
    return n


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
            try:
                devices = tuple(f"{backend.device_type}:{i}"
                                for i in range(device_count(backend)))
            except BackendUnavailableError as exc:
                reason = str(exc)
        rows.append(BackendInfo(backend.name, backend.device_type, reason is None, reason,
                                devices))
    return rows
