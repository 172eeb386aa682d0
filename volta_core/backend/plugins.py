"""Loading plugin modules from an entry-point group; shared by backends and comm engines."""

from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points
from types import ModuleType

import pluggy


def env_list(name: str) -> list[str]:
    """The comma-separated names in environment variable ``name`` (empty when unset)."""
    return [n.strip() for n in os.environ.get(name, "").split(",") if n.strip()]


def load_plugins(group: str, specs: ModuleType, blocked: set[str],
                 extra_modules: list[str] = ()) -> tuple[pluggy.PluginManager, dict[str, str]]:
    """Make a plugin manager with ``specs`` and register the modules of entry-point ``group``.

    A module that fails to import is not registered; it is returned in the second value,
    ``{name: why}``, so that it can be listed as unavailable instead of breaking Volta.

    Args:
        group: the entry-point group (``"volta.backends"``).
        specs: the hookspec module.
        blocked: plugin names not to load.
        extra_modules: module names to load as well (for plugins that are not installed).
    """
    pm = pluggy.PluginManager("volta")
    pm.add_hookspecs(specs)
    sources = [(ep.name, ep.value, ep.load) for ep in entry_points(group=group)]
    sources += [(m, m, lambda m=m: importlib.import_module(m)) for m in extra_modules]
    broken: dict[str, str] = {}
    for name, value, load in sources:
        if name in blocked or pm.get_plugin(name) is not None:
            continue
        try:
            module = load()
        except Exception as exc:  # a broken third-party plugin must not break Volta
            broken[name] = f"plugin {value!r} failed to load: {exc!r}"
            continue
        if not pm.is_registered(module):
            pm.register(module, name=name)
    return pm, broken


def checked_reason(plugin) -> str | None:
    """``plugin.unavailable_reason()``, turning a failing check into a reason of its own."""
    try:
        return plugin.unavailable_reason()
    except Exception as exc:  # availability checks must never break a listing
        return f"availability check failed: {exc!r}"


def install_hint(extra: str | None) -> str:
    """The ``pip install`` advice appended to an unavailable-plugin error."""
    return f"; install it with: pip install 'volta[{extra}]'" if extra else ""
