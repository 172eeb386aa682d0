"""Errors of ONNX export and import."""

from __future__ import annotations

from ..errors import VoltaError


class OnnxExportError(VoltaError, RuntimeError):
    """An op, layer or value that ``vt.onnx.export`` cannot write to ONNX."""


class OnnxImportError(VoltaError, RuntimeError):
    """An ONNX graph (an op, attribute or dtype) that ``vt.onnx.load`` cannot run."""


__all__ = ["OnnxExportError", "OnnxImportError"]
