"""Each thread's autocast state, read by the op hook (``dispatch``) and set by ``autocast``.

Kept in its own small module so that the op modules can import it without importing the
rest of ``volta_core.amp``.
"""

from __future__ import annotations

import threading

_EMPTY: dict = {}


class _State(threading.local):
    # class attributes are each thread's starting values; the dicts are replaced, never
    # mutated, so that threads never share a changed one
    active: dict = _EMPTY  # device type -> autocast dtype, for every enabled device type
    dtypes: dict = _EMPTY  # device type -> dtype chosen by the innermost autocast
    cache_enabled: bool = True
    cache: dict | None = None  # id(leaf) -> (leaf, version, dtype, cast copy)
    depth: int = 0  # nesting of autocast blocks (the cache is dropped at 0)


state = _State()


class suspended:
    """Run a block with autocast off (the autograd engine's backward, a policy op's body)."""

    __slots__ = ("_prev",)

    def __enter__(self) -> None:
        self._prev = state.active
        state.active = _EMPTY

    def __exit__(self, *exc) -> None:
        state.active = self._prev
