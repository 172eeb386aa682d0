"""The wgpu engine: adapter and device, pipeline cache, buffer pool, batched submission.

Work is recorded into one command encoder (one open compute pass) and submitted
only at a sync point: a readback, :meth:`Engine.flush`, :func:`synchronize`, or when
the per-batch metadata ring is full. Each dispatch's small metadata block (shapes,
strides, offsets, scalars) is appended to a host-side ring and uploaded with a single
``queue.write_buffer`` right before the submit, so no per-op uniform buffer is made.

Bind groups are cached per (layout, metadata size, buffers): the metadata uniform is
bound with a dynamic offset, so a chain of ops over pooled buffers reuses the same few
bind groups. The pass commands go straight to wgpu-native's C functions when available.

Buffers come from a size-bucketed pool. A buffer freed while commands that may read
it are still unsubmitted goes to a *dirty* list: it may serve as a kernel output at
once (commands run in order), but only becomes a target for host uploads after the
next submit, because ``queue.write_buffer`` runs before the pending commands.

Threads: one engine serves every thread that uses its device. The encoder, the open
pass, the metadata ring, the caches and the pools are guarded by one re-entrant lock,
taken around recording a dispatch, a copy, a flush, a readback and every pool operation.

Freeing: the engine keeps a strong reference to every buffer it made, so a buffer
object is never finalised by the cyclic garbage collector alongside the tensor that
used it. ``Storage.__del__`` (which may run in any thread, at any bytecode, even while
that thread holds the lock) only appends the buffer to a lock-free queue; the engine
drains the queue into the pool at safe points (an allocation, a flush, a stats query)
while holding its lock.
"""

from __future__ import annotations

import atexit
import collections
import math
import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable
from typing import Any

from ._errors import OutOfMemoryError

# wgpu-native's raw C entry points (set by the first Engine; importing this module does
# not import wgpu): the pass commands are the hot path of every op
_ffi: Any = None
_lib: Any = None
_api: Any = None  # wgpu-py's wgpu-native module: bind groups are made through its C calls


def _load_native() -> None:
    global _ffi, _lib, _api
    try:
        from wgpu.backends.wgpu_native import _api as api
        from wgpu.backends.wgpu_native._ffi import ffi, lib
        _ffi, _lib = ffi, lib
        _api = api if hasattr(api, "libf") and hasattr(api, "GPUBindGroup") else None
    except Exception:  # pragma: no cover - another wgpu backend: use the public API
        _ffi = _lib = _api = None

WG = 256  # threads per workgroup of the 1-D kernels
MAX_GROUPS = 65535
META_CAPACITY = 1 << 20  # bytes of per-batch metadata
_MIN_BUCKET = 256
MAX_BIND_GROUPS = 4096  # cached bind groups before the cache is cleared
STAGING_POOL_MAX = 1 << 20  # readback buffers up to this size are kept for reuse
# recorded dispatches are submitted in batches, so the GPU starts on a step's first kernels
# while Python still records the rest (one submission at the sync left the GPU idle for
# the whole host time: a compiled CNN step took host + GPU time); the first batch is small
# and each next one twice as large, up to SUBMIT_MAX, so a step costs a few submissions
SUBMIT_FIRST = 8
SUBMIT_MAX = 64


