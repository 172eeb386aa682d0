"""``vt.compile`` and ``vt.compiler``: PyTorch's compiler entry points.

On CUDA, ``mode="reduce-overhead"`` replays a compiled Module's forward and backward as
CUDA graphs (:mod:`volta_core.cuda_compile`), as PyTorch's mode of that name does. On the
wgpu backend, ``vt.compile(model_or_fn)`` runs each call with the backend's lazy
engine on (elementwise chains and their reductions are recorded and run as fused kernels,
see ``volta_wgpu.lazy``); elsewhere it changes nothing. A Module is returned itself, its
``forward`` wrapped on the instance (PyTorch returns a wrapper whose ``state_dict`` keys gain
an ``_orig_mod.`` prefix; Volta's keep theirs); a function comes back wrapped. PyTorch's
keyword arguments are accepted so ported code runs. ``VOLTA_WGPU_EAGER=1`` keeps every op
eager, compiled or not (for debugging).

``mode="reduce-overhead"`` (what CUDA graphs serve in PyTorch) also records the GPU work
of a call and replays it with no Python op code once it repeats: see
:mod:`volta_core.replay`, which also holds :class:`~volta_core.replay.host_args`, the
hook through which the optimizers' kernels take their step-dependent numbers live.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile(model: Callable | None = None, *, fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, backend: str | Callable = "inductor",
            mode: str | None = None, options: dict[str, Any] | None = None,
            disable: bool = False, **kwargs: Any) -> Any:
    """Run ``model`` with the wgpu backend's lazy fusion on (see the module docstring).

    Args:
        model: a module or function; when None, returns a decorator that does the same.
        fullgraph, dynamic, backend, mode, options: PyTorch's options, checked as PyTorch
            checks them and otherwise ignored.
        disable: True returns ``model`` unchanged.

    Returns:
        A Module: ``model`` itself, whose calls now run lazily on wgpu. A function: a
        wrapper that does.
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
    if disable:
        return model
    from .nn.module import Module
    replay = mode == "reduce-overhead"
    if isinstance(model, Module):
        if not isinstance(model.__dict__.get("forward"), _LazyForward):
            object.__setattr__(model, "forward", _LazyForward(model, replay))
        return model
    if replay:
        from .replay import Replayer
        return functools.wraps(model)(Replayer(model, None))

    @functools.wraps(model)
    def compiled(*args: Any, **kw: Any) -> Any:
        with _lazy():
            return model(*args, **kw)
    return compiled


class _Lazy:
    """Context: the wgpu backend's lazy mode on inside (when that backend is loaded)."""

    backend: Any = False  # the wgpu backend once looked up; None when there is none

    def __enter__(self) -> None:
        b = _Lazy.backend
        if b is False:
            try:
                from .backend.registry import backend_for_type
                b = backend_for_type("wgpu")
                b = b if hasattr(b, "lazy_scope") else None
            except Exception:  # no wgpu backend here: a passthrough
                b = None
            _Lazy.backend = b
        self.scope = b.lazy_scope() if b is not None else None
        if self.scope is not None:
            self.scope.__enter__()

    def __exit__(self, *exc: Any) -> None:
        if self.scope is not None:
            self.scope.__exit__(*exc)


def _lazy() -> _Lazy:
    return _Lazy()


class _LazyForward:
    """A compiled Module's ``forward``: the class's forward under :class:`_Lazy`.

    Holds the module, not a bound method, so deepcopy and pickle rebind it to the copy.
    """

    def __init__(self, module: Any, replay: bool = False) -> None:
        self.module = module
        self.replay = replay

    def __call__(self, *args: Any, **kw: Any) -> Any:
        m = self.module
        if getattr(self, "replay", False):  # (absent from a forward pickled before)
            from .cuda_compile import graphs_of
            if graphs_of(m) is not None:  # CUDA: forward and backward as CUDA graphs
                graphed = self.__dict__.get("graphed")
                if graphed is None:
                    from .cuda_compile import GraphedModule
                    graphed = self.graphed = GraphedModule(
                        m, lambda *a, **k: type(m).forward(m, *a, **k))
                return graphed(*args, **kw)
            rep = self.__dict__.get("replayer")
            if rep is None:  # not pickled: a copy of the module records its own
                from .replay import Replayer
                rep = self.replayer = Replayer(lambda *a, **k: type(m).forward(m, *a, **k), m)
            return rep(*args, **kw)
        with _lazy():
            return type(m).forward(m, *args, **kw)

    def __getstate__(self) -> dict:
        return {"module": self.module, "replay": self.replay}


def is_compiling() -> bool:
    """Always False: nothing is traced (``torch.compiler.is_compiling``)."""
    return False


def disable(fn: Callable | None = None, recursive: bool = True) -> Any:
    """Return ``fn`` unchanged (a decorator form when ``fn`` is None)."""
    return (lambda f: f) if fn is None else fn


def reset() -> None:
    """Nothing to reset (``torch.compiler.reset``)."""


__all__ = ["compile", "is_compiling", "disable", "reset"]
