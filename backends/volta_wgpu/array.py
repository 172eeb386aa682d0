"""The :class:`Array` type: a view (shape, strides, offset) of a pooled wgpu buffer."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes as D
from .dtypes import DType
from .engine import Engine, Storage, get_engine
from .layout import contiguous_strides, prod


class Device:
    """A wgpu device of the namespace (``Device(0)`` is ``"wgpu:0"``)."""

    __slots__ = ("index",)

    def __init__(self, index: int = 0) -> None:
        self.index = index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.index == self.index

    def __hash__(self) -> int:
        return hash(("wgpu", self.index))

    def __repr__(self) -> str:
        return f"Device('wgpu:{self.index}')"

    @property
    def engine(self) -> Engine:
        """The engine of this device."""
        return get_engine(self.index)


def as_device(device: Any) -> Device:
    """Parse ``None``, a Device, an int or ``"wgpu:N"``."""
    if device is None:
        return Device(0)
    if isinstance(device, Device):
        return device
    if isinstance(device, int):
        return Device(device)
    if isinstance(device, str) and (device == "wgpu" or device.startswith("wgpu:")):
        return Device(int(device.split(":")[1]) if ":" in device else 0)
    from volta_wgpu._errors import DTypeError
    raise DTypeError(f"wgpu: unknown device {device!r}; expected 'wgpu' or 'wgpu:N'")


class Array:
    """An n-d array on a wgpu device.

    Attributes:
        shape: the dims.
        dtype: a :class:`volta_wgpu.dtypes.DType`.
        strides: per-dim steps, in elements (may be 0 or negative).
        offset: index of element ``[0, ..., 0]`` in the buffer, in elements.
    """

    __slots__ = ("_s", "_node", "shape", "dtype", "strides", "offset", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, storage: Storage, shape: tuple[int, ...], dtype: DType,
                 strides: tuple[int, ...] | None = None, offset: int = 0) -> None:
        self._s = storage  # None while pending (lazy mode): then _node is its graph
        self._node = None
        self.shape = shape
        self.dtype = dtype
        self.strides = contiguous_strides(shape) if strides is None else strides
        self.offset = offset

    # -- storage ---------------------------------------------------------------------
    @property
    def _st(self) -> Storage:
        """The array's buffer; a pending (lazily recorded) array is computed first."""
        st = self._s
        if st is None:
            from .lazy import materialize
            st = self._s = materialize(self._node)
            self._node = None
        return st

    @_st.setter
    def _st(self, storage: Storage) -> None:
        self._s = storage
        self._node = None

    # -- attributes ------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        """Number of dims."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements."""
        return prod(self.shape)

    @property
    def device(self) -> Device:
        """The device holding the array."""
        return Device(self.engine.index)

    @property
    def engine(self) -> Engine:
        """The engine of the array's device."""
        st = self._s
        return st.engine if st is not None else self._node.engine

    @property
    def is_contiguous(self) -> bool:
        """True when the elements are row-major and dense (views may not be)."""
        s = 1
        for n, st in zip(reversed(self.shape), reversed(self.strides)):
            if n != 1 and st != s:
                return False
            s *= n
        return True

    @property
    def T(self) -> Array:  # noqa: N802 - Array-API name
        """Reverse of the dims (only for ndim <= 2, as the standard says)."""
        if self.ndim > 2:
            raise ValueError("Array.T: needs ndim <= 2; use permute_dims or .mT")
        return permute_dims(self, tuple(range(self.ndim))[::-1])

    @property
    def mT(self) -> Array:  # noqa: N802 - Array-API name
        """Transpose of the last two dims."""
        return matrix_transpose(self)

    def __reduce__(self) -> tuple:
        # pickle and copy.deepcopy go through the host: the buffer is a device handle.
        # A view comes back as a contiguous array of its own (the base is not shared)
        return (_rebuild, (to_numpy(self), self._st.engine.index))

    def __array_namespace__(self, api_version: str | None = None) -> Any:
        import volta_wgpu
        return volta_wgpu

    # DLPack: a wgpu buffer has no address another library can import. WebGPU (wgpu-native
    # and browsers alike) exposes no native handle or device pointer of a buffer (no VkBuffer,
    # MTLBuffer or ID3D12Resource, no memory export), and the standard's DLPack device types
    # name no WebGPU memory. So the array is exported as what a kDLCPU consumer (NumPy,
    # PyTorch on the CPU) can take: a host copy, downloaded when __dlpack__ is called (one
    # sync). __dlpack_device__ names the device of that capsule, as the consumer needs it
    # to; copy=False, or any other dl_device, raises BufferError as the standard asks.
    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: bool | None = None) -> Any:
        """A DLPack capsule of a host copy (kDLCPU): a wgpu buffer cannot be shared in
        place, so ``copy=False`` raises ``BufferError``, as does a ``dl_device`` other
        than ``(kDLCPU, 0)``."""
        if copy is False:
            raise BufferError("__dlpack__: a wgpu buffer cannot be shared with another "
                              "library; it is exported as a host copy: pass copy=None or "
                              "copy=True")
        if dl_device is not None and tuple(dl_device) != (1, 0):
            raise BufferError(f"__dlpack__: a wgpu array is exported to the host only "
                              f"(dl_device (1, 0), kDLCPU), not to {tuple(dl_device)}")
        host = to_numpy(self)
        if max_version is None:
            return host.__dlpack__()
        return host.__dlpack__(max_version=max_version)

    def __dlpack_device__(self) -> tuple[int, int]:
        """``(kDLCPU, 0)``: the device of the capsule :meth:`__dlpack__` exports (a host
        copy; the data itself stays on the wgpu device)."""
        return (1, 0)

    def to_device(self, device: Any, stream: Any = None) -> Array:
        """Return the array on ``device`` (a copy through the host if it differs)."""
        dev = as_device(device)
        if dev == self.device:
            return self
        return asarray(to_numpy(self), device=dev)

    # -- conversion ------------------------------------------------------------------
    def _scalar(self, op: str) -> Any:
        if self.size != 1:
            raise TypeError(f"{op}: only arrays of one element convert to Python scalars "
                            f"(got shape {self.shape})")
        return to_numpy(self).reshape(()).item()

    def __float__(self) -> float:
        return float(self._scalar("__float__"))

    def __complex__(self) -> complex:
        return complex(self._scalar("__complex__"))

    def __int__(self) -> int:
        return int(self._scalar("__int__"))

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError("__index__: only integer arrays can be used as an index")
        return int(self._scalar("__index__"))

    def __bool__(self) -> bool:
        return bool(self._scalar("__bool__"))

    def item(self) -> Any:
        """The single element as a Python scalar."""
        if self.size != 1:
            raise ValueError(f"item: array of shape {self.shape} has {self.size} elements")
        return to_numpy(self).reshape(()).item()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        body = np.array2string(to_numpy(self), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype.name}, device='wgpu:{self.engine.index}')"

    __str__ = __repr__

    # -- indexing --------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Array:
        return getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        setitem(self, key, value)

    # -- operators -------------------------------------------------------------------
    def __add__(self, o): return add(self, o)
    def __radd__(self, o): return add(o, self)
    def __sub__(self, o): return subtract(self, o)
    def __rsub__(self, o): return subtract(o, self)
    def __mul__(self, o): return multiply(self, o)
    def __rmul__(self, o): return multiply(o, self)
    def __truediv__(self, o): return divide(self, o)
    def __rtruediv__(self, o): return divide(o, self)
    def __floordiv__(self, o): return floor_divide(self, o)
    def __rfloordiv__(self, o): return floor_divide(o, self)
    def __mod__(self, o): return remainder(self, o)
    def __rmod__(self, o): return remainder(o, self)
    def __pow__(self, o): return pow(self, o)
    def __rpow__(self, o): return pow(o, self)
    def __matmul__(self, o): return matmul(self, o)
    def __rmatmul__(self, o): return matmul(o, self)
    def __and__(self, o): return bitwise_and(self, o)
    def __rand__(self, o): return bitwise_and(o, self)
    def __or__(self, o): return bitwise_or(self, o)
    def __ror__(self, o): return bitwise_or(o, self)
    def __xor__(self, o): return bitwise_xor(self, o)
    def __rxor__(self, o): return bitwise_xor(o, self)
    def __lshift__(self, o): return bitwise_left_shift(self, o)
    def __rshift__(self, o): return bitwise_right_shift(self, o)
    def __neg__(self): return negative(self)
    def __pos__(self): return positive(self)
    def __abs__(self): return abs(self)
    def __invert__(self): return bitwise_invert(self)
    def __eq__(self, o): return equal(self, o)  # type: ignore[override]
    def __ne__(self, o): return not_equal(self, o)  # type: ignore[override]
    def __lt__(self, o): return less(self, o)
    def __le__(self, o): return less_equal(self, o)
    def __gt__(self, o): return greater(self, o)
    def __ge__(self, o): return greater_equal(self, o)

    __hash__ = None  # type: ignore[assignment]

    def _inplace(self, fn, o) -> Array:
        r = fn(self, o)
        if r.dtype is not self.dtype:
            r = astype(r, self.dtype)
        if r.shape != self.shape:
            from ._errors import ShapeError
            raise ShapeError(f"in-place op: result shape {r.shape} differs from the "
                             f"array's shape {self.shape}")
        if r._s is None:  # lazy: the fused result is written straight into self
            from .lazy import write_into
            if write_into(self, r):
                return self
        copy_into(self, r)
        return self

    def __iadd__(self, o): return self._inplace(add, o)
    def __isub__(self, o): return self._inplace(subtract, o)
    def __imul__(self, o): return self._inplace(multiply, o)
    def __itruediv__(self, o): return self._inplace(divide, o)
    def __ifloordiv__(self, o): return self._inplace(floor_divide, o)
    def __imod__(self, o): return self._inplace(remainder, o)
    def __ipow__(self, o): return self._inplace(pow, o)
    def __iand__(self, o): return self._inplace(bitwise_and, o)
    def __ior__(self, o): return self._inplace(bitwise_or, o)
    def __ixor__(self, o): return self._inplace(bitwise_xor, o)


