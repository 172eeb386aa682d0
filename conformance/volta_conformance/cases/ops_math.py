"""Cases of math functions, activations, reductions, softmax and scans."""

from __future__ import annotations

import volta_core as vt

from ..case import ALL_FLOAT, FLOAT, INT, Arg, OpCase, Scalar
from ._build import binary, reduction, unary

ARITH = FLOAT + INT
POS = {"low": 0.2, "high": 2.0}
A34 = Arg((3, 4))


def fcase(name: str, op: str, *args, fn=None, dtypes: tuple = FLOAT, **kw) -> OpCase:
    extra = {k: kw.pop(k) for k in ("covers", "needs", "tol", "grad", "large", "default")
             if k in kw}
    return OpCase(f"{op}/{name}", op, dtypes, args=args, fn=fn, kwargs=kw, **extra)


CASES: list = []

# -- elementwise math ----------------------------------------------------------------------
CASES += unary("sign", dtypes=ARITH, large=False)
CASES += unary("floor", low=-3.0, high=3.0, dtypes=ARITH, large=False)
CASES += unary("ceil", low=-3.0, high=3.0, dtypes=ARITH, large=False)
CASES += unary("trunc", low=-3.0, high=3.0, dtypes=ARITH, large=False, covers=("fix",))
CASES += unary("round", low=-3.0, high=3.0, large=False)
CASES += unary("log1p", low=-0.5, high=2.0, dtypes=ALL_FLOAT, large=False)
CASES += unary("expm1", dtypes=ALL_FLOAT, large=False)
CASES += unary("sinh", low=-2.0, high=2.0, large=False)
CASES += unary("cosh", low=-2.0, high=2.0, large=False)
CASES += unary("tan", low=-1.2, high=1.2, large=False)
CASES += unary("asin", low=-0.9, high=0.9, large=False, covers=("arcsin",))
CASES += unary("acos", low=-0.9, high=0.9, large=False, covers=("arccos",))
CASES += unary("atan", low=-3.0, high=3.0, large=False, covers=("arctan",))
CASES += unary("square", dtypes=ARITH, large=False)
CASES += unary("rsqrt", dtypes=ALL_FLOAT, large=False, **POS)
CASES += unary("erf", low=-2.5, high=2.5, dtypes=ALL_FLOAT, large=False)
CASES += binary("atan2", low=-2.0, high=2.0, large=False, scalar=None, covers=("arctan2",))
CASES += [
    fcase("decimals", "round", Arg((3, 4), -30.0, 30.0), decimals=1),
    fcase("both", "clamp", A34, min=-0.5, max=0.5, covers=("clip",)),
    fcase("min_only", "clamp", A34, min=0.0, dtypes=ARITH),
    fcase("tensors", "clamp", A34, Arg((3, 1), -1.0, 0.0), Arg((4,), 0.0, 1.0),
          fn=lambda x, lo, hi: vt.clamp(x, lo, hi)),
    fcase("basic", "clamp_min", A34, Scalar(0.1)),
    fcase("basic", "clamp_max", A34, Scalar(0.1), dtypes=ARITH),
    fcase("basic", "lerp", A34, A34, Scalar(0.3)),
    fcase("tensor_weight", "lerp", A34, Arg((4,)), Arg((3, 1), 0.0, 1.0)),
    fcase("basic", "addcmul", A34, Arg((3, 1)), Arg((4,)), value=0.5),
    fcase("basic", "addcdiv", A34, A34, Arg((3, 4), 0.5, 2.0), value=-2.0),
    fcase("basic", "nan_to_num", A34, fn=lambda x: vt.nan_to_num(vt.log(x), posinf=5.0)),
    fcase("basic", "isnan", A34, fn=lambda x: vt.isnan(vt.log(x)), grad=False),
    fcase("basic", "isinf", A34, fn=lambda x: vt.isinf(1.0 / vt.relu(x)), grad=False),
    fcase("basic", "isfinite", A34, fn=lambda x: vt.isfinite(vt.log(x)), grad=False),
    fcase("int", "isfinite", A34, dtypes=INT, grad=False),
]
for _op in ("logical_and", "logical_or", "logical_xor"):
    CASES.append(fcase("bool", _op, Arg((3, 4), kind="bool"), Arg((4,), kind="bool"),
                       dtypes=("bool",)))
    CASES.append(fcase("numbers", _op, A34, A34, dtypes=ARITH, grad=False))
