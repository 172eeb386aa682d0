"""array-api-compat's CuPy namespace with one sync-free replacement: ``clip``.

array-api-compat's generic ``clip`` writes the bounds through boolean masks
(``out[ia] = a[ia]``); on CuPy a boolean-mask read needs the number of True entries on
the host, so every ``xp.clip`` call blocks until the GPU catches up. The core calls it
in ``clip_grad_norm_``, ``clip_grad_value_``, Muon's Newton-Schulz step and replicate
padding. The version here is ``maximum``/``minimum`` (same NaN propagation, same
result dtype), all on the device.

To use it, ``CupyBackend.namespace`` returns :data:`xp` instead of
``array_api_compat.cupy``.
"""

from __future__ import annotations

import types
from typing import Any

import array_api_compat.cupy as _compat
import cupy


def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:  # noqa: A002
    """Array-API ``clip``: ``x`` limited to ``[min, max]``, in ``x``'s dtype."""
    out = x
    if x.dtype.kind in "iu":  # Python ints beyond the dtype's range bound nothing
        info = cupy.iinfo(x.dtype)
        if type(min) is int and min <= info.min:
            min = None
        if type(max) is int and max >= info.max:
            max = None
    if min is not None:
        out = cupy.maximum(out, min)
    if max is not None:
        out = cupy.minimum(out, max)
    if out is x:
        return x.copy()
    return out if out.dtype == x.dtype else out.astype(x.dtype)


def _build() -> types.ModuleType:
    ns = types.ModuleType("volta_cupy.xp", _compat.__doc__)
    ns.__dict__.update({k: v for k, v in vars(_compat).items() if not k.startswith("__")})
    ns.__all__ = list(getattr(_compat, "__all__", ()))
    ns.clip = clip
    return ns


xp = _build()
"""The namespace: every name of ``array_api_compat.cupy``, with :func:`clip` replaced."""
