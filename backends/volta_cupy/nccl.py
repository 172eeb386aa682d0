"""The NCCL communication engine: collectives on CuPy device buffers.

Registered under the entry-point group ``volta.comm`` as ``nccl``. Each rank drives
one GPU; rank 0 creates NCCL's unique id and shares it through the rendezvous store.

Every collective runs on a communication stream of its own (one per GPU, shared by all
groups, so all collectives keep the order of the calls on every rank), in place, with no
host copies. An event recorded on the caller's current stream makes the
collective wait for the kernels that produced its inputs; a second event, recorded after
it on the communication stream, is what later work waits for. The plain calls
(``all_reduce``...) make the current stream wait at once, so they behave as if they ran
on it; the ``start_*`` calls return a :class:`NcclWork` whose ``wait()`` does that later,
which lets DDP's and FSDP's collectives overlap the backward kernels. No call blocks the
host.
"""

from __future__ import annotations

import importlib.util
import pickle
from datetime import timedelta
from typing import Any

from volta_core.distributed import (
    CommEngine,
    DistributedError,
    PendingWork,
    ProcessGroup,
    ReduceOp,
    hookimpl,
)

_DTYPES = {"float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64",
           "bfloat16": "NCCL_BFLOAT16", "int8": "NCCL_INT8", "uint8": "NCCL_UINT8",
           "bool": "NCCL_UINT8", "int32": "NCCL_INT32", "uint32": "NCCL_UINT32",
           "int64": "NCCL_INT64", "uint64": "NCCL_UINT64"}
_OPS = {ReduceOp.SUM: "NCCL_SUM", ReduceOp.PRODUCT: "NCCL_PROD", ReduceOp.MAX: "NCCL_MAX",
        ReduceOp.MIN: "NCCL_MIN", ReduceOp.AVG: "NCCL_AVG"}


class NcclEngine(CommEngine):
    """CUDA collectives through CuPy's NCCL bindings (``cupy.cuda.nccl``)."""

    name = "nccl"
    device_types = ("cuda",)
    extra = "cupy"
    needs_store = True

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("cupy") is None:
            return "CuPy is not installed"
        try:
            import warnings

            import cupy

            _preload_nccl()
            with warnings.catch_warnings():  # CuPy warns when NCCL is missing: we report it
                warnings.simplefilter("ignore")
                from cupy.cuda import nccl
        except Exception as exc:  # CuPy without a CUDA driver raises many kinds of errors
            return f"CuPy failed to import: {exc!r}"
        if not getattr(nccl, "available", False) or not hasattr(nccl, "NcclCommunicator"):
            return ("CuPy's NCCL bindings are unavailable (NCCL library not found); "
                    "pip install nvidia-nccl-cu12")
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:
            return f"no CUDA device: {exc!r}"
        return None if count > 0 else "no CUDA device"

    def new_group(self, rank: int, world_size: int, store: Any, device_index: int,
                  timeout: timedelta) -> NcclProcessGroup:
        import cupy
        from cupy.cuda import nccl

        count = cupy.cuda.runtime.getDeviceCount()
        if not 0 <= device_index < count:
            raise DistributedError(
                f"nccl: rank {rank} wants cuda:{device_index} but {count} GPU(s) are visible; "
                "run at most one rank per GPU (volta-run --nproc <= GPUs) or pass device_id")
        cupy.cuda.Device(device_index).use()  # like torch.cuda.set_device(local_rank)
        NcclProcessGroup.generation += 1
        key = f"nccl/unique_id/{NcclProcessGroup.generation}"
        if rank == 0:
            uid = nccl.get_unique_id()
            store.set(key, pickle.dumps(uid))
        else:
            uid = pickle.loads(store.get(key))
        comm = nccl.NcclCommunicator(world_size, uid, rank)
        return NcclProcessGroup(comm, rank, world_size, device_index, self.name)


_COMM_STREAMS: dict[int, Any] = {}  # device index -> the communication stream


