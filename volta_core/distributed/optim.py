"""``ZeroRedundancyOptimizer``: optimizer state sharded over ranks (ZeRO stage 1).

Used with :class:`~volta_core.nn.parallel.DistributedDataParallel` (which averages the
gradients): each rank keeps an ordinary optimizer (``optimizer_class``) for a partition of
the parameters only, so each rank holds ``1 / world_size`` of the optimizer state. After
every rank has stepped its partition, each rank broadcasts its updated parameters, so all
ranks end the step with the same full model.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..optim.optimizer import Optimizer
from ..tensor import Tensor
from .engine import DistributedError, ProcessGroup


class ZeroRedundancyOptimizer(Optimizer):
    """Wrap ``optimizer_class`` so that each rank keeps the state of its partition only.

    Args:
        params: the parameters (or parameter groups), the same on every rank.
        optimizer_class: the local optimizer, e.g. ``vt.optim.Adam``.
        process_group: the group to shard over (the default group).
        parameters_as_bucket_view, overlap_with_ddp: accepted for PyTorch compatibility
            (``overlap_with_ddp=True`` is not supported).
        **defaults: the local optimizer's hyper-parameters (``lr=...``).

    Parameters are assigned to ranks greedily, largest first, to the rank with the fewest
    elements so far. ``state_dict()`` needs :meth:`consolidate_state_dict` first (a
    collective) and then returns the full state on the rank it was consolidated to; it
    loads into a ``ZeroRedundancyOptimizer`` of any world size.

    Example:
        >>> ddp = DistributedDataParallel(model)
        >>> opt = ZeroRedundancyOptimizer(ddp.parameters(), vt.optim.Adam, lr=1e-3)
        >>> loss_fn(ddp(x), y).backward(); opt.step()
    """

    def __init__(self, params: Iterable[Tensor] | Iterable[dict], optimizer_class: type,
                 process_group: ProcessGroup | None = None,
                 parameters_as_bucket_view: bool = False, overlap_with_ddp: bool = False,
                 **defaults: Any) -> None:
        from .process_group import _group

        if overlap_with_ddp:
            raise NotImplementedError("ZeroRedundancyOptimizer: overlap_with_ddp=True is not "
                                      "supported")
        self.process_group = _group(process_group)
        self.optimizer_class = optimizer_class
        self._local_defaults = dict(defaults)
        super().__init__(params, defaults)
        self._partition()
        self._consolidated: dict[int, dict[str, Any]] | None = None

    def _partition(self) -> None:
        world, rank = self.process_group.world_size, self.process_group.rank
        load = [0] * world
        self._owner: dict[int, int] = {}
        local_groups = []
        for group in self.param_groups:
            for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                r = min(range(world), key=lambda i: (load[i], i))
                self._owner[id(p)] = r
                load[r] += p.numel()
            mine = [p for p in group["params"] if self._owner[id(p)] == rank]
            local_groups.append({**{k: v for k, v in group.items() if k != "params"},
                                 "params": mine})
        self.optim = _LocalOptimizer.build(self.optimizer_class, local_groups,
                                           self._local_defaults)

    def add_param_group(self, param_group: dict) -> None:
        super().add_param_group(param_group)
        if getattr(self, "optim", None) is not None:  # after construction: re-partition
            self._partition()

    def _sync_hyperparameters(self) -> None:
        for group, local in zip(self.param_groups, self.optim.param_groups):
            for k, v in group.items():
                if k != "params":
                    local[k] = v

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Step this rank's partition, then broadcast every partition from its owner."""
        self._sync_hyperparameters()
        loss = self.optim.step(closure)
        self._broadcast_params()
        return loss

    def _broadcast_params(self) -> None:
        from .collectives import _write

        pg = self.process_group
        if pg.world_size == 1:
            return
        for r in range(pg.world_size):
            owned = [p for g in self.param_groups for p in g["params"] if self._owner[id(p)] == r]
            by_dtype: dict[Any, list[Tensor]] = {}
            for p in owned:
                by_dtype.setdefault(p.dtype, []).append(p)
            for tensors in by_dtype.values():
                xp = tensors[0].device.xp
                flat = xp.concat([xp.reshape(t.array, (-1,)) for t in tensors])
                pg.broadcast(flat, r)
                offset = 0
                for t in tensors:
                    n = t.numel()
                    if r != pg.rank:
                        _write(t, flat[offset:offset + n])
                    offset += n

    def zero_grad(self, set_to_none: bool = True) -> None:
        super().zero_grad(set_to_none)

    @property
    def state(self) -> Any:  # the local optimizer's state (this rank's partition)
        optim = self.__dict__.get("optim")
        return self.__dict__.get("_base_state") if optim is None else optim.state

    @state.setter
    def state(self, value: Any) -> None:
        self.__dict__["_base_state"] = value

    # -- state dicts -----------------------------------------------------------------------
    def _indices(self) -> dict[int, int]:
        index: dict[int, int] = {}
        for group in self.param_groups:
            for p in group["params"]:
                index.setdefault(id(p), len(index))
        return index

    def consolidate_state_dict(self, to: int = 0) -> None:
        """Collect every rank's partition state on rank ``to`` (a collective)."""
        from .collectives import all_gather_object

        index = self._indices()
        local = {}
        for p, s in self.optim.state.items():
            local[index[id(p)]] = {k: _to_host(v) for k, v in s.items()}
        everyone: list[Any] = [None] * self.process_group.world_size
        all_gather_object(everyone, local, group=self.process_group)
        merged: dict[int, dict[str, Any]] = {}
        for part in everyone:
            merged.update(part)
        self._consolidated = merged if self.process_group.rank == to else None
        self._consolidated_to = to

    def state_dict(self) -> dict[str, Any]:
        """The full optimizer state (after :meth:`consolidate_state_dict`, on its rank)."""
        if self._consolidated is None:
            raise DistributedError(
                "ZeroRedundancyOptimizer.state_dict: call consolidate_state_dict(to=r) on "
                "every rank first, then state_dict() on rank r")
        groups = []
        index = self._indices()
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        dev = self.param_groups[0]["params"][0].device
        state = {i: {k: _from_host(v, dev) for k, v in s.items()}
                 for i, s in sorted(self._consolidated.items())}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a full state (from :meth:`state_dict` or a plain optimizer's) and keep the
        entries of this rank's partition."""
        full = Optimizer.__new__(Optimizer)
        full.defaults, full.param_groups = self.defaults, self.param_groups
        full.state = {}
        Optimizer.load_state_dict(full, state_dict)  # checks groups, casts to devices
        for group, local in zip(self.param_groups, self.optim.param_groups):
            for k, v in group.items():
                if k != "params":
                    local[k] = v
        mine = {id(p) for g in self.optim.param_groups for p in g["params"]}
        self.optim.state.clear()
        for p, s in full.state.items():
            if id(p) in mine:
                self.optim.state[p] = s


class _LocalOptimizer:
    """Builds the per-rank optimizer, tolerating groups that are empty on this rank."""

    @staticmethod
    def build(cls: type, groups: list[dict], defaults: dict) -> Optimizer:
        nonempty = [g for g in groups if g["params"]]
        # a rank that owns nothing gets a placeholder that is never stepped
        opt = cls(nonempty, **defaults) if nonempty else _Empty(defaults)
        # keep one local group per global group so hyper-parameters line up by position
        full = []
        it = iter(opt.param_groups)
        for g in groups:
            full.append(next(it) if g["params"] else {**defaults, **g})
        opt.param_groups = full
        return opt


class _Empty(Optimizer):
    """The local optimizer of a rank that owns no parameters."""

    def __init__(self, defaults: dict) -> None:
        self.defaults = dict(defaults)
        self.param_groups = []
        from collections import defaultdict

        self.state = defaultdict(dict)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        return closure() if closure is not None else None


def _to_host(v: Any) -> Any:
    if isinstance(v, Tensor):
        return ("tensor", v.device.backend.to_host(v.detach().array))
    return v


def _from_host(v: Any, dev: Any) -> Any:
    if isinstance(v, tuple) and len(v) == 2 and v[0] == "tensor":
        array = v[1]
        return Tensor._make(dev.backend.from_host(array, dev.index), dev)
    return v


__all__ = ["ZeroRedundancyOptimizer"]
