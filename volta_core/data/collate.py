"""Collating samples into batches, and placing batches on a device.

Collation happens in two steps so that worker processes never make device tensors:

1. *host collate* (in the worker, or in the main process): samples are stacked into
   NumPy arrays with the CPU backend's namespace; each array that is to become a tensor
   is wrapped in :class:`HostArray`, which remembers the device its source tensor was on.
2. :func:`place` (in the main process): every ``HostArray`` becomes a tensor on the
   device asked for (that of its source tensor, or the CPU, when none was asked for),
   and tensors a custom ``collate_fn`` made are moved to that device.

In the main process :func:`default_collate` does both at once and stacks tensors with
their own backend, without a round trip through the host.
"""

from __future__ import annotations

import collections.abc as abc
from collections.abc import Callable
from typing import Any

from ..backend.device import Device
from ..errors import DeviceError, ShapeError
from ..tensor import Tensor

_ERR = ("default_collate: batch must contain tensors, NumPy arrays, numbers, dicts or "
        "lists; found {}")


class HostArray:
    """A host (NumPy) array that becomes a tensor when the batch is placed.

    Attributes:
        array: the host array.
        device: the device string of the tensor it came from, or None (host data).
    """

    __slots__ = ("array", "device")

    def __init__(self, array: Any, device: str | None = None) -> None:
        self.array = array
        self.device = device

    def __reduce__(self):
        return (HostArray, (self.array, self.device))

    def __repr__(self) -> str:
        return f"HostArray(shape={tuple(self.array.shape)}, device={self.device!r})"


def _host_xp():
    return Device("cpu").xp


def _is_host_array(x: Any) -> bool:
    return hasattr(x, "__array_interface__") and hasattr(x, "dtype") and not isinstance(
        x, Tensor)


def _check_numeric(arr: Any) -> None:
    if getattr(arr.dtype, "kind", "f") in "SUOV":
        raise TypeError(_ERR.format(f"an array of dtype {arr.dtype}"))


def _stack_shapes_error(shapes: list, what: str) -> ShapeError:
    return ShapeError(f"default_collate: cannot stack {what} of different shapes into a "
                      f"batch: {sorted(set(shapes))}; resize them (e.g. with a transform) or "
                      "pass a collate_fn that pads")


def _same_kind(batch: list[Any], ok: Callable[[Any], bool], what: str) -> None:
    """A TypeError naming the first sample whose type differs from sample 0's (PyTorch
    raises TypeError too, with a less helpful message)."""
    for i, x in enumerate(batch):
        if not ok(x):
            raise TypeError(f"default_collate: cannot batch a {type(x).__name__} (sample {i}) "
                            f"with {what} (sample 0); every sample must hold the same type in "
                            "the same field, or pass a collate_fn")


def _stack_tensors(batch: list[Tensor], host: bool) -> Any:
    _same_kind(batch, lambda x: isinstance(x, Tensor), "a Tensor")
    dev = batch[0].device
    others = {str(t.device) for t in batch if t.device is not dev}
    if others:
        raise DeviceError(f"default_collate: samples on different devices ({dev} and "
                          f"{sorted(others)}); move them with .to('{dev}') first")
    shapes = [t.shape for t in batch]
    if len(set(shapes)) != 1:
        raise _stack_shapes_error(shapes, "tensors")
    if host:
        to_host = dev.backend.to_host
        return HostArray(_host_xp().stack([to_host(t.array) for t in batch]), str(dev))
    return Tensor._make(dev.xp.stack([t.array for t in batch]), dev)


def _stack_arrays(batch: list[Any], host: bool) -> Any:
    _same_kind(batch, _is_host_array, "an array")
    _check_numeric(batch[0])
    shapes = [tuple(a.shape) for a in batch]
    if len(set(shapes)) != 1:
        raise _stack_shapes_error(shapes, "arrays")
    out = HostArray(_host_xp().stack(batch))
    return out if host else _to_tensor(out, None)


def _numbers(batch: list[Any], host: bool) -> Any:
    _same_kind(batch, lambda x: isinstance(x, (bool, int, float)), "a number")
    xp = _host_xp()
    elem = batch[0]
    dt = xp.bool if isinstance(elem, bool) else xp.int64 if isinstance(elem, int) \
        else xp.float64
    out = HostArray(xp.asarray(batch, dtype=dt))
    return out if host else _to_tensor(out, None)


