"""Run one program on Volta and on PyTorch CPU and compare values, dtypes, shapes and grads.

A program is ``fn(m, *tensors)`` where ``m`` is the ``volta_core`` or ``torch`` module;
``nnf(m)`` gives its ``nn.functional``. Inputs are NumPy arrays; floating ones become
leaves that require grad, and the gradients of every floating leaf are compared after a
backward of the outputs against the same random upstream gradients.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import volta_core as vt

torch = pytest.importorskip("torch")

TOL = {"float64": (1e-10, 1e-12), "float32": (2e-5, 1e-6), "float16": (2e-3, 1e-3),
       "bfloat16": (2e-2, 1e-2)}


def nnf(m):
    """The ``nn.functional`` of ``m`` (``volta_core`` or ``torch``)."""
    if m is torch:
        return torch.nn.functional
    import volta_core.nn.functional as F

    return F


def _host(a: np.ndarray, dtype: str | None):
    a = np.asarray(a)
    return a if dtype is None else a.astype(np.float32 if dtype == "bfloat16" else dtype)


def _make(m, a: np.ndarray, dtype: str | None, grad: bool):
    float_leaf = grad and (np.asarray(a).dtype.kind == "f" if dtype is None
                           else dtype.startswith(("float", "bfloat")))
    if m is torch:
        t = torch.tensor(_host(a, dtype))
        if dtype == "bfloat16":
            t = t.bfloat16()
        return t.requires_grad_(float_leaf)
    t = vt.tensor(_host(a, dtype))
    if dtype == "bfloat16":
        t = t.to("bfloat16")
    return t.requires_grad_(float_leaf) if float_leaf else t


def _flat(out) -> list:
    if isinstance(out, (tuple, list)):
        return [o for x in out for o in _flat(x)]
    return [out]


def _np(t) -> np.ndarray:
    if isinstance(t, vt.Tensor):
        t = t.detach()
        return np.asarray((t.float() if t.dtype.name == "bfloat16" else t).numpy())
    t = t.detach()
    if t._is_zerotensor():  # PyTorch's lazily-zero gradients (sgn, sign, ...)
        return np.zeros(tuple(t.shape), dtype=np.float32 if t.dtype == torch.bfloat16
                        else str(t.dtype).replace("torch.", ""))
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy()


def _dtype_name(t) -> str:
    return t.dtype.name if isinstance(t, vt.Tensor) else str(t.dtype).replace("torch.", "")


def _compare(got, want, what: str, tol: tuple | None) -> None:
    assert _dtype_name(got) == _dtype_name(want).replace("bool", "bool"), (
        f"{what}: dtype {_dtype_name(got)} != PyTorch's {_dtype_name(want)}")
    g, w = _np(got), _np(want)
    assert g.shape == w.shape, f"{what}: shape {g.shape} != PyTorch's {w.shape}"
    if w.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w, err_msg=what)
        return
    rtol, atol = tol or TOL.get(_dtype_name(want), (1e-6, 1e-6))
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def compare(fn: Callable, *arrays, dtype: str | None = None, grad: bool = True,
            tol: tuple | None = None, grad_tol: tuple | None = None,
            skip_outputs: tuple = (), seed: int = 0) -> None:
    """Run ``fn`` on both libraries and assert equal outputs (and input gradients).

    Args:
        fn: ``fn(m, *tensors)``.
        arrays: NumPy inputs (floating ones become grad leaves when ``grad``).
        dtype: cast every input to this dtype first (None keeps each array's dtype).
        grad: compare gradients too.
        tol: ``(rtol, atol)`` of values (per-dtype defaults otherwise).
        grad_tol: ``(rtol, atol)`` of gradients.
        skip_outputs: positions of outputs not compared (PyTorch leaves them unspecified,
            e.g. tie indices).
    """
    vin = [_make(vt, a, dtype, grad) for a in arrays]
    tin = [_make(torch, a, dtype, grad) for a in arrays]
    vout, tout = _flat(fn(vt, *vin)), _flat(fn(torch, *tin))
    assert len(vout) == len(tout), f"{len(vout)} outputs != PyTorch's {len(tout)}"
    for i, (a, b) in enumerate(zip(vout, tout)):
        if i not in skip_outputs:
            _compare(a, b, f"output {i}", tol)
    if not grad:
        return
    rng = np.random.default_rng(seed)
    pairs = [(a, b) for a, b in zip(vout, tout) if b.requires_grad]
    if not pairs:
        return
    ups = [rng.uniform(-1, 1, size=tuple(b.shape)) for _, b in pairs]
    vt.autograd.backward([a for a, _ in pairs],
                         [vt.tensor(u).to(a.dtype) for (a, _), u in zip(pairs, ups)])
    try:
        torch.autograd.backward([b for _, b in pairs],
                                [torch.tensor(u).to(b.dtype) for (_, b), u in zip(pairs, ups)])
    except RuntimeError as exc:  # PyTorch has no derivative (floor_divide): Volta's is 0
        assert "not implemented" in str(exc), exc
        for a in vin:
            assert a.grad is None or not _np(a.grad).any(), "expected a zero gradient"
        return
    for i, (a, b) in enumerate(zip(vin, tin)):
        if not b.requires_grad:
            continue
        if b.grad is None:
            assert a.grad is None or not _np(a.grad).any(), f"grad {i}: PyTorch has none"
            continue
        assert a.grad is not None, f"grad {i}: Volta has none, PyTorch {b.grad}"
        _compare(a.grad, b.grad, f"grad of input {i}", grad_tol or tol)


def raises_like_torch(fn: Callable, *arrays, dtype: str | None = None) -> None:
    """Assert both libraries raise on ``fn``; Volta with a ``VoltaError`` or a TypeError."""
    with pytest.raises((RuntimeError, TypeError, ValueError, IndexError,
                        NotImplementedError)):
        fn(torch, *[_make(torch, a, dtype, False) for a in arrays])
    with pytest.raises((vt.VoltaError, TypeError, ValueError, IndexError)):
        fn(vt, *[_make(vt, a, dtype, False) for a in arrays])