def new_array(shape: tuple[int, ...], dtype: DType, engine: Engine | None = None) -> Array:
    """An uninitialised contiguous array."""
    eng = engine or get_engine()
    D.check_supported(dtype)
    return Array(eng.alloc(max(prod(shape), 1) * dtype.itemsize), tuple(shape), dtype)


def _rebuild(host: np.ndarray, index: int) -> Array:
    """Unpickle an :class:`Array`: upload the host copy to device ``index``."""
    return asarray(host, device=Device(index))


def to_numpy(x: Array) -> np.ndarray:
    """Copy an array to a NumPy array on the host (a sync point)."""
    if not isinstance(x, Array):
        return np.asarray(x)
    if x.size == 0:
        return np.zeros(x.shape, dtype=x.dtype.np)
    if not x.is_contiguous or (x.offset * x.dtype.itemsize) % 4:
        x = contiguous_copy(x)
    isz = x.dtype.itemsize
    raw = x.engine.read(x._st, x.offset * isz, x.size * isz)
    if x.dtype is D.bool:
        return np.frombuffer(raw, dtype=np.uint32).astype(bool).reshape(x.shape)
    return np.frombuffer(raw, dtype=x.dtype.np).reshape(x.shape).copy()


from .namespace.creation import asarray  # noqa: E402
from .namespace.elementwise import (  # noqa: E402
    abs,
    add,
    astype,
    bitwise_and,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    contiguous_copy,
    copy_into,
    divide,
    equal,
    floor_divide,
    greater,
    greater_equal,
    less,
    less_equal,
    multiply,
    negative,
    not_equal,
    positive,
    pow,
    remainder,
    subtract,
)
from .namespace.indexing import getitem, setitem  # noqa: E402
from .namespace.linalg import matmul, matrix_transpose  # noqa: E402
from .namespace.manipulation import permute_dims  # noqa: E402
