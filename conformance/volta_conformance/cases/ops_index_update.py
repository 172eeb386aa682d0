"""Cases of the index writes (take, put, index_copy/fill/put, scatter_reduce, index_reduce)
and of the stacking and splitting ops."""

from __future__ import annotations

import volta_core as vt

from ..case import FLOAT, INT, Arg, OpCase

CASES: list = []


def case(name: str, op: str, *args, fn=None, dtypes: tuple = FLOAT, **kw) -> OpCase:
    extra = {k: kw.pop(k) for k in ("covers", "needs", "tol", "grad") if k in kw}
    return OpCase(f"{op}/{name}", op, dtypes, args=args, fn=fn, kwargs=kw, **extra)


def _i(x, values):
    return vt.tensor(values, dtype=vt.int64, device=x.device)


# -- take, put, index_* --------------------------------------------------------------------
CASES += [
    case("basic", "take", Arg((3, 4)), Arg((2, 5), -12, 12, kind="index"),
         covers=("Tensor.take",)),
    case("unique", "put", Arg((3, 4)), Arg((3,)),
         fn=lambda x, s: vt.put(x, _i(x, [1, -1, 5]), s), covers=("Tensor.put_",)),
    case("accumulate", "put", Arg((3, 4)), Arg((6,), 0, 12, kind="index"), Arg((6,)),
         fn=lambda x, i, s: vt.put(x, i, s, accumulate=True)),
    case("basic", "index_copy", Arg((4, 3)), Arg((4, 2)),
         fn=lambda x, s: vt.index_copy(x, 1, _i(x, [2, 0]), s), covers=("Tensor.index_copy_",)),
    case("int", "index_copy", Arg((4, 3)), Arg((2, 3)), dtypes=INT, grad=False,
         fn=lambda x, s: x.index_copy(0, _i(x, [3, 1]), s)),
    case("basic", "index_fill", Arg((4, 3)), Arg((5,), 0, 3, kind="index"),
         fn=lambda x, i: vt.index_fill(x, 1, i, -1.5), covers=("Tensor.index_fill_",)),
    case("tensor_value", "index_fill", Arg((4, 3)), Arg(()),
         fn=lambda x, v: x.index_fill(0, _i(x, [1, 3]), v)),
    case("basic", "index_put", Arg((4, 3)), Arg((2,)),
         fn=lambda x, v: vt.index_put(x, (_i(x, [0, 3]), _i(x, [2, 1])), v),
         covers=("Tensor.index_put",)),
    case("accumulate", "index_put", Arg((4, 3)), Arg((5,), 0, 4, kind="index"), Arg((5, 3)),
         fn=lambda x, i, v: vt.index_put(x, (i,), v, accumulate=True)),
    case("basic", "index_put_", Arg((4, 3)), Arg((3,)),
         fn=lambda x, v: vt.index_put_(x * 1.0, (_i(x, [1]),), v),
         covers=("Tensor.index_put_",)),
]
for _r in ("sum", "prod", "mean", "amax", "amin"):
    for _inc in (True, False):
        CASES.append(case(f"{_r}_{'self' if _inc else 'noself'}", "scatter_reduce",
                          Arg((4, 3), 0.5, 2.0), Arg((5, 3), 0, 4, kind="index"),
                          Arg((5, 3), 0.5, 2.0), dtypes=FLOAT + INT,
                          fn=lambda x, i, s, r=_r, inc=_inc: vt.scatter_reduce(
                              x, 0, i, s, r, include_self=inc),
                          covers=("Tensor.scatter_reduce", "Tensor.scatter_reduce_")))

for _r in ("prod", "mean", "amax", "amin"):
    CASES.append(case(f"{_r}", "index_reduce", Arg((4, 3), 0.5, 2.0), Arg((4, 5), 0.5, 2.0),
                      fn=lambda x, s, r=_r: vt.index_reduce(x, 1, _i(x, [2, 0, 2, 1, 0]), s, r),
                      covers=("Tensor.index_reduce", "Tensor.index_reduce_")))
    CASES.append(case(f"{_r}_noself", "index_reduce", Arg((4, 3), 0.5, 2.0),
                      Arg((3, 3), 0.5, 2.0),
                      fn=lambda x, s, r=_r: x.index_reduce(0, _i(x, [3, 0, 3]), s, r,
                                                          include_self=False)))

# -- stacking and splitting ------------------------------------------------------------------
for _op in ("hstack", "vstack", "dstack", "column_stack", "row_stack"):
    CASES += [
        case("2d", _op, Arg((2, 3)), Arg((2, 3)), fn=lambda a, b, op=_op: getattr(vt, op)([a, b])),
        case("1d", _op, Arg((3,)), Arg((3,)), fn=lambda a, b, op=_op: getattr(vt, op)([a, b])),
        case("0d", _op, Arg(()), Arg(()), fn=lambda a, b, op=_op: getattr(vt, op)([a, b])),
    ]
CASES += [
    case("sections", "tensor_split", Arg((7, 2)), Arg((7, 2)), fn=lambda x, w: [
        p * q for p, q in zip(vt.tensor_split(x, 3), vt.tensor_split(w, 3))]),
    case("indices", "tensor_split", Arg((2, 7)), indices_or_sections=[1, -2, 9], dim=1),
    case("basic", "rot90", Arg((2, 3, 4)), k=1, dims=(0, 2)),
    case("k3", "rot90", Arg((3, 4)), k=3, dims=(1, 0)),
    case("int", "repeat_interleave", Arg((2, 3)), repeats=2),
    case("tensor", "repeat_interleave", Arg((3, 2)), Arg((3,), 0, 3, kind="index"),
         fn=lambda x, r: vt.repeat_interleave(x, r, dim=0)),
]
