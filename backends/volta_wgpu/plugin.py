"""Volta's entry point for the wgpu backend (group ``volta.backends``).

Creating :class:`WgpuBackend` imports neither wgpu nor the namespace: the adapter is
requested on first use, and a missing library or adapter is reported by
:meth:`WgpuBackend.unavailable_reason` rather than raised.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from volta_core.backend import Backend, Generator, hookimpl

_INSTALL = "wgpu is not installed: pip install 'volta[wgpu]'"


def _softmax(xp: Any, x: Any, dim: int) -> Any:
    from .kernels.softmax import softmax
    return softmax(x, dim)


def _log_softmax(xp: Any, x: Any, dim: int) -> Any:
    from .kernels.softmax import log_softmax
    return log_softmax(x, dim)


class WgpuGenerator(Generator):
    """Volta's generator interface over :class:`volta_wgpu.random.Generator` (Philox)."""

    def __init__(self, index: int) -> None:
        from .random import Generator as Philox
        self._g = Philox(index)

    def manual_seed(self, seed: int) -> None:
        self._g.manual_seed(seed)

    def get_state(self) -> dict:
        return self._g.get_state()

    def set_state(self, state: dict) -> None:
        self._g.set_state(state)

    def uniform(self, shape: tuple, dtype: Any, low: float = 0.0, high: float = 1.0):
        return self._g.uniform(shape, dtype, low, high)

    def normal(self, shape: tuple, dtype: Any, mean: float = 0.0, std: float = 1.0):
        return self._g.normal(shape, dtype, mean, std)

    def integers(self, low: int, high: int, shape: tuple, dtype: Any):
        return self._g.integers(low, high, shape, dtype)

    def permutation(self, n: int, dtype: Any):
        return self._g.permutation(n, dtype)