CASES.append(fcase("bool", "logical_not", Arg((3, 4), kind="bool"), dtypes=("bool",)))
CASES.append(fcase("numbers", "logical_not", A34, dtypes=ARITH, grad=False))

# -- activations ---------------------------------------------------------------------------
_ACT = {"low": -4.0, "high": 4.0, "large": False}
CASES += unary("softplus", **_ACT)
CASES += unary("gelu", **_ACT)
CASES += unary("silu", **_ACT)
CASES += unary("leaky_relu", **_ACT)
CASES += unary("elu", **_ACT)
CASES += unary("hardtanh", **_ACT)
CASES += [
    fcase("beta", "softplus", Arg((3, 4), -30.0, 30.0), beta=2.0, threshold=10.0),
    fcase("tanh", "gelu", Arg((3, 4), -4.0, 4.0), approximate="tanh"),
    fcase("slope", "leaky_relu", A34, negative_slope=0.2),
    fcase("alpha", "elu", A34, alpha=0.5),
    fcase("range", "hardtanh", Arg((3, 4), -3.0, 3.0), min_val=-2.0, max_val=0.5),
]
for _op in ("hardswish", "hardsigmoid", "mish", "selu", "celu", "softsign", "relu6",
            "logsigmoid", "tanhshrink", "softshrink", "hardshrink", "glu"):
    CASES.append(fcase("basic", f"nn.functional.{_op}", Arg((3, 4), -4.0, 4.0)))

# -- reductions ----------------------------------------------------------------------------
CASES += reduction("sum", dtypes=ALL_FLOAT + INT + ("bool",), default_large=True)
CASES += reduction("mean", dtypes=ALL_FLOAT, default_large=True)
CASES += reduction("amax", dtypes=ARITH, empty=False)
CASES += reduction("amin", dtypes=ARITH, empty=False)
CASES += reduction("prod", low=0.5, high=1.5, dtypes=ARITH, multi_dim=False, large=False)
CASES += reduction("var", large=False)
CASES += reduction("std", large=False)
CASES += reduction("all", dtypes=("bool",) + ARITH, grad=False, large=False)
CASES += reduction("any", dtypes=("bool",) + ARITH, grad=False, large=False)
CASES += reduction("logsumexp", low=-5.0, high=5.0, empty=False, all_dims=False)
CASES += [
    fcase("dtype", "sum", Arg((3, 4)), dtype="float64", dtypes=("float32",)),
    fcase("int8", "sum", Arg((3, 4), kind="int8"), dtypes=("int64",)),
    fcase("with_zero", "prod", A34, fn=lambda x: vt.prod(vt.relu(x), 1)),
    fcase("correction", "var", Arg((4, 5)), dim=1, correction=0),
    fcase("unbiased", "std", Arg((4, 5)), dim=0, unbiased=False),
    fcase("basic", "var_mean", Arg((4, 5)), dim=1),
    fcase("basic", "std_mean", Arg((4, 5)), dim=(0, 1)),
    fcase("fro", "norm", Arg((3, 4))),
    fcase("p1", "norm", Arg((3, 4)), p=1, dim=1),
    fcase("inf", "norm", Arg((3, 4)), p=float("inf"), dim=0, keepdim=True),
    fcase("p3", "norm", Arg((2, 3, 4)), p=3, dim=(1, 2)),
    fcase("basic", "linalg.vector_norm", Arg((3, 4)), dim=1),
]
for _op in ("max", "min"):
    CASES += [
        fcase("all", _op, Arg((3, 4)), dtypes=ARITH),
        fcase("dim", _op, Arg((3, 4)), dim=1, dtypes=ARITH),
        fcase("keepdim", _op, Arg((2, 3, 4)), dim=0, keepdim=True),
        fcase("permuted", _op, Arg((4, 3), view="T"), dim=-1),
        fcase("0d", _op, Arg(())),
        fcase("ties", _op, Arg((3, 4)), fn=lambda x, op=_op: getattr(vt, op)(x.sign(), 1)),
        fcase("binary", _op, Arg((3, 4)), Arg((4,)), fn=lambda a, b, op=_op: getattr(vt, op)(a, b)),
        fcase("large", _op, Arg((1024, 1100)), large=True, default=_op == "max"),
    ]
