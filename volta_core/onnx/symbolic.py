"""Sizes that depend on dynamic axes, found by comparing two traces.

The exporter traces the model twice, the second time with every dynamic axis resized by
its own amount. An int argument (a reshape target, a slice end, an ``arange`` length) that
is equal in both traces is a constant; one that differs is written as
``coef * (product of some dynamic dims) + offset``, solved from the two values, so the
ONNX graph computes it from the input's shape (``Shape``/``Gather``/``Mul``/``Add``).
"""

from __future__ import annotations

import itertools
from typing import Any

from ..tensor import Tensor
from .errors import OnnxExportError


class Sym:
    """An int computed from dynamic dims: ``coef * prod(dims) + offset``.

    ``value`` is its value in the first trace (what static code may use).
    """

    __slots__ = ("dims", "coef", "offset", "value")

    def __init__(self, dims: tuple[str, ...], coef: int, offset: int, value: int) -> None:
        self.dims, self.coef, self.offset, self.value = dims, coef, offset, value

    def __int__(self) -> int:
        return self.value

    __index__ = __int__

    def __repr__(self) -> str:
        s = "*".join(self.dims)
        if self.coef != 1:
            s = f"{self.coef}*{s}"
        return f"{s}{self.offset:+d}" if self.offset else s


def solve(a1: int, a2: int, sizes: dict[str, tuple[int, int]]) -> Sym | None:
    """The simplest ``Sym`` taking the values ``a1`` and ``a2`` in the two traces."""
    names = [n for n, (s1, s2) in sizes.items() if s1 != s2]
    best = None
    for r in range(1, len(names) + 1):
        for combo in itertools.combinations(names, r):
            p1 = p2 = 1
            for n in combo:
                p1 *= sizes[n][0]
                p2 *= sizes[n][1]
            if p1 == p2 or (a1 - a2) % (p1 - p2):
                continue
            coef = (a1 - a2) // (p1 - p2)
            off = a1 - coef * p1
            if coef == 0:
                continue
            rank = (coef != 1, off != 0, r)
            if best is None or rank < best[0]:
                best = (rank, Sym(combo, coef, off, a1))
    return None if best is None else best[1]


def same_float(a: float, b: float) -> bool:
    return a == b or (a != a and b != b)


def resolve(a: Any, b: Any, sizes: dict[str, tuple[int, int]], where: str) -> Any:
    """``a`` (a value of trace 1) with the ints that differ in ``b`` (trace 2) as ``Sym``.

    Tensors come back unchanged (the graph follows them separately).
    """
    if type(a) is Tensor or a is None:
        return a
    if type(a) is not type(b) and not (isinstance(a, int) and isinstance(b, int)):
        raise OnnxExportError(f"vt.onnx.export: {where} takes different kinds of values in "
                              f"the two traces ({a!r} and {b!r}); the model's code depends "
                              "on the sizes of the dynamic axes")
    if type(a) is bool:
        if a != b:
            raise OnnxExportError(f"vt.onnx.export: {where} depends on the sizes of the "
                                  "dynamic axes (a flag differs between two traces)")
        return a
    if isinstance(a, int):
        if a == b:
            return a
        s = solve(a, b, sizes)
        if s is None:
            raise OnnxExportError(
                f"vt.onnx.export: {where} uses a size ({a} and {b} in two traces) that is "
                "not a multiple of a product of dynamic axes plus a constant; compute it "
                "from the input's shape in a simpler way or export with static axes")
        return s
    if isinstance(a, float):
        if not same_float(a, b):
            raise OnnxExportError(f"vt.onnx.export: {where} uses a float ({a} and {b} in "
                                  "two traces) that depends on the sizes of dynamic axes")
        return a
    if isinstance(a, (tuple, list)):
        if len(a) != len(b):
            raise OnnxExportError(f"vt.onnx.export: {where} takes {len(a)} values in one "
                                  f"trace and {len(b)} in the other; the number of dims or "
                                  "arguments depends on the sizes of the dynamic axes")
        items = [resolve(x, y, sizes, where) for x, y in zip(a, b)]
        if hasattr(a, "_fields"):
            return type(a)(*items)
        return type(a)(items)
    if isinstance(a, slice):
        return slice(resolve(a.start, b.start, sizes, where),
                     resolve(a.stop, b.stop, sizes, where),
                     resolve(a.step, b.step, sizes, where))
    if isinstance(a, dict):
        return {k: resolve(v, b.get(k), sizes, where) for k, v in a.items()}
    return a


def static(v: Any) -> Any:
    """``v`` with every ``Sym`` replaced by its first-trace value."""
    if isinstance(v, Sym):
        return v.value
    if isinstance(v, (tuple, list)):
        items = [static(x) for x in v]
        return type(v)(*items) if hasattr(v, "_fields") else type(v)(items)
    if isinstance(v, slice):
        return slice(static(v.start), static(v.stop), static(v.step))
    return v


def has_sym(v: Any) -> bool:
    if isinstance(v, Sym):
        return True
    if isinstance(v, (tuple, list)):
        return any(has_sym(x) for x in v)
    if isinstance(v, slice):
        return has_sym(v.start) or has_sym(v.stop) or has_sym(v.step)
    return False
