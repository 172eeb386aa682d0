"""Sharded checkpoints of a :class:`FullyShardedDataParallel` model and its optimizer.

:func:`save` writes one safetensors file per rank, holding that rank's share of every
parameter and of every element-wise optimizer state (Adam's moments, SGD's momentum), and
rank 0 writes ``index.json``: for each original parameter (by its unwrapped name) its
shape, dtype and which file holds which element range, plus the optimizer's
hyper-parameters and scalar state. Buffers go to ``buffers.safetensors`` (rank 0's).
Nothing in the files depends on the world size that wrote them, so :func:`load` reshards
to any world size: each rank reads just the ranges its new shards cover. Every file is
written atomically and checksummed (see :mod:`volta_core.io`); ``index.json`` is written
last, so a checkpoint interrupted mid-save is refused on load rather than half-read.

:func:`full_state_dict` gathers the unsharded model state (by default onto rank 0 only),
for a checkpoint that a plain, unwrapped model loads; :func:`full_optim_state_dict` does
the same for the optimizer (a plain optimizer's state dict) and
:func:`load_full_optim_state_dict` shards such a state back into an FSDP optimizer.

Spelling: PyTorch reaches the same through ``FSDP.state_dict_type(model,
StateDictType.SHARDED_STATE_DICT)`` plus ``torch.distributed.checkpoint.save``, and more
recently ``get_state_dict``/``set_state_dict`` plus ``dcp.save``/``dcp.load``; both need
sharded tensor types Volta does not have. What they amount to is "save/load this model and
optimizer to/from this directory, collectively", which is what these functions say.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..errors import CheckpointError
from ..nn.module import Module
from ..tensor import Tensor
from .fsdp import FullyShardedDataParallel, clean_name

FORMAT = "volta-sharded-1"
INDEX = "index.json"
BUFFERS = "buffers.safetensors"


def _units(model: Module) -> list[tuple[str, FullyShardedDataParallel]]:
    if not isinstance(model, FullyShardedDataParallel):
        raise TypeError(f"distributed.checkpoint: expected a FullyShardedDataParallel model, "
                        f"got {type(model).__name__}; for a plain or DDP model save "
                        "model.state_dict() on rank 0 with vt.save")
    return [(p, u) for p, u in model._unit_prefixes() if u.flat_param is not None]


def _pieces(unit: FullyShardedDataParallel) -> list[tuple[Any, int, int, int]]:
    """``(entry, start, stop, shard_offset)``: the element ranges of each original parameter
    (flattened) inside this rank's shard, and where they sit in the shard."""
    shard, rank = unit._shard_numel, unit.process_group.rank
    lo, hi = rank * shard, (rank + 1) * shard
    out = []
    for e in unit._entries:
        start, stop = max(lo, e.offset), min(hi, e.offset + e.numel)
        if start < stop:
            out.append((e, start - e.offset, stop - e.offset, start - lo))
    return out


def _full_name(prefix: str, fqn: str) -> str:
    return f"{prefix}.{fqn}" if prefix else fqn


def _elementwise(state: dict[str, Any], shard: int) -> tuple[dict[str, Tensor], dict]:
    tensors, scalars = {}, {}
    for k, v in state.items():
        if isinstance(v, Tensor) and v.shape == (shard,):
            tensors[k] = v
        elif isinstance(v, Tensor):
            scalars[k] = v.tolist()
        else:
            scalars[k] = v
    return tensors, scalars