for _op in ("argmax", "argmin"):
    CASES += [
        fcase("all", _op, Arg((3, 4)), dtypes=ARITH, grad=False),
        fcase("dim", _op, Arg((3, 4)), dim=0, dtypes=ARITH, grad=False),
        fcase("keepdim", _op, Arg((2, 3, 4)), dim=-1, keepdim=True, grad=False),
        fcase("permuted", _op, Arg((4, 3), view="T"), dim=1, grad=False),
    ]

# -- softmax family ------------------------------------------------------------------------
for _op in ("softmax", "log_softmax"):
    CASES += [
        fcase("last", _op, Arg((3, 5), -4.0, 4.0), dim=-1, dtypes=ALL_FLOAT),
        fcase("dim0", _op, Arg((3, 5, 2), -4.0, 4.0), dim=0),
        fcase("extreme", _op, Arg((2, 6), -200.0, 200.0), dim=1),
        fcase("permuted", _op, Arg((4, 3), view="T"), dim=1),
        fcase("1d", _op, Arg((7,)), dim=0),
        fcase("dtype", _op, Arg((3, 4)), dim=1, dtype="float64", dtypes=("float32",)),
        fcase("large", _op, Arg((1024, 1100)), dim=-1, large=True),
    ]

# -- scans, sorting, products (when the core has them) ------------------------------------
CASES += [
    fcase("basic", "cumsum", Arg((3, 4)), dim=1, dtypes=ARITH),
    fcase("basic", "cumprod", Arg((3, 4), 0.5, 1.5), dim=0),
    fcase("basic", "sort", Arg((3, 5)), dim=1),
    fcase("descending", "sort", Arg((3, 5)), dim=0, descending=True),
    fcase("basic", "argsort", Arg((3, 5)), dim=1, grad=False),
    fcase("basic", "topk", Arg((3, 6)), Scalar(2), dim=1),
    fcase("basic", "diff", Arg((3, 6)), dim=1),
    fcase("uniform", "gradient", Arg((3, 6)), fn=lambda x: vt.gradient(x, spacing=0.5)),
    fcase("edge2", "gradient", Arg((4, 5)), fn=lambda x: vt.gradient(x, dim=1, edge_order=2)),
    fcase("coordinates", "gradient", Arg((5, 3)),
         fn=lambda x: vt.gradient(x, spacing=(vt.tensor([0.0, 0.5, 2.0, 2.5, 4.0],
                                                        device=x.device),), dim=0,
                                  edge_order=2)),
    fcase("basic", "outer", Arg((3,)), Arg((4,))),
    fcase("basic", "dot", Arg((5,)), Arg((5,))),
    fcase("basic", "mm", Arg((3, 5)), Arg((5, 2))),
    fcase("basic", "mv", Arg((3, 5)), Arg((5,))),
    fcase("basic", "addmm", Arg((3, 1)), Arg((3, 5)), Arg((5, 2)), beta=0.5, alpha=2.0),
    fcase("basic", "baddbmm", Arg((2, 3, 2)), Arg((2, 3, 5)), Arg((2, 5, 2)), beta=0.5,
          alpha=-1.0),
    fcase("basic", "bmm", Arg((2, 3, 5)), Arg((2, 5, 2))),
    fcase("basic", "addmv", Arg((3,)), Arg((3, 5)), Arg((5,)), beta=0.5, alpha=2.0),
    fcase("basic", "addr", Arg((1, 4)), Arg((3,)), Arg((4,)), beta=-1.0, alpha=0.5),
    fcase("basic", "addbmm", Arg((3, 2)), Arg((4, 3, 5)), Arg((4, 5, 2)), beta=0.5,
          alpha=1.5),
    fcase("basic", "chain_matmul", Arg((3, 4)), Arg((4, 5)), Arg((5, 2))),
    fcase("basic", "renorm", Arg((3, 4, 2)), Scalar(2), Scalar(1), Scalar(0.8)),
    fcase("matrix", "einsum", Arg((3, 5)), Arg((5, 2)),
          fn=lambda a, b: vt.einsum("ij,jk->ik", a, b)),
    fcase("basic", "tensordot", Arg((3, 4, 5)), Arg((4, 5, 2)), dims=2),
    fcase("basic", "trace", Arg((4, 4))),
    fcase("basic", "diagonal", Arg((3, 4))),
    fcase("basic", "cross", Arg((4, 3)), Arg((4, 3)), dim=1),
]
