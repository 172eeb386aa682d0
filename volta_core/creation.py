"""Creation functions: ``tensor``, ``zeros``, ``arange``, ``randn``, ... and seeding."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .backend.device import Device
from .backend.device import device as _device
from .dtypes import (
    DType,
    bool_,
    checked_scalar,
    float16,
    float64,
    get_default_dtype,
    get_dtype,
    int64,
    promote_types,
)
from .errors import DTypeError
from .tensor import Tensor, tensor_method

DeviceLike = str | Device | None


def _infer_dtype(data: Any) -> DType:
    """The dtype PyTorch infers for ``data``: NumPy scalars and arrays and tensors keep
    theirs, Python bools, ints and floats are bool, int64 and the default float, and a
    sequence takes the promotion of its elements' (an empty one: the default float)."""
    out = None
    stack = [data]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
            continue
        if isinstance(v, Tensor):
            dt = v.dtype
        elif hasattr(v, "dtype") and hasattr(v, "shape"):  # before float: np.float64 is one
            dt = get_dtype(str(v.dtype))
        elif isinstance(v, bool):
            dt = bool_
        elif isinstance(v, int):
            dt = int64
        elif isinstance(v, float):
            dt = get_default_dtype()
        else:
            raise TypeError(f"tensor(): cannot make a tensor from {type(v).__name__}")
        out = dt if out is None or out is dt else promote_types(out, dt)
    return get_default_dtype() if out is None else out


def _array_from(data: Any, dtype: Any, dev: Device) -> Any:
    """A backend array on ``dev`` holding ``data`` (copied)."""
    if isinstance(data, Tensor):
        data = data.detach().to(dev).array
        if dtype is None:
            return dev.xp.asarray(data, copy=True)
        return dev.xp.astype(data, dev.native_dtype(get_dtype(dtype)), copy=True)
    if isinstance(data, (list, tuple, int, float, bool)):
        dt = get_dtype(dtype) if dtype is not None else _infer_dtype(data)
        data = _flatten_tensors(data)
        if dt is float16:  # Python floats are doubles: through float32, as PyTorch
            return _half_through_float32(data, dev)
        return dev.backend.from_host(data, dev.index, dev.native_dtype(dt))
    if hasattr(data, "dtype") and hasattr(data, "shape"):  # NumPy or another library's array
        dt = get_dtype(dtype) if dtype is not None else get_dtype(str(data.dtype))
        if dt is float16 and str(data.dtype) == "float64":
            return _half_through_float32(data, dev)
        return dev.backend.from_host(data, dev.index, dev.native_dtype(dt), copy=True)
    raise TypeError(f"tensor(): cannot make a tensor from {type(data).__name__}")


def _half_through_float32(data: Any, dev: Device) -> Any:
    """Host doubles (Python floats, a float64 array) as float16 on ``dev`` through float32,
    the step PyTorch's conversion takes (its rounding differs from a direct one at float32
    ties: 2.51660163 becomes 2.515625, not the nearer 2.5175781)."""
    f32 = dev.backend.from_host(data, dev.index, dev.native_dtype(get_dtype("float32")))
    return dev.xp.astype(f32, dev.native_dtype(float16))


def _flatten_tensors(data: Any) -> Any:
    if isinstance(data, (list, tuple)):
        return [_flatten_tensors(v) for v in data]
    if isinstance(data, Tensor):
        return data.tolist()
    return data


def tensor(data: Any, dtype: Any = None, device: DeviceLike = None,
           requires_grad: bool = False) -> Tensor:
    """Make a tensor by copying ``data``.

    Args:
        data: a number, (nested) list, NumPy array or Tensor.
        dtype: the dtype; inferred as in PyTorch when None (floats are float32).
        device: the device; the default device when None.
        requires_grad: record operations on the result for autograd.
    """
    return Tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: DeviceLike = None) -> Tensor:
    """Make a tensor from ``data``, sharing memory when it already fits (no copy)."""
    if isinstance(data, Tensor):
        return data.to(device=device if device is not None else data.device, dtype=dtype)
    dev = _device(device)
    if dev.type == "cpu" and hasattr(data, "__array_interface__") and (
            dtype is None or get_dtype(dtype).name == str(data.dtype)):
        return from_numpy(data)
    return Tensor(data, dtype=dtype, device=dev)