def _collate(batch: Any, host: bool) -> Any:
    if not isinstance(batch, abc.Sequence) or isinstance(batch, (str, bytes)):
        batch = list(batch)
    if not batch:
        raise ValueError("default_collate: got an empty batch")
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack_tensors(batch, host)
    if _is_host_array(elem):
        return _stack_arrays(batch, host)
    if isinstance(elem, (bool, int, float)):
        return _numbers(batch, host)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, abc.Mapping):
        out = {key: _collate([d[key] for d in batch], host) for key in elem}
        try:
            return type(elem)(out)  # type: ignore[call-arg]
        except TypeError:
            return out
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(_collate(list(s), host) for s in zip(*batch)))
    if isinstance(elem, abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise ShapeError("default_collate: each element in list of batch should be of "
                             f"equal size, got sizes {sorted({len(e) for e in batch})}")
        return [_collate(list(s), host) for s in zip(*batch)]
    raise TypeError(_ERR.format(type(elem).__name__))


def default_collate(batch: list[Any]) -> Any:
    """Merge a list of samples into a batch, as PyTorch's ``default_collate``.

    Tensors are stacked on their device; NumPy arrays and Python numbers become CPU
    tensors (floats float64, ints int64, bools bool); strings are kept in a list;
    dicts, namedtuples, tuples and lists are collated field by field (tuples become
    lists, as in PyTorch).

    Args:
        batch: the samples.

    Example::

        >>> default_collate([(1, 2.0), (3, 4.0)])
        [tensor([1, 3]), tensor([2., 4.], dtype=volta.float64)]
    """
    return _collate(batch, host=False)


def collate_host(batch: list[Any]) -> Any:
    """:func:`default_collate`, but leaving :class:`HostArray` leaves (for workers)."""
    return _collate(batch, host=True)


def _convert(data: Any, host: bool) -> Any:
    if isinstance(data, Tensor):
        if host:
            return HostArray(data.device.backend.to_host(data.array), str(data.device))
        return data
    if _is_host_array(data):
        if getattr(data.dtype, "kind", "f") in "SUOV":
            return data
        out = HostArray(_host_xp().asarray(data))
        return out if host else _to_tensor(out, None)
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, abc.Mapping):
        out = {k: _convert(v, host) for k, v in data.items()}
        try:
            return type(data)(out)  # type: ignore[call-arg]
        except TypeError:
            return out
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_convert(d, host) for d in data))
    if isinstance(data, tuple):
        return [_convert(d, host) for d in data]
    if isinstance(data, list):
        return [_convert(d, host) for d in data]
    return data


def default_convert(data: Any) -> Any:
    """Turn NumPy arrays inside ``data`` into CPU tensors, without batching.

    Used as the collate function when automatic batching is off (``batch_size=None``).
    """
    return _convert(data, host=False)


def convert_host(data: Any) -> Any:
    """:func:`default_convert` for workers: tensors and arrays become :class:`HostArray`."""
    return _convert(data, host=True)


def _to_tensor(h: HostArray, device: Device | None) -> Tensor:
    dev = device if device is not None else Device(h.device or "cpu")
    if dev.type == "cpu":
        return Tensor._make(dev.backend.from_host(h.array, dev.index, copy=False), dev)
    return Tensor._make(dev.backend.from_host(h.array, dev.index), dev)


def place(data: Any, device: Device | None) -> Any:
    """Turn :class:`HostArray` leaves into tensors and move tensors to ``device``.

    Args:
        data: a (nested) batch.
        device: the target device; None keeps tensors where they are and puts host
            arrays on the device their source tensor was on (the CPU for host data).
    """
    if isinstance(data, HostArray):
        return _to_tensor(data, device)
    if isinstance(data, Tensor):
        return data if device is None or data.device is device else data.to(device)
    if isinstance(data, (str, bytes)) or data is None:
        return data
    if isinstance(data, dict):
        out = {k: place(v, device) for k, v in data.items()}
        if type(data) is dict:
            return out
        try:
            return type(data)(out)
        except TypeError:
            return out
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(place(d, device) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(place(d, device) for d in data)
    return data


def is_default(collate_fn: Callable | None) -> bool:
    """Whether ``collate_fn`` is one of the default functions (collated on the host)."""
    return collate_fn is None or collate_fn is default_collate or collate_fn is default_convert


__all__ = ["default_collate", "default_convert", "HostArray", "collate_host",
           "convert_host", "place"]
