"""Subgroups: ``new_group(ranks)`` and the translation between global and group ranks.

As in ``torch.distributed``, every rank of the default group calls :func:`new_group`
with the same ``ranks``, in the same order; members get the new group, the others get
:attr:`GroupMember.NON_GROUP_MEMBER`, a group whose collectives raise. The ``src`` and
``dst`` arguments of ``broadcast``, ``send`` and ``recv`` are global ranks (ranks of the
default group) also with a subgroup, as in PyTorch.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from .engine import DistributedError, ProcessGroup
from .process_group import _group, _state, default_pg_timeout


class _NonMember(ProcessGroup):
    """What :func:`new_group` returns on ranks outside the group."""

    def __init__(self) -> None:
        super().__init__(-1, 0, "none")

    def __getattribute__(self, name: str) -> Any:
        if name in ("all_reduce", "broadcast", "all_gather", "reduce_scatter", "barrier",
                    "send", "recv", "isend", "irecv", "new_subgroup"):
            raise DistributedError(
                f"{name}: this rank is not a member of the group (new_group returned "
                "GroupMember.NON_GROUP_MEMBER here); call collectives of a subgroup only on "
                "its members")
        return super().__getattribute__(name)

    def __repr__(self) -> str:
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    """``GroupMember.WORLD`` (None: the default group) and ``NON_GROUP_MEMBER``."""

    WORLD = None
    NON_GROUP_MEMBER: ProcessGroup = _NonMember()


_tags = [0]  # new_group calls so far: every rank counts the same calls


def new_group(ranks: list[int] | None = None, timeout: timedelta | None = None,
              backend: str | None = None, pg_options: Any = None,
              use_local_synchronization: bool = False) -> ProcessGroup:
    """Create a process group of some ranks of the default group.

    Every rank of the default group must call it with the same ``ranks`` (also those
    outside the new group), in the same order as its other ``new_group`` calls.

    Args:
        ranks: global ranks of the members (all ranks when None); the group's rank
            ``i`` is the ``i``-th smallest of them.
        timeout: how long the rendezvous may wait (default 30 minutes).
        backend: must be None or the default group's engine.
        pg_options, use_local_synchronization: accepted for PyTorch compatibility.

    Returns:
        The new group on its members, ``GroupMember.NON_GROUP_MEMBER`` on other ranks.

    Example:
        >>> evens = dist.new_group([0, 2])      # on every rank
        >>> if dist.get_rank() in (0, 2):
        ...     dist.all_reduce(t, group=evens)
    """
    world = _group()
    if world.ranks is not None:
        raise DistributedError("new_group: the default group is a subgroup; this cannot "
                               "happen unless _state was changed by hand")
    if backend is not None and backend.lower() != world.engine:
        raise DistributedError(f"new_group: backend {backend!r} differs from the default "
                               f"group's engine {world.engine!r}; Volta runs subgroups on "
                               "the default group's engine")
    members = sorted(range(world.world_size) if ranks is None else {int(r) for r in ranks})
    bad = [r for r in members if not 0 <= r < world.world_size]
    if bad or not members:
        raise DistributedError(f"new_group: ranks {ranks} must be a non-empty list of ranks "
                               f"in 0..{world.world_size - 1}; bad: {bad}")
    _tags[0] += 1
    sub = world.new_subgroup(members, _state.store, _tags[0],
                             default_pg_timeout if timeout is None else timeout)
    if sub is None:
        return GroupMember.NON_GROUP_MEMBER
    sub.ranks = members
    sub.device_types = world.device_types
    return sub


def get_group_rank(group: ProcessGroup | None, global_rank: int) -> int:
    """The rank in ``group`` of the default group's rank ``global_rank``."""
    pg = _group(group)
    if pg.ranks is None:
        return global_rank
    try:
        return pg.ranks.index(global_rank)
    except ValueError:
        raise DistributedError(f"rank {global_rank} is not a member of the group "
                               f"{pg.ranks}") from None


def get_global_rank(group: ProcessGroup | None, group_rank: int) -> int:
    """The default group's rank of ``group``'s rank ``group_rank``."""
    pg = _group(group)
    if not 0 <= group_rank < pg.world_size:
        raise DistributedError(f"group rank {group_rank} is outside the group's size "
                               f"{pg.world_size}")
    return group_rank if pg.ranks is None else pg.ranks[group_rank]


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    """The global ranks of ``group``'s members, in group-rank order."""
    pg = _group(group)
    return list(range(pg.world_size)) if pg.ranks is None else list(pg.ranks)
