"""``FullyShardedDataParallel``: parameters, gradients and optimizer state sharded over ranks.

Each wrapped *unit* (the module given to ``FullyShardedDataParallel``, and every submodule
its ``auto_wrap_policy`` picks or that is wrapped by hand) flattens the parameters it owns
into one 1-d array, pads it to a multiple of the world size and keeps only this rank's
equal share of it: ``flat_param``, a Parameter of ``numel / world_size`` elements. That is
all the optimizer sees, so its state is sharded too (ZeRO stage 3).

For forward, a unit all-gathers its flat parameter and points its modules' original
parameter names at views of the gathered array; after its forward the gathered array is
freed (``reshard_after_forward``; the root unit keeps it for the backward that follows).
Before the unit's backward, a hook on its outputs all-gathers it again (and, with
``backward_prefetch``, the unit that ran before it in forward); each parameter's gradient is
copied into the unit's flat gradient buffer as soon as it is final, and once all have come
the gathered parameters are freed and the buffer's reduce-scatter (average) into
``flat_param.grad`` is *started*. On engines that overlap (NCCL on its own stream) the
reduce-scatter runs while backward goes on; it is waited for (and its unsharded buffer
freed) before the next unit gathers its parameters or allocates its buffer, so at most one
unit's unsharded parameters and gradients exist at a time. A callback at the end of
backward handles units some of whose parameters got no gradient and waits for the last
reduce-scatter.

The gathered parameters are leaf tensors that keep their identity from step to step (they
take the original parameters' places in the modules' ``_parameters``, but
``fsdp.parameters()`` lists only the flat shards); only their values are swapped in and
out. Autograd saves them by reference, so freeing them
after forward releases the memory and re-gathering them before backward brings the values
back (PyTorch resizes storages for the same effect).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..autograd.grad_mode import is_grad_enabled, no_grad
from ..dtypes import DType, get_dtype
from ..errors import DeviceError, DTypeError
from ..nn.module import Module
from ..nn.parameter import Parameter
from ..tensor import Tensor
from .engine import DistributedError, ProcessGroup, ReduceOp
from .wrap import (
    ModuleWrapPolicy,
    _wrap_children,
    size_based_auto_wrap_policy,
    transformer_auto_wrap_policy,
)

_WRAPPED = "_fsdp_wrapped_module"


class ShardingStrategy(enum.Enum):
    """``FULL_SHARD`` frees gathered parameters after forward; ``SHARD_GRAD_OP`` keeps them
    until backward is done (less communication, more memory)."""

    FULL_SHARD = 1
    SHARD_GRAD_OP = 2


class BackwardPrefetch(enum.Enum):
    """When to all-gather the next unit's parameters in backward (``BACKWARD_PRE``: when
    the current unit's backward starts)."""

    BACKWARD_PRE = 1
    BACKWARD_POST = 2


@dataclass
class MixedPrecision:
    """Dtypes of the gathered parameters and of the gradient reduction.

    Args:
        param_dtype: dtype of the parameters used in forward and backward (the shards,
            which the optimizer updates, keep the original dtype).
        reduce_dtype: dtype in which gradients are reduce-scattered (``param_dtype``
            when None).
        buffer_dtype: dtype buffers are cast to once, at wrap time.
    """

    param_dtype: Any = None
    reduce_dtype: Any = None
    buffer_dtype: Any = None


# -- the unit -------------------------------------------------------------------------------

class _Entry:
    """One original parameter inside a unit's flat parameter."""

    __slots__ = ("fqn", "owners", "shape", "numel", "offset", "requires_grad")

    def __init__(self, fqn: str, owners: list[tuple[Module, str]], shape: tuple[int, ...],
                 numel: int, offset: int, requires_grad: bool) -> None:
        self.fqn, self.owners, self.shape = fqn, owners, shape
        self.numel, self.offset, self.requires_grad = numel, offset, requires_grad


def _unit_modules(module: Module, prefix: str = "") -> Iterator[tuple[str, Module]]:
    """``(name, module)`` for ``module`` and its descendants, not entering nested units."""
    yield prefix, module
    for name, child in module._modules.items():
        if child is None or isinstance(child, FullyShardedDataParallel):
            continue
        yield from _unit_modules(child, f"{prefix}.{name}" if prefix else name)


