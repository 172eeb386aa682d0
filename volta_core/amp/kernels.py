"""Extension kernels of ``GradScaler``, with their generic Array-API fallbacks.

``amp_unscale``: multiply every gradient by ``inv_scale`` and report whether any of them
held an inf or NaN, as one 0-d float32 array (1.0 found, 0.0 not), so the scaler needs
one host sync per step, not one per gradient. ``amp_update_scale``: PyTorch's
``_amp_update_scale_``, on device.
"""

from __future__ import annotations

from typing import Any

from ..backend.kernels import fallback


@fallback("amp_unscale")
def amp_unscale(xp: Any, grads: list, inv_scale: Any) -> tuple[list, Any]:
    """Return ``([g * inv_scale for g in grads], found_inf)``; each in its grad's dtype."""
    flags = []
    out = []
    for g in grads:
        flags.append(xp.any(~xp.isfinite(g)))
        u = g * inv_scale  # low-precision grads: product in float32, then rounded back
        out.append(u if u.dtype == g.dtype else xp.astype(u, g.dtype))
    found = xp.any(xp.stack(flags)) if flags else xp.zeros((), dtype=xp.bool)
    return out, xp.astype(found, xp.float32)


@fallback("amp_update_scale")
def amp_update_scale(xp: Any, scale: Any, tracker: Any, found_inf: Any, *,
                     growth_factor: float, backoff_factor: float,
                     growth_interval: int) -> tuple[Any, Any]:
    """Return the new ``(scale, growth_tracker)``.

    An inf/NaN step multiplies the scale by ``backoff_factor`` and restarts the count of
    good steps; ``growth_interval`` good steps in a row multiply it by ``growth_factor``
    (unless that overflows float32).
    """
    found = found_inf > 0
    successful = tracker + 1
    grow = successful >= growth_interval
    grown = scale * growth_factor
    grown = xp.where(xp.isfinite(grown), grown, scale)
    new_scale = xp.where(found, scale * backoff_factor, xp.where(grow, grown, scale))
    zero = xp.zeros_like(tracker)
    new_tracker = xp.where(found | grow, zero, successful)
    return new_scale, new_tracker
