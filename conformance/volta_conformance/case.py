"""Conformance cases as data: what to run, on which inputs, in which dtypes.

A case names the public object it exercises (``op``, a dotted path under ``volta_core``
such as ``"add"``, ``"Tensor.__getitem__"`` or ``"nn.Linear"``), how to make its inputs
and which dtypes it runs in. The harness runs :meth:`Case.run` once on the NumPy
reference and once on the target device with the same seeded host data, and compares
the named results it returns (forward outputs, input and parameter gradients, states).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FLOAT = ("float32", "float64")
HALF = ("float16", "bfloat16")
INT = ("int32", "int64")
ALL_FLOAT = FLOAT + HALF
NUMERIC = ALL_FLOAT + INT

MISSING_REASON = "not implemented in volta_core yet"


class NotInCore(Exception):
    """A case needs something ``volta_core`` does not have (yet): reported unsupported."""


class CaseFailure(Exception):
    """A check inside :meth:`Case.run` failed on the target (reported as a failure)."""


def resolve(path: str) -> Any:
    """Return the object at dotted ``path`` under ``volta_core``, or None if absent.

    ``"add"`` is ``volta_core.add``; ``"nn.Linear"`` is ``volta_core.nn.Linear``;
    ``"Tensor.__getitem__"`` is the method of :class:`volta_core.Tensor`.
    """
    import volta_core

    obj: Any = volta_core
    for part in path.split("."):
        try:
            obj = getattr(obj, part)
        except Exception:  # absent, or a module being written fails to import
            return None
    return obj


def require(path: str) -> Any:
    """Like :func:`resolve`, raising :class:`NotInCore` when ``path`` is absent."""
    obj = resolve(path)
    if obj is None:
        raise NotInCore(f"{MISSING_REASON}: volta_core.{path}")
    return obj


def host_dtype(name: str) -> np.dtype:
    """The NumPy dtype used on the host for the Volta dtype ``name``."""
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


@dataclass(frozen=True)
class Arg:
    """One tensor input of a case.

    Args:
        shape: the shape the op sees.
        low: lower bound of float values (use it for constraints: positive for log).
        high: upper bound of float values.
        kind: ``"float"`` follows the case dtype; ``"index"`` is int64 in ``[low, high)``;
            ``"bool"``, ``"int64"``, ``"int32"``, ``"float32"``... are fixed dtypes.
        view: ``None`` (contiguous), ``"T"`` (a permuted view), ``"slice"`` (every other
            element of the last dim, through ``__getitem__``) or ``"expand"`` (dim 0
            broadcast from size 1, a stride-0 view).
        grad: whether the input requires grad (float dtypes, differentiable cases).
        ints: the range of values when a ``"float"`` argument runs in an integer dtype.
    """

    shape: tuple[int, ...]
    low: float = -1.0
    high: float = 1.0
    kind: str = "float"
    view: str | None = None
    grad: bool = True
    ints: tuple[int, int] = (-5, 6)

    def dtype_for(self, case_dtype: str) -> str:
        """The Volta dtype this argument has when the case runs in ``case_dtype``."""
        if self.kind == "float":
            return case_dtype
        return "int64" if self.kind == "index" else self.kind

    def base_shape(self) -> tuple[int, ...]:
        """Shape of the stored tensor the view is taken from."""
        s = self.shape
        if self.view == "T":
            return tuple(reversed(s))
        if self.view == "slice":
            return s[:-1] + (2 * s[-1],)
        if self.view == "expand":
            return (1,) + s[1:]
        return s

    def sample(self, rng: np.random.Generator, case_dtype: str) -> np.ndarray:
        """Host values (of the base shape) in this argument's dtype."""
        name = self.dtype_for(case_dtype)
        shape = self.base_shape()
        if name == "bool":
            return rng.random(shape) < 0.5
        dt = host_dtype(name)
        if self.kind == "index":
            return rng.integers(int(self.low), int(self.high), size=shape).astype(dt)
        if dt.kind in "iu":
            lo, hi = self.ints
            return rng.integers(lo, hi, size=shape).astype(dt)
        return rng.uniform(self.low, self.high, size=shape).astype(dt)

    def realize(self, base: Any) -> Any:
        """Apply the view to the stored tensor ``base`` (on its device)."""
        if self.view is None:
            return base
        if self.view == "T":
            return base.permute(tuple(range(base.ndim - 1, -1, -1)))
        if self.view == "slice":
            if resolve("Tensor.__getitem__") is None:
                raise NotInCore(f"{MISSING_REASON}: Tensor.__getitem__ (for a sliced view)")
            return base[..., ::2]
        if self.view == "expand":
            return base.expand(*self.shape)
        raise ValueError(f"unknown view {self.view!r}")