def save(path: str | os.PathLike, model: FullyShardedDataParallel,
         optimizer: Any = None) -> None:
    """Write a sharded checkpoint of ``model`` (and ``optimizer``) into directory ``path``.

    A collective: every rank of the model's group calls it with the same ``path`` (a
    directory all ranks can write, e.g. on a shared file system).

    Example:
        >>> checkpoint.save("ckpt/step1000", fsdp_model, opt)    # on every rank
        >>> checkpoint.load("ckpt/step1000", fsdp_model, opt)    # any world size
    """
    from ..io.safetensors_io import atomic_write, encode, host_array
    from .collectives import all_gather_object, barrier

    units = _units(model)
    pg = model.process_group
    rank, world = pg.rank, pg.world_size
    path = os.fspath(path)
    os.makedirs(path, exist_ok=True)
    fname = f"rank-{rank:05d}-of-{world:05d}.safetensors"
    arrays: dict[str, Any] = {}
    mine: dict[str, list[int]] = {}
    opt_state = optimizer.state if optimizer is not None else {}
    scalars: dict[str, dict] = {}
    names: dict[str, list[str]] = {}
    for prefix, unit in units:
        fp = unit.flat_param
        tensors, unit_scalars = _elementwise(opt_state.get(fp, {}), unit._shard_numel)
        shard = host_array(fp)
        host_states = {k: host_array(t) for k, t in tensors.items()}
        for e, start, stop, at in _pieces(unit):
            name = _full_name(prefix, e.fqn)
            arrays[f"model/{name}"] = shard[at:at + stop - start]
            for k, h in host_states.items():
                arrays[f"optim/{name}/{k}"] = h[at:at + stop - start]
            mine[name] = [start, stop]
        for e in unit._entries:
            name = _full_name(prefix, e.fqn)
            scalars[name] = unit_scalars
            names[name] = sorted(tensors)
    atomic_write(os.path.join(path, fname), encode(arrays, {"rank": str(rank)}))
    everyone: list[Any] = [None] * world
    all_gather_object(everyone, (fname, mine), group=pg)
    if rank == 0:
        buffers = {clean_name(n): host_array(b) for n, b in model.named_buffers()}
        atomic_write(os.path.join(path, BUFFERS), encode(buffers))
        params = {}
        for prefix, unit in units:
            for e in unit._entries:
                params[_full_name(prefix, e.fqn)] = {
                    "shape": list(e.shape), "dtype": unit.flat_param.dtype.name,
                    "pieces": [], "optim": names[_full_name(prefix, e.fqn)],
                    "optim_scalars": scalars[_full_name(prefix, e.fqn)]}
        for f, owned in everyone:
            for name, (start, stop) in owned.items():
                params[name]["pieces"].append([f, start, stop])
        groups = None
        if optimizer is not None:
            groups = [{k: v for k, v in g.items() if k != "params"}
                      for g in optimizer.param_groups]
        index = {"format": FORMAT, "world_size": world, "params": params,
                 "buffers": BUFFERS, "param_groups": groups}
        barrier(group=pg)  # every rank's file is on disk before the index names it
        atomic_write(os.path.join(path, INDEX), json.dumps(index, indent=1).encode())
    else:
        barrier(group=pg)
    barrier(group=pg)  # the index exists when save returns on any rank


