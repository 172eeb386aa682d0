"""Switches for gradient recording: ``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``inference_mode``.

The switches are per thread, as in PyTorch: ``no_grad`` in one thread (an optimizer step,
say) never stops another thread from recording. A new thread starts with recording on.
Used as decorators, they wrap generator functions so that every step of the generator
runs under the mode, not only the call that creates it.
"""

from __future__ import annotations

import functools
import inspect
import threading


class _State(threading.local):
    # class attributes are each thread's starting values
    enabled = True
    inference = False


state = _State()


def is_grad_enabled() -> bool:
    """Return whether new operations are recorded for autograd in this thread."""
    return state.enabled


def is_inference_mode_enabled() -> bool:
    """Return whether this thread is inside ``inference_mode``."""
    return state.inference


def _wrap(fn, make_mode):
    """Run ``fn`` (a function or a generator function) under the mode ``make_mode()``."""
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen_wrapper(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with make_mode():
                    item = gen.send(None)
                while True:  # every resumption of the generator runs under the mode
                    try:
                        sent = yield item
                    except GeneratorExit:
                        with make_mode():
                            gen.close()
                        raise
                    except BaseException as exc:  # forwarded into the generator
                        with make_mode():
                            item = gen.throw(exc)
                    else:
                        with make_mode():
                            item = gen.send(sent)
            except StopIteration as stop:
                return stop.value

        return gen_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with make_mode():
            return fn(*args, **kwargs)

    return wrapper


class _Mode:
    """A context manager and decorator that sets this thread's grad mode to ``mode``."""

    mode: bool | None = True  # None: leave grad mode as it is
    inference: bool | None = None  # None: leave inference mode as it is

    def __enter__(self) -> None:
        self._prev = (state.enabled, state.inference)
        if self.mode is not None:
            state.enabled = self.mode
        if self.inference is not None:
            state.inference = self.inference

    def __exit__(self, *exc) -> None:
        state.enabled, state.inference = self._prev

    def __call__(self, fn):
        return _wrap(fn, self._clone)

    def _clone(self) -> _Mode:
        return type(self)()


class no_grad(_Mode):
    """Context manager and decorator that disables gradient recording in this thread.

    Example::

        with vt.no_grad():
            y = x * 2          # y.requires_grad is False
    """

    mode = False


class enable_grad(_Mode):
    """Context manager and decorator that enables gradient recording (inside ``no_grad``)."""

    mode = True


class set_grad_enabled(_Mode):
    """Turn gradient recording on or off, as a function call or a context manager.

    ``vt.set_grad_enabled(False)`` switches recording off for this thread at once; used in a
    ``with`` statement the previous mode comes back at the end of the block.

    Args:
        mode: True to record operations, False not to.
    """

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._prev = (state.enabled, state.inference)
        state.enabled = self.mode

    def __enter__(self) -> None:
        return None  # the mode was set by __init__; _prev was taken there

    def _clone(self) -> _Mode:
        return set_grad_enabled(self.mode)


class inference_mode(_Mode):
    """Like ``no_grad``, for code that will never need gradients (inference, evaluation).

    Args:
        mode: True to enter inference mode (the default), False to leave it for a block.
    """

    def __init__(self, mode: bool = True) -> None:
        self.mode = False if mode else None
        self.inference = bool(mode)

    def _clone(self) -> _Mode:
        return inference_mode(self.inference)
