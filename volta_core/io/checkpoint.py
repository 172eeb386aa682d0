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

import inspect
import json
import os
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from ..backend.device import Device
from ..dtypes import DType, get_dtype
from ..errors import BackendUnavailableError, CheckpointError, DeviceError
from ..tensor import Tensor
from .safetensors_io import (
    _DTYPES,
    FORMAT_KEY,
    atomic_write,
    encode,
    file_name,
    host_array,
    read_file,
    to_tensor,
)

OBJECT_KEY = "volta.object"
FORMAT = "volta-checkpoint-1"
MAX_DEPTH = 100  # nesting a checkpoint may have (real ones have about 5 levels)

MapLocation = (str | Device | dict[str, str] | Callable[[str], Any]
               | Callable[[Tensor, str], Any] | None)
FileLike = str | os.PathLike | IO[bytes]
_MARKERS = ("$tensor", "$ndarray", "$tuple", "$dict", "$dtype", "$device")
_SAVABLE_ARRAY_DTYPES = {v for v in _DTYPES.values() if not v.startswith("complex")}


class CheckpointValueError(CheckpointError, TypeError):
    """``vt.save`` was given a value a checkpoint cannot hold (so it could not load it back)."""


def _why_not(obj: Any) -> str:
    """Why ``obj`` cannot go in a checkpoint, and what to save instead."""
    kind = type(obj).__name__
    if callable(getattr(obj, "state_dict", None)):
        return (f"a {kind} object; save its state_dict() instead: "
                "vt.save(obj.state_dict(), f), and restore with obj.load_state_dict(vt.load(f))")
    if isinstance(obj, complex):
        return "complex (store .real and .imag as two floats)"
    return kind


