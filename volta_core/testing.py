"""``vt.testing``: PyTorch's ``assert_close`` for tests written against it.

Values are compared with ``|actual - expected| <= atol + rtol * |expected|`` and PyTorch's
default tolerances for the dtype; shapes, dtypes and devices must agree unless told not
to; numbers, sequences and mappings are compared element by element.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .tensor import Tensor

# PyTorch's defaults: (rtol, atol) per dtype; exact for integers and booleans
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
               "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def assert_close(actual: Any, expected: Any, *, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True,
                 check_layout: bool = True, check_stride: bool = False,
                 msg: str | None = None) -> None:
    """Raise ``AssertionError`` unless ``actual`` and ``expected`` are close.

    Args:
        actual, expected: tensors, numbers, or (nested) sequences and mappings of them.
        rtol, atol: tolerances (both or neither); PyTorch's per-dtype defaults otherwise.
        equal_nan: NaNs in the same places count as equal.
        check_device, check_dtype: also require the same device / dtype.
        check_layout, check_stride: accepted; every tensor is dense and row-major.
        msg: replaces the message of a failure.
    """
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, "
                         f"but got no {'rtol' if rtol is None else 'atol'}.")
    _compare(actual, expected, (), rtol, atol, equal_nan, check_device, check_dtype, msg)


def _compare(a: Any, e: Any, where: tuple, rtol, atol, equal_nan, device, dtype, msg) -> None:
    if isinstance(e, Mapping):
        if not isinstance(a, Mapping) or set(a) != set(e):
            _fail(msg, f"The keys of the mappings differ{_at(where)}: {sorted(map(str, a))} "
                       f"!= {sorted(map(str, e))}")
        for k in e:
            _compare(a[k], e[k], (*where, k), rtol, atol, equal_nan, device, dtype, msg)
        return
    if isinstance(e, Sequence) and not isinstance(e, str) and not isinstance(a, Tensor):
        if not isinstance(a, Sequence) or len(a) != len(e):
            _fail(msg, f"The length of the sequences differ{_at(where)}")
        for i, (x, y) in enumerate(zip(a, e)):
            _compare(x, y, (*where, i), rtol, atol, equal_nan, device, dtype, msg)
        return
    if isinstance(a, Tensor) != isinstance(e, Tensor):
        _fail(msg, f"Expected both inputs to be tensors or both numbers{_at(where)}, got "
                   f"{type(a).__name__} and {type(e).__name__}")
    if isinstance(e, Tensor):
        if a.shape != e.shape:
            _fail(msg, f"The values for attribute 'shape' do not match{_at(where)}: "
                       f"{a.shape} != {e.shape}.")
        if device and a.device is not e.device:
            _fail(msg, f"The values for attribute 'device' do not match{_at(where)}: "
                       f"{a.device} != {e.device}.")
        if dtype and a.dtype is not e.dtype:
            _fail(msg, f"The values for attribute 'dtype' do not match{_at(where)}: "
                       f"{a.dtype!r} != {e.dtype!r}.")
        name = e.dtype.name
        x = _host(a.detach())
        y = _host(e.detach())
    else:
        name = "float64" if isinstance(e, float) else "int64"
        x, y = np.asarray(a, dtype=np.float64), np.asarray(e, dtype=np.float64)
    r, t = (rtol, atol) if rtol is not None else _TOLERANCES.get(name, (0.0, 0.0))
    x, y = x.astype(np.float64), y.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(x - y)
        ok = (diff <= t + r * np.abs(y)) | (x == y)
    if equal_nan:
        ok |= np.isnan(x) & np.isnan(y)
    if bool(np.all(ok)):
        return
    exact = r == 0 and t == 0
    verdict = "equal" if exact else "close"
    allowed = (lambda v: "") if exact else (lambda v: f" (up to {v} allowed)")
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(ok, -1.0, np.nan_to_num(diff / np.abs(y), nan=np.inf))
    if not isinstance(e, Tensor):
        text = (f"Scalars are not {verdict}!\n\nExpected {e} but got {a}.\n"
                f"Absolute difference: {float(diff)}{allowed(t)}\n"
                f"Relative difference: {float(rel)}{allowed(r)}")
    else:
        bad = int(np.size(ok) - np.count_nonzero(ok))
        worst_abs = _index(np.where(ok, -1.0, np.nan_to_num(diff, nan=np.inf)))
        worst_rel = _index(rel)
        big = diff[worst_abs]
        text = (f"Tensor-likes are not {verdict}!\n\nMismatched elements: {bad} / "
                f"{np.size(ok)} ({100 * bad / np.size(ok):.1f}%)\n"
                f"Greatest absolute difference: {int(big) if exact else big} at index "
                f"{worst_abs}{allowed(t)}\n"
                f"Greatest relative difference: {rel[worst_rel]} at index {worst_rel}"
                f"{allowed(r)}")
    _fail(msg, text + _at(where))


def _index(score: np.ndarray) -> tuple:
    """The position of the largest score, as a tuple of ints."""
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(score)), np.shape(score)))


def _host(t: Tensor) -> np.ndarray:
    """The values on the host, bfloat16 read as float32 (NumPy has no arithmetic for it)."""
    a = np.asarray(t.device.backend.to_host(t.array))
    return a.astype(np.float32) if str(a.dtype) == "bfloat16" else a


def _at(where: tuple) -> str:
    """Where in nested inputs a failure is, as PyTorch words it."""
    if not where:
        return ""
    return "\n\nThe failure occurred for item " + "".join(f"[{k!r}]" for k in where)


def _fail(msg: str | None, text: str) -> None:
    raise AssertionError(msg if msg is not None else text)


__all__ = ["assert_close"]
