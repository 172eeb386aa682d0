"""Switches for gradient recording: ``no_grad``, ``enable_grad``, ``set_grad_enabled``."""

from __future__ import annotations

import functools


class _State:
    enabled = True


state = _State()


def is_grad_enabled() -> bool:
    """Return whether new operations are recorded for autograd."""
    return state.enabled


class set_grad_enabled:
    """Turn gradient recording on or off, as a function call or a context manager.

    Args:
        mode: True to record operations, False not to.
    """

    def __init__(self, mode: bool) -> None:
        self.prev = state.enabled
        state.enabled = bool(mode)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        state.enabled = self.prev


class _GradMode:
    mode = True

    def __enter__(self) -> None:
        self.prev = state.enabled
        state.enabled = self.mode

    def __exit__(self, *exc) -> None:
        state.enabled = self.prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_GradMode):
    """Context manager and decorator that disables gradient recording."""

    mode = False


class enable_grad(_GradMode):
    """Context manager and decorator that enables gradient recording (inside ``no_grad``)."""

    mode = True
