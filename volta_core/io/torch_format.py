"""Reading PyTorch's own checkpoint files: what ``torch.save`` writes (a zip holding a
pickle and the raw bytes of each storage), without PyTorch and without running code.

The pickle is read with PyTorch's ``weights_only=True`` rules: only tensors, parameters,
storages, dtypes, devices, sizes, containers and numbers (and NumPy scalars and arrays)
may be rebuilt; any other class or function named in the file is refused with its name,
so a checkpoint can't execute anything while it loads. A full pickled model
(``torch.save(model)``) is refused that way; save its ``state_dict()`` instead.
"""

from __future__ import annotations

import collections
import io
import pickle
import zipfile
from typing import IO, Any

import numpy as np

from ..errors import CheckpointError

_STORAGES = {"FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
             "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
             "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
             "BoolStorage": "bool", "UntypedStorage": "uint8"}
_DTYPES = {"float32": "float32", "float": "float32", "float64": "float64",
           "double": "float64", "float16": "float16", "half": "float16",
           "bfloat16": "bfloat16", "int64": "int64", "long": "int64", "int32": "int32",
           "int": "int32", "int16": "int16", "short": "int16", "int8": "int8",
           "uint8": "uint8", "bool": "bool"}


def kind(f: str | IO[bytes]) -> str | None:
    """``"zip"`` for ``torch.save``'s format (since PyTorch 1.6), ``"legacy"`` for the
    older bare pickle, None for anything else (safetensors, Volta's own)."""
    if hasattr(f, "read"):
        if not (hasattr(f, "seek") and hasattr(f, "tell")):
            return None
        start = f.tell()
        head = f.read(4)
        f.seek(start)
    else:
        try:
            with open(f, "rb") as fh:
                head = fh.read(4)
        except OSError:
            return None
    if head == b"PK\x03\x04":
        return "zip"
    # a pickle (protocol 2+) of PyTorch's magic number, a long integer
    return "legacy" if head[:1] == b"\x80" and head[2:3] == b"\x8a" else None


class _StorageType:
    """A storage class named in the pickle (``torch.FloatStorage``): its element dtype."""

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype


class _Storage:
    """A storage's elements (a flat NumPy array) and the device it was saved from."""

    def __init__(self, array: np.ndarray, location: str) -> None:
        self.array, self.location = array, location


def _multiarray() -> Any:
    try:
        from numpy._core import multiarray
    except ImportError:  # NumPy 1
        from numpy.core import multiarray
    return multiarray


def _np_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def load(f: str | IO[bytes], place: Any, path: str) -> Any:
    """The object ``torch.save`` wrote to ``f``, its tensors Volta's, placed by ``place``
    (``checkpoint._Placer``: the ``map_location`` rules)."""
    try:
        archive = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError) as e:
        raise CheckpointError(f"{path}: not a readable PyTorch checkpoint ({e})") from None
    with archive:
        names = archive.namelist()
        pickles = [n for n in names if n == "data.pkl" or n.endswith("/data.pkl")]
        if not pickles:
            raise CheckpointError(f"{path}: a zip file without data.pkl is not a PyTorch "
                                  "checkpoint")
        prefix = pickles[0][:-len("data.pkl")]
        order = "little"
        if prefix + "byteorder" in names:
            order = archive.read(prefix + "byteorder").decode().strip()
        storages: dict[str, _Storage] = {}

        def storage(pid: tuple) -> _Storage:
            if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
                raise CheckpointError(f"{path}: unknown persistent id {pid!r}")
            _, kind, key, location, _numel = pid[:5]
            if key not in storages:
                dtype = _np_dtype(kind.dtype).newbyteorder("<" if order == "little" else ">")
                raw = np.frombuffer(archive.read(f"{prefix}data/{key}"), dtype=dtype)
                storages[key] = _Storage(raw.astype(raw.dtype.newbyteorder("="), copy=False),
                                         str(location))
            return storages[key]

        unpickler = _Unpickler(io.BytesIO(archive.read(pickles[0])), place, path)
        unpickler.persistent_load = storage
        try:
            return unpickler.load()
        except CheckpointError:
            raise
        except Exception as e:
            raise CheckpointError(f"{path}: the PyTorch checkpoint could not be read "
                                  f"({type(e).__name__}: {e})") from None


