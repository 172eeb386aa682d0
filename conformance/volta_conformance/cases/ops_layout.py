"""Cases of dimension helpers and grids: atleast_nd, swapaxes, moveaxis, ravel,
fliplr/flipud, hsplit/vsplit/dsplit, argwhere, meshgrid, cartesian_prod, absolute and
the bitwise functions."""

from __future__ import annotations

import volta_core as vt

from ..case import FLOAT, INT, Arg, OpCase, Scalar

A34 = Arg((3, 4))
A234 = Arg((2, 3, 4))


def case(name: str, op: str, *args, fn=None, dtypes: tuple = FLOAT, **kw) -> OpCase:
    extra = {k: kw.pop(k) for k in ("covers", "needs", "tol", "grad") if k in kw}
    return OpCase(f"{op}/{name}", op, dtypes, args=args, fn=fn, kwargs=kw, **extra)


CASES: list = [
    case("0d", "atleast_1d", Arg(())),
    case("1d", "atleast_2d", Arg((4,))),
    case("2d", "atleast_3d", A34),
    case("basic", "swapaxes", A234, Scalar(0), Scalar(2),
         covers=("swapdims", "Tensor.swapaxes", "Tensor.swapdims")),
    case("basic", "moveaxis", A234, Scalar(0), Scalar(-1)),
    case("basic", "ravel", Arg((4, 3), view="T"), covers=("Tensor.ravel",)),
    case("basic", "fliplr", A34, covers=("Tensor.fliplr",)),
    case("basic", "flipud", A34, covers=("Tensor.flipud",)),
    case("basic", "hsplit", A234, Scalar(3), covers=("Tensor.hsplit",)),
    case("basic", "vsplit", A234, Scalar([1]), covers=("Tensor.vsplit",)),
    case("basic", "dsplit", A234, Scalar(2), covers=("Tensor.dsplit",)),
    case("basic", "argwhere", A34, fn=lambda x: vt.argwhere(x > 0), grad=False,
         covers=("Tensor.argwhere",)),
    case("ij", "meshgrid", Arg((3,)), Arg((4,))),
    case("xy", "meshgrid", Arg((3,)), Arg((4,)), indexing="xy"),
    case("basic", "cartesian_prod", Arg((3,)), Arg((2,))),
    case("basic", "absolute", A34, dtypes=FLOAT + INT, covers=("Tensor.absolute",)),
    case("basic", "bitwise_and", A34, A34, dtypes=INT, grad=False,
         covers=("Tensor.bitwise_and",)),
    case("basic", "bitwise_or", A34, A34, dtypes=INT, grad=False,
         covers=("Tensor.bitwise_or",)),
    case("basic", "bitwise_xor", A34, A34, dtypes=INT, grad=False,
         covers=("Tensor.bitwise_xor",)),
    case("basic", "bitwise_not", A34, dtypes=INT, grad=False,
         covers=("Tensor.bitwise_not",)),
    # counts past the widest dtype and negative ones: 0 (left), the sign (right)
    case("basic", "bitwise_left_shift", A34, Arg((3, 4), ints=(-3, 70)), dtypes=INT,
         grad=False, covers=("Tensor.bitwise_left_shift", "Tensor.bitwise_left_shift_")),
    case("basic", "bitwise_right_shift", A34, Arg((4,), ints=(-3, 70)), dtypes=INT,
         grad=False, covers=("Tensor.bitwise_right_shift", "Tensor.bitwise_right_shift_")),
    case("scalar", "bitwise_left_shift", A34, Scalar(3), dtypes=INT, grad=False),
]
