"""``vt.testing``: PyTorch's ``assert_close`` for tests written against it.

Values are compared with ``|actual - expected| <= atol + rtol * |expected|`` and PyTorch's
default tolerances for the dtype; shapes, dtypes and devices must agree unless told not
to; numbers, sequences and mappings are compared element by element. The comparison runs
with Volta's own ops on the CPU, in float64.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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
            _fail(msg, f"The keys of the mappings differ: {sorted(map(str, a))} != "
                       f"{sorted(map(str, e))}{_at(where)}")
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
        _fail(msg, f"Expected both inputs to be tensors or both numbers, got "
                   f"{type(a).__name__} and {type(e).__name__}{_at(where)}")
    if isinstance(e, Tensor):
        for attr, ok in (("shape", a.shape == e.shape),
                         ("device", not device or a.device is e.device),
                         ("dtype", not dtype or a.dtype is e.dtype)):
            if not ok:
                _fail(msg, f"The values for attribute '{attr}' do not match: "
                           f"{getattr(a, attr)!r} != {getattr(e, attr)!r}.{_at(where)}")
    _values(a, e, where, rtol, atol, equal_nan, msg)


def _values(a: Any, e: Any, where: tuple, rtol, atol, equal_nan, msg) -> None:
    from .creation import tensor
    from .ops.elementwise import where as choose

    tensors = isinstance(e, Tensor)
    name = e.dtype.name if tensors else ("float64" if isinstance(e, float) else "int64")
    r, t = (rtol, atol) if rtol is not None else _TOLERANCES.get(name, (0.0, 0.0))
    x, y = ((v.detach().to("cpu", "float64") if tensors else tensor(float(v), dtype="float64"))
            for v in (a, e))
    diff = (x - y).abs()
    ok = (diff <= t + r * y.abs()).logical_or(x == y)
    if equal_nan:
        ok = ok.logical_or(x.isnan().logical_and(y.isnan()))
    if bool(ok.all()):
        return
    inf = float("inf")
    rel = choose(ok, -1.0, (diff / y.abs()).nan_to_num(nan=inf, posinf=inf))
    exact = r == 0 and t == 0
    verdict = "equal" if exact else "close"

    def allowed(v: float) -> str:
        return "" if exact else f" (up to {v} allowed)"

    if not tensors:
        text = (f"Scalars are not {verdict}!\n\nExpected {e} but got {a}.\n"
                f"Absolute difference: {float(diff)}{allowed(t)}\n"
                f"Relative difference: {float(rel)}{allowed(r)}")
    else:
        bad, size = int(ok.logical_not().sum()), ok.numel()
        score = choose(ok, -1.0, diff.nan_to_num(nan=inf, posinf=inf))
        at_abs, at_rel = _index(score), _index(rel)
        big = float(diff[at_abs]) if at_abs else float(diff)
        big_rel = float(rel[at_rel]) if at_rel else float(rel)
        text = (f"Tensor-likes are not {verdict}!\n\nMismatched elements: {bad} / {size} "
                f"({100 * bad / size:.1f}%)\n"
                f"Greatest absolute difference: {int(big) if exact else big} at index "
                f"{at_abs}{allowed(t)}\n"
                f"Greatest relative difference: {big_rel} at index {at_rel}{allowed(r)}")
    _fail(msg, text + _at(where))


def _index(score: Tensor) -> tuple:
    """The position of the largest score, as a tuple of ints."""
    flat = int(score.reshape(-1).argmax())
    out = []
    for n in reversed(score.shape):
        out.append(flat % n)
        flat //= n
    return tuple(reversed(out))


def _at(where: tuple) -> str:
    """Where in nested inputs a failure is, as PyTorch words it."""
    if not where:
        return ""
    return "\n\nThe failure occurred for item " + "".join(f"[{k!r}]" for k in where)


def _fail(msg: str | None, text: str) -> None:
    raise AssertionError(msg if msg is not None else text)


__all__ = ["assert_close"]
