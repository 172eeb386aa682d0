"""Cases of the core elementwise ops, comparisons, ``where``, casts and ``matmul``."""

from __future__ import annotations

from ..case import ALL_FLOAT, FLOAT, HALF, INT, Arg, OpCase, Scalar
from ._build import binary, unary

ARITH = ALL_FLOAT + INT
POS = {"low": 0.2, "high": 2.0}

CASES: list = []

# -- unary ---------------------------------------------------------------------------------
CASES += unary("neg", dtypes=ARITH, covers=("negative", "Tensor.__neg__"))
CASES += unary("abs", dtypes=ARITH, covers=("Tensor.__abs__",))
CASES += unary("relu", dtypes=ARITH, default_large=True)
CASES += unary("reciprocal", dtypes=ALL_FLOAT, **POS)
CASES += unary("sqrt", dtypes=ALL_FLOAT, **POS)
CASES += unary("exp", dtypes=ALL_FLOAT, default_large=True)
CASES += unary("exp2", dtypes=ALL_FLOAT)
CASES += unary("log", dtypes=ALL_FLOAT, **POS)
CASES += unary("log2", dtypes=ALL_FLOAT, **POS)
CASES += unary("sin", low=-3.0, high=3.0, dtypes=ALL_FLOAT)
CASES += unary("cos", low=-3.0, high=3.0, dtypes=ALL_FLOAT)
CASES += unary("tanh", low=-3.0, high=3.0, dtypes=ALL_FLOAT)
CASES += unary("sigmoid", low=-6.0, high=6.0, dtypes=ALL_FLOAT)
CASES += [
    # integer inputs of floating functions are promoted to the default float dtype
    OpCase("sqrt/int_input", "sqrt", INT, args=(Arg((3, 4), ints=(0, 9)),), grad=False),
    OpCase("exp/int_input", "exp", INT, args=(Arg((5,), ints=(-3, 3)),), grad=False),
    OpCase("sigmoid/extreme", "sigmoid", FLOAT, args=(Arg((64,), -80.0, 80.0),)),
]

# -- binary --------------------------------------------------------------------------------
CASES += binary("add", dtypes=ARITH, default_large=True, covers=("Tensor.__add__",))
CASES += binary("sub", dtypes=ARITH, covers=("subtract", "Tensor.__sub__"))
CASES += binary("mul", dtypes=ARITH, covers=("multiply", "Tensor.__mul__"))
CASES += binary("div", low2=0.5, high2=2.0, dtypes=ALL_FLOAT, ints2=(1, 6),
                covers=("divide", "true_divide", "Tensor.__truediv__"))
CASES += binary("pow", low=0.5, high=2.0, low2=-2.0, high2=2.0, dtypes=ALL_FLOAT,
                covers=("Tensor.__pow__",))
CASES += binary("maximum", dtypes=ARITH, scalar=None)  # numbers refused, as PyTorch
CASES += binary("minimum", dtypes=ARITH, scalar=None)
CASES += binary("remainder", low=-4.0, high=4.0, low2=0.6, high2=1.9, dtypes=FLOAT,
                scalar=None, covers=("Tensor.__mod__",))
CASES += binary("fmod", low=-4.0, high=4.0, low2=0.6, high2=1.9, dtypes=FLOAT, scalar=None)
CASES += [
    OpCase("div/int", "div", INT, args=(Arg((3, 4)), Arg((3, 4), ints=(1, 6))), grad=False),
    OpCase("remainder/int", "remainder", INT, args=(Arg((3, 4)), Arg((3, 4), ints=(1, 6))),
           grad=False),
    OpCase("remainder/scalar", "remainder", FLOAT, args=(Arg((3, 4), -4.0, 4.0), Scalar(1.5))),
    OpCase("pow/int_exponent", "pow", FLOAT, args=(Arg((3, 4), -2.0, 2.0), Scalar(3))),
    OpCase("pow/int", "pow", INT, args=(Arg((3, 4), ints=(-3, 4)), Arg((3, 4), ints=(0, 4))),
           grad=False),
    OpCase("add/mixed_dtypes", "add", ("int64",),
           args=(Arg((3, 4)), Arg((3, 4), kind="float32")), grad=False),
    OpCase("mul/float_with_half", "mul", FLOAT,
           args=(Arg((3, 4)), Arg((3, 4), kind="float16", grad=False))),
    OpCase("add/bool", "add", ("bool",), args=(Arg((3, 4)), Arg((3, 4))), grad=False),
]