def from_numpy(array: Any) -> Tensor:
    """Make a CPU tensor that shares memory with a NumPy array."""
    dev = Device("cpu")
    get_dtype(str(array.dtype))
    return Tensor._make(dev.backend.from_host(array, dev.index, copy=False), dev)


def from_dlpack(obj: Any, device: DeviceLike = None) -> Tensor:
    """Make a tensor that shares memory with a DLPack-capable array (no copy).

    Args:
        obj: an array with ``__dlpack__`` (PyTorch, CuPy, NumPy, ...).
        device: the Volta device the memory is on; guessed from ``__dlpack_device__``.
    """
    if device is None:
        kind, index = obj.__dlpack_device__()
        device = {1: "cpu", 2: f"cuda:{index}"}.get(int(kind), "cpu")
    dev = _device(device)
    return Tensor._make(dev.xp.from_dlpack(obj), dev)


def _size(op: str, size: tuple) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    if any(not isinstance(s, int) or s < 0 for s in size):
        raise ValueError(f"{op}: sizes must be non-negative ints, got {size}")
    return tuple(size)


def _make(dt: Any, device: DeviceLike, requires_grad: bool, fill) -> Tensor:
    dev = _device(device)
    dt = get_dtype(dt) if dt is not None else get_default_dtype()
    t = Tensor._make(fill(dev.xp, dev.native_dtype(dt), dev.native), dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def zeros(*size: int, dtype: Any = None, device: DeviceLike = None,
          requires_grad: bool = False) -> Tensor:
    """A tensor of zeros of shape ``size``."""
    s = _size("zeros", size)
    return _make(dtype, device, requires_grad, lambda xp, dt, d: xp.zeros(s, dtype=dt, device=d))


def ones(*size: int, dtype: Any = None, device: DeviceLike = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ones of shape ``size``."""
    s = _size("ones", size)
    return _make(dtype, device, requires_grad, lambda xp, dt, d: xp.ones(s, dtype=dt, device=d))


def empty(*size: int, dtype: Any = None, device: DeviceLike = None,
          requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """An uninitialised tensor of shape ``size`` (``memory_format`` accepted, as every
    tensor is row-major)."""
    s = _size("empty", size)
    return _make(dtype, device, requires_grad, lambda xp, dt, d: xp.empty(s, dtype=dt, device=d))


def _scalar_dtype(value: Any) -> DType:
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    return get_default_dtype()


def full(size: Sequence[int], fill_value: Any, dtype: Any = None, device: DeviceLike = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of shape ``size`` filled with ``fill_value`` (dtype inferred from it)."""
    s = _size("full", (size,) if isinstance(size, int) else tuple(size))
    if getattr(fill_value, "shape", None) == () and hasattr(fill_value, "item"):
        fill_value = fill_value.item()  # a NumPy scalar or a 0-d tensor
    dtype = dtype if dtype is not None else _scalar_dtype(fill_value)
    one = math.prod(s) == 1  # PyTorch's one-element fill checks float16 less
    fill_value = checked_scalar("full", get_dtype(dtype), fill_value, floats=not one,
                                fill=one)
    return _make(dtype, device, requires_grad,
                 lambda xp, dt, d: xp.full(s, fill_value, dtype=dt, device=d))


def arange(start: float, end: float | None = None, step: float = 1, dtype: Any = None,
           device: DeviceLike = None, requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; ``arange(n)`` is 0..n-1."""
    if end is None:
        start, end = 0, start
    narrow_int = None  # an integer dtype other than int64, from float bounds
    if dtype is not None and not get_dtype(dtype).is_floating_point and any(
            isinstance(v, float) for v in (start, end, step)):
        if get_dtype(dtype) is int64:
            # PyTorch converts the bounds and the step to int64 first (toward zero):
            # arange(0, 10, 1.5, dtype=int64) is 0..9
            start, end, step = (int(v) for v in (start, end, step))
        else:  # the other integer dtypes count the elements with the float values and
            # then step by the step toward zero (arange(0, 10, 1.5, dtype=int32) is 0..6)
            narrow_int = get_dtype(dtype)
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    if (end - start) * step < 0:
        raise ValueError(f"arange: the bounds [{start}, {end}) are inconsistent with the sign "
                         f"of step {step}; swap them or negate the step")
    if narrow_int is not None:
        return _integer_arange(start, end, step, narrow_int, device, requires_grad)
    if dtype is None:
        floats = any(isinstance(v, float) for v in (start, end, step))
        dtype = get_default_dtype() if floats else int64
    return _make(dtype, device, requires_grad,
                 lambda xp, dt, d: xp.arange(start, end, step, dtype=dt, device=d))


def _integer_arange(start: float, end: float, step: float, dt: DType, device: DeviceLike,
                    requires_grad: bool) -> Tensor:
    """``arange`` of an int32/int16/int8/uint8 dtype from float arguments, as PyTorch's:
    ``ceil((end - start) / step)`` elements, ``int(start) + i * int(step)`` (a step below
    1 repeats the start), wrapped to the dtype (bounds checked by :func:`arange`)."""
    cpu = _device("cpu")
    xp = cpu.xp
    n = math.ceil((end - start) / step)
    values = int(start) + xp.arange(n, dtype=xp.int64) * int(step)
    out = Tensor._make(xp.astype(values, cpu.native_dtype(dt)), cpu).to(_device(device))
    return out.requires_grad_(True) if requires_grad else out


def linspace(start: float, end: float, steps: int, dtype: Any = None,
             device: DeviceLike = None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    if not isinstance(steps, int) or steps < 0:
        raise ValueError(f"linspace: the number of steps must be a non-negative int, got "
                         f"{steps!r}")
    dt = get_dtype(dtype) if dtype is not None else get_default_dtype()
    dev = _device(device)
    held = dev.backend.dtype_names(dev.index)  # computed in float64 where the device has it
    work = dev if "float64" in held and dt.name in held else _device("cpu")
    values = work.xp.astype(_linspace_values(work, start, end, steps, dt),
                            work.native_dtype(dt))
    out = Tensor._make(values, work).to(dev)
    return out.requires_grad_(True) if requires_grad else out


def _linspace_values(dev: Device, start: float, end: float, steps: int, dt: DType) -> Any:
    """PyTorch's linspace as ``dev``'s arrays: the first half counted up from ``start``, the
    rest down from ``end`` (so both ends are exact), in the dtype's own arithmetic; integer
    dtypes take the bounds toward zero and step in float64, each value toward zero."""
    xp = dev.xp
    f32, f64 = dev.native_dtype(get_dtype("float32")), dev.native_dtype(float64)
    if steps == 1:  # the start alone, as its dtype takes it
        return xp.asarray([float(start) if dt.is_floating_point else float(int(start))],
                          dtype=f64)
    i = xp.arange(steps, dtype=f64)
    back = (steps - 1) - i
    low = i < steps // 2
    # PyTorch's compiled kernel fuses each multiply-add (linspace(-5, 5, 7)[3] is
    # 5 - 1.6666666 * 3 = 1.2e-7 in float32, not 0; an int64 linspace truncates
    # 0.9999999999999997, not 1.0): one rounding of the exact value, as _fma gives
    if not dt.is_floating_point:
        a, b = float(int(start)), float(int(end))
        step = (b - a) / max(steps - 1, 1)
        return xp.trunc(xp.where(low, _fma(xp, step, i, a), _fma(xp, -step, back, b)))
    if dt.name == "float64":
        a, b = float(start), float(end)
        step = (b - a) / max(steps - 1, 1)
        return xp.where(low, _fma(xp, step, i, a), _fma(xp, -step, back, b))
    if dt.itemsize == 2:  # float16/bfloat16: every operation rounded to the dtype
        native = dev.native_dtype(dt)

        def r(v: Any) -> Any:
            return xp.astype(xp.astype(xp.asarray(v, dtype=f32), native), f32)

        a, b = r(float(start)), r(float(end))
        step = r(r(b - a) / float(max(steps - 1, 1)))
        i, back = xp.astype(i, f32), xp.astype(back, f32)
        return xp.where(low, r(a + r(step * r(i))), r(b - r(step * r(back))))
    # float32: a float32 product is exact in float64, so one rounding of the float64 sum
    # is the fused result
    a, b = xp.asarray(float(start), dtype=f32), xp.asarray(float(end), dtype=f32)
    step = float(xp.astype((b - a) / xp.asarray(float(max(steps - 1, 1)), dtype=f32), f64))
    a, b = float(xp.astype(a, f64)), float(xp.astype(b, f64))
    return xp.astype(xp.where(low, a + step * i, b - step * back), f32)


def _fma(xp: Any, x: float, y: Any, z: float) -> Any:
    """``x * y + z`` in float64 rounded once (as a fused multiply-add) for an array ``y``
    of integers: the product's rounding error by Veltkamp/Dekker splitting, the sum's by
    TwoSum."""
    p = x * y

    def split(v: Any) -> tuple:
        c = 134217729.0 * v  # 2**27 + 1
        hi = c - (c - v)
        return hi, v - hi

    xh, xl = split(xp.full_like(y, x))
    yh, yl = split(y)
    e = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl  # p + e == x * y exactly
    s = p + z
    bb = s - p
    err = (p - (s - bb)) + (z - bb)  # s + err == p + z exactly
    return s + (err + e)


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None,
                  device: DeviceLike = None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` with the element strides ``stride`` (a view
    of a buffer just large enough for its farthest element), as PyTorch's."""
    from .ops.movement import as_strided

    size, stride = tuple(int(v) for v in size), tuple(int(v) for v in stride)
    if len(size) != len(stride):
        raise ValueError(f"empty_strided: mismatch in length of strides and shape: "
                         f"{len(stride)} strides for {len(size)} dims")
    if any(v < 0 for v in size + stride):
        raise ValueError(f"empty_strided: sizes and strides must be non-negative, got "
                         f"size {size} and stride {stride}")
    extent = 0 if 0 in size else 1 + sum((n - 1) * st for n, st in zip(size, stride))
    out = as_strided(empty(extent, dtype=dtype, device=device), size, stride)
    return out.requires_grad_(True) if requires_grad else out


def scalar_tensor(s: Any, dtype: Any = None, device: DeviceLike = None,
                  requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding the number ``s``, of the default float dtype unless ``dtype``
    is given (``scalar_tensor(3)`` is ``tensor(3.)``)."""
    dt = get_dtype(dtype) if dtype is not None else get_default_dtype()
    out = tensor(s, dtype=dt, device=device)
    return out.requires_grad_(True) if requires_grad else out


def eye(n: int, m: int | None = None, dtype: Any = None, device: DeviceLike = None,
        requires_grad: bool = False) -> Tensor:
    """An ``n x m`` matrix with ones on the diagonal."""
    return _make(dtype, device, requires_grad,
                 lambda xp, dt, d: xp.eye(n, m, dtype=dt, device=d))


# -- random -------------------------------------------------------------------------------

def _generator(dev: Device, generator: Any = None, op: str = "random"):
    """The backend generator to draw from on ``dev`` (see :mod:`volta_core.random`)."""
    from .random import draw_from

    return draw_from(op, generator, dev)


def _random(op: str, size: tuple, dtype: Any, device: DeviceLike, requires_grad: bool,
            draw, generator: Any = None) -> Tensor:
    s = _size(op, size)
    dt = get_dtype(dtype) if dtype is not None else get_default_dtype()
    if not dt.is_floating_point:
        raise DTypeError(f"{op}: expected a floating dtype, got {dt.name}")
    dev = _device(device)
    t = Tensor._make(draw(_generator(dev, generator, op), s, dev.native_dtype(dt)), dev)
    return t.requires_grad_(True) if requires_grad else t


def rand(*size: int, generator: Any = None, dtype: Any = None, device: DeviceLike = None,
         requires_grad: bool = False) -> Tensor:
    """Samples from the uniform distribution on [0, 1).

    Args:
        size: the shape, as ints or one sequence.
        generator: a :class:`vt.Generator` to draw from (the device's default when None).
    """
    return _random("rand", size, dtype, device, requires_grad,
                   lambda g, s, dt: g.uniform(s, dt, 0.0, 1.0), generator)


def randn(*size: int, generator: Any = None, dtype: Any = None, device: DeviceLike = None,
          requires_grad: bool = False) -> Tensor:
    """Samples from the standard normal distribution (``generator`` as in :func:`rand`)."""
    return _random("randn", size, dtype, device, requires_grad,
                   lambda g, s, dt: g.normal(s, dt, 0.0, 1.0), generator)


def randint(low: int = 0, high: Any = None, size: Any = None, *, generator: Any = None,
            dtype: Any = None, device: DeviceLike = None, requires_grad: bool = False
            ) -> Tensor:
    """Integers drawn uniformly from ``[low, high)``.

    Both PyTorch forms: ``randint(high, size)`` (from 0) and ``randint(low, high, size)``.
    """
    if size is None:
        if isinstance(high, (tuple, list)) or (high is not None and hasattr(high, "__len__")):
            low, high, size = 0, low, high
        else:
            raise TypeError("randint() missing the required argument 'size' (a tuple of "
                            "ints): call randint(high, size) or randint(low, high, size)")
    if high is None:
        low, high = 0, low
    if high <= low:
        # RuntimeError as PyTorch's random_ check, so ported ``except`` clauses still match
        raise RuntimeError(f"randint: expected low < high, got low={low}, high={high} "
                           "(values are drawn from [low, high), so high must exceed low)")
    if requires_grad:
        raise RuntimeError("randint: only tensors of floating point dtype can require "
                           "gradients")
    dev = _device(device)
    dt = get_dtype(dtype) if dtype is not None else int64
    s = _size("randint", (size,) if isinstance(size, int) else tuple(size))
    gen = _generator(dev, generator, "randint")
    draw_dt = dt if dt.kind in "iu" else int64  # a float dtype: integers drawn, then cast
    out = Tensor._make(gen.integers(int(low), int(high), s, dev.native_dtype(draw_dt)), dev)
    return out if draw_dt is dt else out.to(dt)


def randperm(n: int, *, generator: Any = None, dtype: Any = None, device: DeviceLike = None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0..n-1``."""
    if not isinstance(n, int) or n < 0:
        raise RuntimeError(f"randperm: n must be a non-negative int, got {n!r}")
    dev = _device(device)
    dt = dev.native_dtype(get_dtype(dtype) if dtype is not None else int64)
    t = Tensor._make(_generator(dev, generator, "randperm").permutation(n, dt), dev)
    return t.requires_grad_(True) if requires_grad else t


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Any = None) -> Tensor:
    """Draw category indices with probabilities proportional to the rows of ``input``.

    Sampling runs on ``input``'s device with the Gumbel-max trick (no host round trip).

    Args:
        input: non-negative weights of shape ``(n,)`` or ``(batch, n)``.
        num_samples: how many indices to draw per row.
        replacement: draw with replacement; without it, ``num_samples <= n``.
        generator: a :class:`vt.Generator` to draw from.
    """
    from .autograd.grad_mode import no_grad

    if input.ndim not in (1, 2) or input.shape[-1] == 0:
        raise ValueError(f"multinomial: expected weights of shape (n,) or (batch, n) with "
                         f"n > 0, got {input.shape}")
    n = input.shape[-1]
    if not replacement and num_samples > n:
        raise ValueError(f"multinomial: cannot draw {num_samples} samples from {n} "
                         "categories without replacement; pass replacement=True")
    _check_weights(input)
    with no_grad():
        dt = input.dtype if input.dtype.is_floating_point else get_default_dtype()
        from .ops.elementwise import where

        w = input.detach().to(dt)
        positive = w > 0  # a zero weight is log 0 = -inf, without the warning of log(0)
        logp = where(positive, where(positive, w, 1.0).log(), -math.inf)
        shape = (*input.shape[:-1], num_samples, n) if replacement else input.shape
        u = rand(*shape, dtype=dt, device=input.device, generator=generator)
        gumbel = -(-u.clamp(1e-12, 1.0 - 1e-7).log()).log()
        if replacement:
            return (logp.unsqueeze(-2) + gumbel).argmax(dim=-1)
        return (logp + gumbel).topk(num_samples, dim=-1).indices


def _check_weights(input: Tensor) -> None:
    """PyTorch's checks: finite non-negative weights, each row with a positive sum."""
    xp = input.device.xp
    w = (input if input.dtype.is_floating_point else input.to(get_default_dtype())).array
    if bool(xp.any(xp.logical_not(xp.isfinite(w)) | (w < 0))):
        raise ValueError("multinomial: the weights contain inf, NaN or a negative value")
    if not bool(xp.all(xp.sum(w, axis=-1) > 0)):
        raise ValueError("multinomial: invalid distribution: a row of weights sums to 0")


def generator_states() -> dict[str, dict]:
    """The state of every created device generator, by device string (for checkpoints)."""
    return {str(d): _generator(d).get_state() for d in set(Device._interned.values())}


def set_generator_states(states: dict[str, dict]) -> None:
    """Restore states returned by :func:`generator_states`.

    The state of a device that is not usable here (a checkpoint saved after touching
    wgpu, loaded where wgpu is absent) is skipped with a warning.
    """
    import warnings

    from .errors import BackendUnavailableError, DeviceError

    for name, state in states.items():
        try:
            dev = Device(name)
        except (BackendUnavailableError, DeviceError) as e:
            warnings.warn(f"set_generator_states: skipped the generator state of {name}, "
                          f"which is not usable here ({e})", stacklevel=2)
            continue
        gen = _generator(dev)
        gen.set_state(state)


# -- *_like and new_* ---------------------------------------------------------------------

def _like(fn, name: str):
    def like(input: Tensor, dtype: Any = None, device: DeviceLike = None,
             requires_grad: bool = False, memory_format: Any = None) -> Tensor:
        return fn(*input.shape, dtype=dtype or input.dtype, device=device or input.device,
                  requires_grad=requires_grad)

    like.__name__ = name
    like.__doc__ = f"``{fn.__name__}`` with the shape, dtype and device of ``input``."
    return like


zeros_like = _like(zeros, "zeros_like")
ones_like = _like(ones, "ones_like")
empty_like = _like(empty, "empty_like")


def rand_like(input: Tensor, *, generator: Any = None, dtype: Any = None,
              device: DeviceLike = None, requires_grad: bool = False) -> Tensor:
    """``rand`` with the shape, dtype and device of ``input``."""
    return rand(*input.shape, generator=generator, dtype=dtype or input.dtype,
                device=device or input.device, requires_grad=requires_grad)


def randn_like(input: Tensor, *, generator: Any = None, dtype: Any = None,
               device: DeviceLike = None, requires_grad: bool = False) -> Tensor:
    """``randn`` with the shape, dtype and device of ``input``."""
    return randn(*input.shape, generator=generator, dtype=dtype or input.dtype,
                 device=device or input.device, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value: Any, dtype: Any = None, device: DeviceLike = None,
              requires_grad: bool = False) -> Tensor:
    """``full`` with the shape, dtype and device of ``input``."""
    return full(input.shape, fill_value, dtype=dtype or input.dtype,
                device=device or input.device, requires_grad=requires_grad)


def randint_like(input: Tensor, low: int, high: int | None = None, *, generator: Any = None,
                 dtype: Any = None, device: DeviceLike = None) -> Tensor:
    """``randint`` with the shape, dtype and device of ``input``."""
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, generator=generator, dtype=dtype or input.dtype,
                   device=device or input.device)


def _new(self: Tensor, make: Any, size: Any, dtype: Any, device: Any,
         requires_grad: bool, *args: Any) -> Tensor:
    """``make(size, *args)`` with this tensor's dtype and device unless given."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    t = make(size, *args, dtype=dtype or self.dtype, device=device or self.device)
    return t.requires_grad_() if requires_grad else t


@tensor_method()
def new_zeros(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    """Zeros on this tensor's device, of its dtype unless given."""
    return _new(self, zeros, size, dtype, device, requires_grad)


@tensor_method()
def new_ones(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """Ones on this tensor's device, of its dtype unless given."""
    return _new(self, ones, size, dtype, device, requires_grad)


@tensor_method()
def new_empty(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` on this tensor's device, of its dtype unless given (zeroed:
    Volta hands out no uninitialised memory)."""
    return _new(self, zeros, size, dtype, device, requires_grad)


@tensor_method()
def new_full(self: Tensor, size: Sequence[int], fill_value: Any, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """A filled tensor on this tensor's device, of its dtype unless given."""
    return _new(self, full, (size,), dtype, device, requires_grad, fill_value)


@tensor_method()
def new_tensor(self: Tensor, data: Any, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    """A copy of ``data`` on this tensor's device, of its dtype unless given."""
    return tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                  requires_grad=requires_grad)


@tensor_method()
def clone(self: Tensor, memory_format: Any = None) -> Tensor:
    """A copy of this tensor that stays in the graph (``memory_format`` is ignored)."""
    from .ops.movement import Clone

    return Clone.apply(self)


__all__ = [
    "tensor", "as_tensor", "from_numpy", "from_dlpack", "zeros", "ones", "empty", "full",
    "arange", "linspace", "scalar_tensor", "empty_strided", "eye", "rand", "randn", "randint",
    "randperm",
    "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    "randint_like", "multinomial", "generator_states", "set_generator_states",
]
