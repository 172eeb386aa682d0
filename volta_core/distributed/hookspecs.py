"""The hook a communication-engine plugin implements.

An engine distribution registers a module under the entry-point group ``volta.comm``;
that module implements :func:`volta_comm_engines` with ``@volta_core.backend.hookimpl``
(the same ``volta`` marker as backends). Hooks are called with keyword arguments.
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("volta")
hookimpl = pluggy.HookimplMarker("volta")


@hookspec
def volta_comm_engines():
    """Return a list of :class:`volta_core.distributed.CommEngine` instances.

    Creating an engine must be cheap and must not import its communication library
    (mpi4py, NCCL): the library is imported when a process group is created, so a
    missing one is reported by ``unavailable_reason()``, not raised at discovery.
    """
