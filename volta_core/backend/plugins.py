"""Loading plugin modules from an entry-point group; shared by backends and comm engines."""

from __future__ import annotations

import importlib
import os
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

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
            if not pm.is_registered(module):
                pm.register(module, name=name)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # even SystemExit: a broken plugin must not end Volta
            broken[name] = f"plugin {value!r} failed to load: {exc!r}"
    return pm, broken


def call_each(hook: Any, cache: dict[str, Any] | None = None
              ) -> tuple[list[tuple[str, Any]], dict[str, str]]:
    """Call every implementation of the argument-less ``hook`` on its own.

    Returns ``([(plugin name, result), ...], {plugin name: why it failed})``: a plugin
    whose hook raises (anything but ``KeyboardInterrupt``) is reported, not raised, so
    one bad plugin cannot break the others. Results found in ``cache`` (by plugin name)
    are reused and new ones added, so a plugin's objects keep their identity when the
    hook is collected again (after another plugin registers).
    """
    cache = {} if cache is None else cache
    results, broken = [], {}
    for impl in hook.get_hookimpls():  # in registration order
        name = impl.plugin_name
        if name not in cache:
            try:
                cache[name] = impl.function()
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                broken[name] = f"its hook {hook.name} raised {exc!r}"
                continue
        results.append((name, cache[name]))
    return results, broken


def checked_reason(plugin) -> str | None:
    """``plugin.unavailable_reason()``, turning a failing check into a reason of its own."""
    try:
        reason = plugin.unavailable_reason()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # availability checks must never break a listing
        return f"its availability check unavailable_reason() raised {exc!r}"
    if reason is not None and not isinstance(reason, str):
        return f"its unavailable_reason() returned {reason!r}, not a str or None"
    return reason


def install_hint(extra: str | None) -> str:
    """The ``pip install`` advice appended to an unavailable-plugin error."""
    return f"; install it with: pip install 'volta[{extra}]'" if extra else ""