@dataclass(frozen=True)
class Scalar:
    """A Python number passed to the op as is (not a tensor)."""

    value: Any


@dataclass
class Case:
    """Base of every case: its identity, dtypes and what it needs from the core.

    Attributes:
        name: unique id, ``"op/variant"``; pytest ids and ``-k`` patterns use it.
        op: dotted path (under ``volta_core``) of the public object the case covers.
        dtypes: dtypes the case runs in (filtered by ``--dtypes`` and the backend).
        tol: multiplier of the dtype's tolerances (reductions over many elements).
        large: a large-input case, run only with ``--large``...
        default: ...unless set: the cheap subset of large cases every run includes.
        needs: other paths the case uses (reported unsupported while absent).
        covers: other public paths this case also covers (aliases, methods).
    """

    name: str
    op: str
    dtypes: tuple[str, ...] = FLOAT
    tol: float = 1.0
    large: bool = False
    default: bool = False
    needs: tuple[str, ...] = ()
    covers: tuple[str, ...] = ()
    kind: str = field(default="op", init=False)

    def check_available(self) -> None:
        """Raise :class:`NotInCore` if the op or anything the case needs is missing."""
        for path in (self.op, *self.needs):
            require(path)

    def seed(self, dtype: str) -> int:
        """The seed of the case's host data: equal on reference and target."""
        return zlib.crc32(f"{self.name}[{dtype}]".encode())

    def run(self, rt: Any) -> dict[str, Any]:
        """Run on ``rt.device`` in ``rt.dtype``; return named results to compare."""
        raise NotImplementedError


def as_outputs(result: Any) -> list:
    """The tensors (or host values) an op returned, as a flat list."""
    from volta_core import Tensor

    if isinstance(result, Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        flat = []
        for r in result:
            flat.extend(as_outputs(r))
        return flat
    if result is None:
        return []
    return [np.asarray(result)]


@dataclass
class OpCase(Case):
    """A differentiable (or not) function of tensors, checked forward and backward.

    Attributes:
        args: the inputs, tensors (:class:`Arg`) or Python numbers (:class:`Scalar`).
        fn: ``fn(*inputs)``; defaults to the resolved ``op`` called with ``kwargs``.
        kwargs: keyword arguments of the op.
        grad: whether to run backward and compare input gradients.
    """

    args: tuple = ()
    fn: Callable | None = None
    kwargs: dict = field(default_factory=dict)
    grad: bool = True

    def run(self, rt: Any) -> dict[str, Any]:
        import volta_core as vt

        fn = self.fn
        if fn is None:
            op, kw = require(self.op), self.kwargs
            fn = (lambda *a: op(*a, **kw)) if kw else op
        leaves, inputs, hosts = [], [], []
        for arg in self.args:
            if isinstance(arg, Scalar):
                inputs.append(arg.value)
                continue
            host = arg.sample(rt.rng, rt.dtype)
            dt = arg.dtype_for(rt.dtype)
            wants = self.grad and arg.grad and host_dtype(dt).kind == "f" and dt == rt.dtype
            base = rt.tensor(host, dt, requires_grad=wants)
            leaves.append(base)
            hosts.append(host)
            inputs.append(arg.realize(base))
        outs = as_outputs(fn(*inputs))
        results: dict[str, Any] = {f"out{i}": o for i, o in enumerate(outs)}
        for i, (leaf, host) in enumerate(zip(leaves, hosts)):
            if not np.array_equal(rt.host(leaf), host, equal_nan=host.dtype.kind == "f"):
                raise CaseFailure(f"the op modified its input {i} in place")
        if self.grad:
            diff = [o for o in outs if isinstance(o, vt.Tensor) and o.requires_grad]
            if diff:
                ups = [rt.tensor(rt.rng.uniform(-1, 1, o.shape).astype(rt.host_dtype(o)),
                                 o.dtype.name) for o in diff]
                vt.autograd.backward(diff, ups)
                for i, leaf in enumerate(leaves):
                    if leaf.requires_grad:
                        results[f"grad{i}"] = leaf.grad
        return results
