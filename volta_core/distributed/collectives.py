"""Collectives on tensors, in place, as in ``torch.distributed``.

Each function checks its arguments, then hands the tensors' backend arrays to the
process group's engine. Results are written into the given tensors (their version
counters are bumped, as for any in-place op); nothing leaves the device.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import DeviceError, DTypeError, ShapeError
from ..tensor import Tensor
from .engine import DistributedError, ProcessGroup, ReduceOp
from .process_group import _group


class Work:
    """The handle an ``async_op=True`` collective returns.

    Engines in Volta enqueue collectives in order (NCCL on the current CUDA stream),
    so the work is already ordered before any later op on the device: ``wait()``
    returns at once.
    """

    def wait(self, timeout: Any = None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True


class _Started(Work):
    """The handle of a collective the engine started beside the compute (NCCL's own
    stream): ``wait()`` orders later device work after it and writes the result."""

    def __init__(self, pending: Any, finish: Any) -> None:
        self._pending, self._finish = pending, finish

    def wait(self, timeout: Any = None) -> bool:
        if self._finish is not None:
            self._pending.wait()
            finish, self._finish = self._finish, None
            finish()
        return True

    def is_completed(self) -> bool:
        return self._finish is None or self._pending.is_completed()


def _done(async_op: bool) -> Work | None:
    return Work() if async_op else None


def _check(pg: ProcessGroup, name: str, tensors: Sequence[Tensor]) -> None:
    if not tensors:
        return
    first = tensors[0]
    allowed = pg.device_types
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}: expected Tensors, got {type(t).__name__}")
        if t.device is not first.device:
            raise DeviceError(f"{name}: tensors on {first.device} and {t.device}; move them to "
                              "one device with .to(...)")
        if t.dtype is not first.dtype:
            raise DTypeError(f"{name}: tensors of dtypes {first.dtype.name} and "
                             f"{t.dtype.name}; convert with .to(dtype)")
    if allowed and first.device.type not in allowed:
        raise DeviceError(
            f"{name}: engine {pg.engine!r} works on {', '.join(allowed)} tensors, got a tensor "
            f"on {first.device}; move it with .to('{allowed[0]}') or pick another backend "
            "in init_process_group")


_CALLS = ("all_reduce", "broadcast", "all_gather", "all_gather_into_tensor",
          "reduce_scatter_tensor", "reduce_scatter", "barrier")
_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "uint32", "float16",
           "bfloat16", "float32", "float64")
_MAX_DIMS = 8


def _begin(pg: ProcessGroup, name: str, t: Tensor | None = None, extra: int = -1) -> None:
    """In debug mode (``VOLTA_DISTRIBUTED_DEBUG=DETAIL``), check every rank makes the
    same call. (Lost ranks are checked by the group itself: see ``process_group``.)"""
    if getattr(pg, "debug", False):
        _same_call_everywhere(pg, name, t, extra)


def _signature(name: str, t: Tensor | None, extra: int) -> list[int]:
    shape = t.shape if t is not None else ()
    dims = list(shape[:_MAX_DIMS]) + [-1] * (_MAX_DIMS - len(shape[:_MAX_DIMS]))
    dtype = _DTYPES.index(t.dtype.name) if t is not None and t.dtype.name in _DTYPES else -1
    return [_CALLS.index(name), dtype, len(shape), t.numel() if t is not None else 0, extra,
            *dims]


def _describe(sig: list[int]) -> str:
    call, dtype, ndim, numel, extra, *dims = sig
    what = _CALLS[call] if 0 <= call < len(_CALLS) else f"collective #{call}"
    if what == "barrier":
        return "barrier()"
    shape = tuple(dims[:ndim]) if ndim <= _MAX_DIMS else f"{ndim}-d, {numel} elements"
    kind = _DTYPES[dtype] if 0 <= dtype < len(_DTYPES) else "?"
    arg = ""
    if what == "broadcast":
        arg = f", src={extra}"
    elif extra >= 0:
        arg = f", op={list(ReduceOp)[extra].name}"
    return f"{what}({kind}{list(shape) if isinstance(shape, tuple) else shape}{arg})"


def _same_call_everywhere(pg: ProcessGroup, name: str, t: Tensor | None, extra: int) -> None:
    """All-gather each rank's (collective, dtype, shape) and compare (debug mode)."""
    from ..backend.device import Device
    from .process_group import _state

    if t is not None:
        dev = t.device
    elif "cpu" in pg.device_types or not pg.device_types:
        dev = Device("cpu")
    else:
        dev = Device(f"{pg.device_types[0]}:{_state.device_index}")
    xp = dev.xp
    mine = _signature(name, t, extra)
    n = len(mine)
    arr = xp.asarray(mine, dtype=xp.int64, device=dev.native)
    out = xp.empty((pg.world_size * n,), dtype=xp.int64, device=dev.native)
    pg.all_gather(out, arr)
    flat = [int(v) for v in dev.backend.to_host(out).tolist()]
    sigs = [flat[i * n:(i + 1) * n] for i in range(pg.world_size)]
    if any(s != sigs[0] for s in sigs):
        calls = "; ".join(f"rank {r}: {_describe(s)}" for r, s in enumerate(sigs))
        raise DistributedError(
            f"{name}: the ranks do not make the same collective call (checked because "
            f"VOLTA_DISTRIBUTED_DEBUG=DETAIL): {calls}. Every rank must call the same "
            "collectives in the same order with tensors of the same shape and dtype")


