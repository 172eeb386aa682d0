"""Case factories: the standard set of input layouts for unary, binary and reduction ops.

Every family covers a plain shape, a 0-d tensor, an empty tensor, size-1 dims, a
non-contiguous (permuted) view and, where it applies, broadcasting and one input
above 2**20 elements.
"""

from __future__ import annotations

from typing import Any

from ..case import FLOAT, Arg, OpCase, Scalar

LARGE = (1024, 1100)  # 1,126,400 elements > 2**20


def unary(op: str, low: float = -1.0, high: float = 1.0, dtypes: tuple = FLOAT,
          grad: bool = True, large: bool = True, default_large: bool = False,
          covers: tuple = (), **kwargs: Any) -> list[OpCase]:
    """Cases of an elementwise unary op over values in ``[low, high)``."""

    def a(shape, view=None):
        return Arg(shape, low, high, view=view)

    layouts = {"basic": a((3, 4)), "0d": a(()), "empty": a((0, 3)), "size1": a((1, 4, 1)),
               "permuted": a((4, 3, 2), "T"), "sliced": a((3, 4), "slice"),
               "expanded": a((3, 4), "expand")}
    cases = [OpCase(f"{op}/{tag}", op, dtypes, args=(arg,), grad=grad, kwargs=kwargs,
                    covers=covers)
             for tag, arg in layouts.items()]
    if large:
        case = OpCase(f"{op}/large", op, dtypes, large=True, args=(a(LARGE),), grad=grad,
                      kwargs=kwargs, default=default_large)
        cases.append(case)
    return cases


def binary(op: str, low: float = -1.0, high: float = 1.0, low2: float | None = None,
           high2: float | None = None, dtypes: tuple = FLOAT, grad: bool = True,
           large: bool = True, default_large: bool = False, scalar: Any = 0.75,
           ints2: tuple[int, int] = (-5, 6), covers: tuple = ()) -> list[OpCase]:
    """Cases of a broadcasting binary op; the second operand may have its own range."""
    lo2 = low if low2 is None else low2
    hi2 = high if high2 is None else high2

    def a(shape, view=None):
        return Arg(shape, low, high, view=view)

    def b(shape, view=None):
        return Arg(shape, lo2, hi2, view=view, ints=ints2)

    layouts = {
        "same": (a((3, 4)), b((3, 4))),
        "broadcast": (a((3, 1)), b((1, 4))),
        "broadcast_rank": (a((2, 3, 4)), b((4,))),
        "0d": (a(()), b(())),
        "0d_tensor": (a((2, 3)), b(())),
        "empty": (a((0, 3)), b((1, 3))),
        "size1": (a((1, 3, 1)), b((2, 1, 1))),
        "permuted": (a((4, 3), "T"), b((4, 3))),
        "sliced": (a((3, 4)), b((3, 4), "slice")),
    }
    cases = [OpCase(f"{op}/{tag}", op, dtypes, args=args, grad=grad, covers=covers)
             for tag, args in layouts.items()]
    if scalar is not None:
        cases.append(OpCase(f"{op}/scalar", op, dtypes, args=(a((3, 4)), Scalar(scalar)),
                            grad=grad))
        cases.append(OpCase(f"{op}/rscalar", op, dtypes, args=(Scalar(scalar), b((3, 4))),
                            grad=grad))
    if large:
        case = OpCase(f"{op}/large", op, dtypes, large=True, args=(a(LARGE), b((LARGE[1],))),
                      grad=grad, default=default_large)
        cases.append(case)
    return cases


def reduction(op: str, dtypes: tuple = FLOAT, grad: bool = True, low: float = -1.0,
              high: float = 1.0, empty: bool = True, large: bool = True,
              default_large: bool = False, dim_kw: str = "dim", multi_dim: bool = True,
              keepdim: bool = True, all_dims: bool = True,
              extra: dict | None = None) -> list[OpCase]:
    """Cases of a reduction: all elements, along one dim, several dims, keepdim.

    ``all_dims=False`` is for reductions that need a ``dim`` (no all-elements cases).
    """
    kw = dict(extra or {})

    def a(shape, view=None):
        return Arg(shape, low, high, view=view)

    layouts: dict[str, tuple] = {
        "all": (a((3, 4)), {}),
        "dim0": (a((3, 4)), {dim_kw: 0}),
        "dim_neg": (a((2, 3, 4)), {dim_kw: -1}),
        "0d": (a(()), {}),
        "size1": (a((1, 4, 1)), {dim_kw: 2}),
        "permuted": (a((4, 3, 2), "T"), {dim_kw: 1}),
    }
    if not all_dims:
        del layouts["all"], layouts["0d"]
    if keepdim:
        layouts["keepdim"] = (a((3, 4)), {dim_kw: 1, "keepdim": True})
    if multi_dim:
        layouts["dims"] = (a((2, 3, 4)), {dim_kw: (0, 2)})
    if empty:
        layouts["empty"] = (a((0, 3)), {dim_kw: 0})
    cases = [OpCase(f"{op}/{tag}", op, dtypes, args=(arg,), kwargs={**kw, **k}, grad=grad)
             for tag, (arg, k) in layouts.items()]
    if large:
        case = OpCase(f"{op}/large", op, dtypes, tol=10.0, large=True, args=(a(LARGE),),
                      kwargs=kw if all_dims else {**kw, dim_kw: 1}, grad=grad,
                      default=default_large)
        cases.append(case)
    return cases