class _Unpickler(pickle.Unpickler):
    """Rebuilds only what PyTorch's ``weights_only`` loading allows."""

    def __init__(self, data: IO[bytes], place: Any, path: str) -> None:
        super().__init__(data)
        self.place, self.path = place, path

    def find_class(self, module: str, name: str) -> Any:
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module == "_codecs" and name == "encode":  # how protocol 2 pickles bytes
            import codecs

            return codecs.encode
        if module == "builtins" and name in ("set", "frozenset", "slice", "range",
                                             "complex", "bytearray"):
            return getattr(__import__("builtins"), name)
        if module == "torch" and name in _STORAGES:
            return _StorageType(_STORAGES[name])
        if module in ("torch", "torch.storage") and name in ("UntypedStorage",
                                                             "TypedStorage"):
            return _StorageType("uint8")
        if module == "torch" and name in _DTYPES:
            from ..dtypes import get_dtype

            return get_dtype(_DTYPES[name])
        if module == "torch" and name == "Size":
            return tuple
        if module == "torch" and name == "device":
            return lambda *a: ":".join(str(p) for p in a if p is not None)
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return self._tensor
        if module == "torch._utils" and name == "_rebuild_tensor_v3":
            return self._tensor_v3
        if module == "torch._utils" and name in ("_rebuild_parameter",
                                                 "_rebuild_parameter_with_state"):
            return self._parameter
        if module == "torch._tensor" and name == "_rebuild_from_type_v2":
            return lambda func, _type, args, _state: func(*args)
        if module in ("numpy.core.multiarray", "numpy._core.multiarray") and name in (
                "scalar", "_reconstruct"):
            return getattr(_multiarray(), name)
        if module == "numpy" and name in ("dtype", "ndarray"):
            return getattr(np, name)
        if module.startswith("numpy.dtypes") and name.endswith("DType"):
            return type(np.dtype(name[:-len("DType")].lower() or "float64"))
        raise CheckpointError(
            f"{self.path}: the checkpoint names {module}.{name}, which weights-only loading "
            "does not rebuild (PyTorch's torch.load(weights_only=True) refuses it too); "
            "a pickled model can't be loaded without its code: save its state_dict() "
            "with PyTorch and load that")

    def _tensor(self, store: _Storage, offset: int, size: tuple, stride: tuple,
                requires_grad: bool, _hooks: Any = None, _metadata: Any = None) -> Any:
        return self._rebuild(store, store.array.dtype, offset, size, stride, requires_grad)

    def _tensor_v3(self, store: _Storage, offset: int, size: tuple, stride: tuple,
                   requires_grad: bool, _hooks: Any, dtype: Any,
                   _metadata: Any = None) -> Any:
        return self._rebuild(store, _np_dtype(dtype.name), offset, size, stride,
                             requires_grad)

    def _rebuild(self, store: _Storage, dtype: np.dtype, offset: int, size: tuple,
                 stride: tuple, requires_grad: bool) -> Any:
        flat = store.array if store.array.dtype == dtype else store.array.view(dtype)
        shape = tuple(int(s) for s in size)
        if 0 in shape:
            values = np.empty(shape, dtype=dtype)
        else:
            steps = tuple(int(s) * dtype.itemsize for s in stride)
            values = np.lib.stride_tricks.as_strided(flat[int(offset):], shape, steps).copy()
        t = self.place.tensor(values, store.location, "tensor", "tensor")
        return t.requires_grad_() if requires_grad and t.dtype.is_floating_point else t

    def _parameter(self, data: Any, requires_grad: bool, _hooks: Any = None,
                   _state: Any = None) -> Any:
        from ..nn.parameter import Parameter

        return Parameter(data, requires_grad=requires_grad)