class WgpuBackend(Backend):
    """WebGPU through wgpu-py: an Array-API namespace over wgpu buffers + WGSL kernels."""

    name = "wgpu"
    device_type = "wgpu"
    extra = "wgpu"
    _own_kernels: dict[str, Callable] | None = None
    # float32 transcendentals on GPUs are accurate to a few ulp, not correctly rounded
    tolerances = {"float32": (1e-4, 1e-5), "float16": (1e-2, 1e-3)}

    def __init__(self) -> None:
        self._reason: str | None = None
        self._checked = False
        self._generators: dict[int, WgpuGenerator] = {}

    @property  # type: ignore[override]
    def kernels(self) -> dict[str, Callable]:
        """The WGSL extension kernels (built on first use: imports the namespace)."""
        if WgpuBackend._own_kernels is None:
            from .kernels.attention import sdpa_flash
            from .kernels.ext import KERNELS
            WgpuBackend._own_kernels = {"softmax": _softmax, "log_softmax": _log_softmax,
                                        "sdpa_flash": sdpa_flash(), **KERNELS}
        return WgpuBackend._own_kernels

    # -- availability ---------------------------------------------------------------
    def unavailable_reason(self) -> str | None:
        if self._checked:
            return self._reason
        try:
            import wgpu  # noqa: F401
        except Exception as exc:  # ImportError, or a broken native library
            self._reason = _INSTALL if isinstance(exc, ImportError) else \
                f"wgpu failed to load: {exc}"
            self._checked = True
            return self._reason
        try:
            from .engine import get_engine
            get_engine(0)
            self._reason = None
        except Exception as exc:
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self._reason = (f"no WebGPU adapter found ({msg}); install a Vulkan/Metal/D3D12 "
                            f"driver, or Mesa's software Vulkan (mesa-vulkan-drivers)")
        self._checked = True
        return self._reason

    @property
    def is_gpu(self) -> bool:  # type: ignore[override]
        """True only for a real (discrete/integrated) GPU adapter, not llvmpipe/lavapipe."""
        if self.unavailable_reason() is not None:
            return False
        from .engine import get_engine
        return get_engine(0).is_gpu

    def device_count(self) -> int:
        return 0 if self.unavailable_reason() is not None else 1

    def device_name(self, index: int) -> str:
        from .engine import get_engine
        return get_engine(index).name

    # -- arrays ---------------------------------------------------------------------
    def namespace(self, index: int) -> Any:
        import volta_wgpu
        return volta_wgpu

    def native_device(self, index: int) -> Any:
        from .array import Device
        return Device(index)

    def dtype_names(self, index: int) -> tuple[str, ...]:
        from .dtypes import supported
        from .engine import get_engine
        return tuple(d.name for d in supported(get_engine(index).features))

    def native_dtype(self, index: int, name: str) -> Any:
        from . import dtypes as D
        from ._errors import DTypeError
        d = D._BY_NAME.get(name)
        if d is None or d.name not in self.dtype_names(index):
            raise DTypeError(f"wgpu: dtype {name} is not supported on this adapter; "
                             f"supported: {', '.join(self.dtype_names(index))}")
        return d

    def dtype_name(self, native_dtype: Any) -> str:
        return native_dtype.name

    def from_host(self, data: Any, index: int, dtype: Any = None, copy: bool | None = None):
        from .array import Device
        from .namespace.creation import asarray
        return asarray(data, dtype=dtype, device=Device(index),
                       copy=None if copy is False else copy)

    def to_host(self, array: Any) -> Any:
        from .array import to_numpy
        return to_numpy(array)

    def generator(self, index: int) -> Generator:
        g = self._generators.get(index)
        if g is None:
            g = self._generators[index] = WgpuGenerator(index)
        return g

    def set_lazy(self, enabled: bool) -> None:
        """Turn lazy elementwise fusion on or off (see :mod:`volta_wgpu.lazy`)."""
        from .lazy import set_lazy
        set_lazy(enabled)

    def is_lazy(self) -> bool:
        """Whether elementwise ops are recorded lazily and fused."""
        from .lazy import is_lazy
        return is_lazy()

    def lazy_scope(self) -> Any:
        """A context with lazy fusion on inside (``vt.compile``); VOLTA_WGPU_EAGER=1 wins."""
        from .lazy import lazy_scope
        return lazy_scope()

    # -- vt.compile(mode="reduce-overhead"): record a call's work, replay it --------------
    def trace_begin(self, arrays: list) -> Any:
        """Record the work on the device of ``arrays`` (the call's inputs); a reason
        string when it cannot (see :mod:`volta_wgpu.replay`)."""
        from .replay import begin
        return begin(arrays)

    def trace_end(self, recorder: Any, outputs: list) -> Any:
        """Stop recording: a tape whose ``replay(inputs)`` returns arrays like
        ``outputs``, or why the call cannot be replayed (a string)."""
        from .replay import end
        return end(recorder, outputs)

    def trace_describe(self, array: Any) -> Any:
        """The layout a replay needs an input array to keep (None: not a wgpu array)."""
        from .replay import describe
        self.trace_describe = describe  # later calls (every tensor of every call) go there
        return describe(array)

    def synchronize(self, index: int) -> None:
        from .engine import synchronize
        synchronize(index)

    # -- memory (``vt.wgpu``) ---------------------------------------------------------
    def memory_allocated(self, index: int) -> int:
        from .engine import get_engine
        return get_engine(index).memory_allocated()

    def max_memory_allocated(self, index: int) -> int:
        from .engine import get_engine
        return get_engine(index).max_memory_allocated()

    def memory_reserved(self, index: int) -> int:
        from .engine import get_engine
        return get_engine(index).memory_reserved()

    def reset_peak_memory_stats(self, index: int) -> None:
        from .engine import get_engine
        get_engine(index).reset_peak_memory_stats()

    def empty_cache(self, index: int = 0) -> None:
        from .engine import get_engine
        get_engine(index).empty_cache()


@hookimpl
def volta_backends():
    return [WgpuBackend()]
