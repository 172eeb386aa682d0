"""Anomaly detection (``vt.autograd.detect_anomaly``, as PyTorch's): backward checks every
gradient an op's backward returns for NaN and raises naming the op, with the traceback of
the forward call that recorded it (kept only while the mode is on, which costs a stack
capture per recorded op: a debugging tool)."""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from typing import Any

from ..errors import AutogradError

# [enabled, check_nan]; global, as PyTorch's
state = [False, True]


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on."""
    return state[0]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether it checks backward results for NaN."""
    return state[0] and state[1]


class set_detect_anomaly:  # noqa: N801 - PyTorch's spelling
    """Turn anomaly detection on or off (immediately, and as a context manager)."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = list(state)
        state[0], state[1] = bool(mode), bool(check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        state[:] = self.prev


class detect_anomaly:  # noqa: N801 - PyTorch's spelling
    """Anomaly detection inside the block (or the decorated function)."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> None:
        import warnings

        warnings.warn("Anomaly Detection has been enabled. This mode will increase the "
                      "runtime and should only be enabled for debugging.", stacklevel=2)
        self.prev = list(state)
        state[0], state[1] = True, self.check_nan

    def __exit__(self, *exc: Any) -> None:
        state[:] = self.prev

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


def record_stack(node: Any) -> None:
    """Keep the forward traceback on a recorded node (anomaly mode only)."""
    node.anomaly_stack = "".join(traceback.format_stack()[:-2])


def check(node: Any, grads: tuple) -> None:
    """Raise when ``node``'s backward returned NaN (anomaly mode with ``check_nan``)."""
    if not state[1]:
        return
    for i, g in enumerate(grads):
        if g is not None and bool(g.isnan().any()):
            name = f"{type(node).__name__}Backward"
            stack = getattr(node, "anomaly_stack", None)
            where = ("\nTraceback of the forward call that caused the error:\n" + stack
                     if stack else "")
            raise AutogradError(f"Function '{name}' returned nan values in its {i}th "
                                f"output.{where}")


__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]
