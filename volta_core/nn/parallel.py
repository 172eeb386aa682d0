"""``DistributedDataParallel``: data-parallel training over a process group.

Each rank holds a replica of the model and a shard of the batch. At wrap time rank 0's
parameters and buffers are broadcast to every rank. During backward, a gradient hook on
each parameter drops its gradient into a *bucket* (buckets hold parameters in reverse
registration order, about the order backward produces them, up to ``bucket_cap_mb``
each, the first one only 1 MiB as in PyTorch so that communication starts early); when a
bucket is full it is flattened into one buffer and its all-reduce (average) is *started*,
and views of that buffer become the parameters' ``.grad``. Buckets are launched in bucket
order on every rank, so all ranks issue the same collectives in the same order.

Engines that can overlap (NCCL runs collectives on its own CUDA stream) reduce a bucket
while backward goes on computing the gradients of the next ones; a callback at the end of
backward waits for every bucket (on the GPU: the compute stream waits, the host does
not), so the optimizer, or anything else after ``backward()``, reads reduced gradients.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..autograd.grad_mode import is_grad_enabled
from ..distributed.engine import DistributedError, ProcessGroup, ReduceOp
from ..errors import DeviceError
from ..tensor import Tensor
from .module import Module


class _Bucket:
    """Parameters reduced together: their indices, offsets and the gradients received."""

    __slots__ = ("index", "params", "offsets", "numel", "grads", "pending", "flat", "work")

    def __init__(self, index: int) -> None:
        self.index = index
        self.params: list[int] = []
        self.offsets: list[int] = []
        self.numel = 0
        self.grads: dict[int, Any] = {}
        self.pending = 0
        self.flat: Any = None
        self.work: Any = None  # the started all-reduce, until the end of backward


_FIRST_BUCKET_BYTES = 1024 * 1024  # PyTorch's first bucket: start communicating early


class DistributedDataParallel(Module):
    """Synchronise gradients of ``module`` across the ranks of a process group.

    Args:
        module: the model, already on this rank's device.
        device_ids: ``[local_rank]`` for a CUDA model (checked against the model's
            device), or None for CPU models.
        output_device: accepted for PyTorch compatibility (outputs stay on the device).
        broadcast_buffers: broadcast rank 0's buffers (batch-norm statistics) before
            each forward in training mode.
        process_group: the group to reduce over (the default group).
        bucket_cap_mb: the most megabytes of gradients reduced in one collective.
            The first bucket (the last parameters) holds at most 1 MiB, as in PyTorch.
        find_unused_parameters: walk the autograd graph after each forward so that
            parameters which get no gradient do not stall their bucket.
        gradient_as_bucket_view: accepted for compatibility; ``.grad`` is always a view
            of the reduced bucket (no extra copy).

    After ``backward()`` returns, the gradients are reduced: the collectives started
    during backward are waited for by a callback at its end. (With
    ``vt.autograd.grad``, which runs no such callback, each bucket is waited for as soon
    as it is launched.)

    Shape:
        Whatever ``module`` takes and returns; each rank passes its shard of the batch.

    Example:
        >>> dist.init_process_group("nccl")
        >>> model = Net().to(f"cuda:{dist.get_local_rank()}")
        >>> ddp = nn.parallel.DistributedDataParallel(model, device_ids=[dist.get_local_rank()])
        >>> loss_fn(ddp(x), y).backward()   # gradients are averaged over the ranks
        >>> with ddp.no_sync():              # accumulate locally, reduce on the next backward
        ...     loss_fn(ddp(x2), y2).backward()
    """

    def __init__(self, module: Module, device_ids: list[Any] | None = None,
                 output_device: Any = None, dim: int = 0, broadcast_buffers: bool = True,
                 process_group: ProcessGroup | None = None, bucket_cap_mb: float = 25,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False) -> None:
        from ..distributed.process_group import _group

        super().__init__()
        self.module = module
        sa = object.__setattr__
        sa(self, "process_group", _group(process_group))
        sa(self, "broadcast_buffers", broadcast_buffers)
        sa(self, "find_unused_parameters", find_unused_parameters)
        sa(self, "bucket_cap_mb", bucket_cap_mb)
        sa(self, "require_backward_grad_sync", True)
        sa(self, "dim", dim)
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise ValueError("DistributedDataParallel: the module has no parameter that "
                             "requires grad; there is nothing to synchronise")
        sa(self, "_names", [n for n, _ in named])
        sa(self, "_params", [p for _, p in named])
        sa(self, "device", self._check_device(device_ids))
        self._sync_module_states()
        sa(self, "_buckets", self._make_buckets(int(bucket_cap_mb * 1024 * 1024)))
        sa(self, "_bucket_of", {i: b for b in self._buckets for i in b.params})
        sa(self, "_expect_sync", False)
        sa(self, "_round_open", False)
        sa(self, "_next_launch", 0)
        sa(self, "_used", None)
        sa(self, "_current", None)
        sa(self, "_wait_at_end", False)
        sa(self, "_handles", [p.register_hook(self._make_hook(i))
                              for i, p in enumerate(self._params)])

    # -- setup -------------------------------------------------------------------------
    def _check_device(self, device_ids: list[Any] | None) -> Any:
        devices = {p.device for p in self._params}
        if len(devices) != 1:
            raise DeviceError(f"DistributedDataParallel: the module's parameters are on "
                              f"{sorted(map(str, devices))}; move the whole module to one "
                              "device with module.to(...)")
        dev = devices.pop()
        if device_ids:
            want = device_ids[0]
            index = want if isinstance(want, int) else getattr(want, "index", None)
            if index is None:
                from ..backend.device import Device

                index = Device(want).index
            if len(device_ids) > 1 or index != dev.index:
                raise DeviceError(
                    f"DistributedDataParallel: device_ids={device_ids} but the module is on "
                    f"{dev}; use one device per process: module.to('{dev.type}:{index}') "
                    "and device_ids=[local_rank]")
        return dev

    def _coalesced(self, tensors: list[Tensor], fn: Any) -> None:
        """Run ``fn(flat_array)`` on the tensors flattened into one buffer per dtype."""
        from ..distributed.collectives import _write

        by_dtype: dict[Any, list[Tensor]] = {}
        for t in tensors:
            by_dtype.setdefault(t.dtype, []).append(t)
        for group in by_dtype.values():
            xp = group[0].device.xp
            flat = xp.concat([xp.reshape(t.array, (-1,)) for t in group])
            fn(flat)
            offset = 0
            for t in group:
                n = t.numel()
                _write(t, flat[offset:offset + n])
                offset += n

    def _sync_module_states(self) -> None:
        """Broadcast rank 0's parameters and buffers to every rank."""
        if self.process_group.world_size == 1:
            return
        tensors = list(self.module.parameters()) + list(self.module.buffers())
        self._coalesced(tensors, lambda flat: self.process_group.broadcast(flat, 0))

    def _make_buckets(self, cap_bytes: int) -> list[_Bucket]:
        buckets: list[_Bucket] = []
        current: _Bucket | None = None
        for i in reversed(range(len(self._params))):
            p = self._params[i]
            nbytes = p.numel() * p.dtype.itemsize
            cap = min(cap_bytes, _FIRST_BUCKET_BYTES) if len(buckets) == 1 else cap_bytes
            if current is None or (current.params and (
                    current.numel * p.dtype.itemsize + nbytes > cap
                    or self._params[current.params[0]].dtype is not p.dtype)):
                current = _Bucket(len(buckets))
                buckets.append(current)
            current.params.append(i)
            current.offsets.append(current.numel)
            current.numel += p.numel()
        return buckets

    # -- forward -----------------------------------------------------------------------
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._round_open:
            missing = [self._names[i] for b in self._buckets for i in b.params
                       if b.pending and i not in b.grads]
            raise DistributedError(
                "DistributedDataParallel: the previous backward did not produce gradients "
                f"for parameters {missing}, so their buckets were never reduced. Pass "
                "find_unused_parameters=True if some parameters are not used in forward, "
                "and make sure every rank calls backward on an output of this forward")
        if self.broadcast_buffers and self.training and self.process_group.world_size > 1:
            buffers = list(self.module.buffers())
            if buffers:
                self._coalesced(buffers, lambda flat: self.process_group.broadcast(flat, 0))
        sync = self.require_backward_grad_sync and is_grad_enabled()
        object.__setattr__(self, "_expect_sync", sync)
        out = self.module(*inputs, **kwargs)
        if sync and self.find_unused_parameters:
            object.__setattr__(self, "_used", _reached_leaves(out))
        return out

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Skip gradient synchronisation for forward/backward passes run inside.

        Gradients accumulate locally in ``.grad``; the first backward after the block
        (of a forward run outside it) all-reduces the accumulated sum.
        """
        old = self.require_backward_grad_sync
        object.__setattr__(self, "require_backward_grad_sync", False)
        try:
            yield
        finally:
            object.__setattr__(self, "require_backward_grad_sync", old)

    # -- backward: hooks and buckets ---------------------------------------------------
    def _make_hook(self, index: int) -> Any:
        def hook(grad: Tensor) -> Tensor | None:
            if not self._expect_sync:
                return None
            return self._grad_ready(index, grad)

        return hook

    def _start_round(self) -> None:
        from ..autograd.engine import queue_callback
        from ..errors import AutogradError

        sa = object.__setattr__
        sa(self, "_round_open", True)
        sa(self, "_next_launch", 0)
        try:
            queue_callback(self._finish_round)
            sa(self, "_wait_at_end", True)
        except AutogradError:  # vt.autograd.grad: no end-of-backward callback
            sa(self, "_wait_at_end", False)
        for b in self._buckets:
            b.grads, b.pending, b.flat, b.work = {}, len(b.params), None, None
        if self._used is not None:
            for i, p in enumerate(self._params):
                if id(p) not in self._used:  # no gradient will come: contribute zeros
                    xp = p.device.xp
                    g = p.grad.array if p.grad is not None else xp.zeros(
                        p.array.shape, dtype=p.array.dtype, device=p.device.native)
                    self._bucket_of[i].grads[i] = g
                    self._bucket_of[i].pending -= 1

    def _grad_ready(self, index: int, grad: Tensor) -> Tensor:
        if not self._round_open:
            self._start_round()
        p = self._params[index]
        bucket = self._bucket_of[index]
        if index in bucket.grads:
            raise DistributedError(f"DistributedDataParallel: parameter {self._names[index]!r} "
                                   "received a gradient twice in one reduction; call forward "
                                   "again before another backward")
        # what .grad will hold locally: the accumulated gradient (no_sync) plus this one
        full = grad.detach() if p.grad is None else p.grad.detach() + grad.detach()
        bucket.grads[index] = full.array
        bucket.pending -= 1
        p.grad = None  # the engine stores our return value as .grad
        result = full
        object.__setattr__(self, "_current", index)
        self._launch_ready()
        object.__setattr__(self, "_current", None)
        if bucket.flat is not None:
            result = self._view(bucket, index)
        if all(b.flat is not None for b in self._buckets):
            object.__setattr__(self, "_round_open", False)
            object.__setattr__(self, "_used", None)
        return result

    def _finish_round(self) -> None:
        """End of backward: wait for every started all-reduce (the optimizer comes next).

        If some bucket was never launched (a parameter got no gradient), the round stays
        open and the next forward raises; the buckets that were launched are still
        finished, so no collective is left half-done.
        """
        for b in self._buckets:
            self._wait(b)

    def _wait(self, bucket: _Bucket) -> None:
        work = bucket.work
        if work is None:
            return
        bucket.work = None
        work.wait()
        pg = self.process_group
        if not pg.native_avg:
            bucket.flat *= 1.0 / pg.world_size  # the .grad views see it

    def _launch_ready(self) -> None:
        """All-reduce every complete bucket whose predecessors have all been launched."""
        while self._next_launch < len(self._buckets):
            bucket = self._buckets[self._next_launch]
            if bucket.pending:
                return
            self._reduce(bucket)
            object.__setattr__(self, "_next_launch", self._next_launch + 1)

    def _reduce(self, bucket: _Bucket) -> None:
        """Flatten the bucket's gradients into one buffer and start its all-reduce."""
        pg = self.process_group
        xp = self.device.xp
        flat = xp.concat([xp.reshape(bucket.grads[i], (-1,)) for i in bucket.params])
        bucket.flat, bucket.grads = flat, {}
        if pg.world_size > 1:
            bucket.work = pg.start_all_reduce(flat, ReduceOp.AVG if pg.native_avg
                                              else ReduceOp.SUM)
            if not self._wait_at_end:
                self._wait(bucket)
        for i in bucket.params:
            if i != self._current:  # the current hook returns its view to the engine
                self._params[i].grad = self._view(bucket, i)

    def _view(self, bucket: _Bucket, index: int) -> Tensor:
        p = self._params[index]
        start = bucket.offsets[bucket.params.index(index)]
        xp = self.device.xp
        return Tensor._make(xp.reshape(bucket.flat[start:start + p.numel()], p.array.shape),
                            p.device)

    def extra_repr(self) -> str:
        return (f"world_size={self.process_group.world_size}, "
                f"engine={self.process_group.engine!r}, buckets={len(self._buckets)}")


