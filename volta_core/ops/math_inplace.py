"""In-place forms of the math composites: ``lerp_``, ``addcmul_``, ``addcdiv_``,
``clamp_min_``, ``clamp_max_`` and ``maximum_``.

Each computes the out-of-place op and puts the result into ``self`` through
:func:`~volta_core.ops.inplace.inplace` (same dtype and shape rules as ``add_``).
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .inplace import inplace
from .math import addcdiv, addcmul, clamp, lerp


def lerp_(self: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``self += weight * (end - self)`` in place."""
    return inplace(self, "lerp_", lambda s: lerp(s, end, weight), end, weight)


def addcmul_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``self += value * tensor1 * tensor2`` in place."""
    return inplace(self, "addcmul_", lambda s: addcmul(s, tensor1, tensor2, value=value),
                   tensor1, tensor2)


def addcdiv_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``self += value * tensor1 / tensor2`` in place."""
    return inplace(self, "addcdiv_", lambda s: addcdiv(s, tensor1, tensor2, value=value),
                   tensor1, tensor2)


def clamp_min_(self: Tensor, min: Any) -> Tensor:  # noqa: A002
    """Raise every entry of ``self`` below ``min`` to ``min``, in place."""
    return inplace(self, "clamp_min_", lambda s: clamp(s, min, None), min)


def clamp_max_(self: Tensor, max: Any) -> Tensor:  # noqa: A002
    """Lower every entry of ``self`` above ``max`` to ``max``, in place."""
    return inplace(self, "clamp_max_", lambda s: clamp(s, None, max), max)


def maximum_(self: Tensor, other: Any) -> Tensor:
    """``self = maximum(self, other)`` in place (``other`` broadcasts to ``self``).

    A Volta convenience: PyTorch has only the out-of-place ``maximum``.
    """
    from .elementwise import _maximum

    return inplace(self, "maximum_", lambda s: _maximum(s, other), other)


for _f in (lerp_, addcmul_, addcdiv_, clamp_min_, clamp_max_, maximum_):
    setattr(Tensor, _f.__name__, _f)

__all__: list[str] = []
