"""Collectives on NumPy buffers through mpi4py, in place.

MPI is initialised on first use (``from mpi4py import MPI`` inside the engine), so
discovering the engine costs nothing. The group works on a duplicate of
``COMM_WORLD`` so a program's own MPI traffic never mixes with Volta's.
"""

from __future__ import annotations

import importlib.util
import os
from datetime import timedelta
from typing import Any

from volta_core.distributed import CommEngine, DistributedError, ProcessGroup, ReduceOp

# variables an MPI launcher (Open MPI, MPICH/Hydra, PMIx, Slurm's PMI) sets in each rank
_LAUNCHER_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK")


def _mpi():
    from mpi4py import MPI

    return MPI


class MpiEngine(CommEngine):
    """CPU collectives through MPI (any implementation mpi4py was built against)."""

    name = "mpi"
    device_types = ("cpu",)
    extra = "mpi"
    needs_store = False

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("mpi4py") is None:
            return "mpi4py is not installed"
        return None

    def discover(self) -> tuple[int, int] | None:
        comm = _mpi().COMM_WORLD
        rank, size = comm.Get_rank(), comm.Get_size()
        world = os.environ.get("WORLD_SIZE")
        if size == 1 and world not in (None, "", "1") and not any(
                v in os.environ for v in _LAUNCHER_VARS):
            raise DistributedError(
                f"the mpi engine found WORLD_SIZE={world} but this process is not part of "
                "an MPI job (MPI sees 1 process); start the ranks with an MPI launcher: "
                f"mpirun -n {world} python script.py (or srun --mpi=pmix), or use "
                "init_process_group('nccl') with volta-run")
        return rank, size

    def new_group(self, rank: int, world_size: int, store: Any, device_index: int,
                  timeout: timedelta) -> MpiProcessGroup:
        return MpiProcessGroup(_mpi().COMM_WORLD.Dup(), self.name)


# dtypes MPI has no reduction for: reduced in float32 and cast back (bfloat16 via ml_dtypes)
_REDUCE_UPCAST = ("bfloat16", "float16")


def _bits(array: Any) -> Any:
    """``array`` as unsigned integers of the same width when MPI lacks its dtype.

    Moving bytes (broadcast, gather, send) does not care about the meaning of the bits;
    mpi4py does not know ml_dtypes' bfloat16.
    """
    if array.dtype.name in _REDUCE_UPCAST:
        return array.view(f"uint{8 * array.dtype.itemsize}")
    return array