class DataParallel(Module):
    """Run ``module`` in this process, on its own device (PyTorch's ``nn.DataParallel``).

    PyTorch's DataParallel splits each batch over several GPUs from one process. Volta keeps
    the interface (``.module``, ``module.``-prefixed ``state_dict`` keys, ``device_ids``,
    ``output_device``, ``dim``) but runs the wrapped module once, on the device where its
    parameters are: results and gradients are those of the plain module. For several GPUs
    use :class:`DistributedDataParallel` (one process per GPU), which PyTorch also
    recommends over DataParallel.

    Args:
        module: the module to run.
        device_ids: accepted for compatibility; more than one device only warns.
        output_device: accepted for compatibility.
        dim: accepted for compatibility (the batch dim PyTorch would scatter).
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: expected a Module, got {type(module).__name__}")
        if device_ids is not None and len(list(device_ids)) > 1:
            import warnings

            warnings.warn("DataParallel runs the module on one device in Volta; for several "
                          "GPUs use nn.parallel.DistributedDataParallel (one process per "
                          "GPU)", stacklevel=2)
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else []
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def _reached_leaves(out: Any) -> set[int]:
    """ids of the leaf tensors the autograd graph of ``out`` reaches."""
    from ..autograd.function import Function

    roots: list[Any] = []
    stack = [out]
    while stack:
        obj = stack.pop()
        if isinstance(obj, Tensor):
            roots.append(obj.grad_fn if obj.grad_fn is not None else obj)
        elif isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple)):
            stack.extend(obj)
    leaves: set[int] = set()
    seen: set[int] = set()
    while roots:
        node = roots.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Tensor):
            leaves.add(id(node))
        elif isinstance(node, Function):
            roots.extend(p for p in node.parents if p is not None)
    return leaves


__all__ = ["DistributedDataParallel", "DataParallel"]
