"""``vt.save`` / ``vt.load``: checkpoints of nested dicts and lists, without pickle.

A checkpoint is one safetensors file. Its tensors are the tensors found in the saved
object; everything else (dicts, lists, tuples, numbers, strings, booleans, None) is
JSON in the metadata entry ``volta.object``, where each tensor is replaced by a
reference ``{"$tensor": name, "device": ..., "requires_grad": ...}``. Loading parses
JSON and tensor bytes only, so it can never execute code. Dicts whose keys are not
all strings (an optimizer's state is keyed by parameter index) and tuples keep their
types through ``{"$dict": [[key, value], ...]}`` and ``{"$tuple": [...]}``.

Files are written atomically and carry a checksum (see :mod:`.safetensors_io`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backend.device import Device
from ..dtypes import DType, get_dtype
from ..errors import CheckpointError
from ..tensor import Tensor
from .safetensors_io import FORMAT_KEY, atomic_write, encode, host_array, read_file, to_tensor

OBJECT_KEY = "volta.object"
FORMAT = "volta-checkpoint-1"

MapLocation = str | Device | dict[str, str] | Callable[[str], Any] | None


class _Encoder:
    """Turns an object tree into JSON-able data, collecting tensors by name."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.names: dict[int, str] = {}
        self.problems: list[str] = []

    def _name(self, path: str) -> str:
        name = path or "tensor"
        while name in self.arrays:
            name += "'"
        return name

    def encode(self, obj: Any, path: str) -> Any:
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int):
            return int(obj)
        if isinstance(obj, float):
            return float(obj)
        if isinstance(obj, Tensor):
            name = self.names.get(id(obj))
            if name is None:  # the same tensor twice is stored once
                name = self.names[id(obj)] = self._name(path)
                self.arrays[name] = host_array(obj)
            return {"$tensor": name, "device": str(obj.device),
                    "requires_grad": bool(obj.requires_grad)}
        if isinstance(obj, np.ndarray):
            name = self._name(path)
            self.arrays[name] = np.array(obj, order="C")
            return {"$ndarray": name}
        if isinstance(obj, np.generic):
            return self.encode(obj.item(), path)
        if isinstance(obj, DType):
            return {"$dtype": obj.name}
        if isinstance(obj, Device):
            return {"$device": str(obj)}
        if isinstance(obj, tuple):
            return {"$tuple": [self.encode(v, f"{path}/{i}") for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return [self.encode(v, f"{path}/{i}") for i, v in enumerate(obj)]
        if isinstance(obj, dict):
            if all(isinstance(k, str) and not k.startswith("$") for k in obj):
                return {k: self.encode(v, f"{path}/{k}" if path else k) for k, v in obj.items()}
            return {"$dict": [[self.encode(k, f"{path}/<key>"),
                               self.encode(v, f"{path}/{k}" if path else str(k))]
                              for k, v in obj.items()]}
        self.problems.append(f"{path or '<root>'}: {type(obj).__name__}")
        return None


def save(obj: Any, path: str | os.PathLike) -> None:
    """Save ``obj`` (nested dicts/lists/tuples of tensors and plain values) to ``path``.

    Typical content: ``{"model": model.state_dict(), "optimizer": opt.state_dict(),
    "scheduler": sched.state_dict(), "epoch": 3, "rng": vt.generator_states()}``.
    The write is atomic: a crash leaves any previous file at ``path`` intact.

    Args:
        obj: the object to save. Allowed leaves: Tensor, str, int, float, bool, None,
            DType, Device, NumPy arrays and scalars.
        path: the file to write.

    Raises:
        TypeError: listing every value of another type (no pickle fallback).
    """
    enc = _Encoder()
    tree = enc.encode(obj, "")
    if enc.problems:
        raise TypeError("vt.save: cannot store these values (checkpoints hold tensors, dicts, "
                        "lists, tuples, str, int, float, bool and None, never pickled "
                        "objects): " + "; ".join(enc.problems))
    meta = {FORMAT_KEY: FORMAT, OBJECT_KEY: json.dumps(tree, allow_nan=True)}
    atomic_write(path, encode(enc.arrays, meta))


def _target(saved: str, map_location: MapLocation) -> Device:
    if map_location is None:
        return Device(saved)
    if isinstance(map_location, dict):
        return Device(map_location.get(saved, saved))
    if callable(map_location) and not isinstance(map_location, Device):
        return Device(map_location(saved))
    return Device(map_location)


def load(path: str | os.PathLike, map_location: MapLocation = None) -> Any:
    """Load an object saved by :func:`save` (or any safetensors file, as a dict).

    Args:
        path: the file to read.
        map_location: where tensors go: None (the device each was saved from), a
            device (all of them), a dict ``{"cuda:0": "cpu"}`` remapping saved devices,
            or a function ``saved_device_str -> device``.

    Raises:
        CheckpointError: naming the file if it is missing, truncated, corrupt or not
            a checkpoint.
    """
    path = os.fspath(path)
    arrays, meta = read_file(path)
    if OBJECT_KEY not in meta:  # a plain safetensors file: a flat state dict
        dev = _target("cpu", map_location)
        return {k: to_tensor(a, dev) for k, a in arrays.items()}
    if meta.get(FORMAT_KEY) != FORMAT:
        raise CheckpointError(f"{path}: unknown checkpoint format {meta.get(FORMAT_KEY)!r}, "
                              f"expected {FORMAT!r}; it was written by a newer Volta?")
    try:
        tree = json.loads(meta[OBJECT_KEY])
    except ValueError as e:
        raise CheckpointError(f"{path}: the checkpoint's object description is corrupt "
                              f"({e})") from None
    cache: dict[str, Tensor] = {}

    def decode(node: Any) -> Any:
        if isinstance(node, list):
            return [decode(v) for v in node]
        if not isinstance(node, dict):
            return node
        if "$tensor" in node:
            name = node["$tensor"]
            if name not in arrays:
                raise CheckpointError(f"{path}: the checkpoint refers to a tensor {name!r} "
                                      "that the file does not hold")
            if name not in cache:
                t = to_tensor(arrays[name], _target(node.get("device", "cpu"), map_location))
                if node.get("requires_grad"):
                    t.requires_grad_(True)
                cache[name] = t
            return cache[name]
        if "$ndarray" in node:
            return arrays[node["$ndarray"]]
        if "$tuple" in node:
            return tuple(decode(v) for v in node["$tuple"])
        if "$dict" in node:
            return {_key(decode(k)): decode(v) for k, v in node["$dict"]}
        if "$dtype" in node:
            return get_dtype(node["$dtype"])
        if "$device" in node:
            return Device(node["$device"])
        return {k: decode(v) for k, v in node.items()}

    return decode(tree)


def _key(k: Any) -> Any:
    return tuple(k) if isinstance(k, list) else k


__all__ = ["save", "load"]
