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
        self.wait(self.comm.Iallreduce(_mpi().IN_PLACE, buf, op=self._op(op)).Test,
                  "all_reduce")
        if copied:
            array[...] = buf

    def broadcast(self, array: Any, src: int) -> None:
        buf, copied = self._buffer(array)
        self.wait(self.comm.Ibcast(buf, root=src).Test, "broadcast")
        if copied:
            array[...] = buf

    def all_gather(self, out: Any, array: Any) -> None:
        import numpy as np

        buf, copied = self._buffer(out)
        self.wait(self.comm.Iallgather(np.ascontiguousarray(array), buf).Test, "all_gather")
        if copied:
            out[...] = buf

    def reduce_scatter(self, out: Any, array: Any, op: ReduceOp) -> None:
        import numpy as np

        buf, copied = self._buffer(out)
        req = self.comm.Ireduce_scatter_block(np.ascontiguousarray(array), buf,
                                              op=self._op(op))
        self.wait(req.Test, "reduce_scatter")
        if copied:
            out[...] = buf

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
