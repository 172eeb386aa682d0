"""CUDA implementations of Volta's extension kernels (fused where it pays)."""

from __future__ import annotations

KERNELS: dict = {}
