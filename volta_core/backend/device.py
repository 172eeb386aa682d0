"""Devices: parsing device strings and the default device."""

from __future__ import annotations

import logging
import os
from typing import Any

from ..dtypes import DType, get_dtype
from ..errors import DeviceError, DTypeError, VoltaError
from .registry import backend_for_type, backends, device_count

log = logging.getLogger("volta")


class Device:
    """A device of one backend, such as ``cpu``, ``cuda:1`` or ``wgpu:0``.

    Devices are interned: ``Device("cuda") is Device("cuda:0")``. A device carries its
    backend, its Array-API namespace ``xp`` and the namespace's device object.

    Args:
        spec: a device string (``"cpu"``, ``"cuda:1"``, ``"auto"``) or a ``Device``.
    """

    __slots__ = ("type", "index", "backend", "xp", "native", "_native_dtypes", "_dtypes",
                 "__weakref__")
    _interned: dict[Any, Device] = {}

    def __new__(cls, spec: str | Device = "cpu") -> Device:
        if isinstance(spec, Device):
            return spec
        dev = cls._interned.get(spec)
        if dev is None:
            type_, index = _parse(spec)
            dev = cls._interned.get((type_, index))
            if dev is None:
                dev = object.__new__(cls)
                dev._init(type_, index)
                cls._interned[(type_, index)] = dev
            if spec != "auto":
                cls._interned[spec] = dev
        return dev

    def _init(self, type_: str, index: int) -> None:
        backend = backend_for_type(type_)
        count = device_count(backend)
        if index >= count:
            raise DeviceError(f"device {type_}:{index} does not exist: backend "
                              f"{backend.name!r} sees {count} {type_} device(s)")
        self.type = type_
        self.index = index
        self.backend = backend
        self.xp = backend.namespace(index)
        self.native = backend.native_device(index)
        self._native_dtypes: dict[str, Any] = {}
        self._dtypes: dict[Any, DType] = {}

    def native_dtype(self, dtype: DType | str) -> Any:
        """The namespace's dtype for a Volta dtype, or a ``DTypeError`` if unsupported."""
        name = dtype.name if isinstance(dtype, DType) else get_dtype(dtype).name
        nd = self._native_dtypes.get(name)
        if nd is None:
            if name not in self.backend.dtype_names(self.index):
                raise DTypeError(
                    f"dtype {name} is not supported on device {self} (backend "
                    f"{self.backend.name!r} supports {list(self.backend.dtype_names(self.index))})")
            nd = self._native_dtypes[name] = self.backend.native_dtype(self.index, name)
        return nd

    def volta_dtype(self, native_dtype: Any) -> DType:
        """The Volta dtype of one of the namespace's dtypes."""
        d = self._dtypes.get(native_dtype)
        if d is None:
            d = self._dtypes[native_dtype] = get_dtype(self.backend.dtype_name(native_dtype))
        return d

    @property
    def name(self) -> str:
        """The hardware's name, e.g. ``NVIDIA H100 80GB HBM3``."""
        return self.backend.device_name(self.index)

    def synchronize(self) -> None:
        """Wait for all work queued on this device."""
        self.backend.synchronize(self.index)

    def __repr__(self) -> str:
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.type == "cpu" else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = Device(other)
            except Exception:
                return False
        return self is other

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (Device, (str(self),))


def _parse(spec: Any) -> tuple[str, int]:
    if not isinstance(spec, str):
        raise DeviceError(f"expected a device string like 'cpu' or 'cuda:0', got {spec!r}")
    if spec == "auto":
        return _auto()
    type_, sep, index = spec.strip().partition(":")
    if not type_ or (sep and not index.isdigit()):
        raise DeviceError(f"invalid device string {spec!r}; expected 'type' or 'type:index' "
                          "such as 'cpu', 'cuda:1' or 'wgpu:0'")
    return type_, int(index) if sep else 0


def _auto() -> tuple[str, int]:
    """Pick CUDA, else a wgpu GPU adapter, else the CPU."""
    rows = {b.device_type: b for b in backends()}
    choice = "cpu"
    if rows.get("cuda") and rows["cuda"].available:
        choice = "cuda"
    elif rows.get("wgpu") and rows["wgpu"].available and backend_for_type("wgpu").is_gpu:
        choice = "wgpu"
    log.info("device 'auto' picked %s", choice)
    return choice, 0


_default: Device | None = None


def set_default_device(device: str | Device) -> None:
    """Set the device on which creation functions put new tensors.

    Args:
        device: a device string (``"cuda"``, ``"auto"``) or ``Device``.
    """
    global _default
    _default = Device(device)


def get_default_device() -> Device:
    """Return the default device: ``set_default_device``'s, else ``$VOLTA_DEVICE``, else cpu."""
    global _default
    if _default is None:
        env = os.environ.get("VOLTA_DEVICE")
        try:
            _default = Device(env or "cpu")
        except VoltaError as exc:
            if not env:
                raise
            raise type(exc)(f"the default device comes from the environment variable "
                            f"VOLTA_DEVICE={env!r}, which cannot be used: {exc}. Unset it or "
                            "set it to a usable device (see volta_core.backends())") from None
    return _default


def device(spec: str | Device | None = None) -> Device:
    """Return the :class:`Device` for ``spec`` (the default device when None)."""
    return get_default_device() if spec is None else Device(spec)


def forget_devices(keep: set | None = None) -> None:
    """Drop interned devices whose backend is not in ``keep`` (after plugins change)."""
    global _default
    for key, dev in list(Device._interned.items()):
        if keep is None or dev.backend not in keep:
            del Device._interned[key]
            if dev is _default:
                _default = None
