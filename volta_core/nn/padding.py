"""Padding layers: ``ZeroPad*``, ``ConstantPad*``, ``ReflectionPad*``, ``ReplicationPad*``,
``CircularPad*`` (1-D, 2-D and 3-D), over :func:`volta_core.nn.functional.pad`."""

from __future__ import annotations

from collections.abc import Sequence

from ..ops.movement import pad
from ..tensor import Tensor
from ._checks import _check_rank, _check_tensor, _ntuple
from .module import Module

_LAYOUTS = {1: "(N, C, W)", 2: "(N, C, H, W)", 3: "(N, C, D, H, W)"}


class _PadNd(Module):
    """Pad the last ``n`` dims with ``mode``; ``padding`` is one int for every side or
    ``2 * n`` ints ``(left, right, top, bottom, front, back)``."""

    _n = 2
    _mode = "constant"

    def __init__(self, padding: int | Sequence[int], value: float | None = None) -> None:
        super().__init__()
        self.padding = _ntuple(type(self).__name__, padding, 2 * self._n, "padding")
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        op = type(self).__name__
        _check_tensor(op, input)
        _check_rank(op, input, (self._n + 1, self._n + 2), _LAYOUTS[self._n])
        if self._mode == "constant":
            return pad(input, self.padding, value=0.0 if self.value is None else self.value)
        return pad(input, self.padding, mode=self._mode)

    def extra_repr(self) -> str:
        if self._mode == "constant" and self.value is not None:
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: int | Sequence[int], value: float) -> None:
        super().__init__(padding, value)


def _make(name: str, base: type, n: int, mode: str, doc: str) -> type:
    cls = type(name, (base,), {"_n": n, "_mode": mode, "__module__": __name__})
    layout = _LAYOUTS[n]
    cls.__doc__ = (f"{doc} the last {n} dim(s) of a {layout} (or unbatched) input.\n\n"
                   f"    Args:\n        padding: one int for every side, or {2 * n} ints "
                   "(left, right[, top, bottom[, front, back]]).\n")
    return cls


ZeroPad1d = _make("ZeroPad1d", _PadNd, 1, "constant", "Pad with zeros")
ZeroPad2d = _make("ZeroPad2d", _PadNd, 2, "constant", "Pad with zeros")
ZeroPad3d = _make("ZeroPad3d", _PadNd, 3, "constant", "Pad with zeros")
ConstantPad1d = _make("ConstantPad1d", _ConstantPadNd, 1, "constant", "Pad with ``value``")
ConstantPad2d = _make("ConstantPad2d", _ConstantPadNd, 2, "constant", "Pad with ``value``")
ConstantPad3d = _make("ConstantPad3d", _ConstantPadNd, 3, "constant", "Pad with ``value``")
ReflectionPad1d = _make("ReflectionPad1d", _PadNd, 1, "reflect", "Pad with the reflection of")
ReflectionPad2d = _make("ReflectionPad2d", _PadNd, 2, "reflect", "Pad with the reflection of")
ReflectionPad3d = _make("ReflectionPad3d", _PadNd, 3, "reflect", "Pad with the reflection of")
ReplicationPad1d = _make("ReplicationPad1d", _PadNd, 1, "replicate", "Pad repeating the edge of")
ReplicationPad2d = _make("ReplicationPad2d", _PadNd, 2, "replicate", "Pad repeating the edge of")
ReplicationPad3d = _make("ReplicationPad3d", _PadNd, 3, "replicate", "Pad repeating the edge of")
CircularPad1d = _make("CircularPad1d", _PadNd, 1, "circular", "Pad wrapping around")
CircularPad2d = _make("CircularPad2d", _PadNd, 2, "circular", "Pad wrapping around")
CircularPad3d = _make("CircularPad3d", _PadNd, 3, "circular", "Pad wrapping around")

__all__ = ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]
