"""``autocast``: run eligible ops in a lower precision inside a block (per thread).

Example::

    with vt.autocast("cpu"):            # bfloat16 on cpu, float16 on cuda and wgpu
        logits = model(x)               # linear/conv/matmul in bfloat16
        loss = F.cross_entropy(logits, y)   # losses in float32
    loss.backward()                     # gradients in each parameter's dtype
"""

from __future__ import annotations

from typing import Any

from ..autograd.grad_mode import _wrap
from ..dtypes import DType, bfloat16, float16, get_dtype
from ..errors import DTypeError
from .state import state

#: the autocast dtype of each device type when ``dtype`` is not given (as in PyTorch)
DEFAULT_DTYPES: dict[str, DType] = {"cpu": bfloat16, "cuda": float16, "wgpu": float16}
_ALLOWED: dict[str, tuple[DType, ...]] = {
    "cpu": (bfloat16, float16), "cuda": (bfloat16, float16), "wgpu": (float16,)}


def _check_device_type(op: str, device_type: Any) -> str:
    if not isinstance(device_type, str) or device_type.split(":")[0] not in DEFAULT_DTYPES:
        raise ValueError(f"{op}: device_type must be one of {sorted(DEFAULT_DTYPES)}, got "
                         f"{device_type!r} (a device type, without an index)")
    return device_type.split(":")[0]


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Return whether autocast is on for ``device_type`` in this thread.

    Args:
        device_type: ``"cpu"``, ``"cuda"`` or ``"wgpu"`` (``"cuda"`` as in PyTorch's
            deprecated no-argument form).
    """
    return _check_device_type("is_autocast_enabled", device_type) in state.active


def get_autocast_dtype(device_type: str) -> DType:
    """Return the dtype autocast uses for ``device_type`` in this thread.

    Outside any ``autocast`` block it is the device type's default (bfloat16 on cpu,
    float16 on cuda and wgpu).
    """
    device_type = _check_device_type("get_autocast_dtype", device_type)
    return state.dtypes.get(device_type, DEFAULT_DTYPES[device_type])


def is_autocast_cache_enabled() -> bool:
    """Return whether casts of parameters are cached inside autocast blocks."""
    return state.cache_enabled


class autocast:
    """Context manager and decorator that runs eligible ops in a lower precision.

    Ops on PyTorch's lists follow its policy: matrix products, linear, convolutions and
    attention cast their floating inputs to ``dtype``; exponentials, reductions, softmax,
    norms and losses run in float32 (on CPU only the losses and a few others, as in
    PyTorch); ``cat``/``stack`` and the like widen mixed inputs. Float64 is never
    cast. Blocks nest (an inner ``enabled=False`` switches autocast off), are per thread,
    and the backward pass is never autocast: each gradient comes out in the dtype of
    its forward input.

    Args:
        device_type: ``"cpu"``, ``"cuda"`` or ``"wgpu"``; only ops on tensors of this
            device type are cast.
        dtype: the lower-precision dtype (``vt.bfloat16`` or ``vt.float16``; wgpu has
            only float16). Default: :func:`get_autocast_dtype` of the device type.
        enabled: False to turn autocast off inside the block.
        cache_enabled: cache the low-precision copies of parameters (leaf tensors that
            require grad) for the outermost block, so that a weight used many times is
            cast once.
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        self.device_type = _check_device_type("autocast", device_type)
        self.fast_dtype = (get_autocast_dtype(self.device_type) if dtype is None
                           else get_dtype(dtype))
        if self.fast_dtype not in _ALLOWED[self.device_type]:
            names = ", ".join(d.name for d in _ALLOWED[self.device_type])
            raise DTypeError(f"autocast: {self.device_type} autocast supports {names}, got "
                             f"{self.fast_dtype.name}; pass one of those as dtype=")
        self._enabled = bool(enabled)
        self._cache_enabled = cache_enabled
        self._prev: list = []

    def __enter__(self) -> autocast:
        self._prev.append((state.active, state.dtypes, state.cache_enabled, state.cache))
        active = dict(state.active)
        if self._enabled:
            active[self.device_type] = self.fast_dtype
        else:
            active.pop(self.device_type, None)
        state.active = active
        state.dtypes = {**state.dtypes, self.device_type: self.fast_dtype}
        if self._cache_enabled is not None:
            state.cache_enabled = bool(self._cache_enabled)
        state.depth += 1
        if state.cache is None and state.cache_enabled:
            state.cache = {}
        elif not state.cache_enabled:
            state.cache = None
        return self

    def __exit__(self, *exc: Any) -> None:
        state.active, state.dtypes, state.cache_enabled, cache = self._prev.pop()
        state.depth -= 1
        # leaving the outermost block frees the cast parameters
        state.cache = None if state.depth == 0 else cache

    def __call__(self, fn):
        return _wrap(fn, self._clone)

    def _clone(self) -> autocast:
        return autocast(self.device_type, self.fast_dtype, self._enabled, self._cache_enabled)

    def __repr__(self) -> str:
        return (f"autocast(device_type={self.device_type!r}, dtype={self.fast_dtype}, "
                f"enabled={self._enabled})")


class _DeviceAutocast(autocast):
    """``vt.cuda.amp.autocast`` / ``vt.cpu.amp.autocast``: autocast bound to a device type."""

    _device_type = "cuda"

    def __init__(self, enabled: bool = True, dtype: Any = None,
                 cache_enabled: bool | None = None) -> None:
        super().__init__(self._device_type, dtype, enabled, cache_enabled)

    def _clone(self) -> autocast:
        return type(self)(self._enabled, self.fast_dtype, self._cache_enabled)


class cuda_autocast(_DeviceAutocast):
    """``vt.cuda.amp.autocast(enabled=True, dtype=vt.float16)``: ``vt.autocast("cuda")``."""

    _device_type = "cuda"


class cpu_autocast(_DeviceAutocast):
    """``vt.cpu.amp.autocast(enabled=True, dtype=vt.bfloat16)``: ``vt.autocast("cpu")``."""

    _device_type = "cpu"
