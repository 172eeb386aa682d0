"""Cases of set, counting and binning ops: unique, isin, bincount, histc, searchsorted,
bucketize, quantiles, and the closeness tests."""

from __future__ import annotations

import volta_core as vt

from ..case import FLOAT, INT, Arg, OpCase, Scalar

A34 = Arg((3, 4))
IDX = Arg((12,), 0, 6, kind="index")


def case(name: str, op: str, *args, fn=None, dtypes: tuple = FLOAT, **kw) -> OpCase:
    extra = {k: kw.pop(k) for k in ("covers", "needs", "tol", "grad") if k in kw}
    return OpCase(f"{op}/{name}", op, dtypes, args=args, fn=fn, kwargs=kw, **extra)


def _rounded(x):
    return (x * 3).round()  # repeated values


CASES: list = [
    case("basic", "unique", A34, fn=lambda x: vt.unique(_rounded(x), return_inverse=True,
                                                       return_counts=True), grad=False,
         dtypes=FLOAT + INT, covers=("Tensor.unique",)),
    case("dim", "unique", Arg((5, 3), ints=(0, 2)), dtypes=INT, grad=False,
         fn=lambda x: vt.unique(x, dim=0, return_inverse=True, return_counts=True)),
    case("basic", "unique_consecutive", A34, grad=False,
         fn=lambda x: vt.unique_consecutive(_rounded(x), return_inverse=True,
                                            return_counts=True)),
    case("basic", "isin", Arg((3, 4), ints=(0, 6)), Arg((3,), ints=(0, 6)), dtypes=INT,
         grad=False),
    case("basic", "bincount", IDX, grad=False, covers=("Tensor.bincount",)),
    case("weights", "bincount", IDX, Arg((12,)), minlength=9),
    case("basic", "histc", Arg((50,)), bins=7, grad=False, covers=("Tensor.histc",)),
    case("range", "histc", Arg((50,)), bins=4, min=-0.5, max=0.5, grad=False),
    case("basic", "searchsorted", Arg((6,)), Arg((3, 4)), grad=False,
         fn=lambda s, v: vt.searchsorted(s.sort().values, v)),
    case("right_nd", "searchsorted", Arg((3, 6)), Arg((3, 4)), grad=False,
         fn=lambda s, v: vt.searchsorted(s.sort().values, v, right=True)),
    case("basic", "bucketize", A34, Arg((5,)), grad=False,
         fn=lambda v, b: vt.bucketize(v, b.sort().values), covers=("Tensor.bucketize",)),
    case("basic", "quantile", A34, Scalar(0.3), dim=1, covers=("Tensor.quantile",)),
    case("all", "quantile", A34, Scalar(0.75), interpolation="midpoint", grad=False),
    case("basic", "nanquantile", A34, fn=lambda x: vt.nanquantile(vt.log(x), 0.4, dim=0),
         grad=False, covers=("Tensor.nanquantile",)),
    case("basic", "histogram", Arg((50,)), bins=6, grad=False),
    case("basic", "histogramdd", Arg((40, 2)), bins=[3, 4], grad=False),
    case("weighted", "histogramdd", Arg((30, 3)), Arg((30,)), grad=False,
         fn=lambda x, w: vt.histogramdd(x, bins=2, range=[-1.0, 1.0] * 3, weight=w,
                                        density=True)),
    case("basic", "gcd", Arg((3, 4), ints=(-20, 20)), Arg((4,), ints=(-20, 20)), dtypes=INT,
         grad=False, covers=("Tensor.gcd",)),
    case("basic", "lcm", Arg((3, 4), ints=(-9, 9)), Arg((4,), ints=(-9, 9)), dtypes=INT,
         grad=False, covers=("Tensor.lcm",)),
    case("basic", "unravel_index", Arg((5,), 0, 12, kind="index"), Scalar((3, 4)),
         grad=False),
    case("basic", "isclose", A34, A34, grad=False, covers=("Tensor.isclose",)),
    case("basic", "allclose", A34, grad=False, fn=lambda x: vt.allclose(x, x + 1e-9),
         covers=("Tensor.allclose",)),
    case("basic", "equal", A34, grad=False, fn=lambda x: vt.equal(x, x * 1),
         covers=("Tensor.equal",)),
]
