"""Cases of the order statistics, NaN-skipping reductions, scans and vector similarity."""

from __future__ import annotations

import volta_core as vt

from ..case import ALL_FLOAT, FLOAT, INT, Arg, OpCase
from ._build import reduction

CASES: list = []


def case(name: str, op: str, *args, fn=None, dtypes: tuple = FLOAT, **kw) -> OpCase:
    extra = {k: kw.pop(k) for k in ("covers", "needs", "tol", "grad") if k in kw}
    return OpCase(f"{op}/{name}", op, dtypes, args=args, fn=fn, kwargs=kw, **extra)


def _nan(x):
    return vt.where(x > 0.6, float("nan"), x)  # some NaN entries


CASES += reduction("nansum", dtypes=ALL_FLOAT + INT, large=False)
CASES += reduction("nanmean", dtypes=ALL_FLOAT, large=False)
CASES += [
    case("nan", "nansum", Arg((3, 4)), fn=lambda x: vt.nansum(_nan(x), 1)),
    case("nan", "nanmean", Arg((3, 4)), fn=lambda x: vt.nanmean(_nan(x), 0)),
    case("all", "count_nonzero", Arg((3, 4)), dtypes=FLOAT + INT, grad=False),
    case("dims", "count_nonzero", Arg((2, 3, 4)), dim=(0, 2), dtypes=FLOAT + INT, grad=False),
    case("dim", "mode", Arg((3, 6), 0, 3, kind="index"), dim=1, dtypes=INT,
         covers=("Tensor.mode",)),
    case("all", "median", Arg((3, 5))),
    case("dim", "median", Arg((3, 5)), dim=1, dtypes=FLOAT + INT),
    case("keepdim", "median", Arg((4, 3), view="T"), dim=0, keepdim=True),
    case("nan", "median", Arg((3, 5)), fn=lambda x: vt.median(_nan(x), 1)),
    case("all", "nanmedian", Arg((3, 5)), fn=lambda x: vt.nanmedian(_nan(x))),
    case("dim", "nanmedian", Arg((3, 5)), fn=lambda x: vt.nanmedian(_nan(x), 1)),
    case("basic", "kthvalue", Arg((3, 5)), k=2, dim=1, dtypes=FLOAT + INT),
    case("keepdim", "kthvalue", Arg((5, 2)), k=5, dim=0, keepdim=True),
    case("basic", "msort", Arg((4, 3)), dtypes=FLOAT + INT),
    case("all", "aminmax", Arg((3, 4)), dtypes=FLOAT + INT),
    case("dim", "aminmax", Arg((3, 4)), dim=1, keepdim=True),
    case("basic", "logcumsumexp", Arg((3, 6), -5.0, 5.0), dim=1),
    case("extreme", "logcumsumexp", Arg((2, 6), -200.0, 200.0), dim=0),
    case("basic", "cummax", Arg((3, 6)), dim=1, dtypes=FLOAT + INT),
    case("basic", "cummin", Arg((6, 3)), dim=0, dtypes=FLOAT + INT),
    case("ties", "cummax", Arg((3, 6)), fn=lambda x: vt.cummax(x.sign(), 1)),
    case("basic", "nn.functional.normalize", Arg((3, 4)), dim=1),
    case("p1", "nn.functional.normalize", Arg((3, 4)), p=1.0, dim=0),
    case("basic", "nn.functional.cosine_similarity", Arg((3, 4)), Arg((3, 4)), dim=1),
    case("broadcast", "nn.functional.cosine_similarity", Arg((3, 1, 4)), Arg((5, 4)), dim=-1),
]
