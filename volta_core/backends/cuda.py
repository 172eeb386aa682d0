"""``vt.backends.cuda``: flags of CUDA matrix products, and the float32 matmul precision.

``vt.backends.cuda.matmul.allow_tf32`` and ``vt.set_float32_matmul_precision`` are two
views of one setting, as in PyTorch: precision ``"highest"`` (the default) means full
float32 matmuls; ``"high"`` and ``"medium"`` allow TF32 tensor cores (10-bit mantissa
products, float32 accumulation), which is ``allow_tf32 = True``.
"""

from __future__ import annotations

_PRECISIONS = ("highest", "high", "medium")
_precision = "highest"


def get_float32_matmul_precision() -> str:
    """Return ``"highest"``, ``"high"`` or ``"medium"`` (see this module's doc)."""
    return _precision


def set_float32_matmul_precision(precision: str) -> None:
    """Set the internal precision of float32 matmuls on CUDA.

    Args:
        precision: ``"highest"`` (full float32, the default), ``"high"`` or ``"medium"``
            (TF32 tensor cores; Volta has no bfloat16x3 path, so both mean TF32).
    """
    global _precision
    if precision not in _PRECISIONS:
        raise ValueError(f"set_float32_matmul_precision: expected one of {_PRECISIONS}, got "
                         f"{precision!r}")
    _precision = precision
    from ._notify import apply_flags

    apply_flags()


class cuBLASModule:
    """``vt.backends.cuda.matmul``: cuBLAS flags."""

    def __init__(self) -> None:
        self._bf16_reduced = True
        self._fp16_reduced = True

    @property
    def allow_tf32(self) -> bool:
        """Whether float32 matmuls may use TF32 tensor cores (default False, as in PyTorch)."""
        return _precision != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        set_float32_matmul_precision("high" if value else "highest")

    @property
    def allow_bf16_reduced_precision_reduction(self) -> bool:
        """Whether bfloat16 matmuls may reduce in bfloat16 (default True)."""
        return self._bf16_reduced

    @allow_bf16_reduced_precision_reduction.setter
    def allow_bf16_reduced_precision_reduction(self, value: bool) -> None:
        self._bf16_reduced = bool(value)

    @property
    def allow_fp16_reduced_precision_reduction(self) -> bool:
        """Whether float16 matmuls may reduce in float16 (default True)."""
        return self._fp16_reduced

    @allow_fp16_reduced_precision_reduction.setter
    def allow_fp16_reduced_precision_reduction(self, value: bool) -> None:
        self._fp16_reduced = bool(value)

    def __repr__(self) -> str:
        return f"vt.backends.cuda.matmul(allow_tf32={self.allow_tf32})"


matmul = cuBLASModule()


def is_built() -> bool:
    """Whether a CUDA backend is installed (it may still find no device)."""
    from ..backend.registry import backends

    return any(b.device_type == "cuda" for b in backends())


__all__ = ["matmul", "is_built", "get_float32_matmul_precision",
           "set_float32_matmul_precision"]
