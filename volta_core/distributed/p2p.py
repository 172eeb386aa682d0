"""Point-to-point: ``send``/``recv`` and their non-blocking forms ``isend``/``irecv``.

``dst`` and ``src`` are global ranks (ranks of the default group), also when ``group`` is
a subgroup, as in ``torch.distributed``. A received tensor is overwritten in place.
"""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .collectives import Work, _check, _empty_like, _private, _write
from .engine import DistributedError, ProcessGroup
from .groups import get_group_rank
from .process_group import _group


class _P2PWork(Work):
    """An ``isend``/``irecv`` in flight; ``wait()`` completes it (and fills the tensor)."""

    def __init__(self, handle: Any, finish: Any = None) -> None:
        self._handle = handle
        self._finish = finish
        self._done = handle is None

    def wait(self, timeout: Any = None) -> bool:
        if not self._done:
            self._handle.wait()
            self._done = True
        if self._finish is not None:
            finish, self._finish = self._finish, None
            finish()
        return True

    def is_completed(self) -> bool:
        return self._done


def _peer(pg: ProcessGroup, peer: int, name: str) -> int:
    rank = get_group_rank(pg, peer)
    if not 0 <= rank < pg.world_size:
        raise DistributedError(f"{name}: peer rank {peer} is outside world size "
                               f"{pg.world_size}")
    if rank == pg.rank:
        raise DistributedError(f"{name}: rank {peer} cannot {name} to/from itself")
    return rank


def send(tensor: Tensor, dst: int, group: ProcessGroup | None = None, tag: int = 0) -> None:
    """Send ``tensor`` to rank ``dst``, which calls :func:`recv` with the same shape.

    Args:
        tensor: the values to send.
        dst: the receiving rank (a global rank).
        group: the process group (the default one).
        tag: accepted for PyTorch compatibility; messages between two ranks arrive in
            the order they were sent.
    """
    pg = _group(group)
    _check(pg, "send", [tensor])
    pg.send(_private(tensor), _peer(pg, dst, "send"))


def recv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
         tag: int = 0) -> int:
    """Receive into ``tensor`` (in place) what rank ``src`` sends; returns ``src``.

    ``src=None`` (any sender) is not supported: name the sender.
    """
    pg = _group(group)
    _check(pg, "recv", [tensor])
    if src is None:
        raise DistributedError("recv: src=None (receive from any rank) is not supported; "
                               "pass the sender's rank")
    out = _empty_like(tensor)
    pg.recv(out, _peer(pg, src, "recv"))
    _write(tensor, out)
    return src


def isend(tensor: Tensor, dst: int, group: ProcessGroup | None = None, tag: int = 0) -> Work:
    """Start sending ``tensor`` to ``dst``; ``wait()`` the returned handle before reusing it."""
    pg = _group(group)
    _check(pg, "isend", [tensor])
    return _P2PWork(pg.isend(_private(tensor), _peer(pg, dst, "isend")))


def irecv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0) -> Work:
    """Start receiving into ``tensor`` from ``src``; its values change at ``wait()``."""
    pg = _group(group)
    _check(pg, "irecv", [tensor])
    if src is None:
        raise DistributedError("irecv: src=None (receive from any rank) is not supported; "
                               "pass the sender's rank")
    out = _empty_like(tensor)
    handle = pg.irecv(out, _peer(pg, src, "irecv"))
    return _P2PWork(handle, lambda: _write(tensor, out))
