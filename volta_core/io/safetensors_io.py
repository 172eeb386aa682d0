"""State dicts in the safetensors format, written atomically and checksummed.

A file written here is a plain safetensors file (PyTorch, JAX and the Hugging Face
tools read it) whose metadata also holds ``volta.sha256``: a SHA-256 over every
tensor's name, dtype, shape and bytes and over the other metadata entries. Loading
recomputes it, so a truncated file or a flipped byte is refused with a
:class:`~volta_core.errors.CheckpointError` naming the file. Files without a checksum
(written by other tools) load unchecked.

Writes go to a temporary file in the target's directory, which is flushed, fsynced
and renamed over the target with ``os.replace``; the directory is then fsynced. A
crash mid-write leaves the previous file untouched.

This module may use NumPy: only for host-side byte buffers, as the rules allow.
"""

from __future__ import annotations

import errno
import glob
import hashlib
import json
import os
import secrets
import socket
import time
import warnings
from typing import IO, Any

import numpy as np

from ..backend.device import Device
from ..backend.device import device as _device
from ..dtypes import get_dtype
from ..errors import CheckpointError
from ..tensor import Tensor

SHA_KEY = "volta.sha256"
FORMAT_KEY = "volta.format"
STATE_DICT_FORMAT = "volta-state-dict-1"
BF16_KEY = "volta.bf16_as_u16"
RESERVED_PREFIX = "volta."
_CHUNK = 1 << 24

_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16",
           "I64": "int64", "I32": "int32", "I16": "int16", "I8": "int8", "U64": "uint64",
           "U32": "uint32", "U16": "uint16", "U8": "uint8", "BOOL": "bool",
           "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "C64": "complex64",
           "C128": "complex128"}
# dtypes safetensors files hold that Volta has no tensor dtype for: widened losslessly
_WIDEN = {"uint16": "int32", "uint64": "int64", "float8_e4m3fn": "float32",
          "float8_e5m2": "float32"}
_STALE_AGE = 24 * 3600  # a temp file this old is stale whoever wrote it


# -- atomic writes -------------------------------------------------------------------------

def _write_chunks(f: Any, data: bytes) -> None:
    """Write ``data`` to the open file ``f`` in chunks (tests replace it to simulate a crash)."""
    view = memoryview(data)
    for start in range(0, len(view), _CHUNK):
        f.write(view[start:start + _CHUNK])


