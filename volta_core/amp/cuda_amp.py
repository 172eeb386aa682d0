"""``vt.cuda.amp``: PyTorch's older CUDA spellings of ``autocast`` and ``GradScaler``."""

from __future__ import annotations

from .autocast_mode import cuda_autocast as autocast
from .grad_scaler import GradScaler as _GradScaler


class GradScaler(_GradScaler):
    """``vt.amp.GradScaler("cuda", ...)`` (same arguments, without ``device``)."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)


__all__ = ["autocast", "GradScaler"]
