"""ONNX export and import (``vt.onnx.export``, ``vt.onnx.load``); needs the ``onnx`` extra.

``export`` traces a module's forward and writes an ONNX model that ONNX Runtime (or any
ONNX consumer) can run; ``load`` builds a Volta module that runs an ONNX graph with
Volta's ops, its initializers as trainable parameters. See ``docs/onnx.md``.
"""

from __future__ import annotations

try:
    import onnx as _onnx  # noqa: F401
except ImportError as err:  # pragma: no cover - the extra is missing
    from ..errors import BackendUnavailableError

    raise BackendUnavailableError(
        "vt.onnx needs the 'onnx' package: pip install 'volta[onnx]'") from err

from .errors import OnnxExportError, OnnxImportError
from .export import export
from .importer import OnnxModule, load

__all__ = ["export", "load", "OnnxModule", "OnnxExportError", "OnnxImportError"]
