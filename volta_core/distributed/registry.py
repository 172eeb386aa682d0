"""Engine discovery: the entry-point group ``volta.comm``, loaded on first use.

Mirrors :mod:`volta_core.backend.registry`: each entry point names a module that
implements ``volta_comm_engines``; a module that fails to import is listed as an
unavailable engine with the import error as its reason. ``VOLTA_COMM_PLUGINS`` (a
comma-separated list of module names, like ``PYTEST_PLUGINS``) loads extra plugin
modules without installing them, and ``VOLTA_BLOCK_COMM`` blocks engines by name.
"""

from __future__ import annotations

from dataclasses import dataclass

import pluggy

from ..backend.plugins import call_each, checked_reason, env_list, install_hint, load_plugins
from ..errors import BackendUnavailableError
from . import hookspecs
from .engine import CommEngine

ENTRY_POINT_GROUP = "volta.comm"

_pm: pluggy.PluginManager | None = None
_engines: dict[str, CommEngine] = {}
_broken: dict[str, str] = {}
_found: dict[str, object] = {}  # plugin name -> what its volta_comm_engines hook returned


class _BrokenEngine(CommEngine):
    """Stands in for a plugin whose module could not be imported."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self._reason = reason

    def unavailable_reason(self) -> str:
        return self._reason


def plugin_manager() -> pluggy.PluginManager:
    """Return the engines' plugin manager, loading the ``volta.comm`` entry points once."""
    global _pm
    if _pm is None:
        pm, broken = load_plugins(ENTRY_POINT_GROUP, hookspecs,
                                  set(env_list("VOLTA_BLOCK_COMM")),
                                  env_list("VOLTA_COMM_PLUGINS"))
        _broken.update(broken)
        _pm = pm
        _collect()
    return _pm


def _collect() -> None:
    _engines.clear()
    blocked = set(env_list("VOLTA_BLOCK_COMM"))
    for name, reason in _broken.items():
        _engines[name] = _BrokenEngine(name, reason)
    results, failed = call_each(_pm.hook.volta_comm_engines, _found)
    for name, reason in failed.items():
        _engines[name] = _BrokenEngine(name, f"plugin {name!r} failed: {reason}")
    for plugin, found in results:
        items = found if isinstance(found, (list, tuple)) else [found]
        for engine in items if found is not None else ():
            if not isinstance(engine, CommEngine) or not isinstance(engine.name, str):
                _engines[plugin] = _BrokenEngine(
                    plugin, f"plugin {plugin!r} is broken: its hook volta_comm_engines "
                    f"returned {found!r}, not a list of CommEngines")
            elif engine.name not in blocked:
                _engines[engine.name] = engine


def register_engine_plugin(plugin: object, name: str | None = None) -> None:
    """Register a plugin object or module implementing ``volta_comm_engines`` at run time.

    Args:
        plugin: an object or module with a ``volta_comm_engines`` hook implementation.
        name: the plugin's name; defaults to pluggy's.
    """
    plugin_manager().register(plugin, name=name)
    _collect()


def unregister_engine_plugin(name: str) -> None:
    """Remove a plugin registered by :func:`register_engine_plugin`."""
    plugin_manager().unregister(name=name)
    _found.pop(name, None)
    _collect()


def get_engine(name: str) -> CommEngine:
    """Return the engine called ``name``, checking it can run here.

    Raises:
        BackendUnavailableError: the engine is unknown or its library is missing.
    """
    plugin_manager()
    engine = _engines.get(name.lower())
    if engine is None:
        raise BackendUnavailableError(
            f"no communication engine named {name!r}; discovered: {sorted(_engines)}. "
            "Engines are plugins of the entry-point group 'volta.comm' (see "
            "volta_core.distributed.engines())")
    reason = checked_reason(engine)
    if reason is not None:
        hint = install_hint(engine.extra)
        raise BackendUnavailableError(
            f"communication engine {name!r} is unavailable: {reason}{hint}")
    return engine


@dataclass(frozen=True)
class EngineInfo:
    """One row of :func:`engines`: a discovered engine and whether it can run here."""

    name: str
    device_types: tuple[str, ...]
    available: bool
    reason: str | None

    def __str__(self) -> str:
        state = "available" if self.available else f"unavailable: {self.reason}"
        return f"{self.name} ({', '.join(self.device_types) or '?'}): {state}"


def engines() -> list[EngineInfo]:
    """List every discovered communication engine with its availability and reason."""
    plugin_manager()
    rows = []
    for engine in _engines.values():
        reason = checked_reason(engine)
        rows.append(EngineInfo(engine.name, tuple(engine.device_types), reason is None,
                               reason))
    return rows


def is_engine_available(name: str) -> bool:
    """Whether an engine called ``name`` is installed and can run here."""
    return any(row.name == name and row.available for row in engines())