def clean_name(name: str) -> str:
    """A parameter name without the ``_fsdp_wrapped_module.`` segments FSDP inserts."""
    return ".".join(part for part in name.split(".") if part != _WRAPPED)


def _as_dtype(dtype: Any) -> DType | None:
    return None if dtype is None else get_dtype(dtype)


class FullyShardedDataParallel(Module):
    """Shard a module's parameters, gradients and optimizer state across ranks.

    Args:
        module: the model (or submodule) to wrap, on this rank's device.
        process_group: the group to shard over (the default group).
        sharding_strategy: ``FULL_SHARD`` (default) or ``SHARD_GRAD_OP``.
        auto_wrap_policy: a callable ``policy(module, recurse, nonwrapped_numel)``, a
            :class:`ModuleWrapPolicy`, or a set of module classes; the submodules it picks
            become units of their own (wrapped bottom-up, before this one).
        backward_prefetch: ``BACKWARD_PRE`` also starts, when a unit's backward starts,
            the all-gather of the unit whose backward comes next (on NCCL it runs on the
            communication stream, beside this unit's backward). Off (None) by default,
            unlike PyTorch: it holds a second unit's parameters, which the memory bound
            of one gathered unit per GPU does not allow for.
        mixed_precision: a :class:`MixedPrecision` (parameter / reduction dtypes).
        device_id: the device to move ``module`` to before sharding.
        sync_module_states: broadcast rank 0's parameters and buffers first (use it when
            ranks initialise their models differently).
        forward_prefetch, limit_all_gathers, use_orig_params, ignored_modules: accepted
            for PyTorch compatibility; ``use_orig_params=True`` is not supported.

    The optimizer must be built over ``fsdp.parameters()`` *after* wrapping: they are the
    flat shards. :meth:`state_dict` returns the full, unsharded state dict with the
    original parameter names (a collective: every rank calls it); see
    :mod:`volta_core.distributed.checkpoint` for sharded checkpoints.

    Example:
        >>> dist.init_process_group("nccl")
        >>> policy = ModuleWrapPolicy({nn.TransformerEncoderLayer})
        >>> model = FullyShardedDataParallel(Net().cuda(), auto_wrap_policy=policy)
        >>> opt = vt.optim.AdamW(model.parameters(), lr=1e-3)
        >>> loss_fn(model(x), y).backward()   # gradients reduce-scattered into the shards
        >>> opt.step()                        # each rank updates its shard
    """

    def __init__(self, module: Module, process_group: ProcessGroup | None = None,
                 sharding_strategy: ShardingStrategy | None = None,
                 auto_wrap_policy: Any = None,
                 backward_prefetch: BackwardPrefetch | None = None,
                 mixed_precision: MixedPrecision | None = None, device_id: Any = None,
                 sync_module_states: bool = False, forward_prefetch: bool = False,
                 limit_all_gathers: bool = True, use_orig_params: bool = False,
                 ignored_modules: Any = None) -> None:
        from .process_group import _group

        if use_orig_params:
            raise NotImplementedError("FullyShardedDataParallel: use_orig_params=True is not "
                                      "supported; optimize fsdp.parameters() (flat shards)")
        if isinstance(module, FullyShardedDataParallel):
            raise ValueError("FullyShardedDataParallel: the module is already wrapped")
        super().__init__()
        pg = _group(process_group)
        if device_id is not None:
            from ..backend.device import device

            module = module.to(device(device_id) if not isinstance(device_id, int) else
                               _device_of_index(pg, device_id))
        sa = object.__setattr__
        sa(self, "process_group", pg)
        sa(self, "sharding_strategy", sharding_strategy or ShardingStrategy.FULL_SHARD)
        sa(self, "backward_prefetch", backward_prefetch)
        sa(self, "mixed_precision", mixed_precision or MixedPrecision())
        kwargs = dict(process_group=pg, sharding_strategy=self.sharding_strategy,
                      backward_prefetch=backward_prefetch, mixed_precision=mixed_precision,
                      sync_module_states=sync_module_states)
        if auto_wrap_policy is not None:
            if isinstance(auto_wrap_policy, (set, frozenset, list, tuple)):
                auto_wrap_policy = ModuleWrapPolicy(auto_wrap_policy)
            _wrap_children(module, auto_wrap_policy, kwargs)
        self.add_module(_WRAPPED, module)
        self._build_flat_param(sync_module_states)
        # set by the root on its first forward
        sa(self, "_is_root", None)
        sa(self, "_root", None)
        sa(self, "_units", [])
        sa(self, "_order", [])
        sa(self, "_recording", False)
        sa(self, "_queued", False)
        sa(self, "_sync_grads", True)
        sa(self, "_rs_pending", None)  # root only: the started reduce-scatter

    # -- construction --------------------------------------------------------------------
    def _build_flat_param(self, sync: bool) -> None:
        sa = object.__setattr__
        module = self._fsdp_wrapped_module
        pg = self.process_group
        entries: list[_Entry] = []
        by_id: dict[int, _Entry] = {}
        params: list[Tensor] = []
        for prefix, mod in _unit_modules(module):
            for name, p in list(mod._parameters.items()):
                if p is None:
                    continue
                fqn = f"{prefix}.{name}" if prefix else name
                entry = by_id.get(id(p))
                if entry is not None:  # a parameter shared by two modules of the unit
                    entry.owners.append((mod, name))
                    continue
                offset = entries[-1].offset + entries[-1].numel if entries else 0
                entry = _Entry(fqn, [(mod, name)], tuple(p.shape), p.numel(), offset,
                               p.requires_grad)
                entries.append(entry)
                by_id[id(p)] = entry
                params.append(p)
        _check_uniform(params, [e.fqn for e in entries])
        world = pg.world_size
        numel = sum(e.numel for e in entries)
        shard = -(-numel // world) if numel else 0
        sa(self, "_entries", entries)
        sa(self, "_numel", numel)
        sa(self, "_shard_numel", shard)
        buffers = [b for _, m in _unit_modules(module) for b in m._buffers.values()
                   if b is not None]
        bdt = _as_dtype(self.mixed_precision.buffer_dtype)
        if bdt is not None:
            for _, m in _unit_modules(module):
                for k, b in m._buffers.items():
                    if b is not None and b.dtype.is_floating_point:
                        m._buffers[k] = b.to(bdt)
            buffers = [b for _, m in _unit_modules(module) for b in m._buffers.values()
                       if b is not None]
        if sync and world > 1 and buffers:
            from .collectives import broadcast

            for b in buffers:
                broadcast(b, pg.ranks[0] if pg.ranks else 0, group=pg)
        if not entries:
            sa(self, "_views", [])
            sa(self, "_dev", None)
            sa(self, "_full", None)
            return
        dev = params[0].device
        xp = dev.xp
        dtype = params[0].array.dtype
        parts = [xp.reshape(p.array, (-1,)) for p in params]
        pad = shard * world - numel
        if pad:
            parts.append(xp.zeros((pad,), dtype=dtype, device=dev.native))
        flat = xp.concat(parts)
        if sync and world > 1:
            pg.broadcast(flat, 0)
        mine = xp.asarray(flat[pg.rank * shard:(pg.rank + 1) * shard], copy=True)
        flat_param = Parameter(Tensor._make(mine, dev), requires_grad=entries[0].requires_grad)
        self.register_parameter("_flat_param", flat_param)
        sa(self, "_dev", dev)
        empty = xp.empty((0,), dtype=self._compute_dtype(dev, dtype), device=dev.native)
        sa(self, "_empty", empty)
        views = []
        for i, e in enumerate(entries):
            v = Tensor._make(empty, dev, e.requires_grad)
            if e.requires_grad:
                v.register_post_accumulate_grad_hook(self._make_grad_hook(i))
            for mod, name in e.owners:  # layers read self._parameters directly
                mod._parameters[name] = v
            views.append(v)
        sa(self, "_views", views)
        sa(self, "_full", None)
        sa(self, "_full_src", None)
        sa(self, "_got", set())
        sa(self, "_gflat", None)
        sa(self, "_pre_backward_done", False)
        sa(self, "_gather_work", None)  # a started (prefetched) all-gather

    def _compute_dtype(self, dev: Any, dtype: Any) -> Any:
        pdt = _as_dtype(self.mixed_precision.param_dtype)
        return dtype if pdt is None else dev.native_dtype(pdt)

    @property
    def flat_param(self) -> Tensor | None:
        """This rank's shard of the unit's flattened parameters (None for an empty unit)."""
        return self._parameters.get("_flat_param")

    @property
    def module(self) -> Module:
        """The wrapped module."""
        return self._fsdp_wrapped_module

    def _named_members(self, store: str, prefix: str, recurse: bool,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        members = super()._named_members(store, prefix, recurse, remove_duplicate)
        if store != "_parameters":
            return members
        # the gathered views sit in the modules' _parameters but are not parameters
        views = {id(v) for m in self.modules() if isinstance(m, FullyShardedDataParallel)
                 for v in m.__dict__.get("_views", ())}
        return ((n, p) for n, p in members if id(p) not in views)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            wrapped = self.__dict__["_modules"].get(_WRAPPED)
            if wrapped is None:
                raise
            return getattr(wrapped, name)

    # -- gathering and freeing -----------------------------------------------------------
    def _unshard(self, wait: bool = True) -> None:
        """All-gather the flat parameter and point the original names at its pieces.

        ``wait=False`` (prefetch) only starts the all-gather; the next ``_unshard()``
        waits for it.
        """
        fp = self.flat_param
        if fp is None:
            return
        src = (id(fp.array), fp._version[0])
        if self._full is not None and self._full_src == src:
            if wait:
                self._wait_gather()
            return
        dev, pg = self._dev, self.process_group
        xp = dev.xp
        shard = fp.array
        want = self._empty.dtype
        if shard.dtype != want:
            shard = xp.astype(shard, want)
        if pg.world_size > 1:
            if self._root is not None:  # in backward: the previous unit's unsharded
                self._root._finish_reduce()  # gradients go before these parameters come
            full = xp.empty((self._shard_numel * pg.world_size,), dtype=want, device=dev.native)
            object.__setattr__(self, "_gather_work", pg.start_all_gather(full, shard))
            if wait:
                self._wait_gather()
        else:
            full = xp.asarray(shard, copy=True)
        for e, v in zip(self._entries, self._views):
            v._data = xp.reshape(full[e.offset:e.offset + e.numel], e.shape)
        object.__setattr__(self, "_full", full)
        object.__setattr__(self, "_full_src", src)

    def _wait_gather(self) -> None:
        work = self._gather_work
        if work is not None:
            object.__setattr__(self, "_gather_work", None)
            work.wait()

    def _reshard(self) -> None:
        """Free the gathered parameters (the views keep their identity, not their values)."""
        if self._full is None:
            return
        self._wait_gather()  # a prefetch never used: its buffer may not be reused before
        for v in self._views:
            v._data = self._empty
        object.__setattr__(self, "_full", None)
        object.__setattr__(self, "_full_src", None)

    # -- forward -------------------------------------------------------------------------
    def _lazy_init(self) -> None:
        """Called on the first forward of the outermost unit: it becomes the root."""
        units = [m for m in self.modules() if isinstance(m, FullyShardedDataParallel)]
        sa = object.__setattr__
        for u in units:
            sa(u, "_is_root", u is self)
            sa(u, "_root", self)
        sa(self, "_units", units)
        sa(self, "_recording", True)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if self._is_root is None:
            self._lazy_init()
        root = self._root
        grad = is_grad_enabled()
        if self._is_root and grad:
            for u in self._units:  # the previous backward's callback has run
                object.__setattr__(u, "_pre_backward_done", False)
        if root._recording and self not in root._order:
            root._order.append(self)
        self._unshard()
        pdt = _as_dtype(self.mixed_precision.param_dtype)
        if pdt is not None:  # floating inputs follow the parameters' dtype, as in PyTorch
            args, kwargs = _cast_inputs(args, pdt), _cast_inputs(kwargs, pdt)
        out = self._fsdp_wrapped_module(*args, **kwargs)
        if self._is_root:
            object.__setattr__(self, "_recording", False)
        if grad and self.flat_param is not None:  # frozen units too: backward reads them
            for t in _tensors(out):
                if t.requires_grad and t.grad_fn is not None:
                    t.register_hook(self._pre_backward)
        keep = (self._is_root or self.sharding_strategy is ShardingStrategy.SHARD_GRAD_OP)
        if not grad or not keep:
            self._reshard()
        if not grad and self._is_root:
            for u in self._units:
                u._reshard()
        return out

    # -- backward ------------------------------------------------------------------------
    def _pre_backward(self, grad: Tensor) -> None:
        if self._pre_backward_done:
            return None
        object.__setattr__(self, "_pre_backward_done", True)
        root = self._root
        if not root._queued:
            from ..autograd.engine import queue_callback
            from ..errors import AutogradError

            try:
                queue_callback(root._finish_backward)
                object.__setattr__(root, "_queued", True)
            except AutogradError:  # vt.autograd.grad: no .grad, nothing to reduce at the end
                pass
        self._unshard()
        if self.backward_prefetch is not None and self in root._order:
            i = root._order.index(self)
            if i > 0:
                root._order[i - 1]._unshard(wait=False)
        return None

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Accumulate gradients locally, unsharded, for backward passes run inside.

        Each unit keeps the full gradients of its parameters (memory of an unsharded
        model's gradients); the first backward after the block reduce-scatters the sum.
        Call it on the root (the outermost) FSDP module.
        """
        root = self._root if self._root is not None else self
        old = root._sync_grads
        object.__setattr__(root, "_sync_grads", False)
        try:
            yield
        finally:
            object.__setattr__(root, "_sync_grads", old)

    def _make_grad_hook(self, index: int) -> Callable[[Tensor], None]:
        def hook(view: Tensor) -> None:
            if not self._root._sync_grads:
                return  # no_sync: the gradient stays in view.grad, unsharded
            if not self._is_root:
                self._stash(index)
            # the root's gradients come at both ends of backward (output layer first,
            # embedding last): they stay in view.grad until it reduces, instead of a
            # whole-unit buffer held all through backward
            got = self._got
            got.add(index)
            if len(got) == self._n_grads():
                self._reduce_grads()

        return hook

    def _stash(self, index: int) -> None:
        """Copy parameter ``index``'s gradient into the unit's flat gradient buffer and
        drop it, so a unit's unsharded gradients take one buffer, not two."""
        v, e = self._views[index], self._entries[index]
        xp, buf = self._dev.xp, self._grad_buffer()
        g = xp.reshape(v.grad.array, (-1,))
        if g.dtype != buf.dtype:
            g = xp.astype(g, buf.dtype)
        buf[e.offset:e.offset + e.numel] = g
        v.grad = None

    def _grad_buffer(self) -> Any:
        """The unit's padded flat gradient (zeros where no gradient came, and padding)."""
        if self._gflat is None:
            self._root._finish_reduce()  # the previous unit's buffer goes first
            object.__setattr__(self, "_gflat", self._dev.xp.zeros(
                (self._shard_numel * self.process_group.world_size,), dtype=self._empty.dtype,
                device=self._dev.native))
        return self._gflat

    def _n_grads(self) -> int:
        return sum(1 for e in self._entries if e.requires_grad)

    def _reduce_grads(self) -> None:
        """Start the reduce-scatter (average) of the unit's gradients into
        ``flat_param.grad``; :meth:`_finish_reduce` completes it."""
        dev, pg = self._dev, self.process_group
        xp = dev.xp
        for i, v in enumerate(self._views):
            if v.grad is not None:  # accumulated under no_sync and not stashed in this pass
                self._stash(i)
        flat = self._grad_buffer()
        object.__setattr__(self, "_gflat", None)
        root = self._root
        root._finish_reduce()  # one reduce-scatter in flight at a time
        self._got.clear()
        if not self._is_root:  # all its gradients are in: the gathered parameters go before
            self._reshard()    # the reduction allocates anything
        world, shard = pg.world_size, self._shard_numel
        rdt = _as_dtype(self.mixed_precision.reduce_dtype)
        if rdt is not None:
            flat = xp.astype(flat, dev.native_dtype(rdt))
        if world > 1:
            out = xp.empty((shard,), dtype=flat.dtype, device=dev.native)
            op = ReduceOp.AVG if pg.native_avg else ReduceOp.SUM
            work = pg.start_reduce_scatter(out, flat, op)
        else:
            out, work = flat, None
        object.__setattr__(root, "_rs_pending", (self, work, out))
        if not root._queued:  # no end-of-backward callback (vt.autograd.grad): finish now
            root._finish_reduce()

    def _finish_reduce(self) -> None:
        """Root only: wait for the started reduce-scatter and add its shard to the grad.

        Its unsharded input buffer is released here, after the wait, so the memory is
        not reused while the collective may still read it.
        """
        pending = self._rs_pending
        if pending is None:
            return
        object.__setattr__(self, "_rs_pending", None)
        unit, work, out = pending
        if work is not None:
            work.wait()
        pg, fp = unit.process_group, unit.flat_param
        if pg.world_size > 1 and not pg.native_avg:
            out = out * (1.0 / pg.world_size)
        out = unit._dev.xp.astype(out, fp.array.dtype, copy=False)
        new = Tensor._make(out, unit._dev)
        fp.grad = new if fp.grad is None else fp.grad + new

    def _finish_backward(self) -> None:
        """End of backward (root only): reduce partial units, free everything."""
        for u in self._units:
            if u.flat_param is not None and u._got:
                u._reduce_grads()
        self._finish_reduce()
        for u in self._units:
            u._reshard()
            object.__setattr__(u, "_pre_backward_done", False)
        object.__setattr__(self, "_queued", False)

    # -- utilities -----------------------------------------------------------------------
    def clip_grad_norm_(self, max_norm: float, norm_type: float = 2.0) -> Tensor:
        """Clip the gradients of all shards by their global norm; returns the norm."""
        from .collectives import all_reduce

        grads = [p.grad for p in self.parameters() if p.grad is not None]
        if not grads:
            return Tensor._make(self._dev.xp.asarray(0.0), self._dev)
        norm_type = float(norm_type)
        if norm_type == float("inf"):
            local = max(float(g.abs().max().item()) for g in grads)
            total = Tensor._make(grads[0].device.xp.asarray([local]), grads[0].device)
            all_reduce(total, ReduceOp.MAX, group=self.process_group)
            total = total[0]
        else:
            local = sum((g.abs() ** norm_type).sum() for g in grads).reshape(1)
            all_reduce(local, group=self.process_group)
            total = local[0] ** (1.0 / norm_type)
        scale = max_norm / (float(total.item()) + 1e-6)
        if scale < 1.0:
            for g in grads:
                g.array = g.array * scale
        return total

    # -- state dicts (full, unsharded) ---------------------------------------------------
    def _unit_prefixes(self) -> list[tuple[str, FullyShardedDataParallel]]:
        out = []
        for name, m in self.named_modules():
            if isinstance(m, FullyShardedDataParallel):
                out.append((clean_name(name), m))
        return out

    def _gather_full_flat(self) -> Any:
        """The unit's unpadded flat parameter in its original dtype (a collective)."""
        fp, pg, dev = self.flat_param, self.process_group, self._dev
        xp = dev.xp
        if pg.world_size == 1:
            return xp.asarray(fp.array[:self._numel], copy=True)
        full = xp.empty((self._shard_numel * pg.world_size,), dtype=fp.array.dtype,
                        device=dev.native)
        pg.all_gather(full, fp.array)
        return full[:self._numel]

    def state_dict(self, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Tensor]:
        """The full state dict, with the original names (a collective over the group).

        Every rank gets every parameter, unsharded; buffers are this rank's. Load it into
        the unwrapped model, or into an FSDP model of any world size with
        :meth:`load_state_dict`.
        """
        out = {} if destination is None else destination
        for unit_prefix, unit in self._unit_prefixes():
            if unit.flat_param is None:
                continue
            flat = unit._gather_full_flat()
            xp = unit._dev.xp
            for e in unit._entries:
                name = f"{unit_prefix}.{e.fqn}" if unit_prefix else e.fqn
                array = xp.reshape(flat[e.offset:e.offset + e.numel], e.shape)
                out[prefix + name] = Tensor._make(xp.asarray(array, copy=True), unit._dev)
        for name, b in self.named_buffers():
            short = name.rsplit(".", 1)
            owner = self.get_submodule(short[0]) if len(short) > 1 else self
            if short[-1] in owner._non_persistent_buffers_set:
                continue
            out[prefix + clean_name(name)] = b if keep_vars else b.detach()
        return out

    def load_state_dict(self, state_dict: dict[str, Tensor], strict: bool = True) -> Any:
        """Load a full state dict (original names) into the shards and the buffers."""
        from ..nn.module import IncompatibleKeys, StateDictError

        expected: set[str] = set()
        missing: list[str] = []
        for unit_prefix, unit in self._unit_prefixes():
            if unit.flat_param is None:
                continue
            xp, dev, fp = unit._dev.xp, unit._dev, unit.flat_param
            shard, rank = unit._shard_numel, unit.process_group.rank
            lo, hi = rank * shard, (rank + 1) * shard
            pieces = []
            for e in unit._entries:
                name = f"{unit_prefix}.{e.fqn}" if unit_prefix else e.fqn
                expected.add(name)
                start, stop = max(lo, e.offset), min(hi, e.offset + e.numel)
                if start >= stop:
                    continue
                t = state_dict.get(name)
                if t is None:
                    missing.append(name)
                    continue
                if tuple(t.shape) != e.shape:
                    raise StateDictError(f"FullyShardedDataParallel.load_state_dict: {name} "
                                         f"has shape {tuple(t.shape)}, expected {e.shape}")
                src = t.to(dev).detach().array
                piece = xp.reshape(src, (-1,))[start - e.offset:stop - e.offset]
                pieces.append(xp.astype(piece, fp.array.dtype))
            used = sum(p.shape[0] for p in pieces)
            if used < shard:
                pieces.append(xp.zeros((shard - used,), dtype=fp.array.dtype,
                                       device=dev.native))
            if not missing:
                with no_grad():
                    fp.array = xp.concat(pieces) if pieces else fp.array
                    fp._version[0] += 1
            unit._reshard()
        for name, b in self.named_buffers():
            key = clean_name(name)
            expected.add(key)
            if key in state_dict:
                b.array = state_dict[key].to(b.device).to(b.dtype).detach().array
                b._version[0] += 1
        unexpected = sorted(k for k in state_dict if k not in expected)
        missing += [k for k in sorted(expected) if k not in state_dict and k not in missing
                    and not _is_non_persistent(self, k)]
        if strict and (missing or unexpected):
            raise StateDictError("FullyShardedDataParallel.load_state_dict: "
                                 f"missing keys {sorted(set(missing))}, unexpected keys "
                                 f"{unexpected}")
        return IncompatibleKeys(sorted(set(missing)), unexpected)

    def extra_repr(self) -> str:
        return (f"world_size={self.process_group.world_size}, numel={self._numel}, "
                f"shard={self._shard_numel}")


FSDP = FullyShardedDataParallel


def _is_non_persistent(model: Module, clean: str) -> bool:
    for name, m in model.named_modules():
        prefix = clean_name(name)
        for b in m._non_persistent_buffers_set:
            if (f"{prefix}.{b}" if prefix else b) == clean:
                return True
    return False


def _device_of_index(pg: ProcessGroup, index: int) -> Any:
    from ..backend.device import device

    return device(f"cuda:{index}" if "cuda" in pg.device_types else "cpu")


def _check_uniform(params: list[Tensor], names: list[str]) -> None:
    if not params:
        return
    devices = {str(p.device) for p in params}
    if len(devices) > 1:
        raise DeviceError(f"FullyShardedDataParallel: a unit's parameters are on "
                          f"{sorted(devices)}; move the module to one device first")
    dtypes = {p.dtype.name for p in params}
    if len(dtypes) > 1:
        raise DTypeError(f"FullyShardedDataParallel: a unit's parameters have dtypes "
                         f"{sorted(dtypes)} ({', '.join(names)}); one flat parameter needs "
                         "one dtype: convert the module (module.float()) or wrap the "
                         "differing submodules as units of their own")
    flags = {p.requires_grad for p in params}
    if len(flags) > 1:
        frozen = [n for n, p in zip(names, params) if not p.requires_grad]
        raise DistributedError(f"FullyShardedDataParallel: a unit mixes frozen parameters "
                               f"{frozen} with trainable ones; wrap the frozen submodules as "
                               "units of their own")


def _cast_inputs(obj: Any, dtype: DType) -> Any:
    if isinstance(obj, Tensor):
        return obj.to(dtype) if obj.dtype.is_floating_point and obj.dtype != dtype else obj
    if isinstance(obj, dict):
        return {k: _cast_inputs(v, dtype) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_cast_inputs(v, dtype) for v in obj)
    return obj


def _tensors(obj: Any) -> Iterator[Tensor]:
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, Tensor):
            yield o
        elif isinstance(o, dict):
            stack.extend(o.values())
        elif isinstance(o, (list, tuple)):
            stack.extend(o)


__all__ = ["FullyShardedDataParallel", "FSDP", "ShardingStrategy", "BackwardPrefetch",
           "MixedPrecision", "ModuleWrapPolicy", "transformer_auto_wrap_policy",
           "size_based_auto_wrap_policy", "clean_name"]
