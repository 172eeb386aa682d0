"""Distributed training: process groups and collectives over pluggable engines.

``import volta_core.distributed as dist`` mirrors ``torch.distributed``::

    dist.init_process_group("nccl")          # or "mpi" for CPU tensors
    dist.all_reduce(t, op=dist.ReduceOp.SUM)

Engines (``"nccl"`` through CuPy, ``"mpi"`` through mpi4py, or any third-party one)
are plugins of the entry-point group ``volta.comm``; :func:`engines` lists them.
Launch jobs with ``volta-run --nproc N script.py``, ``mpirun`` or ``srun``
(see docs/distributed.md).

Submodules: :mod:`.fsdp` (``FullyShardedDataParallel``), :mod:`.optim`
(``ZeroRedundancyOptimizer``), :mod:`.checkpoint` (sharded checkpoints), :mod:`.wrap`
(auto-wrap policies); ``vt.distributed.fsdp`` etc. load on first use.
"""

from .collectives import (
    Work,
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    barrier,
    broadcast,
    broadcast_object_list,
    reduce_scatter,
    reduce_scatter_tensor,
)
from .engine import CommEngine, DistributedError, PendingWork, ProcessGroup, ReduceOp
from .groups import (
    GroupMember,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    new_group,
)
from .hookspecs import hookimpl
from .p2p import irecv, isend, recv, send
from .process_group import (
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_default_store,
    get_local_rank,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
)
from .registry import (
    EngineInfo,
    engines,
    get_engine,
    is_engine_available,
    register_engine_plugin,
    unregister_engine_plugin,
)
from .store import FileStore, Store, TCPStore


def is_nccl_available() -> bool:
    """Whether the NCCL engine is installed and can run here."""
    return is_engine_available("nccl")


def is_mpi_available() -> bool:
    """Whether the MPI engine is installed and can run here."""
    return is_engine_available("mpi")


__all__ = [
    "init_process_group", "destroy_process_group", "is_available", "is_initialized",
    "get_rank", "get_world_size", "get_local_rank", "get_backend", "get_default_store",
    "all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "reduce_scatter",
    "reduce_scatter_tensor", "barrier", "Work", "ReduceOp", "ProcessGroup", "CommEngine",
    "DistributedError", "hookimpl", "engines", "EngineInfo", "get_engine",
    "is_engine_available", "is_nccl_available", "is_mpi_available", "register_engine_plugin",
    "unregister_engine_plugin", "Store", "TCPStore", "FileStore", "default_pg_timeout",
    "all_gather_object", "broadcast_object_list", "new_group", "GroupMember",
    "get_group_rank", "get_global_rank", "get_process_group_ranks", "send", "recv", "isend",
    "irecv", "PendingWork",
]


def __getattr__(name: str):
    # submodules loaded on first use: vt.distributed.fsdp.FSDP, .optim, .checkpoint, .wrap
    if name in ("fsdp", "optim", "checkpoint", "wrap"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
