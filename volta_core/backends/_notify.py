"""Hand a changed flag to the CUDA backend, if it is loaded and has a device."""

from __future__ import annotations

from typing import Any


def cuda_backend() -> Any:
    """The backend serving ``cuda`` when it is available, else None (loads plugins)."""
    from ..backend.registry import _by_type, plugin_manager

    plugin_manager()
    backend = _by_type.get("cuda")
    if backend is None or backend.unavailable_reason() is not None:
        return None
    return backend


def apply_flags() -> None:
    """Push every flag to the CUDA backend (call after changing one)."""
    backend = cuda_backend()
    apply = getattr(backend, "apply_flags", None) if backend is not None else None
    if apply is not None:
        apply(flags())


def flags() -> dict[str, Any]:
    """The current flags: ``matmul_tf32``, ``cudnn_tf32``, ``cudnn_enabled``,
    ``cudnn_benchmark``, ``cudnn_deterministic``, ``matmul_bf16_reduced``,
    ``matmul_fp16_reduced``."""
    from ..determinism import are_deterministic_algorithms_enabled
    from . import cuda, cudnn

    return {"matmul_tf32": cuda.matmul.allow_tf32, "cudnn_tf32": cudnn.allow_tf32,
            "cudnn_enabled": cudnn.enabled, "cudnn_benchmark": cudnn.benchmark,
            "cudnn_deterministic": cudnn.deterministic or are_deterministic_algorithms_enabled(),
            "matmul_bf16_reduced": cuda.matmul.allow_bf16_reduced_precision_reduction,
            "matmul_fp16_reduced": cuda.matmul.allow_fp16_reduced_precision_reduction}
