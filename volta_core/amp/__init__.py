"""``vt.amp``: automatic mixed precision (``autocast``) and loss scaling (``GradScaler``)."""

from .autocast_mode import (
    autocast,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_enabled,
)

__all__ = ["autocast", "GradScaler", "is_autocast_enabled", "get_autocast_dtype",
           "is_autocast_cache_enabled"]


def __getattr__(name: str):
    # the op modules import this package early (for the hook): load the scaler on use
    if name == "GradScaler":
        from .grad_scaler import GradScaler

        return GradScaler
    raise AttributeError(f"module 'volta_core.amp' has no attribute {name!r}")