def atomic_write(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` so that the file is either the old one or the new one.

    The bytes go to a temporary file next to the target, which is flushed, fsynced and
    renamed over it; the directory is then fsynced so the rename survives a power
    loss. On any error the temporary file is removed and the target is untouched.
    As ``open(path, "wb")`` would: a symlink is written through (its target is
    replaced, the link stays), a read-only file raises ``PermissionError``, and a
    missing folder raises ``FileNotFoundError`` naming ``path``. Temporary files left
    by earlier saves that crashed are removed.
    """
    path = os.fspath(path)
    target = os.path.realpath(path)  # write through symlinks, as open() does
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, "No such file or directory (the folder "
                                f"{os.path.dirname(os.path.abspath(path))!r} does not exist)",
                                path)
    if os.path.exists(target):  # the permission check open(path, "wb") makes
        os.close(os.open(target, os.O_WRONLY))
    tmp = os.path.join(folder, f".{os.path.basename(target)}.{_owner()}"
                               f".{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        if hasattr(os, "fchmod"):  # the permissions a plainly created file would get
            os.fchmod(fd, _file_mode(target))
        with os.fdopen(fd, "wb") as f:
            _write_chunks(f, data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(folder)
    remove_stale_temps(target)


def _owner() -> str:
    """``host-pid``: lets a later save tell whether a temp file's writer still runs."""
    return f"{socket.gethostname().replace('.', '_')}-{os.getpid()}"


def remove_stale_temps(path: str | os.PathLike) -> list[str]:
    """Remove the temporary files of earlier saves of ``path`` that crashed.

    A temp file is stale when the process that wrote it (on this host) is gone, or when
    it is older than a day (written elsewhere, or by an older Volta). Returns the
    removed paths.
    """
    target = os.path.realpath(os.fspath(path))
    folder, base = os.path.split(target)
    host = socket.gethostname().replace(".", "_")
    removed = []
    for tmp in glob.glob(os.path.join(glob.escape(folder), f".{glob.escape(base)}.*.tmp")):
        owner = os.path.basename(tmp)[len(base) + 2:].split(".")[0]
        who, _, pid = owner.rpartition("-")
        try:
            stale = time.time() - os.stat(tmp).st_mtime > _STALE_AGE
            if not stale and who == host and pid.isdigit():
                stale = int(pid) != os.getpid() and not _alive(int(pid))
            if stale:
                os.unlink(tmp)
                removed.append(tmp)
        except OSError:  # removed meanwhile by another saver
            pass
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


_umask: int | None = None


def _file_mode(path: str) -> int:
    """The mode a plainly created file would get: the old file's, else 0666 & ~umask."""
    global _umask
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        pass
    if _umask is None:
        _umask = os.umask(0o022)
        os.umask(_umask)
    return 0o666 & ~_umask


def _fsync_dir(folder: str) -> None:
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse to fsync a directory
        pass
    finally:
        os.close(fd)


# -- encoding ------------------------------------------------------------------------------

def _contiguous(a: np.ndarray) -> np.ndarray:
    """``a`` itself if C-contiguous, else a C-ordered copy (keeps 0-d arrays 0-d)."""
    a = np.asarray(a)
    return a if a.flags.c_contiguous else np.array(a, order="C")


def host_array(t: Tensor) -> np.ndarray:
    """A C-contiguous NumPy copy (or view on the CPU) of a tensor's values."""
    return _contiguous(t.device.backend.to_host(t.detach().array))


def _little_endian(a: np.ndarray) -> np.ndarray:
    """``a`` with little-endian bytes, the byte order of safetensors files."""
    a = np.asarray(a)
    return a.astype(a.dtype.newbyteorder("<")) if a.dtype.byteorder == ">" else a


def _digest(arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = arrays[name]
        h.update(f"{name}\0{a.dtype.name}\0{list(a.shape)}\0".encode())
        h.update(memoryview(_contiguous(a).reshape(-1).view(np.uint8)))
    for key in sorted(metadata):
        if key != SHA_KEY:
            h.update(f"{key}\0{metadata[key]}\0".encode())
    return h.hexdigest()


def _safetensors() -> Any:
    """The ``safetensors`` package, or an ImportError saying how to install it."""
    try:
        import safetensors
        import safetensors.numpy  # noqa: F401
    except ImportError:
        raise ImportError("volta_core.io needs the safetensors package to read and write "
                          "files: pip install safetensors (or pip install 'volta[dev]')"
                          ) from None
    return safetensors


_bf16_ok: bool | None = None


def _bf16_supported() -> bool:
    """Whether the installed safetensors writes ml_dtypes' bfloat16 arrays as BF16."""
    global _bf16_ok
    if _bf16_ok is None:
        save = _safetensors().numpy.save
        try:
            import ml_dtypes

            save({"x": np.zeros(1, dtype=ml_dtypes.bfloat16)})
            _bf16_ok = True
        except Exception:
            _bf16_ok = False
    return _bf16_ok


def encode(arrays: dict[str, np.ndarray], metadata: dict[str, str] | None = None) -> bytes:
    """The bytes of a safetensors file holding ``arrays`` and ``metadata`` plus a checksum."""
    save = _safetensors().numpy.save
    meta = dict(metadata or {})
    meta.setdefault(FORMAT_KEY, STATE_DICT_FORMAT)  # with the checksum: 2 keys, see decode
    arrays = {k: _contiguous(_little_endian(v)) for k, v in arrays.items()}
    bf16 = sorted(k for k, v in arrays.items() if v.dtype.name == "bfloat16")
    if bf16 and not _bf16_supported():  # old safetensors: store the raw bits
        for k in bf16:
            arrays[k] = arrays[k].view(np.uint16)
        meta[BF16_KEY] = json.dumps(bf16)
    meta[SHA_KEY] = _digest(arrays, meta)
    return save(arrays, metadata=meta)


def decode(data: bytes, path: str = "<bytes>") -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Parse safetensors bytes into NumPy arrays and metadata, verifying the checksum.

    Raises:
        CheckpointError: naming ``path`` if the bytes are truncated, corrupt or fail
            the checksum.
    """
    deserialize = _safetensors().deserialize
    if len(data) < 8:
        raise CheckpointError(f"{path}: file is {len(data)} bytes long, too short to be a "
                              "safetensors file (truncated or empty)")
    try:
        n = int.from_bytes(data[:8], "little")
        header = json.loads(bytes(data[8:8 + n]).decode("utf-8"))
        meta = header.get("__metadata__") or {}
        if not isinstance(meta, dict):
            raise ValueError("__metadata__ is not an object")
        entries = deserialize(data)
    except Exception as e:
        raise CheckpointError(f"{path}: not a valid safetensors file, it is truncated or "
                              f"corrupt ({e}); restore it from a backup or re-save it") from None
    arrays = {}
    for name, info in entries:
        code = info["dtype"]
        if code not in _DTYPES:
            raise CheckpointError(f"{path}: tensor {name!r} has dtype {code}, which Volta does "
                                  f"not read; supported: {sorted(_DTYPES)}")
        try:
            arrays[name] = np.frombuffer(info["data"], dtype=_np_dtype(_DTYPES[code], path)
                                         ).reshape(tuple(info["shape"]))
        except (ValueError, TypeError) as e:
            raise CheckpointError(f"{path}: tensor {name!r} ({code}, shape {info['shape']}) "
                                  f"cannot be read: {e}") from None
    expected = meta.get(SHA_KEY)
    if expected is None and any(k.startswith(RESERVED_PREFIX) for k in meta):
        # Volta writes two volta.* keys, so one damaged key still leaves the other
        raise CheckpointError(f"{path}: the checksum entry is missing from a file written by "
                              "Volta, the header is corrupt; restore it from a backup or "
                              "re-save it")
    if expected is not None and _digest(arrays, meta) != expected:
        raise CheckpointError(f"{path}: checksum mismatch, the file is corrupt (a byte was "
                              "changed or the file was cut short); restore it from a backup "
                              "or re-save it")
    try:
        for name in json.loads(meta.get(BF16_KEY, "[]")):
            arrays[name] = arrays[name].view(_np_dtype("bfloat16", path))
    except (ValueError, TypeError, KeyError) as e:
        raise CheckpointError(f"{path}: entry {BF16_KEY!r} of the header is malformed "
                              f"({e!r})") from None
    return arrays, meta


def _np_dtype(name: str, path: str) -> np.dtype:
    if name not in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        return np.dtype(name)
    try:
        import ml_dtypes
    except ImportError:
        raise CheckpointError(f"{path}: holds {name} tensors; install ml_dtypes to read "
                              "them (pip install ml_dtypes)") from None
    return np.dtype(getattr(ml_dtypes, name))


def read_file(path: str | os.PathLike | IO[bytes]
              ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Read and verify a safetensors file (a path or a binary file object)."""
    if hasattr(path, "read"):
        data = path.read()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"expected a binary file object (opened with 'rb'), got one "
                            f"whose read() returns {type(data).__name__}")
        return decode(data, file_name(path))
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no such file") from None
    return decode(data, path)


def file_name(f: Any) -> str:
    """How errors name a path or a file object."""
    if hasattr(f, "read") or hasattr(f, "write"):
        name = getattr(f, "name", None)
        return name if isinstance(name, str) else f"<{type(f).__name__} object>"
    return os.fspath(f)


def to_tensor(array: np.ndarray, dev: Device, name: str = "tensor",
              path: str = "<bytes>") -> Tensor:
    """Put a host array on ``dev`` as a Tensor (no copy on the CPU).

    Dtypes Volta has no tensor dtype for are widened without loss (uint16 to int32,
    uint64 to int64 when every value fits, float8 to float32), with a warning.
    """
    kind = array.dtype.name
    if kind in _WIDEN:
        wide = _WIDEN[kind]
        if kind == "uint64" and array.size and int(array.max()) >= 2 ** 63:
            raise CheckpointError(f"{path}: tensor {name!r} is uint64 with values of 2**63 or "
                                  "more, which no Volta dtype holds; read it with "
                                  "safetensors.numpy.load_file")
        warnings.warn(f"{path}: tensor {name!r} is {kind}, which Volta has no dtype for; "
                      f"loaded as {wide} (same values)", stacklevel=3)
        array = array.astype(wide)
    elif kind.startswith("complex"):
        raise CheckpointError(f"{path}: tensor {name!r} is {kind}; Volta has no complex "
                              "dtype (read it with safetensors.numpy.load_file)")
    dt = get_dtype(array.dtype.name)
    native = dev.native_dtype(dt)
    if not array.flags.writeable:
        array = array.copy()
    return Tensor._make(dev.backend.from_host(array, dev.index, native), dev)


# -- public API ----------------------------------------------------------------------------

def save_state_dict(state_dict: dict[str, Tensor], path: str | os.PathLike,
                    metadata: dict[str, str] | None = None) -> None:
    """Save a flat ``{name: Tensor}`` dict as a safetensors file (atomically, checksummed).

    Args:
        state_dict: tensors by name, e.g. ``model.state_dict()``; any devices.
        path: the file to write (replaced atomically if it exists).
        metadata: extra ``{str: str}`` entries for the header (keys must not start
            with ``"volta."``).

    Example:
        >>> vt.io.save_state_dict(model.state_dict(), "model.safetensors")
    """
    if not isinstance(state_dict, dict):
        raise TypeError(f"save_state_dict: expected a dict of Tensors, got "
                        f"{type(state_dict).__name__}")
    bad = [f"{k!r} ({type(v).__name__})" for k, v in state_dict.items()
           if not isinstance(k, str) or not isinstance(v, Tensor)]
    if bad:
        raise TypeError("save_state_dict: expected str keys and Tensor values, got "
                        + ", ".join(bad) + "; use vt.save for nested checkpoints")
    meta = dict(metadata or {})
    bad = [repr(k) for k, v in meta.items() if not isinstance(k, str) or not isinstance(v, str)
           or k.startswith(RESERVED_PREFIX)]
    if bad:
        raise ValueError("save_state_dict: metadata must map str to str, with keys not "
                         f"starting with {RESERVED_PREFIX!r}; bad keys: " + ", ".join(bad))
    arrays = {k: host_array(v) for k, v in state_dict.items()}
    atomic_write(path, encode(arrays, meta))


def load_state_dict(path: str | os.PathLike, device: Any = None) -> dict[str, Tensor]:
    """Load a safetensors file as ``{name: Tensor}``, verifying its checksum if present.

    Args:
        path: the file to read (written by :func:`save_state_dict` or any safetensors
            writer, e.g. ``safetensors.torch.save_file``).
        device: where to put the tensors (default: ``"cpu"``, as safetensors does).

    Raises:
        CheckpointError: if the file is missing, truncated or corrupt.
    """
    arrays, _ = read_file(path)
    dev = _device("cpu" if device is None else device)
    return {k: to_tensor(a, dev, k, file_name(path)) for k, a in arrays.items()}


def load_metadata(path: str | os.PathLike) -> dict[str, str]:
    """The metadata of a safetensors file, without Volta's own ``volta.*`` entries."""
    _, meta = read_file(path)
    return {k: v for k, v in meta.items() if not k.startswith(RESERVED_PREFIX)}


__all__ = ["save_state_dict", "load_state_dict", "load_metadata", "atomic_write"]