class NcclWork(PendingWork):
    """A collective queued on a group's communication stream.

    ``wait()`` makes the caller's current stream wait for it (the host does not block)
    and then drops the arrays it kept alive: freed memory goes back to CuPy's pool for
    the current stream, whose later kernels now run after the collective, so nothing
    can reuse it while NCCL still reads or writes it.
    """

    __slots__ = ("event", "keep", "copy")

    def __init__(self, event: Any, keep: tuple[Any, ...]) -> None:
        self.event, self.keep, self.copy = event, keep, None

    def then_copy(self, dst: Any, src: Any) -> NcclWork:
        """After the collective, copy ``src`` (a contiguous stand-in) into ``dst``."""
        self.copy = (dst, src)
        return self

    def wait(self) -> None:
        import cupy

        if self.keep is None:
            return
        cupy.cuda.get_current_stream().wait_event(self.event)
        if self.copy is not None:
            dst, src = self.copy
            dst[...] = src
        self.keep = self.copy = None

    def is_completed(self) -> bool:
        return self.keep is None or bool(self.event.done)


class NcclProcessGroup(ProcessGroup):
    """A process group over one NCCL communicator; arrays are CuPy arrays on its GPU."""

    generation = 0  # groups created in this process: names each unique id in the store

    def __init__(self, comm: Any, rank: int, world_size: int, device_index: int,
                 engine: str = "nccl") -> None:
        from cupy.cuda import nccl

        super().__init__(rank, world_size, engine)
        self.comm = comm
        self.device_index = device_index
        self._nccl = nccl
        self.native_avg = hasattr(nccl, "NCCL_AVG")

    def _dtype(self, array: Any) -> int:
        name = _DTYPES.get(array.dtype.name)
        if name is None or not hasattr(self._nccl, name):
            raise DistributedError(f"nccl: dtype {array.dtype.name} is not supported")
        return getattr(self._nccl, name)

    def _op(self, op: ReduceOp) -> int:
        name = _OPS.get(op)
        if name is None or not hasattr(self._nccl, name):
            raise DistributedError(f"nccl: reduce op {op!r} is not supported by this NCCL")
        return getattr(self._nccl, name)

    def _buffer(self, array: Any) -> tuple[Any, bool]:
        import cupy

        if not isinstance(array, cupy.ndarray):
            raise DistributedError(f"nccl: expected a CuPy array (a cuda tensor), got "
                                   f"{type(array).__name__}")
        if array.device.id != self.device_index:
            raise DistributedError(
                f"nccl: rank {self.rank} drives cuda:{self.device_index} but got a tensor on "
                f"cuda:{array.device.id}; move it with .to('cuda:{self.device_index}')")
        if array.flags.c_contiguous:
            return array, False
        return cupy.ascontiguousarray(array), True

    def _comm_stream(self) -> Any:
        """The communication stream of the group's GPU (made on first use).

        One stream per GPU, shared by every group of this process: collectives of
        different communicators (subgroups) then still run one after the other, in the
        order they were called, as they did on the compute stream, so two communicators
        can never wait on each other.
        """
        stream = _COMM_STREAMS.get(self.device_index)
        if stream is None:
            import cupy

            with cupy.cuda.Device(self.device_index):
                stream = _COMM_STREAMS[self.device_index] = cupy.cuda.Stream(non_blocking=True)
        return stream

    def _launch(self, enqueue: Any, *keep: Any) -> NcclWork:
        """Run ``enqueue(stream_ptr)`` on the communication stream after the work queued
        so far on the current stream; ``keep``: arrays to hold until ``wait()``."""
        import cupy

        comm = self._comm_stream()
        ready = cupy.cuda.Event(block=False, disable_timing=True, interprocess=False)
        ready.record(cupy.cuda.get_current_stream())
        comm.wait_event(ready)
        enqueue(comm.ptr)
        done = cupy.cuda.Event(block=False, disable_timing=True, interprocess=False)
        done.record(comm)
        return NcclWork(done, keep)

    def start_all_reduce(self, array: Any, op: ReduceOp) -> NcclWork:
        buf, copied = self._buffer(array)
        count, dtype, nop = buf.size, self._dtype(buf), self._op(op)
        work = self._launch(lambda s: self.comm.allReduce(buf.data.ptr, buf.data.ptr, count,
                                                          dtype, nop, s), buf)
        return work.then_copy(array, buf) if copied else work

    def start_all_gather(self, out: Any, array: Any) -> NcclWork:
        buf, copied = self._buffer(out)
        src, _ = self._buffer(array)
        count, dtype = src.size, self._dtype(src)
        work = self._launch(lambda s: self.comm.allGather(src.data.ptr, buf.data.ptr, count,
                                                          dtype, s), buf, src)
        return work.then_copy(out, buf) if copied else work

    def start_reduce_scatter(self, out: Any, array: Any, op: ReduceOp) -> NcclWork:
        buf, copied = self._buffer(out)
        src, _ = self._buffer(array)
        count, dtype, nop = buf.size, self._dtype(buf), self._op(op)
        work = self._launch(lambda s: self.comm.reduceScatter(src.data.ptr, buf.data.ptr,
                                                              count, dtype, nop, s), buf, src)
        return work.then_copy(out, buf) if copied else work

    def all_reduce(self, array: Any, op: ReduceOp) -> None:
        self.start_all_reduce(array, op).wait()

    def all_gather(self, out: Any, array: Any) -> None:
        self.start_all_gather(out, array).wait()

    def reduce_scatter(self, out: Any, array: Any, op: ReduceOp) -> None:
        self.start_reduce_scatter(out, array, op).wait()

    def broadcast(self, array: Any, src: int) -> None:
        buf, copied = self._buffer(array)
        count, dtype = buf.size, self._dtype(buf)
        work = self._launch(lambda s: self.comm.broadcast(buf.data.ptr, buf.data.ptr, count,
                                                          dtype, src, s), buf)
        (work.then_copy(array, buf) if copied else work).wait()

    def send(self, array: Any, dst: int) -> None:
        src, _ = self._buffer(array)
        count, dtype = src.size, self._dtype(src)
        self._launch(lambda s: self.comm.send(src.data.ptr, count, dtype, dst, s), src).wait()

    def recv(self, array: Any, src: int) -> None:
        buf, copied = self._buffer(array)
        count, dtype = buf.size, self._dtype(buf)
        work = self._launch(lambda s: self.comm.recv(buf.data.ptr, count, dtype, src, s), buf)
        (work.then_copy(array, buf) if copied else work).wait()

    # isend/irecv: the base class's (send/recv on the communication stream, which the
    # current stream waits for: a later kernel that reads the received tensor runs after)

    def new_subgroup(self, ranks: list[int], store: Any, tag: int,
                     timeout: timedelta) -> NcclProcessGroup | None:
        if self.rank not in ranks:
            return None
        if store is None:
            raise DistributedError("nccl: new_group needs the default group's rendezvous "
                                   "store (init_process_group made one); got None")
        from cupy.cuda import nccl

        key = f"nccl/subgroup/{tag}/unique_id"
        me = ranks.index(self.rank)
        if me == 0:
            uid = nccl.get_unique_id()
            store.set(key, pickle.dumps(uid))
        else:
            uid = pickle.loads(store.get(key))
        import cupy

        with cupy.cuda.Device(self.device_index):
            comm = nccl.NcclCommunicator(len(ranks), uid, me)
        return NcclProcessGroup(comm, me, len(ranks), self.device_index, self.engine)

    def barrier(self) -> None:
        import cupy

        with cupy.cuda.Device(self.device_index):
            token = cupy.zeros(1, dtype=cupy.float32)
            self.all_reduce(token, ReduceOp.SUM)
            cupy.cuda.get_current_stream().synchronize()

    def abort(self) -> None:
        if self.comm is not None:
            self.comm.abort()
            self.comm = None

    def destroy(self) -> None:
        if self.comm is not None:
            self.comm.destroy()
            self.comm = None


@hookimpl
def volta_comm_engines():
    return [NcclEngine()]


def _preload_nccl() -> None:
    """Load ``libnccl.so.2`` from the ``nvidia-nccl-*`` wheel, if one is installed.

    CuPy's NCCL bindings link against ``libnccl.so.2`` but pip puts the library inside
    the wheel's package, off the loader's path; loading it once, globally, lets CuPy find
    it without ``LD_LIBRARY_PATH``.
    """
    import ctypes
    import os

    try:
        spec = importlib.util.find_spec("nvidia.nccl")
    except ImportError:  # no ``nvidia`` namespace package at all
        return
    if spec is None or not spec.submodule_search_locations:
        return
    for root in spec.submodule_search_locations:
        lib = os.path.join(root, "lib", "libnccl.so.2")
        if os.path.exists(lib):
            try:
                ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
            except OSError:
                continue
            return

