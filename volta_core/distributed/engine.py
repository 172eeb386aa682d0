"""The contract between ``volta_core.distributed`` and a communication engine.

An engine (MPI, NCCL, a future Gloo or UCC) is a :class:`CommEngine` that creates a
:class:`ProcessGroup`. A process group works on raw backend arrays, in place, and
never sees a :class:`~volta_core.Tensor`: the front-end in
:mod:`volta_core.distributed.collectives` checks devices, shapes and dtypes, bumps
versions and builds the flat buffers, so an engine stays a thin wrapper.
"""

from __future__ import annotations

import enum
import time
from datetime import timedelta
from typing import Any

from ..errors import VoltaError


class DistributedError(VoltaError, RuntimeError):
    """A process group could not be created, or a collective failed or timed out."""


class ReduceOp(enum.Enum):
    """How :func:`all_reduce` and :func:`reduce_scatter` combine the ranks' values."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MAX = "max"
    MIN = "min"

    def __repr__(self) -> str:
        return f"ReduceOp.{self.name}"


class PendingWork:
    """A started collective (see :meth:`ProcessGroup.start_all_reduce`).

    ``wait()`` makes whatever runs next on the device (for CUDA, the current stream)
    come after the collective, and may be called more than once; ``is_completed()``
    says whether the collective has finished. This base class is a finished one.
    """

    def wait(self) -> None:
        """Order later work after the collective (finished work: nothing to do)."""

    def is_completed(self) -> bool:
        return True


DONE = PendingWork()  # what engines without overlap return


class ProcessGroup:
    """A set of ranks that run collectives together; made by :meth:`CommEngine.new_group`.

    Every method is collective: all ranks call it, in the same order, with arrays of the
    same shape and dtype. Arrays are backend arrays on the group's device; an engine
    copies non-contiguous arrays itself. ``op`` is never :attr:`ReduceOp.AVG` (the
    front-end sums and divides) unless the engine sets ``native_avg``.

    Attributes:
        rank: this process's rank in the group.
        world_size: the number of ranks.
        engine: the name of the engine that made the group.
    """

    native_avg = False
    device_types: tuple[str, ...] = ()  # set from the engine by init_process_group
    # True when collectives poll :meth:`wait` (they can then raise on a lost rank);
    # otherwise the watchdog tears the process down when a rank is lost
    interruptible = False
    watchdog: Any = None  # the group's Watchdog, set by init_process_group
    ranks: list[int] | None = None  # a subgroup's members as ranks of the default group

    def __init__(self, rank: int, world_size: int, engine: str) -> None:
        self.rank = rank
        self.world_size = world_size
        self.engine = engine

    def all_reduce(self, array: Any, op: ReduceOp) -> None:
        """Replace ``array`` with the reduction of every rank's ``array``."""
        raise NotImplementedError(f"engine {self.engine!r} does not implement all_reduce")

    def broadcast(self, array: Any, src: int) -> None:
        """Overwrite ``array`` with rank ``src``'s ``array``."""
        raise NotImplementedError(f"engine {self.engine!r} does not implement broadcast")

    def all_gather(self, out: Any, array: Any) -> None:
        """Fill the flat ``out`` (``world_size * array.size`` elements) rank by rank."""
        raise NotImplementedError(f"engine {self.engine!r} does not implement all_gather")

    def reduce_scatter(self, out: Any, array: Any, op: ReduceOp) -> None:
        """Reduce the flat ``array`` over ranks; keep chunk ``rank`` of it in ``out``."""
        raise NotImplementedError(f"engine {self.engine!r} does not implement reduce_scatter")

    def barrier(self) -> None:
        """Return once every rank has called ``barrier``."""
        raise NotImplementedError(f"engine {self.engine!r} does not implement barrier")

    def broadcast_bytes(self, data: bytes | None, src: int = 0) -> bytes:
        """Return rank ``src``'s ``data`` (at most 1 KiB) on every rank (for start-up).

        Only engines without a rendezvous store (``needs_store = False``) need it.
        """
        raise NotImplementedError(f"engine {self.engine!r} does not implement broadcast_bytes")

    # -- started collectives (overlap with compute) ------------------------------------
    # An engine that can run collectives beside the compute (NCCL on its own CUDA stream)
    # overrides these; the defaults run the collective at once and return a finished
    # handle. A handle's ``wait()`` orders later work on the device after the collective
    # (it need not block the host); until then the arrays must stay alive and untouched.

    def start_all_reduce(self, array: Any, op: ReduceOp) -> PendingWork:
        """Start :meth:`all_reduce`; the result is in ``array`` once ``wait()`` returns."""
        type(self).all_reduce(self, array, op)
        return DONE

    def start_all_gather(self, out: Any, array: Any) -> PendingWork:
        """Start :meth:`all_gather`; ``out`` is filled once ``wait()`` returns."""
        type(self).all_gather(self, out, array)
        return DONE

    def start_reduce_scatter(self, out: Any, array: Any, op: ReduceOp) -> PendingWork:
        """Start :meth:`reduce_scatter`; ``out`` is filled once ``wait()`` returns."""
        type(self).reduce_scatter(self, out, array, op)
        return DONE

    def wait(self, test: Any, op: str) -> None:
        """Poll ``test()`` until true, raising ``DistributedError`` on a lost rank or timeout.

        Engines with non-blocking requests call it as ``self.wait(request.Test, op)``
        (and set ``interruptible = True``), so a collective never waits forever.
        """
        if self.watchdog is not None:
            self.watchdog.wait(test, op)
            return
        while not test():
            time.sleep(1e-4)
    def send(self, array: Any, dst: int) -> None:
        """Send the flat ``array`` to group rank ``dst`` (which calls :meth:`recv`)."""
        raise NotImplementedError(f"engine {self.engine!r} does not implement send")

    def recv(self, array: Any, src: int) -> None:
        """Overwrite the flat ``array`` with what group rank ``src`` sends."""
        raise NotImplementedError(f"engine {self.engine!r} does not implement recv")

    def isend(self, array: Any, dst: int) -> Any:
        """Start :meth:`send`; return an object whose ``wait()`` completes it.

        The default sends at once and returns None (fine for engines whose sends do not
        block until the receiver arrives).
        """
        self.send(array, dst)
        return None

    def irecv(self, array: Any, src: int) -> Any:
        """Start :meth:`recv`; return an object whose ``wait()`` completes it (or None)."""
        self.recv(array, src)
        return None

    def new_subgroup(self, ranks: list[int], store: Any, tag: int,
                     timeout: timedelta) -> ProcessGroup | None:
        """Create a group of the ranks ``ranks`` (sorted ranks of this group).

        Collective over this group: every rank calls it, members and others, in the same
        order. Returns the new group on members, None elsewhere.

        Args:
            ranks: the members, as ranks of this group, sorted; the new group's rank
                ``i`` is ``ranks[i]``.
            store: the default group's rendezvous store (None for engines without one).
            tag: a number unique to this call on every rank (names store keys).
            timeout: how long a rendezvous may wait.
        """
        raise NotImplementedError(f"engine {self.engine!r} does not implement new_group")

    def abort(self) -> None:
        """Tear the job down after an error so no rank waits forever (best effort)."""

    def destroy(self) -> None:
        """Release the group's resources (communicators, sockets)."""


