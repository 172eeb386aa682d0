"""Saving and loading: safetensors state dicts, checkpoints, and weight interchange.

``save_state_dict`` / ``load_state_dict`` read and write flat ``{name: Tensor}`` dicts
as safetensors files; ``save`` / ``load`` (also ``vt.save`` / ``vt.load``) handle
whole training checkpoints without pickle (and ``load`` reads ``torch.save``'s files by
PyTorch's weights-only rules, :mod:`.torch_format`); ``StateDictMapper`` renames and
reshapes weights coming from other frameworks. Every write is atomic and checksummed.

Importing this package stays cheap: NumPy and safetensors load on first use, so
``volta_core`` can re-export :func:`save` and :func:`load` at top level.
"""

from __future__ import annotations

import importlib
import os
from typing import IO, Any

from .mapper import StateDictMapper

_LAZY = {"save_state_dict": "safetensors_io", "load_state_dict": "safetensors_io",
         "load_metadata": "safetensors_io", "atomic_write": "safetensors_io",
         "safetensors_io": None, "checkpoint": None}


def save(obj: Any, f: str | os.PathLike | IO[bytes]) -> None:
    """Save a checkpoint: nested dicts/lists/tuples of tensors and plain values.

    See :func:`volta_core.io.checkpoint.save`. Atomic, checksummed, no pickle; ``f``
    is a path or a binary file object.
    """
    from .checkpoint import save as _save

    _save(obj, f)


def load(f: str | os.PathLike | IO[bytes], map_location: Any = None, *,
         weights_only: bool | None = None) -> Any:
    """Load a checkpoint written by :func:`save` (or a safetensors file, as a dict, or a
    file ``torch.save`` wrote, by PyTorch's weights-only rules).

    See :func:`volta_core.io.checkpoint.load`; ``map_location`` moves tensors (a device,
    a dict, or a function as in PyTorch); ``weights_only`` is accepted and always
    safe (no code in a file can run).
    """
    from .checkpoint import load as _load

    return _load(f, map_location, weights_only=weights_only)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module = importlib.import_module(f"{__name__}.{_LAZY[name] or name}")
        return module if _LAZY[name] is None else getattr(module, name)
    raise AttributeError(f"module 'volta_core.io' has no attribute {name!r}")


__all__ = ["save", "load", "save_state_dict", "load_state_dict", "load_metadata",
           "atomic_write", "StateDictMapper"]