# -- comparisons ---------------------------------------------------------------------------
for _name, _dunder in (("lt", "__lt__"), ("le", "__le__"), ("gt", "__gt__"), ("ge", "__ge__"),
                       ("eq", "__eq__"), ("ne", "__ne__")):
    CASES += binary(_name, dtypes=FLOAT + INT + HALF, grad=False, large=False, scalar=0,
                    covers=(f"Tensor.{_dunder}",))
CASES += [
    OpCase("eq/ties", "eq", FLOAT, grad=False,
           fn=lambda a: a.eq(a.detach() * 1.0), args=(Arg((3, 4)),)),
]

# -- where ---------------------------------------------------------------------------------
_COND = Arg((3, 4), kind="bool")
CASES += [
    OpCase("where/same", "where", ARITH, args=(_COND, Arg((3, 4)), Arg((3, 4)))),
    OpCase("where/broadcast", "where", FLOAT,
           args=(Arg((3, 1), kind="bool"), Arg((1, 4)), Arg((3, 4)))),
    OpCase("where/scalar", "where", FLOAT, args=(_COND, Arg((3, 4)), Scalar(0.0))),
    OpCase("where/0d", "where", FLOAT, args=(Arg((), kind="bool"), Arg(()), Arg(()))),
    OpCase("where/empty", "where", FLOAT,
           args=(Arg((0, 4), kind="bool"), Arg((0, 4)), Arg((4,)))),
    OpCase("where/permuted", "where", FLOAT,
           args=(Arg((4, 3), kind="bool"), Arg((4, 3), view="T"), Arg((4, 3)))),
    OpCase("where/method", "where", FLOAT, covers=("Tensor.where",),
           fn=lambda c, a, b: a.where(c, b), args=(_COND, Arg((3, 4)), Arg((3, 4)))),
]

# -- casts ---------------------------------------------------------------------------------
def _cast(x, dtype):
    import volta_core as vt

    return vt.cast(x, dtype)


for _src, _dst in (("float32", "float64"), ("float64", "float32"), ("float32", "float16"),
                   ("float32", "int32"), ("float64", "int64"), ("int64", "float32"),
                   ("int32", "int64"), ("float32", "bool"), ("bool", "float32")):
    CASES.append(OpCase(f"cast/{_src}_to_{_dst}", "cast", (_src,),
                        args=(Arg((3, 4), -3.0, 3.0), Scalar(_dst)),
                        fn=_cast))
CASES += [
    OpCase("cast/permuted", "cast", ("float32",), fn=lambda x: x.to("float64"),
           args=(Arg((4, 3, 2), view="T"),), covers=("Tensor.to",)),
    OpCase("cast/empty", "cast", FLOAT, fn=lambda x: x.to("float16"), args=(Arg((0, 2)),)),
]

# -- matmul --------------------------------------------------------------------------------
_MM = {
    "mm": ((3, 5), (5, 4)), "mv": ((3, 5), (5,)), "vm": ((5,), (5, 4)), "vv": ((5,), (5,)),
    "batched": ((2, 3, 5), (2, 5, 4)), "broadcast": ((2, 1, 3, 5), (3, 5, 4)),
    "batch_mat": ((2, 3, 5), (5, 4)), "empty": ((0, 5), (5, 4)), "size1": ((1, 1), (1, 1)),
    "zero_k": ((3, 0), (0, 4)), "wide": ((16, 64), (64, 33)),
}
CASES += [OpCase(f"matmul/{tag}", "matmul", FLOAT + HALF, args=(Arg(sa), Arg(sb)),
                 tol=2.0, covers=("Tensor.__matmul__",))
          for tag, (sa, sb) in _MM.items()]
CASES += [
    OpCase("matmul/permuted", "matmul", FLOAT, args=(Arg((3, 5), view="T"), Arg((5, 4))),
           tol=2.0),
    OpCase("matmul/int", "matmul", INT, args=(Arg((3, 5)), Arg((5, 4))), grad=False),
    OpCase("matmul/operator", "matmul", FLOAT, fn=lambda a, b: a @ b,
           args=(Arg((3, 5)), Arg((5, 4))), tol=2.0),
]
