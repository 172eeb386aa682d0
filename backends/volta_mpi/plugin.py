"""Entry point of the MPI engine (group ``volta.comm``)."""

from volta_core.distributed import hookimpl

from .engine import MpiEngine


@hookimpl
def volta_comm_engines():
    return [MpiEngine()]
