"""The CuPy backend: CUDA devices through array-api-compat's CuPy namespace."""

from __future__ import annotations

from typing import Any

from volta_core.backend import Backend, Generator


class CupyGenerator(Generator):
    """A per-device CuPy generator (Philox-based XORWOW is CuPy's default bit generator)."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.manual_seed(0)

    def manual_seed(self, seed: int) -> None:
        import cupy

        self._seed = int(seed)
        with cupy.cuda.Device(self.index):
            self._rng = cupy.random.default_rng(self._seed)
        self._draws = 0

    def get_state(self) -> dict:
        # CuPy's generators cannot export their state: record seed and draw count
        return {"seed": self._seed, "draws": self._draws}

    def set_state(self, state: dict) -> None:
        self.manual_seed(state["seed"])
        self._replay = state["draws"]

    def uniform(self, shape, dtype, low=0.0, high=1.0):
        import cupy

        self._draws += 1
        with cupy.cuda.Device(self.index):
            out = self._rng.random(shape, dtype=cupy.float64 if dtype == cupy.float64
                                   else cupy.float32)
            if low != 0.0 or high != 1.0:
                out = out * (high - low) + low
            return out.astype(dtype, copy=False)

    def normal(self, shape, dtype, mean=0.0, std=1.0):
        import cupy

        self._draws += 1
        with cupy.cuda.Device(self.index):
            out = self._rng.standard_normal(shape, dtype=cupy.float64 if dtype == cupy.float64
                                            else cupy.float32)
            if mean != 0.0 or std != 1.0:
                out = out * std + mean
            return out.astype(dtype, copy=False)

    def integers(self, low, high, shape, dtype):
        import cupy

        self._draws += 1
        with cupy.cuda.Device(self.index):
            out = self._rng.integers(low, high, size=shape, dtype=cupy.int64)
            return out.astype(dtype, copy=False)

    def permutation(self, n, dtype):
        import cupy

        self._draws += 1
        with cupy.cuda.Device(self.index):
            return self._rng.permutation(n).astype(dtype)


class CupyBackend(Backend):
    """NVIDIA GPUs through CuPy."""

    name = "cupy"
    device_type = "cuda"
    extra = "cupy"
    is_gpu = True
    #: ``Tensor.copy_`` writes into the destination's memory (CUDA graphs' static inputs)
    copy_in_place = True

    def __init__(self) -> None:
        self._reason: str | None = None
        self._checked = False
        self._generators: dict[int, CupyGenerator] = {}
        self._pool = None
        self._peak: dict[int, int] = {}
        # the pool that allocations come from: [main pool] or, while a graph is being
        # captured, [that graph's private pool] (a one-item list: read on every malloc)
        self._active: list = [None]

    @property
    def kernels(self) -> dict:
        from .kernels import KERNELS

        return KERNELS

    @property
    def graphs(self) -> Any:
        """Streams and graph capture (:mod:`volta_cupy.graphs`)."""
        from . import graphs

        return graphs

    def set_capture_pool(self, pool: Any) -> None:
        """Allocate from ``pool`` (a graph's private pool) until called with None."""
        if self._pool is None:
            self._install_allocator()
        self._active[0] = self._pool if pool is None else pool

    # -- memory ---------------------------------------------------------------------------
    def _install_allocator(self) -> None:
        """Route every CuPy allocation through the pool, tracking peaks and naming OOMs."""
        import cupy

        from volta_core.errors import OutOfMemoryError

        main = self._pool = cupy.cuda.MemoryPool()
        peak = self._peak
        active = self._active
        active[0] = main

        def allocate(size: int):
            pool = active[0]
            try:
                mem = pool.malloc(size)
            except cupy.cuda.memory.OutOfMemoryError:
                pool.free_all_blocks()
                try:
                    mem = pool.malloc(size)
                except cupy.cuda.memory.OutOfMemoryError:
                    raise OutOfMemoryError(
                        f"CUDA out of memory: tried to allocate {_mib(size)} on cuda:"
                        f"{cupy.cuda.runtime.getDevice()}; {_mib(pool.used_bytes())} is "
                        f"allocated by tensors and {_mib(pool.total_bytes())} reserved. Use "
                        "a smaller batch, free tensors (del), or vt.cuda.empty_cache()."
                    ) from None
            if pool is main:
                dev = mem.device_id
                used = pool.used_bytes()
                if used > peak.get(dev, 0):
                    peak[dev] = used
            return mem

        cupy.cuda.set_allocator(allocate)

    def memory_allocated(self, index: int) -> int:
        return 0 if self._pool is None else self._pool.used_bytes()

    def max_memory_allocated(self, index: int) -> int:
        return self._peak.get(index, 0)

    def memory_reserved(self, index: int) -> int:
        return 0 if self._pool is None else self._pool.total_bytes()

    def reset_peak_memory_stats(self, index: int) -> None:
        self._peak[index] = self.memory_allocated(index)

    def mem_get_info(self, index: int) -> tuple[int, int]:
        """``(free, total)`` bytes of GPU ``index``, as the driver reports them."""
        import cupy

        with cupy.cuda.Device(index):
            free, total = cupy.cuda.runtime.memGetInfo()
        return int(free), int(total)

    def set_memory_fraction(self, fraction: float, index: int) -> None:
        """Cap the memory pool at ``fraction`` of GPU ``index``'s memory."""
        import cupy

        if self._pool is None:
            self._install_allocator()
        with cupy.cuda.Device(index):
            self._pool.set_limit(fraction=fraction)

    def empty_cache(self, index: int | None = None) -> None:
        """Free the pool's cached blocks (``index`` names a GPU; the pool serves them all)."""
        if self._pool is not None:
            self._pool.free_all_blocks()

    def set_allow_tf32(self, allow: bool) -> None:
        """Let float32 matmuls use TF32 tensor cores (CuPy's compute type setting)."""
        from . import cudnn_ops

        cudnn_ops.FLAGS["matmul_tf32"] = bool(allow)
        cudnn_ops.set_matmul_tf32(bool(allow))

    def apply_flags(self, flags: dict) -> None:
        """Take ``vt.backends.cuda.matmul`` and ``vt.backends.cudnn`` flags (TF32, cuDNN)."""
        from . import cudnn_ops

        cudnn_ops.set_flags(flags)
        self.set_allow_tf32(flags["matmul_tf32"])

    def cudnn_version(self) -> int | None:
        """cuDNN's version through ``nvidia-cudnn-frontend``, or None when absent."""
        from . import cudnn_ops

        return cudnn_ops.version()

    #: convolutions take bfloat16 directly (cuDNN, or CuPy's bfloat16 GEMMs)
    native_bfloat16_conv = True

    def unavailable_reason(self) -> str | None:
        if not self._checked:
            self._checked = True
            try:
                import cupy
            except Exception as exc:  # ImportError, or a CUDA library that fails to load
                self._reason = f"cupy is not importable ({exc})"
            else:
                try:
                    n = cupy.cuda.runtime.getDeviceCount()
                except Exception as exc:
                    self._reason = f"no CUDA device: {exc}"
                else:
                    if n == 0:
                        self._reason = "no CUDA device found"
        return self._reason

    def device_count(self) -> int:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()

    def device_name(self, index: int) -> str:
        return self.device_properties(index)["name"]

    def device_properties(self, index: int) -> dict:
        import cupy

        props = cupy.cuda.runtime.getDeviceProperties(index)
        name = props["name"]
        return {"name": name.decode() if isinstance(name, bytes) else str(name),
                "major": int(props["major"]), "minor": int(props["minor"]),
                "total_memory": int(props["totalGlobalMem"]),
                "multi_processor_count": int(props["multiProcessorCount"]),
                "L2_cache_size": int(props.get("l2CacheSize", 0)),
                "warp_size": int(props.get("warpSize", 32))}

    def namespace(self, index: int) -> Any:
        from .namespace import xp  # array-api-compat's, with a clip that doesn't sync

        if self._pool is None:
            self._install_allocator()
            from volta_core.backends._notify import flags

            self.apply_flags(flags())  # flags set before the first CUDA use
        return xp

    def native_device(self, index: int) -> Any:
        import cupy

        return cupy.cuda.Device(index)

    def dtype_names(self, index: int) -> tuple[str, ...]:
        names = ("bool", "uint8", "int8", "int16", "int32", "int64", "uint32", "float16",
                 "float32", "float64")
        return names + ("bfloat16",) if _bfloat16() is not None else names

    def native_dtype(self, index: int, name: str) -> Any:
        import cupy

        if name == "bfloat16":
            return cupy.dtype(_bfloat16())
        return cupy.dtype(name)

    def dtype_name(self, native_dtype: Any) -> str:
        import cupy

        return cupy.dtype(native_dtype).name

    def from_host(self, data, index, dtype=None, copy=None):
        import cupy
        import numpy

        if not isinstance(data, cupy.ndarray):
            data = numpy.asarray(data, dtype=dtype)
            if data.ndim == 0:  # CuPy fills a 0-d array by memset when the value equals 0,
                with cupy.cuda.Device(index):  # losing the sign of -0.0; a copy keeps it
                    return cupy.asarray(data.reshape(1)).reshape(())
        with cupy.cuda.Device(index):
            return cupy.array(data, dtype=dtype, copy=True if copy is None else copy)

    def to_host(self, array):
        from . import graphs

        if graphs.is_capturing():
            from volta_core.errors import GraphCaptureError

            raise GraphCaptureError(
                "copying a cuda tensor to the host (.item(), .tolist(), .cpu(), .numpy(), "
                "printing) waits for the GPU, which a CUDA graph capture cannot record; "
                "move it out of the captured region (or read a static output after "
                "replay())")
        return array.get()

    def from_device(self, array, src, index):
        """Peer copies between GPUs and DLPack for other devices' arrays, else None."""
        import cupy

        if src.type == "cuda":
            with cupy.cuda.Device(index):
                return cupy.array(array, copy=True)
        return None

    def generator(self, index: int) -> CupyGenerator:
        gen = self._generators.get(index)
        if gen is None:
            gen = self._generators[index] = CupyGenerator(index)
        return gen

    def synchronize(self, index: int) -> None:
        import cupy

        from . import graphs

        if graphs.is_capturing():
            from volta_core.errors import GraphCaptureError

            raise GraphCaptureError("vt.cuda.synchronize() during a CUDA graph capture: a capture "
                             "cannot wait for the GPU; synchronize before or after it")
        with cupy.cuda.Device(index):
            cupy.cuda.runtime.deviceSynchronize()  # every stream, not only the default


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def _bfloat16() -> Any:
    """``ml_dtypes.bfloat16`` when CuPy can hold it (CuPy >= 14), else None."""
    try:
        import cupy
        import ml_dtypes
    except ImportError:
        return None
    major = int(cupy.__version__.split(".")[0])
    return ml_dtypes.bfloat16 if major >= 14 else None
