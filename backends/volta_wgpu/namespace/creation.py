"""Creation functions: ``asarray``, ``zeros``, ``full``, ``arange``, ``linspace``, ``eye``..."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import codegen as cg
from .. import dtypes as D
from .._errors import DTypeError
from ..array import Array, as_device, new_array
from ..dtypes import DType
from ..kernels.mapkernel import launch_map
from ..layout import prod

# host dtypes without a WGSL storage type are widened on upload
_WIDEN = {np.dtype("int8"): D.int32, np.dtype("int16"): D.int32, np.dtype("uint8"): D.uint32,
          np.dtype("uint16"): D.uint32}


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"negative dimensions are not allowed (shape {shape})")
    return shape


def _host_dtype(a: np.ndarray, obj: Any) -> DType:
    if a.dtype in _WIDEN:
        return _WIDEN[a.dtype]
    if not isinstance(obj, (np.ndarray, np.generic)):
        # Python data: floats -> float32, ints -> default int, bools -> bool
        if a.dtype.kind == "f":
            return D.float32
        if a.dtype.kind in "iu":
            return D.default_int()
    try:
        return D.as_dtype(a.dtype)
    except DTypeError:
        raise DTypeError(f"asarray: host dtype {a.dtype} has no wgpu equivalent; convert it "
                         f"first (e.g. .astype('float32'))") from None


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None,
            copy: bool | None = None) -> Array:
    """Make an Array from an Array, a NumPy array, a nested list or a Python scalar."""
    dev = as_device(device) if device is not None else None
    if isinstance(obj, Array):
        out = obj if dev is None or dev == obj.device else obj.to_device(dev)
        t = D.as_dtype(dtype) if dtype is not None else out.dtype
        if t is not out.dtype:
            if copy is False:
                raise ValueError("asarray: copy=False but a dtype conversion is needed")
            return _astype(out, t)
        if copy:
            return _astype(out, t)
        return out
    if copy is False:
        raise ValueError("asarray: copy=False is impossible for host data (it must be "
                         "uploaded to the device)")
    if hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        obj = np.from_dlpack(obj)
    if isinstance(obj, (list, tuple)) and _holds_arrays(obj):
        # a (nested) sequence of arrays: stack on the host, keeping their dtype
        host = _to_host(obj)
        if dtype is None:
            dtype = D.result_type(*[a for a in _flat_arrays(obj)])
        obj = np.asarray(host)
    a = np.asarray(obj)
    if a.dtype == object:
        raise TypeError(f"asarray: cannot convert {type(obj).__name__} to an array")
    t = D.as_dtype(dtype) if dtype is not None else _host_dtype(a, obj)
    D.check_supported(t, "asarray")
    if t is D.bool:
        host = np.ascontiguousarray(a != 0 if a.dtype != bool else a, dtype=np.uint32)
    else:
        host = np.ascontiguousarray(a, dtype=t.np)
    eng = (dev or as_device(None)).engine
    st = eng.upload(host.reshape(-1).view(np.uint8) if host.size else b"",
                    max(host.nbytes, 4))
    return Array(st, tuple(a.shape), t)


def _flat_arrays(obj: Any) -> list[Array]:
    if isinstance(obj, Array):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [a for o in obj for a in _flat_arrays(o)]
    return []


def _holds_arrays(obj: Any) -> bool:
    return bool(_flat_arrays(obj))


def _to_host(obj: Any) -> Any:
    if isinstance(obj, Array):
        from ..array import to_numpy
        return to_numpy(obj)
    if isinstance(obj, (list, tuple)):
        return [_to_host(o) for o in obj]
    return obj


def _astype(x: Array, t: DType) -> Array:
    from .elementwise import astype
    return astype(x, t)


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An uninitialised array."""
    t = D.as_dtype(dtype) if dtype is not None else D.float32
    return new_array(_shape(shape), t, as_device(device).engine)


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An array filled with ``fill_value``."""
    if dtype is None:
        dtype = (D.bool if isinstance(fill_value, bool) else D.default_int()
                 if isinstance(fill_value, int) else D.float32)
    t = D.as_dtype(dtype)
    if isinstance(fill_value, Array):
        fill_value = fill_value.item()
    out = new_array(_shape(shape), t, as_device(device).engine)
    return launch_map("{0}", [fill_value], [t], t, out=out, op="full")


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An array of zeros (float32 by default)."""
    return full(shape, 0, dtype=dtype or D.float32, device=device)


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An array of ones (float32 by default)."""
    return full(shape, 1, dtype=dtype or D.float32, device=device)


def _like(x: Array, dtype: Any, device: Any) -> tuple[DType, Any]:
    return (D.as_dtype(dtype) if dtype is not None else x.dtype,
            device if device is not None else x.device)


def empty_like(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
    """An uninitialised array shaped like ``x``."""
    t, dev = _like(x, dtype, device)
    return empty(x.shape, dtype=t, device=dev)


def zeros_like(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
    """Zeros shaped like ``x``."""
    t, dev = _like(x, dtype, device)
    return full(x.shape, 0, dtype=t, device=dev)


def ones_like(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
    """Ones shaped like ``x``."""
    t, dev = _like(x, dtype, device)
    return full(x.shape, 1, dtype=t, device=dev)


def full_like(x: Array, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """``fill_value`` shaped like ``x``."""
    t, dev = _like(x, dtype, device)
    return full(x.shape, fill_value, dtype=t, device=dev)


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None) -> Array:
    """Evenly spaced values in ``[start, stop)``."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    n = max(0, math.ceil((stop - start) / step))
    if dtype is None:
        isf = any(isinstance(v, float) for v in (start, stop, step))
        dtype = D.float32 if isf else D.default_int()
    t = D.as_dtype(dtype)
    out = new_array((n,), t, as_device(device).engine)
    if n == 0:
        return out
    ct = t if t.kind == "f" else (D.int64 if t is D.int64 else D.int32)
    if t is D.uint32:
        ct = D.int64 if D.int64 in D.supported() else D.int32
    expr = "{R}({0} + {T}(gi) * {1})"
    if ct.emu:  # int64 as a (lo, hi) pair
        expr = cg.cast("i64e_add({0}, i64e_mul(vec2<u32>(gi, 0u), {1}))", ct, t)
    return launch_map(expr, [start, step], [ct, ct], t, out=out, op="arange")