class MpiProcessGroup(ProcessGroup):
    """A process group over an MPI communicator; arrays are NumPy arrays on the host.

    Collectives are MPI's non-blocking ones, polled through :meth:`ProcessGroup.wait`,
    so a collective whose peer is gone raises instead of waiting forever.
    """

    interruptible = True

    def __init__(self, comm: Any, engine: str = "mpi") -> None:
        super().__init__(comm.Get_rank(), comm.Get_size(), engine)
        self.comm = comm
        MPI = _mpi()
        self._ops = {ReduceOp.SUM: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD, ReduceOp.MAX: MPI.MAX,
                     ReduceOp.MIN: MPI.MIN}

    @staticmethod
    def _buffer(array: Any) -> tuple[Any, bool]:
        """A C-contiguous buffer for ``array`` and whether it is a copy."""
        import numpy as np

        if not isinstance(array, np.ndarray):
            raise DistributedError(f"mpi engine: expected a NumPy array (a cpu tensor), got "
                                   f"{type(array).__name__}")
        if array.flags.c_contiguous and array.flags.writeable:
            return array, False
        return np.ascontiguousarray(array), True

    def _op(self, op: ReduceOp) -> Any:
        try:
            return self._ops[op]
        except KeyError:
            raise DistributedError(f"mpi engine: reduce op {op!r} is not supported") from None

    def all_reduce(self, array: Any, op: ReduceOp) -> None:
        buf, copied = self._buffer(array)
        if buf.dtype.name in _REDUCE_UPCAST:
            wide = buf.astype("float32")
            self.wait(self.comm.Iallreduce(_mpi().IN_PLACE, wide, op=self._op(op)).Test,
                      "all_reduce")
            buf[...] = wide.astype(buf.dtype)
        else:
            self.wait(self.comm.Iallreduce(_mpi().IN_PLACE, buf, op=self._op(op)).Test,
                      "all_reduce")
        if copied:
            array[...] = buf

    def broadcast(self, array: Any, src: int) -> None:
        buf, copied = self._buffer(array)
        self.wait(self.comm.Ibcast(_bits(buf), root=src).Test, "broadcast")
        if copied:
            array[...] = buf

    def all_gather(self, out: Any, array: Any) -> None:
        import numpy as np

        buf, copied = self._buffer(out)
        self.wait(self.comm.Iallgather(_bits(np.ascontiguousarray(array)), _bits(buf)).Test,
                  "all_gather")
        if copied:
            out[...] = buf

    def reduce_scatter(self, out: Any, array: Any, op: ReduceOp) -> None:
        import numpy as np

        buf, copied = self._buffer(out)
        src = np.ascontiguousarray(array)
        if buf.dtype.name in _REDUCE_UPCAST:
            wide = np.empty(buf.shape, dtype="float32")
            req = self.comm.Ireduce_scatter_block(src.astype("float32"), wide,
                                                  op=self._op(op))
            self.wait(req.Test, "reduce_scatter")
            buf[...] = wide.astype(buf.dtype)
        else:
            req = self.comm.Ireduce_scatter_block(src, buf, op=self._op(op))
            self.wait(req.Test, "reduce_scatter")
        if copied:
            out[...] = buf

    def send(self, array: Any, dst: int) -> None:
        import numpy as np

        self.wait(self.comm.Isend(_bits(np.ascontiguousarray(array)), dest=dst).Test, "send")

    def recv(self, array: Any, src: int) -> None:
        buf, copied = self._buffer(array)
        self.wait(self.comm.Irecv(_bits(buf), source=src).Test, "recv")
        if copied:
            array[...] = buf

    def isend(self, array: Any, dst: int) -> Any:
        import numpy as np

        buf = np.ascontiguousarray(array)  # kept alive by the request until wait()
        return _Request(self.comm.Isend(_bits(buf), dest=dst), buf)

    def irecv(self, array: Any, src: int) -> Any:
        buf, copied = self._buffer(array)
        req = self.comm.Irecv(_bits(buf), source=src)
        return _Request(req, buf, array if copied else None)

    def new_subgroup(self, ranks: list[int], store: Any, tag: int,
                     timeout: timedelta) -> MpiProcessGroup | None:
        MPI = _mpi()
        member = self.rank in ranks
        comm = self.comm.Split(0 if member else MPI.UNDEFINED,
                               ranks.index(self.rank) if member else 0)
        if comm == MPI.COMM_NULL:
            return None
        return MpiProcessGroup(comm, self.engine)

    def barrier(self) -> None:
        self.wait(self.comm.Ibarrier().Test, "barrier")

    def broadcast_bytes(self, data: bytes | None, src: int = 0) -> bytes:
        import numpy as np

        buf = np.zeros(1026, np.uint8)  # 2 bytes of length, then the data
        if self.rank == src:
            buf[:2] = divmod(len(data), 256)
            buf[2:2 + len(data)] = np.frombuffer(data, np.uint8)
        self.comm.Bcast(buf, root=src)
        n = 256 * int(buf[0]) + int(buf[1])
        return bytes(buf[2:2 + n])

    def abort(self) -> None:
        self.comm.Abort(1)

    def destroy(self) -> None:
        if self.comm is not None:
            self.comm.Free()
            self.comm = None


class _Request:
    """A pending MPI request; ``wait()`` completes it and copies a staged receive back."""

    def __init__(self, request: Any, buf: Any, target: Any = None) -> None:
        self.request, self.buf, self.target = request, buf, target

    def wait(self) -> None:
        self.request.Wait()
        if self.target is not None:
            self.target[...] = self.buf