class CommEngine:
    """A communication library Volta can run collectives through.

    Subclass it in a plugin and return instances from the ``volta_comm_engines`` hook.

    Attributes:
        name: what users pass as ``init_process_group(backend=...)``.
        device_types: the Volta device types whose arrays the engine moves.
        extra: the ``volta[...]`` extra that installs the engine's library, if any.
        needs_store: whether :meth:`new_group` needs a rendezvous store (an MPI job
            has its own rendezvous; NCCL needs one to share its unique id).
    """

    name: str = ""
    device_types: tuple[str, ...] = ()
    extra: str | None = None
    needs_store: bool = True

    def unavailable_reason(self) -> str | None:
        """Why the engine cannot run here (library missing, no device), or None."""
        return None

    def discover(self) -> tuple[int, int] | None:
        """``(rank, world_size)`` as the engine's own launcher knows it, or None."""
        return None

    def new_group(self, rank: int, world_size: int, store: Any, device_index: int,
                  timeout: timedelta) -> ProcessGroup:
        """Create the default process group.

        Args:
            rank: this process's rank.
            world_size: the number of processes.
            store: a :class:`~volta_core.distributed.Store` shared by all ranks (None
                when ``needs_store`` is False).
            device_index: the local device this rank drives (the local rank by default).
            timeout: how long a rendezvous may wait.
        """
        raise NotImplementedError(f"engine {self.name!r} does not implement new_group")

    def __repr__(self) -> str:
        return f"<CommEngine {self.name!r} for {list(self.device_types)}>"
