"""``vt.compile`` and ``vt.compiler``: PyTorch's compiler entry points, as passthroughs.

Volta has no graph compiler at this API: the wgpu backend fuses lazily on its own, and
the other backends run eagerly. ``vt.compile(model)`` therefore returns ``model`` itself
(PyTorch returns a wrapper whose ``state_dict`` keys gain an ``_orig_mod.`` prefix;
Volta's keep theirs), and accepts PyTorch's keyword arguments so ported code runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile(model: Callable | None = None, *, fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, backend: str | Callable = "inductor",
            mode: str | None = None, options: dict[str, Any] | None = None,
            disable: bool = False, **kwargs: Any) -> Any:
    """Return ``model`` unchanged (a documented passthrough, see the module docstring).

    Args:
        model: a module or function; when None, returns a decorator that does the same.
        fullgraph, dynamic, backend, mode, options, disable: PyTorch's options, checked
            as PyTorch checks them and otherwise ignored.
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode!r}, should be one of: "
                           f"{', '.join(m for m in _MODES if m)}")
    if model is None:
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                  mode=mode, options=options, disable=disable, **kwargs)
    if not callable(model):
        raise RuntimeError("compile(): model must be callable (a Module or a function), got "
                           f"{type(model).__name__}")
    return model


def is_compiling() -> bool:
    """Always False: nothing is traced (``torch.compiler.is_compiling``)."""
    return False


def disable(fn: Callable | None = None, recursive: bool = True) -> Any:
    """Return ``fn`` unchanged (a decorator form when ``fn`` is None)."""
    return (lambda f: f) if fn is None else fn


def reset() -> None:
    """Nothing to reset (``torch.compiler.reset``)."""


__all__ = ["compile", "is_compiling", "disable", "reset"]