class _Reader:
    """Reads and caches the checkpoint's files (each file once per rank)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.files: dict[str, dict[str, Any]] = {}

    def array(self, fname: str, key: str) -> Any:
        from ..io.safetensors_io import read_file

        if fname not in self.files:
            self.files[fname] = read_file(os.path.join(self.path, fname))[0]
        arrays = self.files[fname]
        if key not in arrays:
            raise CheckpointError(f"{self.path}/{fname}: no tensor {key!r}; the checkpoint "
                                  "is incomplete or from another model")
        return arrays[key]


def _read_range(reader: _Reader, meta: dict, key: str, start: int, stop: int) -> list[Any]:
    """Host arrays covering elements ``[start, stop)`` of a flattened tensor."""
    out, at = [], start
    for fname, p0, p1 in sorted(meta["pieces"], key=lambda p: p[1]):
        if p1 <= at or p0 >= stop:
            continue
        if p0 > at:
            break
        a = reader.array(fname, key)
        take = min(p1, stop)
        out.append(a[at - p0:take - p0])
        at = take
        if at >= stop:
            break
    if at < stop:
        raise CheckpointError(f"{reader.path}: elements {at}..{stop} of {key!r} are in no "
                              "file; the checkpoint is incomplete")
    return out


def load(path: str | os.PathLike, model: FullyShardedDataParallel,
         optimizer: Any = None) -> None:
    """Load a checkpoint written by :func:`save` (at any world size) into ``model`` and
    ``optimizer``; each rank reads the element ranges of its own shards.

    The optimizer must be built over ``model.parameters()``. A collective only in that
    every rank should call it (no communication happens).

    Raises:
        CheckpointError: the directory has no ``index.json`` (an interrupted save), a
            file is corrupt, or the checkpoint belongs to another model.
    """
    from ..backend.device import device as _device
    from ..io.safetensors_io import host_array, read_file, to_tensor

    path = os.fspath(path)
    try:
        with open(os.path.join(path, INDEX)) as f:
            index = json.load(f)
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no {INDEX}; this is not a sharded checkpoint, or "
                              "its save was interrupted before every rank had written") from None
    if index.get("format") != FORMAT:
        raise CheckpointError(f"{path}/{INDEX}: format {index.get('format')!r}, expected "
                              f"{FORMAT!r}")
    params = index["params"]
    units = _units(model)
    wanted = {_full_name(p, e.fqn) for p, u in units for e in u._entries}
    missing, unexpected = sorted(wanted - set(params)), sorted(set(params) - wanted)
    if missing or unexpected:
        raise CheckpointError(f"{path}: the checkpoint does not match the model: missing "
                              f"{missing}, unexpected {unexpected}")
    reader = _Reader(path)
    cpu = _device("cpu")
    xp_cpu = cpu.xp
    for prefix, unit in units:
        fp, dev, shard = unit.flat_param, unit._dev, unit._shard_numel
        state_names = None
        parts: list[Any] = []
        state_parts: dict[str, list[Any]] = {}
        scalars: dict[str, Any] = {}
        filled = 0
        for e, start, stop, _ in _pieces(unit):
            name = _full_name(prefix, e.fqn)
            meta = params[name]
            if list(e.shape) != meta["shape"]:
                raise CheckpointError(f"{path}: {name} has shape {meta['shape']} in the "
                                      f"checkpoint, {list(e.shape)} in the model")
            parts += _read_range(reader, meta, f"model/{name}", start, stop)
            if optimizer is not None:
                state_names = meta["optim"]
                scalars = meta["optim_scalars"]
                for k in state_names:
                    state_parts.setdefault(k, []).extend(
                        _read_range(reader, meta, f"optim/{name}/{k}", start, stop))
            filled += stop - start
        host_dtype = host_array(fp[:0]).dtype
        fp.array = _to_dev(_concat(xp_cpu, parts, shard - filled, host_dtype), cpu, dev, fp)
        fp._version[0] += 1
        unit._reshard()
        if optimizer is not None:
            if state_names is None:  # this rank's shard is all padding: take any entry
                meta = params[_full_name(prefix, unit._entries[0].fqn)]
                state_names, scalars = meta["optim"], meta["optim_scalars"]
            state = dict(scalars)
            for k in state_names:
                values = _concat(xp_cpu, state_parts.get(k, []), shard - filled, host_dtype)
                state[k] = Tensor._make(_to_dev(values, cpu, dev, fp), dev)
            if state_names or scalars:
                optimizer.state[fp] = state
    if optimizer is not None and index.get("param_groups"):
        saved = index["param_groups"]
        if len(saved) != len(optimizer.param_groups):
            raise CheckpointError(f"{path}: {len(saved)} optimizer parameter groups saved, "
                                  f"the optimizer has {len(optimizer.param_groups)}")
        for group, hyper in zip(optimizer.param_groups, saved):
            for k, v in hyper.items():
                group[k] = tuple(v) if isinstance(group.get(k), tuple) else v
    buffers, _ = read_file(os.path.join(path, index["buffers"]))
    for name, b in model.named_buffers():
        key = clean_name(name)
        if key in buffers:
            b.array = to_tensor(buffers[key], cpu).to(b.device).array
            b._version[0] += 1


def _concat(xp: Any, parts: list[Any], pad: int, dtype: Any) -> Any:
    """One host array: the pieces read, then ``pad`` zeros (the shard's padding)."""
    if pad:
        parts = parts + [xp.zeros((pad,), dtype=parts[0].dtype if parts else dtype)]
    return xp.concat(parts) if len(parts) > 1 else xp.asarray(parts[0], copy=True)


def _to_dev(values: Any, cpu: Any, dev: Any, fp: Tensor) -> Any:
    from ..io.safetensors_io import to_tensor

    t = to_tensor(values, cpu)
    if t.dtype is not fp.dtype:
        t = t.to(fp.dtype)
    return t.to(dev).array if dev is not cpu else t.array


def full_state_dict(model: FullyShardedDataParallel, rank0_only: bool = True,
                    offload_to_cpu: bool = True) -> dict[str, Tensor]:
    """The unsharded model state with the original names (a collective).

    Args:
        rank0_only: return the dict on rank 0 and ``{}`` elsewhere.
        offload_to_cpu: move the tensors to the CPU.

    Example:
        >>> sd = checkpoint.full_state_dict(fsdp_model)      # on every rank
        >>> if dist.get_rank() == 0: vt.save(sd, "model.safetensors")
    """
    sd = model.state_dict()
    if rank0_only and model.process_group.rank != 0:
        return {}
    return {k: v.cpu() for k, v in sd.items()} if offload_to_cpu else sd


def _original_order(model: FullyShardedDataParallel) -> list[tuple[Any, Any]]:
    """``(unit, entry)`` of every original parameter, in the unwrapped model's
    ``parameters()`` order (the views sit where the parameters were)."""
    owner = {}
    for _, unit in _units(model):
        for e, v in zip(unit._entries, unit._views):
            owner[id(v)] = (unit, e)
    order, seen = [], set()
    for _, m in model.named_modules():
        for name, p in m._parameters.items():
            if p is None or name == "_flat_param" or id(p) in seen or id(p) not in owner:
                continue
            seen.add(id(p))
            order.append(owner[id(p)])
    return order


def full_optim_state_dict(model: FullyShardedDataParallel, optimizer: Any,
                          rank0_only: bool = True) -> dict[str, Any]:
    """The optimizer state unsharded, as a plain optimizer of the unwrapped model has it.

    A collective (every rank calls it). Parameters are numbered in the unwrapped model's
    ``parameters()`` order, so ``plain_optimizer.load_state_dict(result)`` works; with
    ``rank0_only`` the other ranks get ``{}``. The reverse is
    :func:`load_full_optim_state_dict`. Every parameter of a unit has state once the unit
    was stepped (the flat parameter is stepped as a whole, a gradient-less parameter with
    zero gradients), where a plain optimizer skips parameters that got no gradient.
    """
    order = _original_order(model)
    full: dict[int, dict[str, Any]] = {}  # id(unit) -> {key: unpadded flat array or scalar}
    for _, unit in _units(model):
        fp, pg = unit.flat_param, unit.process_group
        xp = unit._dev.xp
        gathered: dict[str, Any] = {}
        for k, v in sorted(optimizer.state.get(fp, {}).items()):
            if isinstance(v, Tensor) and v.shape == (unit._shard_numel,):
                out = xp.empty((unit._shard_numel * pg.world_size,), dtype=v.array.dtype,
                               device=unit._dev.native)
                if pg.world_size > 1:
                    pg.all_gather(out, v.array)
                else:
                    out = xp.asarray(v.array, copy=True)
                gathered[k] = out
            else:
                gathered[k] = v
        full[id(unit)] = gathered
    if rank0_only and model.process_group.rank != 0:
        return {}
    state: dict[int, dict[str, Any]] = {}
    for i, (unit, e) in enumerate(order):
        entry = {}
        for k, v in full[id(unit)].items():
            if hasattr(v, "shape") and not isinstance(v, Tensor):
                xp = unit._dev.xp
                piece = xp.reshape(v[e.offset:e.offset + e.numel], e.shape)
                entry[k] = Tensor._make(xp.asarray(piece, copy=True), unit._dev)
            else:
                entry[k] = v
        if entry:
            state[i] = entry
    groups = []
    for group in optimizer.param_groups:
        members = {id(p) for p in group["params"]}
        packed = {k: v for k, v in group.items() if k != "params"}
        packed["params"] = [i for i, (unit, _) in enumerate(order)
                            if id(unit.flat_param) in members]
        groups.append(packed)
    return {"state": state, "param_groups": groups}


def load_full_optim_state_dict(model: FullyShardedDataParallel, optimizer: Any,
                               state_dict: dict[str, Any]) -> None:
    """Load an unsharded optimizer state (from :func:`full_optim_state_dict` or a plain
    optimizer of the unwrapped model) into ``optimizer``, keeping this rank's shards.

    Every rank passes the whole state dict (load it on every rank, or broadcast it).
    Parameters without state in it (never stepped) get zero state in the flat shards.
    """
    order = _original_order(model)
    saved = state_dict["state"]
    for _, unit in _units(model):
        fp, dev = unit.flat_param, unit._dev
        xp = dev.xp
        shard, rank = unit._shard_numel, unit.process_group.rank
        lo, hi = rank * shard, (rank + 1) * shard
        entries = {id(e): i for i, (u, e) in enumerate(order) if u is unit}
        keys: dict[str, list[Any]] = {}
        scalars: dict[str, Any] = {}
        for e in unit._entries:
            for k, v in saved.get(entries[id(e)], {}).items():
                if isinstance(v, Tensor) and tuple(v.shape) == e.shape:
                    keys.setdefault(k, [])
                else:
                    scalars[k] = v
        state = dict(scalars)
        for k in keys:
            parts = []
            for e in unit._entries:
                start, stop = max(lo, e.offset), min(hi, e.offset + e.numel)
                if start >= stop:
                    continue
                v = saved.get(entries[id(e)], {}).get(k)
                if v is None:  # a parameter the optimizer never stepped: zero state
                    parts.append(xp.zeros((stop - start,), dtype=fp.array.dtype,
                                          device=dev.native))
                    continue
                flat = xp.reshape(v.detach().to(dev).array, (-1,))
                parts.append(xp.astype(flat[start - e.offset:stop - e.offset],
                                       fp.array.dtype, copy=False))
            used = sum(p.shape[0] for p in parts)
            if used < shard:
                parts.append(xp.zeros((shard - used,), dtype=fp.array.dtype,
                                      device=dev.native))
            state[k] = Tensor._make(xp.concat(parts) if len(parts) > 1 else
                                    xp.asarray(parts[0], copy=True), dev)
        if state:
            optimizer.state[fp] = state
    for group, hyper in zip(optimizer.param_groups, state_dict.get("param_groups", [])):
        for k, v in hyper.items():
            if k != "params":
                group[k] = tuple(v) if isinstance(group.get(k), tuple) else v


__all__ = ["save", "load", "full_state_dict", "full_optim_state_dict",
           "load_full_optim_state_dict"]