def bucket_size(nbytes: int) -> int:
    """Round ``nbytes`` up to a pool bucket: 4 buckets per power of two, >= 256 bytes."""
    if nbytes <= _MIN_BUCKET:
        return _MIN_BUCKET
    p = 1 << (nbytes - 1).bit_length()  # next power of two
    q = p // 8
    return -(-nbytes // q) * q


class Kernel:
    """A compiled compute pipeline with its bind group layout and metadata size.

    ``pid`` is the pipeline's wgpu-native handle (None without wgpu-native) and
    ``group_key`` the part of a bind-group cache key that the kernel fixes.
    """

    __slots__ = ("pipeline", "layout", "meta_bytes", "meta_pad", "n_write", "n_read", "pid",
                 "group_key", "key")

    def __init__(self, pipeline: Any, layout: Any, meta_bytes: int, n_write: int,
                 n_read: int, align: int = 256) -> None:
        self.pipeline = pipeline
        self.layout = layout
        self.meta_bytes = meta_bytes
        self.meta_pad = -(-meta_bytes // align) * align
        self.n_write = n_write
        self.n_read = n_read
        self.pid = getattr(pipeline, "_internal", None)
        self.group_key = (layout, meta_bytes)
        self.key: Any = None  # the cache key (set by Engine.kernel): profiles name it


class Storage:
    """A pooled GPU buffer shared by an array and its views; returns to the pool on del."""

    __slots__ = ("buffer", "nbytes", "engine", "__weakref__")

    def __init__(self, buffer: Any, nbytes: int, engine: Engine) -> None:
        self.buffer = buffer
        self.nbytes = nbytes
        self.engine = engine

    def __del__(self) -> None:
        # no lock, no wgpu call: this may run inside the engine's own critical section
        # (cyclic GC) or at interpreter exit; deque.append is atomic
        try:
            self.engine._freed.append(self.buffer)
        except Exception:  # interpreter teardown: nothing left to pool into
            pass


def _private_runtime_dir() -> None:
    """Point XDG_RUNTIME_DIR at a private temp dir when it is unset or unusable.

    Mesa's Vulkan drivers print "XDG_RUNTIME_DIR is invalid or not set" to stderr on
    adapter creation otherwise; compute needs no display, so any private dir will do.
    """
    path = os.environ.get("XDG_RUNTIME_DIR")
    try:
        if path and os.path.isdir(path) and os.stat(path).st_uid == os.getuid():
            return
    except (OSError, AttributeError):  # AttributeError: no getuid on Windows
        return
    path = tempfile.mkdtemp(prefix="volta-wgpu-xdg-")
    os.environ["XDG_RUNTIME_DIR"] = path
    atexit.register(shutil.rmtree, path, True)


class Engine:
    """One wgpu device: owns the queue, the caches and the pending command encoder."""

    def __init__(self, index: int = 0) -> None:
        if os.name == "posix":
            _private_runtime_dir()
        import wgpu

        _load_native()
        self.wgpu = wgpu
        self.index = index
        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        if adapter is None:
            raise RuntimeError("no WebGPU adapter found")
        self.adapter = adapter
        self.info = dict(adapter.info)
        # (and the timestamps of volta_wgpu.profiler, which cost nothing while unused)
        wanted: tuple = ("shader-f16", "shader-f64", "shader-int64", "timestamp-query",
                         "timestamp-query-inside-passes")
        if os.environ.get("VOLTA_WGPU_COOPMAT", "0") == "1":
            # tensor cores for matmul (kernels/coopmat.py): opt-in while untried on GPUs
            wanted += ("cooperative-matrix",)
        feats = [f for f in wanted if f in adapter.features]
        lim = adapter.limits
        limits = {k: lim[k] for k in (
            "max-storage-buffer-binding-size", "max-buffer-size",
            "max-storage-buffers-per-shader-stage", "max-compute-workgroup-storage-size",
            "max-compute-invocations-per-workgroup", "max-compute-workgroup-size-x",
            "max-compute-workgroup-size-y") if k in lim}
        try:
            self.device = adapter.request_device_sync(required_features=feats,
                                                      required_limits=limits)
        except RuntimeError as e:
            if "cooperative-matrix" not in feats:
                raise
            # an NVIDIA H200 on Vulkan lists the feature, but wgpu-native refuses it as
            # experimental (and its C API has no switch to allow experimental features)
            import warnings
            warnings.warn(f"wgpu: VOLTA_WGPU_COOPMAT=1, but the device refused "
                          f"cooperative-matrix; running without it ({e})", stacklevel=2)
            feats.remove("cooperative-matrix")
            self.device = adapter.request_device_sync(required_features=feats,
                                                      required_limits=limits)
        self.queue = self.device.queue
        self.features = frozenset(f for f in wanted if f in self.device.features)
        from .dtypes import configure
        configure(self.features)  # int64 is emulated (vec2<u32>) without shader-int64
        dl = self.device.limits
        self.max_binding = int(dl["max-storage-buffer-binding-size"])
        self.max_buffer = int(dl["max-buffer-size"])
        self.max_alloc = min(self.max_binding, self.max_buffer) // 32 * 32
        self.meta_align = max(int(dl["min-uniform-buffer-offset-alignment"]), 16)
        self.max_wg_storage = int(dl["max-compute-workgroup-storage-size"])
        U = wgpu.BufferUsage
        self._usage = U.STORAGE | U.COPY_SRC | U.COPY_DST
        self._pool: dict[int, list] = {}
        self._buffers: set = set()  # every storage buffer made: none is GC-finalised
        self._freed: collections.deque = collections.deque()  # released by Storage.__del__
        self._allocated = 0  # bytes of buffers held by storages
        self._peak = 0
        self._dirty: dict[int, list] = {}  # by size: freed while commands are pending
        self._sizes: dict[int, int] = {}  # bucket of each requested byte count
        self._kernels: dict[Any, Kernel] = {}
        self._layouts: dict[tuple[int, int], Any] = {}
        self._meta_buf = self.device.create_buffer(size=META_CAPACITY,
                                                   usage=U.UNIFORM | U.COPY_DST)
        self._meta = bytearray(META_CAPACITY)
        self._meta_used = 0
        self._groups: dict[tuple, Any] = {}
        self._staging_pool: dict[int, list] = {}  # unmapped readback buffers by size
        self._retired: list = []  # evicted bind groups, kept until the next submit
        self._encoder: Any = None
        self._pass: Any = None
        self._pass_id: Any = None
        self._pass_pipe: Any = None  # the pipeline last set in the open pass
        self._off = _ffi.new("uint32_t[1]") if _ffi is not None else None
        self._lock = threading.RLock()
        self.dispatch_count = 0
        self.submit_count = 0  # queue submissions (flushes with work)
        self._batched = 0  # dispatches recorded since the last submission
        self._submit_at = SUBMIT_FIRST  # submit when _batched reaches it
        # [flag, bad index, axis size, 0], set by index kernels (a GPU kernel cannot
        # raise): read back with every readback and raised there, as CUDA does
        self._err: Any = None
        # lazy mode (lazy.py): weak references to pending arrays, materialized before any
        # other work is recorded; nonzero while a fused kernel is being recorded
        self._lazy_pending: list = []
        self._lazy_busy = 0
        # ids of the buffers pending graphs read: a dispatch or copy that writes none of
        # them leaves the graphs pending (what they read cannot change)
        self._lazy_reads: set = set()
        self._lazy_max_bufs: int | None = None  # buffers a fused kernel reads (lazy.py)
        # after an out-of-range index (as a CUDA context after a device-side assert), the
        # results it may have spoiled stay unreadable: buffers written since the last
        # checked readback, and what is later computed from them (id(buffer) -> message)
        self._written: set = set()
        self._poisoned: dict[int, str] = {}
        # vt.compile(mode="reduce-overhead") (replay.py): a Recorder while a call's work is
        # recorded; and the storage holding each buffer, to name buffers it did not allocate
        self._tape: Any = None
        self._owners: dict[int, Any] = {}
        self._profile: Any = None  # a volta_wgpu.profiler.Profile while one is active

    # -- naming -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The adapter's device name."""
        return self.info.get("device") or self.info.get("description") or "wgpu adapter"

    @property
    def is_gpu(self) -> bool:
        """True for discrete/integrated GPUs, False for CPU (software) adapters."""
        kind = str(self.info.get("adapter_type", "")).lower()
        return "gpu" in kind

    # -- buffers ------------------------------------------------------------------------
    def check_size(self, nbytes: int, what: str = "array") -> None:
        """Raise OutOfMemoryError when ``nbytes`` exceeds what one binding may hold."""
        limit = self.max_alloc
        if nbytes > limit:
            raise OutOfMemoryError(
                f"wgpu: {what} of {nbytes} bytes exceeds the adapter's limit of {limit} bytes "
                f"per buffer (max_storage_buffer_binding_size="
                f"{self.max_binding}, max_buffer_size={self.max_buffer}, rounded down to "
                f"32 bytes); split the "
                f"tensor or use a smaller batch")

    def alloc(self, nbytes: int, upload: bool = False, prefer: list | None = None) -> Storage:
        """A buffer of at least ``nbytes`` bytes from the pool (or a new one).

        Args:
            nbytes: the size needed.
            upload: the buffer will be written with ``queue.write_buffer``, so it must
                not be read by unsubmitted commands.
            prefer: buffers to take if one of them is free (a replay asks for the ones it
                used before, whose bind groups are cached).

        Raises:
            OutOfMemoryError: the device cannot allocate it even after the pool's cached
                buffers were given back.
        """
        with self._lock:
            if self._freed:
                self._drain()
            size = self._sizes.get(nbytes)
            if size is None:  # a multiple of 32 bytes: a vec4 of 8-byte elements never straddles
                self.check_size(nbytes)
                size = min(bucket_size(nbytes), self.max_alloc)
                size = self._sizes[nbytes] = max(size, -(-nbytes // 32) * 32)
            buf = None
            if prefer:
                buf = self._take(size, prefer, upload)
            if buf is None and not upload:
                dirty = self._dirty.get(size)
                if dirty:
                    buf = dirty.pop()
            if buf is None:
                free = self._pool.get(size)
                buf = free.pop() if free else self._create(size)
            if self._poisoned:
                self._poisoned.pop(id(buf), None)  # a new array: nothing spoiled in it
            self._allocated += size
            if self._allocated > self._peak:
                self._peak = self._allocated
            st = Storage(buf, nbytes, self)
            self._owners[id(buf)] = weakref.ref(st)
            if self._tape is not None:
                self._tape.on_alloc(self, st, nbytes, upload)
            return st

    def _take(self, size: int, wanted: list, upload: bool) -> Any:
        """One of the ``wanted`` buffers if it is free (dirty ones only when not
        ``upload``), removed from its free list; else None. The caller holds the lock."""
        for lists in ((self._pool,) if upload else (self._dirty, self._pool)):
            free = lists.get(size)
            if free:
                for b in wanted:
                    for i in range(len(free) - 1, -1, -1):
                        if free[i] is b:
                            del free[i]
                            return b
        return None

    def _create(self, size: int) -> Any:
        """A new storage buffer; on failure, free the pool's cached buffers and retry."""
        try:
            buf = self.device.create_buffer(size=size, usage=self._usage)
        except Exception:
            self.trim()
            try:
                buf = self.device.create_buffer(size=size, usage=self._usage)
            except Exception as exc:
                raise OutOfMemoryError(
                    f"wgpu: could not allocate {size} bytes on wgpu:{self.index} "
                    f"({self._allocated} bytes are held by tensors; the cache was emptied "
                    f"and the allocation retried): {exc}. Use a smaller batch or free "
                    f"tensors (del)") from exc
        self._buffers.add(buf)
        return buf

    def _run_lazy(self) -> None:
        """Materialize the pending (lazily recorded) arrays: a sync point for lazy mode."""
        from .lazy import run_pending
        run_pending(self)

    def _lazy_write(self, written: Any) -> None:
        """Before recording work that writes the buffers ``written``: materialize the
        pending arrays if any of them may read one of those buffers."""
        reads = self._lazy_reads
        for b in written:
            if id(b) in reads:
                self._run_lazy()
                return

    def _drain(self) -> None:
        """Pool the buffers queued by ``Storage.__del__`` (the caller holds the lock)."""
        freed = self._freed
        pool = self._dirty if self._encoder is not None else self._pool
        while freed:
            try:
                buf = freed.popleft()
            except IndexError:  # pragma: no cover - emptied by a finaliser meanwhile
                break
            size = buf.size
            self._allocated -= size
            self._lazy_reads.discard(id(buf))  # no pending graph reads a freed buffer
            bufs = pool.get(size)
            if bufs is None:
                pool[size] = [buf]
            else:
                bufs.append(buf)

    def trim(self) -> None:
        """Destroy every pooled (unused) buffer and clear the bind-group cache."""
        with self._lock:
            self.flush()  # also drains, and moves the dirty buffers to the pool
            self._groups.clear()
            for bufs in self._pool.values():
                for b in bufs:
                    self._buffers.discard(b)
                    self._owners.pop(id(b), None)
                    b.destroy()
            for bufs in self._staging_pool.values():
                for b in bufs:
                    b.destroy()
            self._pool.clear()
            self._staging_pool.clear()

    # -- memory statistics -----------------------------------------------------------------
    def memory_allocated(self) -> int:
        """Bytes of the buffers held by live arrays (pool-bucket sizes)."""
        if self._lazy_pending and not self._lazy_busy:
            self._run_lazy()
        with self._lock:
            self._drain()
            return self._allocated

    def max_memory_allocated(self) -> int:
        """Peak of :meth:`memory_allocated` since start or the last reset."""
        if self._lazy_pending and not self._lazy_busy:
            self._run_lazy()
        with self._lock:
            return self._peak

    def memory_reserved(self) -> int:
        """Bytes of every storage buffer the engine holds: allocated plus cached."""
        with self._lock:
            return sum(b.size for b in self._buffers)

    def reset_peak_memory_stats(self) -> None:
        """Restart :meth:`max_memory_allocated` from the current allocation."""
        with self._lock:
            self._drain()
            self._peak = self._allocated

    def empty_cache(self) -> None:
        """Give cached, unused buffers back to the driver (live arrays keep theirs)."""
        self.trim()

    def upload(self, data: bytes | memoryview, nbytes: int | None = None,
               live: Callable[[], bytes | None] | None = None) -> Storage:
        """A new storage holding ``data`` (padded to a multiple of 4 bytes).

        ``live``: while a call is recorded (``replay.py``), each replay writes the bytes
        ``live()`` returns (as long as ``data``) instead of ``data``; None from it makes the
        replay refuse to run.
        """
        mv = memoryview(data).cast("B")
        n = len(mv) if nbytes is None else nbytes
        if len(mv) % 4:
            mv = memoryview(bytes(mv) + b"\0" * (4 - len(mv) % 4))
        with self._lock:
            st = self.alloc(max(n, 4), upload=True)
            if len(mv):
                self.queue.write_buffer(st.buffer, 0, mv)
                if self._tape is not None:
                    self._tape.on_write(self, st.buffer, bytes(mv), live)
        return st

    @property
    def error_buffer(self) -> Any:
        """The 16-byte buffer where index kernels flag an out-of-range index."""
        if self._err is None:
            with self._lock:
                if self._err is None:
                    self._err = self.device.create_buffer(size=16, usage=self._usage)
        return self._err

    def read(self, storage: Storage, offset: int, nbytes: int) -> memoryview:
        """Copy ``nbytes`` at byte ``offset`` of a storage back to the host (a sync point).

        Raises IndexOutOfRangeError when a kernel recorded an out-of-range index since
        the last readback.
        """
        if self._lazy_pending and not self._lazy_busy:
            self._run_lazy()
        if self._tape is not None:
            self._tape.on_read(self)
        if self._poisoned and id(storage.buffer) in self._poisoned:
            from ._errors import IndexOutOfRangeError
            raise IndexOutOfRangeError(self._poisoned[id(storage.buffer)])
        lo = offset // 4 * 4
        hi = -(-(offset + nbytes) // 4) * 4
        if hi == lo:
            return memoryview(b"")
        n = hi - lo
        with self._lock:  # held while mapping too: the staging pool and the error flag
            err = self._err
            size = n + (16 if err is not None else 0)
            enc = self._get_encoder()
            self._end_pass()
            staging = self._staging(size)
            enc.copy_buffer_to_buffer(storage.buffer, lo, staging, 0, n)
            if err is not None:
                enc.copy_buffer_to_buffer(err, 0, staging, n, 16)
            self.flush()
            staging.map_sync(self.wgpu.MapMode.READ, 0, size)
            data = staging.read_mapped(0, size, copy=True)
            staging.unmap()
            if staging.size <= STAGING_POOL_MAX:
                self._staging_pool.setdefault(staging.size, []).append(staging)
            else:
                staging.destroy()
            mv = memoryview(data).cast("B")
            if err is not None and any(mv[n:n + 4]):
                self._raise_index_error(mv[n:n + 16].cast("i"))
            self._written.clear()
        return mv[offset - lo: offset - lo + nbytes]

    def _staging(self, nbytes: int) -> Any:
        """A mappable readback buffer of at least ``nbytes``; small ones are pooled."""
        size = bucket_size(nbytes) if nbytes <= STAGING_POOL_MAX else nbytes
        free = self._staging_pool.get(size)
        if free:
            return free.pop()
        U = self.wgpu.BufferUsage
        return self.device.create_buffer(size=size, usage=U.MAP_READ | U.COPY_DST)

    def _raise_index_error(self, words: memoryview) -> None:
        self.queue.write_buffer(self._err, 0, bytes(16))
        from ._errors import IndexOutOfRangeError
        what = (f"an indexing op (take, getitem, scatter_add, embedding) on wgpu:{self.index} "
                f"got index {words[1]} for a dim of size {words[2]}")
        spoiled = (f"wgpu: this tensor is unreadable: it was computed while {what} (reported "
                   "at a later sync point, as on CUDA); recompute it with valid indices")
        self._written.discard(self._err)
        for buf in self._written:
            self._poisoned[id(buf)] = spoiled
        self._written.clear()
        raise IndexOutOfRangeError(
            f"wgpu: {what}; the error is reported at the next sync point (GPU kernels cannot "
            "raise), and the results computed since then are unreadable")

    def copy(self, src: Storage, src_off: int, dst: Storage, dst_off: int, nbytes: int) -> None:
        """Record a buffer-to-buffer copy (offsets and size multiples of 4)."""
        self.copy_buffer(src.buffer, src_off, dst.buffer, dst_off, nbytes)

    def copy_buffer(self, src: Any, src_off: int, dst: Any, dst_off: int, nbytes: int) -> None:
        """:meth:`copy` between GPU buffers."""
        if self._lazy_pending and not self._lazy_busy:
            self._lazy_write((dst,))
        with self._lock:
            if self._tape is not None:
                self._tape.on_copy(self, src, src_off, dst, dst_off, nbytes)
            enc = self._get_encoder()
            self._end_pass()
            enc.copy_buffer_to_buffer(src, src_off, dst, dst_off, nbytes)
            if self._err is not None:
                self._written.add(dst)
                if self._poisoned and id(src) in self._poisoned:
                    self._poisoned[id(dst)] = self._poisoned[id(src)]

    # -- pipelines ----------------------------------------------------------------------
    def _layout(self, n_write: int, n_read: int) -> Any:
        key = (n_write, n_read)
        lay = self._layouts.get(key)
        if lay is None:
            S = self.wgpu.ShaderStage.COMPUTE
            entries = [{"binding": 0, "visibility": S,
                        "buffer": {"type": "uniform", "has_dynamic_offset": True}}]
            for i in range(n_write + n_read):
                kind = "storage" if i < n_write else "read-only-storage"
                entries.append({"binding": i + 1, "visibility": S, "buffer": {"type": kind}})
            lay = self.device.create_bind_group_layout(entries=entries)
            self._layouts[key] = lay
        return lay

    def kernel(self, key: Any, make: Callable[[], tuple[str, int, int, int]]) -> Kernel:
        """The cached pipeline for ``key``; ``make()`` returns (wgsl, meta_words, nw, nr).

        The shader binds the metadata as ``@binding(0)`` (uniform), then ``nw`` writable
        and ``nr`` read-only storage buffers at bindings 1, 2, ...
        """
        k = self._kernels.get(key)
        if k is not None:
            return k
        with self._lock:
            k = self._kernels.get(key)
            if k is not None:  # compiled by another thread meanwhile
                return k
            src, words, nw, nr = make()
            lay = self._layout(nw, nr)
            module = self.device.create_shader_module(code=src)
            playout = self.device.create_pipeline_layout(bind_group_layouts=[lay])
            pipe = self.device.create_compute_pipeline(
                layout=playout, compute={"module": module, "entry_point": "main"})
            k = Kernel(pipe, lay, max(16, -(-words // 4) * 16), nw, nr, self.meta_align)
            k.key = key
            self._kernels[key] = k
            return k

    # -- recording ----------------------------------------------------------------------
    def _get_encoder(self) -> Any:
        if self._encoder is None:
            self._encoder = self.device.create_command_encoder()
        return self._encoder

    def _end_pass(self) -> None:
        if self._pass is not None:
            self._pass.end()
            self._pass = None
            self._pass_id = None

    def _bind_group(self, kernel: Kernel, buffers: list) -> Any:
        """The cached bind group of ``kernel``'s layout over ``buffers`` (and the metadata)."""
        key = (kernel.group_key, *buffers)
        bg = self._groups.get(key)
        if bg is None:
            bg = self._native_bind_group(kernel, buffers) if _api is not None else None
            if bg is None:
                entries = [{"binding": 0, "resource": {"buffer": self._meta_buf, "offset": 0,
                                                       "size": kernel.meta_bytes}}]
                for i, b in enumerate(buffers):
                    entries.append({"binding": i + 1, "resource": {"buffer": b, "offset": 0,
                                                                   "size": b.size}})
                bg = self.device.create_bind_group(layout=kernel.layout, entries=entries)
            if len(self._groups) >= MAX_BIND_GROUPS:
                self._retired.extend(self._groups.values())
                self._groups.clear()
            self._groups[key] = bg
        return bg

    def _native_bind_group(self, kernel: Kernel, buffers: list) -> Any:
        """:meth:`_bind_group`'s new group straight through wgpu-native's C call (wgpu-py's
        ``create_bind_group`` checks and converts each entry in Python: most of the cost of
        an op whose inputs are new buffers); None when a handle is missing."""
        n = len(buffers) + 1
        entries = _ffi.new("WGPUBindGroupEntry[]", n)
        e = entries[0]
        e.buffer = self._meta_buf._internal
        e.size = kernel.meta_bytes
        for i, b in enumerate(buffers, 1):
            e = entries[i]
            e.binding = i
            e.buffer = b._internal
            e.size = b.size
        desc = _ffi.new("WGPUBindGroupDescriptor *")  # zeroed: no chain, an empty label
        desc.layout = kernel.layout._internal
        desc.entryCount = n
        desc.entries = entries
        handle = _api.libf.wgpuDeviceCreateBindGroup(self.device._internal, desc)
        return _api.GPUBindGroup("", handle, self.device)

    def dispatch(self, kernel: Kernel, meta: bytes, buffers: list, groups: tuple) -> None:
        """Record one dispatch.

        Args:
            kernel: from :meth:`kernel`.
            meta: the metadata bytes (at most ``kernel.meta_bytes``).
            buffers: GPU buffers, writable ones first, in binding order.
            groups: workgroup counts ``(x, y, z)``.
        """
        if self._lazy_pending and not self._lazy_busy:
            self._lazy_write(buffers[:kernel.n_write])
        with self._lock:
            off = self._meta_used
            if off + kernel.meta_bytes > META_CAPACITY:
                self.flush()
                off = 0
            self._meta[off:off + len(meta)] = meta
            self._meta_used = off + kernel.meta_pad
            if self._tape is not None:
                self._tape.on_dispatch(self, kernel, bytes(meta), buffers, groups)
            self._record(kernel, off, buffers, groups)

    def dispatch_packed(self, kernel: Kernel, prefix: bytes, packer: Any, values: list,
                        buffers: list, groups: tuple) -> None:
        """:meth:`dispatch` with metadata ``prefix + packer.pack(*values)``, packed in place.

        ``packer`` is a :class:`struct.Struct`; nothing is allocated for the metadata.
        """
        if self._lazy_pending and not self._lazy_busy:
            self._lazy_write(buffers[:kernel.n_write])
        with self._lock:
            off = self._meta_used
            if off + kernel.meta_bytes > META_CAPACITY:
                self.flush()
                off = 0
            n = len(prefix)
            meta = self._meta
            meta[off:off + n] = prefix
            packer.pack_into(meta, off + n, *values)
            self._meta_used = off + kernel.meta_pad
            if self._tape is not None:
                self._tape.on_dispatch(self, kernel, bytes(meta[off:off + n + packer.size]),
                                       buffers, groups)
            self._record(kernel, off, buffers, groups)

    def _record(self, kernel: Kernel, off: int, buffers: list, groups: tuple) -> None:
        """Set pipeline and bind group (metadata at ``off``) and record the dispatch.

        The caller holds the lock.
        """
        if self._err is not None:  # an index kernel ran once: track what may be spoiled
            written = buffers[:kernel.n_write]
            self._written.update(written)
            if self._poisoned:  # computed from a spoiled result: spoiled too
                bad = next((self._poisoned[id(b)] for b in buffers[kernel.n_write:]
                            if id(b) in self._poisoned), None)
                if bad is not None:
                    for b in written:
                        self._poisoned[id(b)] = bad
        bg = self._groups.get((kernel.group_key, *buffers))
        if bg is None:
            bg = self._bind_group(kernel, buffers)
        if self._pass is None:
            self._pass = self._get_encoder().begin_compute_pass()
            self._pass_id = getattr(self._pass, "_internal", None)
            self._pass_pipe = None
        pid = self._pass_id
        lib = _lib
        kp = kernel.pid
        prof = self._profile
        if prof is not None:
            prof.before(self._pass, kernel)
        if pid is not None and lib is not None and kp is not None:
            self._off[0] = off
            if kp != self._pass_pipe:  # a run of the same op sets its pipeline once
                lib.wgpuComputePassEncoderSetPipeline(pid, kp)
                self._pass_pipe = kp
            lib.wgpuComputePassEncoderSetBindGroup(pid, 0, bg._internal, 1, self._off)
            lib.wgpuComputePassEncoderDispatchWorkgroups(pid, *groups)
        else:  # pragma: no cover - a wgpu build without wgpu-native
            p = self._pass
            p.set_pipeline(kernel.pipeline)
            p.set_bind_group(0, bg, [off])
            p.dispatch_workgroups(*groups)
        if prof is not None:
            prof.after(self._pass)
        self.dispatch_count += 1
        self._batched += 1
        if self._batched >= self._submit_at:
            self._submit_at = min(self._submit_at * 2, SUBMIT_MAX)
            self._submit()

    def flush(self) -> None:
        """Submit all recorded work (does not wait for it)."""
        if self._lazy_pending and not self._lazy_busy:
            self._run_lazy()
        with self._lock:
            self._submit()
            self._submit_at = SUBMIT_FIRST  # the next step's first kernels go out early

    def _submit(self) -> None:
        """Submit the recorded commands (not the pending lazy graphs); the caller holds
        the lock."""
        self._batched = 0
        if self._freed:
            self._drain()
        if self._encoder is None:
            return
        self._end_pass()
        if self._profile is not None:
            self._profile.resolve(self._encoder)
        if self._meta_used:
            self.queue.write_buffer(self._meta_buf, 0,
                                    memoryview(self._meta)[:self._meta_used])
        cb = self._encoder.finish()
        self._encoder = None
        self._meta_used = 0
        self.queue.submit([cb])
        self.submit_count += 1
        pool = self._pool
        for size, bufs in self._dirty.items():
            free = pool.get(size)
            if free is None:
                pool[size] = bufs
            else:
                free.extend(bufs)
        self._dirty = {}
        self._retired.clear()

    def synchronize(self) -> None:
        """Submit recorded work and wait until the device has finished it."""
        # a 4-byte readback waits for everything submitted before it (queue order);
        # wgpu-py's on_submitted_work_done_sync is broken with some wgpu-native builds
        with self._lock:
            if not hasattr(self, "_sync_st"):  # the engine's own: not in the memory stats
                buf = self.device.create_buffer(size=_MIN_BUCKET, usage=self._usage)
                self._sync_st = Storage(buf, 4, self)
            self.read(self._sync_st, 0, 4)


def groups_for(n: int, wg: int = WG) -> tuple[int, int, int]:
    """Workgroup counts covering ``n`` threads, split over x/y past 65535 groups."""
    g = max(1, -(-n // wg))
    if g <= MAX_GROUPS:
        return (g, 1, 1)
    y = -(-g // MAX_GROUPS)
    if y > MAX_GROUPS:
        raise OutOfMemoryError(f"wgpu: {n} threads exceed the dispatch limit")
    return (math.ceil(g / y), y, 1)


_engines: dict[int, Engine] = {}
_engine_lock = threading.Lock()


def get_engine(index: int = 0) -> Engine:
    """The engine of device ``index``, created on first use."""
    eng = _engines.get(index)
    if eng is None:
        made = False
        with _engine_lock:
            eng = _engines.get(index)
            if eng is None:
                eng = Engine(index)
                _engines[index] = eng
                made = True
        if made and "cooperative-matrix" in eng.features:
            # tensor cores: their test product runs now, before any work is recorded
            from .kernels import coopmat
            coopmat.check(eng)
    return eng


def synchronize(index: int = 0) -> None:
    """Wait until all work queued on device ``index`` is done."""
    if index in _engines:
        _engines[index].synchronize()