def linspace(start: float, stop: float, /, num: int, *, dtype: Any = None, device: Any = None,
             endpoint: bool = True) -> Array:
    """``num`` evenly spaced values from ``start`` to ``stop``."""
    t = D.as_dtype(dtype) if dtype is not None else D.float32
    out = new_array((int(num),), t, as_device(device).engine)
    if num == 0:
        return out
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    last = num - 1 if endpoint and num > 1 else -1
    ct = t if t.kind == "f" else D.float32
    expr = cg.cast("select({0} + {T}(gi) * {1}, {2}, i32(gi) == " + str(int(last)) + ")",
                   ct, t)
    return launch_map(expr, [float(start), float(step), float(stop)], [ct, ct, ct], t,
                      out=out, op="linspace")


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None,
        device: Any = None) -> Array:
    """A 2-d array with ones on the ``k``-th diagonal."""
    n_cols = n_rows if n_cols is None else n_cols
    t = D.as_dtype(dtype) if dtype is not None else D.float32
    out = new_array((n_rows, n_cols), t, as_device(device).engine)
    if n_rows * n_cols == 0:
        return out
    k = max(-n_rows - 1, min(int(k), n_cols + 1))  # no diagonal at all past the edges
    expr = (f"select({cg.const(t, 0)}, {cg.const(t, 1)}, "
            "i32(gi % u32({0})) == i32(gi / u32({0})) + {1})"
            if t is not D.bool else "(i32(gi % u32({0})) == i32(gi / u32({0})) + {1})")
    return launch_map(expr, [n_cols, k], [D.int32, D.int32], t, out=out, op="eye")


def _tri(x: Array, k: int, lower: bool) -> Array:
    if x.ndim < 2:
        raise ValueError("tril/triu: need an array of at least 2 dims")
    rows, cols = x.shape[-2:]
    k = max(-rows - 1, min(int(k), cols + 1))  # past the edges: all or nothing
    cmp = "<=" if lower else ">="
    zero = "false" if x.dtype is D.bool else "{R}(0)"
    expr = (f"select({zero}, {{0}}, i32(gi % u32({{1}})) - i32((gi / u32({{1}})) % u32({{2}}))"
            f" {cmp} {{3}})")
    if prod(x.shape) == 0:
        return new_array(x.shape, x.dtype, x.engine)
    return launch_map(expr, [x, cols, rows, k], [x.dtype, D.int32, D.int32, D.int32],
                      x.dtype, op="tril")


def tril(x: Array, /, *, k: int = 0) -> Array:
    """Zero the elements above the ``k``-th diagonal."""
    return _tri(x, k, True)


def triu(x: Array, /, *, k: int = 0) -> Array:
    """Zero the elements below the ``k``-th diagonal."""
    return _tri(x, k, False)


def meshgrid(*arrays: Array, indexing: str = "xy") -> list[Array]:
    """Coordinate grids from 1-d arrays (views, broadcast)."""
    from .manipulation import broadcast_to, reshape
    n = len(arrays)
    shape = [a.shape[0] for a in arrays]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        s = [1] * n
        j = i
        if indexing == "xy" and n >= 2 and i < 2:
            j = 1 - i
        s[j] = a.shape[0]
        out.append(broadcast_to(reshape(a, tuple(s)), tuple(shape)))
    return out


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """An Array from any object with ``__dlpack__``: a volta_wgpu Array on the same device
    is taken as it is (unless ``copy=True``); anything else is copied onto the device
    (wgpu buffers cannot alias host memory, so ``copy=False`` raises ``BufferError``)."""
    if isinstance(x, Array):
        same = device is None or as_device(device) == x.device
        if same and not copy:
            return x
        if copy is False:
            raise BufferError(f"from_dlpack: moving an array from {x.device} to {device} "
                              f"needs a copy; pass copy=None or copy=True")
        return asarray(x, device=device, copy=True)
    if copy is False:
        raise BufferError("from_dlpack: wgpu arrays cannot alias host memory; pass "
                          "copy=None or copy=True")
    return asarray(np.from_dlpack(x), device=device)