class _Encoder:
    """Turns an object tree into JSON-able data, collecting tensors by name."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self.names: dict[int, str] = {}
        self.problems: list[str] = []
        self.active: set[int] = set()  # containers on the path being encoded

    def _name(self, path: str) -> str:
        name = path or "tensor"
        while name in self.arrays:
            name += "'"
        return name

    def _problem(self, path: str, why: str) -> None:
        self.problems.append(f"{path or '<root>'}: {why}")

    def encode(self, obj: Any, path: str, depth: int = 0) -> Any:
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
            if obj.dtype.name not in _SAVABLE_ARRAY_DTYPES:
                self._problem(path, f"a NumPy array of dtype {obj.dtype} (checkpoints hold "
                                    "bool, integer and float arrays; store strings as a list "
                                    "of str, complex values as .real and .imag)")
                return None
            name = self._name(path)
            self.arrays[name] = np.array(obj, order="C")
            return {"$ndarray": name}
        if isinstance(obj, np.generic):
            return self.encode(obj.item(), path, depth)
        if isinstance(obj, DType):
            return {"$dtype": obj.name}
        if isinstance(obj, Device):
            return {"$device": str(obj)}
        if not isinstance(obj, (tuple, list, dict)):
            self._problem(path, _why_not(obj))
            return None
        if id(obj) in self.active:
            self._problem(path, f"this {type(obj).__name__} contains itself (a "
                                "self-referencing container cannot be stored)")
            return None
        if depth >= MAX_DEPTH:
            self._problem(path, f"nested more than {MAX_DEPTH} levels deep")
            return None
        self.active.add(id(obj))
        try:
            return self._container(obj, path, depth + 1)
        finally:
            self.active.discard(id(obj))

    def _container(self, obj: Any, path: str, depth: int) -> Any:
        if isinstance(obj, tuple):
            return {"$tuple": [self.encode(v, f"{path}/{i}", depth) for i, v in enumerate(obj)]}
        if isinstance(obj, list):
            return [self.encode(v, f"{path}/{i}", depth) for i, v in enumerate(obj)]
        if all(isinstance(k, str) and not k.startswith("$") for k in obj):
            return {k: self.encode(v, f"{path}/{k}" if path else k, depth)
                    for k, v in obj.items()}
        return {"$dict": [[self.encode(k, f"{path}/<key>", depth),
                           self.encode(v, f"{path}/{k}" if path else str(k), depth)]
                          for k, v in obj.items()]}


def save(obj: Any, f: FileLike) -> None:
    """Save ``obj`` (nested dicts/lists/tuples of tensors and plain values) to ``f``.

    Typical content: ``{"model": model.state_dict(), "optimizer": opt.state_dict(),
    "scheduler": sched.state_dict(), "epoch": 3, "rng": vt.generator_states()}``.
    Writing to a path is atomic: a crash leaves any previous file at ``path`` intact.
    As with ``torch.save``, a symlink is written through and a read-only file raises
    ``PermissionError``.

    Args:
        obj: the object to save. Allowed leaves: Tensor, str, int, float, bool, None,
            DType, Device, NumPy arrays (bool, integer, float) and scalars.
        f: a path, or a binary file object open for writing (written in place).

    Raises:
        CheckpointValueError: (a ``CheckpointError`` and a ``TypeError``) listing every
            value that could not be loaded back, with what to save instead (a module or
            optimizer: its ``state_dict()``). Nothing is written then.
    """
    enc = _Encoder()
    tree = enc.encode(obj, "")
    if enc.problems:
        raise CheckpointValueError(
            "vt.save: cannot store these values (checkpoints hold tensors, dicts, lists, "
            "tuples, str, int, float, bool and None, never pickled objects): "
            + "; ".join(enc.problems))
    meta = {FORMAT_KEY: FORMAT, OBJECT_KEY: json.dumps(tree, allow_nan=True)}
    data = encode(enc.arrays, meta)
    if hasattr(f, "write"):
        f.write(data)
        if hasattr(f, "flush"):
            f.flush()
    else:
        atomic_write(f, data)


class _Placer:
    """Where ``map_location`` sends a tensor or a device saved on device ``saved``."""

    def __init__(self, map_location: MapLocation, path: str) -> None:
        self.loc = map_location
        self.path = path
        self.storage_style = False  # torch's fn(storage, location)
        if callable(map_location) and not isinstance(map_location, (Device, dict, str)):
            try:
                params = inspect.signature(map_location).parameters.values()
                positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                              p.POSITIONAL_OR_KEYWORD)]
                self.storage_style = len(positional) >= 2
            except (TypeError, ValueError):
                pass
        elif not isinstance(map_location, (Device, dict, str, type(None))):
            raise TypeError(f"vt.load: map_location must be a device string, a Device, a dict "
                            f"or a function, got {type(map_location).__name__}")

    def _mapped(self, saved: str, probe: Tensor | None) -> Any:
        loc = self.loc
        if loc is None:
            return saved
        if isinstance(loc, dict):
            for key in (saved, saved.partition(":")[0]):
                for k, v in loc.items():
                    if str(k) == key:
                        return v
            return saved
        if isinstance(loc, (str, Device)):
            return loc
        if self.storage_style:
            out = loc(probe if probe is not None else _empty_cpu(), saved)
            return saved if out is None else out
        return loc(saved)

    def device(self, saved: str, entry: str) -> Device:
        target = self._mapped(saved, None)
        if isinstance(target, Tensor):
            return target.device
        return self._resolve(target, saved, entry)

    def tensor(self, array: np.ndarray, saved: str, name: str, entry: str) -> Tensor:
        if self.storage_style:
            cpu = to_tensor(array, Device("cpu"), name, self.path)
            out = self._mapped(saved, cpu)
            if isinstance(out, Tensor):
                return out
            dev = self._resolve(out, saved, entry)
            return cpu if dev.type == "cpu" else cpu.to(dev)
        dev = self._resolve(self._mapped(saved, None), saved, entry)
        return to_tensor(array, dev, name, self.path)

    def _resolve(self, target: Any, saved: str, entry: str) -> Device:
        try:
            return Device(target)
        except (DeviceError, BackendUnavailableError) as e:
            how = ("map_location gave " + str(target) if self.loc is not None
                   else "pass map_location='cpu' (or another device here) to vt.load to load "
                        "it elsewhere")
            raise CheckpointError(f"{self.path}: entry {entry!r} was saved on {saved}, "
                                  f"which cannot be used here ({e}); {how}") from None


def _empty_cpu() -> Tensor:
    return to_tensor(np.zeros(0, np.float32), Device("cpu"))


def load(f: FileLike, map_location: MapLocation = None, *,
         weights_only: bool | None = None) -> Any:
    """Load an object saved by :func:`save` (or any safetensors file, as a dict, or a
    file ``torch.save`` wrote: see :mod:`volta_core.io.torch_format`).

    Args:
        f: a path, or a binary file object open for reading.
        map_location: where tensors (and saved ``Device`` values) go: None (where each
            was saved), a device string or ``Device`` (all of them), a dict
            ``{"cuda:0": "cpu"}`` remapping saved devices, a function
            ``saved_device_str -> device``, or PyTorch's ``fn(storage, location)``
            (return a tensor, a device, or None for the saved location).
        weights_only: accepted for PyTorch compatibility. Loading is always safe: a
            checkpoint is JSON and tensor bytes, never unpickled, and a ``torch.save``
            file is unpickled by PyTorch's weights-only rules, so no code can run.

    Raises:
        CheckpointError: naming the file (and the entry) if it is missing, truncated,
            corrupt, malformed or not a checkpoint, or if a device it needs is not
            usable here (with the ``map_location`` to pass).
    """
    if weights_only not in (None, True, False):
        raise TypeError(f"vt.load: weights_only must be a bool, got {weights_only!r}")
    path = file_name(f)
    place = _Placer(map_location, path)
    from . import torch_format

    found = torch_format.kind(f)
    if found == "zip":  # torch.save's file: read with weights-only rules
        return torch_format.load(f, place, path)
    if found == "legacy":
        raise CheckpointError(f"{path}: a PyTorch checkpoint in the format before PyTorch "
                              "1.6; re-save it with a current PyTorch (torch.save) and load "
                              "that")
    arrays, meta = read_file(f)
    if OBJECT_KEY not in meta:  # a plain safetensors file: a flat state dict
        return {k: place.tensor(a, "cpu", k, k) for k, a in arrays.items()}
    if meta.get(FORMAT_KEY) != FORMAT:
        raise CheckpointError(f"{path}: unknown checkpoint format {meta.get(FORMAT_KEY)!r}, "
                              f"expected {FORMAT!r}; it was written by a newer Volta?")
    try:
        tree = json.loads(meta[OBJECT_KEY])
    except (ValueError, RecursionError) as e:
        raise CheckpointError(f"{path}: the checkpoint's object description is corrupt "
                              f"({type(e).__name__}: {e})") from None
    return _Decoder(path, arrays, place).decode(tree, "", 0)


class _Decoder:
    """Rebuilds the saved object; any malformed node is a CheckpointError naming its entry."""

    def __init__(self, path: str, arrays: dict[str, np.ndarray], place: _Placer) -> None:
        self.path, self.arrays, self.place = path, arrays, place
        self.cache: dict[str, Tensor] = {}

    def decode(self, node: Any, entry: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise CheckpointError(f"{self.path}: entry {entry!r} is nested more than "
                                  f"{MAX_DEPTH} levels deep; the file is malformed")
        try:
            return self._decode(node, entry, depth + 1)
        except CheckpointError:
            raise
        except Exception as e:  # a crafted structure: KeyError, TypeError, DTypeError, ...
            raise CheckpointError(f"{self.path}: entry {entry or '<root>'!r} is malformed "
                                  f"({type(e).__name__}: {e})") from None

    def _decode(self, node: Any, entry: str, depth: int) -> Any:
        def sub(k: Any) -> str:
            return f"{entry}/{k}" if entry else str(k)

        if isinstance(node, list):
            return [self.decode(v, sub(i), depth) for i, v in enumerate(node)]
        if not isinstance(node, dict):
            return node
        marker = next((k for k in node if k.startswith("$")), None)
        if marker is None:
            return {k: self.decode(v, sub(k), depth) for k, v in node.items()}
        if marker not in _MARKERS:
            raise CheckpointError(f"{self.path}: entry {entry or '<root>'!r} has an unknown "
                                  f"marker {marker!r}; the file is malformed")
        value = node[marker]
        if marker == "$tensor":
            return self._tensor(value, node, entry)
        if marker == "$ndarray":
            return self.arrays[_str(value, "$ndarray")]
        if marker == "$tuple":
            return tuple(self.decode(v, sub(i), depth) for i, v in enumerate(_list(value)))
        if marker == "$dict":
            out = {}
            for pair in _list(value):
                k, v = _list(pair)
                key = _key(self.decode(k, sub("<key>"), depth))
                out[key] = self.decode(v, sub(key), depth)
            return out
        if marker == "$dtype":
            return get_dtype(_str(value, "$dtype"))
        return self.place.device(_str(value, "$device"), entry)

    def _tensor(self, name: Any, node: dict, entry: str) -> Tensor:
        name = _str(name, "$tensor")
        if name not in self.arrays:
            raise CheckpointError(f"{self.path}: entry {entry!r} refers to a tensor {name!r} "
                                  "that the file does not hold")
        if name not in self.cache:
            saved = _str(node.get("device", "cpu"), "device")
            t = self.place.tensor(self.arrays[name], saved, name, entry)
            grad = node.get("requires_grad", False)
            if not isinstance(grad, bool):
                raise TypeError(f"requires_grad must be a bool, got {grad!r}")
            if grad:
                t.requires_grad_(True)
            self.cache[name] = t
        return self.cache[name]


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {type(value).__name__}")
    return value


def _list(value: Any) -> list:
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {type(value).__name__}")
    return value


def _key(k: Any) -> Any:
    return tuple(_key(v) for v in k) if isinstance(k, list) else k


__all__ = ["save", "load", "CheckpointValueError"]