def _op(op: Any) -> ReduceOp:
    if isinstance(op, ReduceOp):
        return op
    try:
        return ReduceOp[str(op).upper()]
    except KeyError:
        raise ValueError(f"unknown reduce op {op!r}; use one of "
                         f"{[o.name for o in ReduceOp]}") from None


def _flat(xp: Any, array: Any) -> Any:
    """A 1-d view of ``array`` when the namespace can give one, else a 1-d copy."""
    try:
        return xp.reshape(array, (-1,), copy=False)
    except (TypeError, ValueError, AttributeError, NotImplementedError):
        return xp.reshape(array, (-1,))


def _private(t: Tensor) -> Any:
    """A 1-d copy of ``t``'s values that an engine may write into.

    Engines reduce in place, and a backend array may be shared by several tensors (an
    in-place op rebinds arrays instead of writing them; see :mod:`volta_core.views`).
    """
    return t.device.xp.reshape(t.device.xp.asarray(t.array, copy=True), (-1,))


def _empty_like(t: Tensor) -> Any:
    """A new 1-d array of ``t``'s size and dtype for an engine to fill."""
    return t.device.xp.empty((t.numel(),), dtype=t.array.dtype, device=t.device.native)


def _write(t: Tensor, array: Any) -> None:
    """Make ``array`` (same number of elements) ``t``'s values, as an in-place op does.

    The array is rebound, never written into: backend arrays may be shared between
    tensors (see :mod:`volta_core.views`); a view writes into its base.
    """
    if tuple(array.shape) != t.shape:
        array = t.device.xp.reshape(array, t.shape)
    t.array = array
    t._version[0] += 1


