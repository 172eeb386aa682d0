"""The default process group: ``init_process_group`` and the rank queries.

The rank, world size and local rank come, in this order, from the arguments, from the
variables ``volta-run`` (and torchrun) set (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``),
from those of the job launcher (Open MPI's ``OMPI_COMM_WORLD_*``, MPICH/Hydra's
``PMI_*``, Slurm's ``SLURM_*``), and finally from the engine itself (an MPI job knows
its ranks). Engines that need a rendezvous (NCCL) meet through a :class:`TCPStore` at
``MASTER_ADDR:MASTER_PORT`` (rank 0 serves it) or a :class:`FileStore`.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
from datetime import timedelta
from typing import Any
from urllib.parse import urlparse

from .engine import DistributedError, ProcessGroup
from .registry import get_engine
from .store import FileStore, Store, TCPStore
from .watchdog import Watchdog

log = logging.getLogger("volta.distributed")

default_pg_timeout = timedelta(minutes=30)

_RANK_VARS = ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")
_SIZE_VARS = ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS")
_LOCAL_VARS = ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMI_LOCAL_RANK",
               "SLURM_LOCALID")


class _State:
    group: ProcessGroup | None = None
    store: Store | None = None
    local_rank: int = 0
    device_index: int = 0
    excepthook: Any = None
    broken: bool = False  # this rank raised because a peer was lost: skip MPI's finalize
    atexit_set: bool = False


_state = _State()


def _env_int(names: tuple[str, ...]) -> int | None:
    for name in names:
        value = os.environ.get(name)
        if value not in (None, ""):
            try:
                return int(value)
            except ValueError:
                raise DistributedError(f"environment variable {name}={value!r} is not an "
                                       "integer") from None
    return None


def _make_store(init_method: str, rank: int, world_size: int, timeout: timedelta) -> Store:
    url = urlparse(init_method)
    if url.scheme == "env":
        host = os.environ.get("MASTER_ADDR") or "127.0.0.1"
        port = os.environ.get("MASTER_PORT") or "29500"
        if "MASTER_ADDR" not in os.environ:
            log.info("MASTER_ADDR unset: rendezvous at %s:%s", host, port)
        return TCPStore(host, int(port), world_size, rank == 0, timeout)
    if url.scheme == "tcp":
        if not url.hostname or not url.port:
            raise DistributedError(f"init_method {init_method!r}: expected tcp://host:port")
        return TCPStore(url.hostname, url.port, world_size, rank == 0, timeout)
    if url.scheme == "file":
        return FileStore(url.path, timeout)
    raise DistributedError(f"init_method {init_method!r} is not supported; use 'env://', "
                           "'tcp://host:port' or 'file:///shared/dir'")


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int | None = None,
                       rank: int | None = None, store: Store | None = None,
                       device_id: Any = None) -> None:
    """Join the default process group; every rank of the job must call it.

    Args:
        backend: the communication engine: ``"nccl"`` (CUDA tensors), ``"mpi"`` (CPU
            tensors), or any engine a plugin adds (see :func:`engines`). Defaults to
            ``"nccl"`` when a CUDA device is the default device, else ``"mpi"``.
        init_method: how ranks meet: ``"env://"`` (the default: ``MASTER_ADDR`` and
            ``MASTER_PORT``), ``"tcp://host:port"`` or ``"file:///shared/dir"``.
        timeout: how long rendezvous, store waits and each collective may block, and how
            long a rank may stay silent before the others count it as lost (30
            minutes); a ``timedelta`` or seconds. A watchdog beside the engine makes the
            other ranks raise :class:`DistributedError` naming a rank that dies, exits
            or leaves early, instead of waiting forever.
        world_size: the number of processes (default: from the environment).
        rank: this process's rank (default: from the environment).
        store: a ready :class:`Store` (excludes ``init_method``).
        device_id: the local device index (or ``Device``) this rank drives; defaults
            to the local rank.

    Example:
        >>> # volta-run --nproc 2 train.py
        >>> import volta_core.distributed as dist
        >>> dist.init_process_group("nccl")
        >>> dist.get_rank(), dist.get_world_size()
    """
    if _state.group is not None:
        raise DistributedError("init_process_group called twice; call "
                               "destroy_process_group() first")
    if store is not None and init_method is not None:
        raise DistributedError("init_process_group: pass either store or init_method")
    timeout = default_pg_timeout if timeout is None else timeout
    if not isinstance(timeout, timedelta):
        timeout = timedelta(seconds=float(timeout))
    if timeout.total_seconds() <= 0:
        raise DistributedError(f"init_process_group: timeout must be positive, got {timeout}")
    engine = get_engine(backend or _default_backend())
    rank = _env_int(_RANK_VARS) if rank is None else rank
    world_size = _env_int(_SIZE_VARS) if world_size is None else world_size
    own = engine.discover()
    if own is not None:
        rank = own[0] if rank is None else rank
        world_size = own[1] if world_size is None else world_size
        if (rank, world_size) != own:
            raise DistributedError(
                f"init_process_group({engine.name!r}): rank {rank} of {world_size} from the "
                f"arguments/environment disagrees with the engine's rank {own[0]} of "
                f"{own[1]}; launch with mpirun -n {world_size}, or unset RANK/WORLD_SIZE")
    if rank is None or world_size is None:
        raise DistributedError(
            "init_process_group: rank and world size are unknown; launch with volta-run "
            "--nproc N, mpirun or srun, or pass rank= and world_size= (or set RANK and "
            "WORLD_SIZE)")
    if not 0 <= rank < world_size:
        raise DistributedError(f"init_process_group: rank {rank} is outside world size "
                               f"{world_size}")
    local = _env_int(_LOCAL_VARS)
    _state.local_rank = (rank if local is None else local)
    if device_id is None:
        _state.device_index = _state.local_rank
    else:
        _state.device_index = device_id if isinstance(device_id, int) else device_id.index
    if engine.needs_store and store is None:
        store = _make_store(init_method or "env://", rank, world_size, timeout)
    try:
        group = engine.new_group(rank, world_size, store, _state.device_index, timeout)
        group.device_types = tuple(engine.device_types)
        group.debug = debug_mode() == "DETAIL"
        group.watchdog = Watchdog(rank, world_size, timeout.total_seconds())
        group.watchdog.start(_sharer(group, store))
        _guard(group)
    except BaseException:
        if store is not None:
            store.close()
        raise
    if not group.interruptible:
        group.watchdog.on_lost = lambda why: _tear_down(group, why)
    _state.group, _state.store, _state.broken = group, store, False
    _install_excepthook()
    if not _state.atexit_set:  # registered after the engine's own (MPI finalize): runs first
        atexit.register(_at_exit)
        _state.atexit_set = True
    log.info("rank %d/%d joined process group (engine %s)", rank, world_size, engine.name)


def debug_mode() -> str:
    """``VOLTA_DISTRIBUTED_DEBUG`` (``OFF``, ``INFO`` or ``DETAIL``, as PyTorch's).

    ``DETAIL`` makes every collective first check, across ranks, that all ranks call
    the same collective with the same shapes and dtypes (one small extra all_gather).
    """
    value = os.environ.get("VOLTA_DISTRIBUTED_DEBUG", "OFF").strip().upper() or "OFF"
    if value not in ("OFF", "INFO", "DETAIL"):
        raise DistributedError(f"VOLTA_DISTRIBUTED_DEBUG={value!r}: expected OFF, INFO or "
                               "DETAIL")
    return value


_COLLECTIVES = ("all_reduce", "broadcast", "all_gather", "reduce_scatter", "barrier",
                "start_all_reduce", "start_all_gather", "start_reduce_scatter")


def _guard(group: ProcessGroup) -> None:
    """Make every collective of ``group`` (from the front-end, DDP or user code) first
    check that no rank is lost, and count it, so a leaving rank's count is comparable."""
    wd = group.watchdog
    for name in _COLLECTIVES:
        run = getattr(group, name)

        def guarded(*args, _run=run, _name=name, **kwargs):
            wd.check(_name)
            out = _run(*args, **kwargs)
            wd.done += 1
            return out

        guarded.__doc__ = run.__doc__
        setattr(group, name, guarded)


def _sharer(group: ProcessGroup, store: Store | None):
    """How rank 0 hands the watchdog's address to the others: the store, else the engine."""
    def share(value: bytes | None) -> bytes:
        if store is None:
            return group.broadcast_bytes(value, 0)
        if value is not None:
            store.set("volta/watchdog", value)
            return value
        return store.get("volta/watchdog")

    return share


def _tear_down(group: ProcessGroup, why: str) -> None:
    """For engines that cannot interrupt a waiting collective (NCCL): end this process."""
    sys.stderr.write(f"[volta.distributed] rank {group.rank}: DistributedError: {why}; "
                     f"engine {group.engine!r} cannot interrupt a waiting collective, so this "
                     "process exits\n")
    sys.stderr.flush()
    try:
        group.abort()
    finally:
        os._exit(1)


def _at_exit() -> None:
    """Leave the group when the interpreter exits without destroy_process_group.

    The other ranks then raise at their next collective instead of waiting forever. A
    rank that raised because a peer was lost exits here, skipping the engine's
    finalisation (MPI_Finalize waits for the lost peer).
    """
    group = _state.group
    if group is not None and group.watchdog is not None:
        group.watchdog.leave()
        _state.broken = _state.broken or group.watchdog.raised
    if _state.broken:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


def _default_backend() -> str:
    from ..backend.device import get_default_device

    return "nccl" if get_default_device().type == "cuda" else "mpi"


def _install_excepthook() -> None:
    """Abort the job when this rank dies of an uncaught exception, so no peer hangs."""
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        group = _state.group
        if group is not None and not issubclass(kind, KeyboardInterrupt):
            sys.stderr.write(f"[volta.distributed] rank {group.rank} failed; aborting the "
                             "job so the other ranks do not wait forever\n")
            sys.stderr.flush()
            group.abort()

    _state.excepthook = previous
    sys.excepthook = hook


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Leave the default process group and release its communicators and store."""
    pg = _state.group if group is None else group
    if pg is None:
        return
    if pg is _state.group:
        store = _state.store
        wd = pg.watchdog
        broken = wd is not None and (wd.raised or wd.failure is not None)
        if wd is not None:
            wd.leave()  # the others now know this rank will join no more collectives
        _state.broken = _state.broken or (wd is not None and wd.raised)
        if store is not None and not broken:
            try:  # rank 0 serves the store: keep it up until every rank is done with it
                store.barrier("destroy", pg.world_size)
            except DistributedError as exc:
                log.warning("destroy_process_group: %s", exc)
        if not broken:  # freeing a communicator with a lost peer can block
            pg.destroy()
        if store is not None:
            store.close()
        if _state.excepthook is not None:
            sys.excepthook = _state.excepthook
        _state.group, _state.store, _state.excepthook = None, None, None
    else:
        pg.destroy()


def is_available() -> bool:
    """Whether distributed support is built in (always True)."""
    return True


def is_initialized() -> bool:
    """Whether :func:`init_process_group` has been called (and not destroyed)."""
    return _state.group is not None


def _group(group: ProcessGroup | None = None) -> ProcessGroup:
    pg = group or _state.group
    if pg is None:
        raise DistributedError("the default process group has not been initialized; call "
                               "volta_core.distributed.init_process_group() first")
    return pg


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (the default group)."""
    return _group(group).rank


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of processes in ``group`` (the default group)."""
    return _group(group).world_size


def get_local_rank() -> int:
    """This process's rank among the processes of its machine (``LOCAL_RANK``)."""
    _group()
    return _state.local_rank


def get_backend(group: ProcessGroup | None = None) -> str:
    """The name of the engine running ``group`` (``"nccl"``, ``"mpi"``, ...)."""
    return _group(group).engine


def get_default_store() -> Store | None:
    """The rendezvous store of the default group (None for engines without one)."""
    _group()
    return _state.store
