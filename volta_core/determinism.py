"""``vt.use_deterministic_algorithms``: PyTorch's switch for run-to-run identical results.

With it on, cuDNN takes only deterministic algorithms (as with
``vt.backends.cudnn.deterministic``) and the CUDA scatter-adds (``scatter_add``,
``index_add``, the embedding gradient), whose atomic adds sum in a varying order, give way
to the generic sort-based kernels. Volta's other kernels give the same bits on every run
already (reductions, the CPU backend's threaded loops), so no op raises for being
nondeterministic. The setting is global, as PyTorch's.
"""

from __future__ import annotations

_state = {"enabled": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Use deterministic algorithms only (``mode``); ``warn_only`` as in PyTorch (kept and
    reported; nothing in Volta needs it)."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms expects a bool, but got "
                        f"{type(mode).__name__}")
    _state["enabled"], _state["warn_only"] = mode, bool(warn_only)
    from .backends._notify import apply_flags

    apply_flags()


def are_deterministic_algorithms_enabled() -> bool:
    """Whether :func:`use_deterministic_algorithms` is on."""
    return _state["enabled"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether it is on with ``warn_only=True``."""
    return _state["enabled"] and _state["warn_only"]


__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled"]