def _scale_avg(pg: ProcessGroup, t: Tensor, array: Any, name: str) -> None:
    if not t.dtype.is_floating_point:
        raise DTypeError(f"{name}: ReduceOp.AVG needs a floating-point tensor, got "
                         f"{t.dtype.name}; use ReduceOp.SUM and divide")
    array *= 1.0 / pg.world_size


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` over all ranks, in place: every rank ends with the result.

    Args:
        tensor: input and output, same shape and dtype on every rank.
        op: ``ReduceOp.SUM`` (default), ``AVG``, ``PRODUCT``, ``MAX`` or ``MIN``.
        group: the process group (the default one).
        async_op: return a :class:`Work` handle.

    Example:
        >>> t = vt.ones(3) * (dist.get_rank() + 1)
        >>> dist.all_reduce(t)   # on 2 ranks: tensor([3., 3., 3.]) everywhere
    """
    pg, op = _group(group), _op(op)
    _check(pg, "all_reduce", [tensor])
    avg = op is ReduceOp.AVG and not pg.native_avg
    if avg and not tensor.dtype.is_floating_point:
        _scale_avg(pg, tensor, None, "all_reduce")  # raises
    arr = _private(tensor)
    _begin(pg, "all_reduce", tensor, list(ReduceOp).index(op))

    def finish() -> None:
        if avg:
            _scale_avg(pg, tensor, arr, "all_reduce")
        _write(tensor, arr)

    if async_op:  # the tensor holds the result after wait(), as in PyTorch
        return _Started(pg.start_all_reduce(arr, ReduceOp.SUM if avg else op), finish)
    pg.all_reduce(arr, ReduceOp.SUM if avg else op)
    finish()
    return None


def broadcast(tensor: Tensor, src: int, group: ProcessGroup | None = None,
              async_op: bool = False) -> Work | None:
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every other rank, in place.

    ``src`` is a global rank (a rank of the default group), also with a subgroup.
    """
    pg = _group(group)
    _check(pg, "broadcast", [tensor])
    if pg.ranks is not None:  # src is a global rank, as in PyTorch
        from .groups import get_group_rank

        src = get_group_rank(pg, src)
    if not 0 <= src < pg.world_size:
        raise ValueError(f"broadcast: src {src} is outside world size {pg.world_size}")
    arr = _private(tensor)
    _begin(pg, "broadcast", tensor, src)
    pg.broadcast(arr, src)
    _write(tensor, arr)
    return _done(async_op)


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """Gather every rank's ``tensor`` into ``tensor_list[rank]`` on every rank.

    Args:
        tensor_list: ``world_size`` tensors shaped like ``tensor``, overwritten in place.
        tensor: this rank's contribution.
    """
    pg = _group(group)
    _check(pg, "all_gather", [tensor, *tensor_list])
    if len(tensor_list) != pg.world_size:
        raise ShapeError(f"all_gather: tensor_list has {len(tensor_list)} tensors, expected "
                         f"world_size={pg.world_size}")
    for i, t in enumerate(tensor_list):
        if t.shape != tensor.shape:
            raise ShapeError(f"all_gather: tensor_list[{i}] has shape {t.shape}, expected "
                             f"{tensor.shape}")
    xp, n = tensor.device.xp, tensor.numel()
    out = xp.empty((pg.world_size * n,), dtype=tensor.array.dtype, device=tensor.device.native)
    _begin(pg, "all_gather", tensor)
    pg.all_gather(out, _flat(xp, tensor.array))
    for i, t in enumerate(tensor_list):
        _write(t, out[i * n:(i + 1) * n])
    return _done(async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor,
                           group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:
    """Gather every rank's ``input_tensor`` into ``output_tensor``, concatenated on dim 0.

    ``output_tensor`` has ``world_size`` times as many elements as ``input_tensor``:
    shape ``(world_size * d0, ...)`` or ``(world_size, d0, ...)``.
    """
    pg = _group(group)
    _check(pg, "all_gather_into_tensor", [input_tensor, output_tensor])
    if output_tensor.numel() != pg.world_size * input_tensor.numel():
        raise ShapeError(f"all_gather_into_tensor: output has {output_tensor.numel()} elements,"
                         f" expected world_size * {input_tensor.numel()} "
                         f"= {pg.world_size * input_tensor.numel()}")
    xp = input_tensor.device.xp
    out = _empty_like(output_tensor)
    _begin(pg, "all_gather_into_tensor", input_tensor)
    pg.all_gather(out, _flat(xp, input_tensor.array))
    _write(output_tensor, out)
    return _done(async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: ReduceOp = ReduceOp.SUM,
                          group: ProcessGroup | None = None,
                          async_op: bool = False) -> Work | None:
    """Reduce ``input`` over ranks and keep this rank's chunk (of dim 0) in ``output``.

    ``input`` has ``world_size`` times as many elements as ``output``.
    """
    pg, op = _group(group), _op(op)
    _check(pg, "reduce_scatter_tensor", [output, input])
    if input.numel() != pg.world_size * output.numel():
        raise ShapeError(f"reduce_scatter_tensor: input has {input.numel()} elements, "
                         f"expected world_size * {output.numel()}")
    _reduce_scatter(pg, output, _flat(input.device.xp, input.array), op,
                    "reduce_scatter_tensor", input)
    return _done(async_op)


def reduce_scatter(output: Tensor, input_list: list[Tensor], op: ReduceOp = ReduceOp.SUM,
                   group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Reduce ``input_list[i]`` over ranks into ``output`` on rank ``i``.

    Args:
        output: this rank's result, shaped like each input.
        input_list: ``world_size`` tensors shaped like ``output``.
    """
    pg, op = _group(group), _op(op)
    _check(pg, "reduce_scatter", [output, *input_list])
    if len(input_list) != pg.world_size:
        raise ShapeError(f"reduce_scatter: input_list has {len(input_list)} tensors, "
                         f"expected world_size={pg.world_size}")
    for i, t in enumerate(input_list):
        if t.shape != output.shape:
            raise ShapeError(f"reduce_scatter: input_list[{i}] has shape {t.shape}, "
                             f"expected {output.shape}")
    xp = output.device.xp
    flat = xp.concat([xp.reshape(t.array, (-1,)) for t in input_list])
    _reduce_scatter(pg, output, flat, op, "reduce_scatter", output)
    return _done(async_op)


def _reduce_scatter(pg: ProcessGroup, output: Tensor, flat: Any, op: ReduceOp, name: str,
                    shown: Tensor) -> None:
    avg = op is ReduceOp.AVG and not pg.native_avg
    out = _empty_like(output)
    _begin(pg, name, shown, list(ReduceOp).index(op))
    pg.reduce_scatter(out, flat, ReduceOp.SUM if avg else op)
    if avg:
        _scale_avg(pg, output, out, "reduce_scatter")
    _write(output, out)


def barrier(group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """Block until every rank of ``group`` has reached the barrier."""
    pg = _group(group)
    _begin(pg, "barrier")
    pg.barrier()
    return _done(async_op)


# -- Python objects (pickled into uint8 tensors) ------------------------------------------

def _object_device(pg: ProcessGroup) -> Any:
    from ..backend.device import device
    from .process_group import _state

    return device(f"cuda:{_state.device_index}" if "cuda" in pg.device_types else "cpu")


def _to_bytes_tensor(obj: Any, dev: Any) -> Tensor:
    import pickle

    from ..backend.device import device

    cpu = device("cpu")
    data = memoryview(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
    t = Tensor._make(cpu.backend.from_host(data, cpu.index), cpu)
    return t if dev is cpu else t.to(dev)


def _from_bytes_tensor(t: Tensor, n: int) -> Any:
    import pickle

    host = t.device.backend.to_host(t[:n].array)
    return pickle.loads(host.tobytes())


def all_gather_object(object_list: list[Any], obj: Any,
                      group: ProcessGroup | None = None) -> None:
    """Gather a picklable ``obj`` from every rank into ``object_list`` (in place).

    Args:
        object_list: a list of ``world_size`` entries, overwritten with each rank's object.
        obj: this rank's object (pickled: only exchange objects from trusted ranks).
    """
    from ..dtypes import int64

    pg = _group(group)
    if len(object_list) != pg.world_size:
        raise ShapeError(f"all_gather_object: object_list has {len(object_list)} entries, "
                         f"expected world_size={pg.world_size}")
    dev = _object_device(pg)
    data = _to_bytes_tensor(obj, dev)
    sizes = Tensor._make(dev.xp.asarray([data.numel()], dtype=dev.native_dtype(int64),
                                        device=dev.native), dev)
    all_sizes = Tensor._make(dev.xp.zeros((pg.world_size,), dtype=dev.native_dtype(int64),
                                          device=dev.native), dev)
    all_gather_into_tensor(all_sizes, sizes, group=pg)
    counts = [int(c) for c in all_sizes.tolist()]
    longest = max(counts)
    padded = Tensor._make(dev.xp.zeros((longest,), dtype=data.array.dtype,
                                       device=dev.native), dev)
    padded.array[:data.numel()] = data.array
    out = Tensor._make(dev.xp.zeros((pg.world_size * longest,), dtype=data.array.dtype,
                                    device=dev.native), dev)
    all_gather_into_tensor(out, padded, group=pg)
    for r, n in enumerate(counts):
        object_list[r] = _from_bytes_tensor(out[r * longest:(r + 1) * longest], n)


def broadcast_object_list(object_list: list[Any], src: int = 0,
                          group: ProcessGroup | None = None, device: Any = None) -> None:
    """Replace the entries of ``object_list`` with rank ``src``'s (picklable) entries.

    Every rank passes a list of the same length; ``src`` is a global rank.
    """
    from ..dtypes import int64

    pg = _group(group)
    dev = _object_device(pg)
    from .groups import get_group_rank

    mine = get_group_rank(pg, src) == pg.rank
    data = _to_bytes_tensor(list(object_list), dev) if mine else None
    size = Tensor._make(dev.xp.asarray([data.numel() if mine else 0],
                                       dtype=dev.native_dtype(int64), device=dev.native), dev)
    broadcast(size, src, group=pg)
    n = int(size.item())
    if not mine:
        from ..dtypes import uint8

        data = Tensor._make(dev.xp.zeros((n,), dtype=dev.native_dtype(uint8),
                                         device=dev.native), dev)
    broadcast(data, src, group=pg)
    if not mine:
        got = _from_bytes_tensor(data, n)
        if len(got) != len(object_list):
            raise ShapeError(f"broadcast_object_list: rank {src} sent {len(got)} objects, "
                             f"this rank's list has {len(object_list)}")
        object_list[:] = got
