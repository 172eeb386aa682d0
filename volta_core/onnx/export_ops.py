"""ONNX nodes for Volta's ops (the ``Function`` classes recorded while tracing).

Each writer takes the graph and one recorded op (:class:`Call`) and returns the name of
the value holding the op's result. Ints that depend on dynamic axes arrive as
:class:`~volta_core.onnx.symbolic.Sym` and become ``Shape``-based tensors.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..tensor import Tensor
from .errors import OnnxExportError
from .graph import ONNX_DTYPES, Graph
from .symbolic import Sym, static

INT_MAX = 2**63 - 1


class Call:
    """One recorded op or layer, as the writers see it."""

    def __init__(self, name: str, target: Any, args: tuple, kw: dict, ins: list,
                 out: Any, path: str) -> None:
        self.name, self.target, self.args, self.kw = name, target, args, kw
        self.ins, self.out, self.path = ins, out, path

    def shape(self, i: int) -> tuple[int, ...]:
        return tuple(self.args[i].shape)

    @property
    def dtype(self) -> str:
        return _tensor_of(self.out).dtype.name

    def operand(self, g: Graph, i: int, dtype: str | None = None) -> str:
        """Argument ``i`` as a value name (a Python number becomes a constant)."""
        if self.ins[i] is not None:
            return self.ins[i]
        v, dt = self.args[i], dtype or self.dtype
        if isinstance(v, Sym):  # a size that follows a dynamic axis (a mean's count)
            s = g.scalar_int(v)
            return s if dt == "int64" else g.node("Cast", [s], to=ONNX_DTYPES[dt])
        return g.const(v, dt)


def _tensor_of(out: Any) -> Tensor:
    while not isinstance(out, Tensor):
        out = out[0]
    return out


Writer = Callable[[Graph, Call], Any]
OPS: dict[str, Writer] = {}


def writes(*names: str) -> Callable[[Writer], Writer]:
    def register(fn: Writer) -> Writer:
        for n in names:
            OPS[n] = fn
        return fn

    return register


# -- elementwise ---------------------------------------------------------------------------
_UNARY = {"Neg": "Neg", "Reciprocal": "Reciprocal", "Sqrt": "Sqrt", "Exp": "Exp",
          "Log": "Log", "Sin": "Sin", "Cos": "Cos", "Tanh": "Tanh", "Sigmoid": "Sigmoid",
          "Relu": "Relu", "Abs": "Abs", "Erf": "Erf", "Sinh": "Sinh", "Cosh": "Cosh",
          "Tan": "Tan", "Asin": "Asin", "Acos": "Acos", "Atan": "Atan", "Clone": "Identity",
          "ToDevice": "Identity", "LogicalNot": "Not", "IsNan": "IsNaN"}
_BINARY = {"Add": "Add", "Sub": "Sub", "Mul": "Mul", "Div": "Div", "Pow": "Pow",
           "Maximum": "Max", "Matmul": "MatMul", "LogicalAnd": "And", "LogicalOr": "Or",
           "LogicalXor": "Xor", "Lt": "Less", "Le": "LessOrEqual", "Gt": "Greater",
           "Ge": "GreaterOrEqual", "Eq": "Equal"}


def _unary(onnx_op: str) -> Writer:
    return lambda g, c: g.node(onnx_op, [c.ins[0]])


def _binary(onnx_op: str) -> Writer:
    def write(g: Graph, c: Call) -> str:
        # both operands share a dtype (Volta promotes before the op); scalars take it
        t = next(a for a in c.args[:2] if isinstance(a, Tensor))
        dt = t.dtype.name
        return g.node(onnx_op, [c.operand(g, 0, dt), c.operand(g, 1, dt)])

    return write


for _v, _o in _UNARY.items():
    OPS[_v] = _unary(_o)
for _v, _o in _BINARY.items():
    OPS[_v] = _binary(_o)


@writes("Ne")
def _ne(g: Graph, c: Call) -> str:
    return g.node("Not", [_binary("Equal")(g, c)])


@writes("Log1p")
def _log1p(g: Graph, c: Call) -> str:
    return g.node("Log", [g.node("Add", [c.ins[0], g.const(1.0, c.dtype)])])


@writes("Expm1")
def _expm1(g: Graph, c: Call) -> str:
    return g.node("Sub", [g.node("Exp", [c.ins[0]]), g.const(1.0, c.dtype)])


@writes("Square")
def _square(g: Graph, c: Call) -> str:
    return g.node("Mul", [c.ins[0], c.ins[0]])


@writes("Rsqrt")
def _rsqrt(g: Graph, c: Call) -> str:
    return g.node("Reciprocal", [g.node("Sqrt", [c.ins[0]])])


@writes("Exp2")
def _exp2(g: Graph, c: Call) -> str:
    return g.node("Pow", [g.const(2.0, c.dtype), c.ins[0]])


@writes("Log2")
def _log2(g: Graph, c: Call) -> str:
    return g.node("Div", [g.node("Log", [c.ins[0]]), g.const(math.log(2.0), c.dtype)])


@writes("Silu")
def _silu(g: Graph, c: Call) -> str:
    return g.node("Mul", [c.ins[0], g.node("Sigmoid", [c.ins[0]])])


@writes("Gelu")
def _gelu(g: Graph, c: Call) -> str:
    x, dt = c.ins[0], c.dtype
    if c.kw.get("approximate", "none") == "tanh":
        cube = g.node("Mul", [g.node("Mul", [x, x]), x])
        inner = g.node("Add", [x, g.node("Mul", [cube, g.const(0.044715, dt)])])
        t = g.node("Tanh", [g.node("Mul", [inner, g.const(math.sqrt(2 / math.pi), dt)])])
    else:
        t = g.node("Erf", [g.node("Mul", [x, g.const(1 / math.sqrt(2.0), dt)])])
    half = g.node("Mul", [x, g.const(0.5, dt)])
    return g.node("Mul", [half, g.node("Add", [t, g.const(1.0, dt)])])


@writes("Softplus")
def _softplus(g: Graph, c: Call) -> str:
    x, dt = c.ins[0], c.dtype
    beta, thr = float(c.kw.get("beta", 1.0)), float(c.kw.get("threshold", 20.0))
    bx = g.node("Mul", [x, g.const(beta, dt)]) if beta != 1.0 else x
    soft = g.node("Softplus", [bx])
    if beta != 1.0:
        soft = g.node("Div", [soft, g.const(beta, dt)])
    return g.node("Where", [g.node("Greater", [bx, g.const(thr, dt)]), x, soft])


@writes("LeakyRelu")
def _leaky(g: Graph, c: Call) -> str:
    return g.node("LeakyRelu", [c.ins[0]], alpha=float(c.kw.get("negative_slope", 0.01)))


@writes("Elu")
def _elu(g: Graph, c: Call) -> str:
    return g.node("Elu", [c.ins[0]], alpha=float(c.kw.get("alpha", 1.0)))


@writes("Hardtanh")
def _hardtanh(g: Graph, c: Call) -> str:
    dt = c.dtype
    return g.node("Clip", [c.ins[0], g.const(c.kw.get("min_val", -1.0), dt),
                           g.const(c.kw.get("max_val", 1.0), dt)])


@writes("Threshold")
def _threshold(g: Graph, c: Call) -> str:
    dt = c.dtype
    above = g.node("Greater", [c.ins[0], g.const(c.kw.get("threshold", 0.0), dt)])
    return g.node("Where", [above, c.ins[0], g.const(c.kw.get("value", 0.0), dt)])


@writes("Clamp")
def _clamp(g: Graph, c: Call) -> str:
    out = c.ins[0]
    if len(c.args) > 1 and c.args[1] is not None:
        out = g.node("Max", [out, c.operand(g, 1)])
    if len(c.args) > 2 and c.args[2] is not None:
        out = g.node("Min", [out, c.operand(g, 2)])
    return out


@writes("Cast")
def _cast(g: Graph, c: Call) -> str:
    return g.node("Cast", [c.ins[0]], to=ONNX_DTYPES[c.dtype])


@writes("Where")
def _where(g: Graph, c: Call) -> str:
    dt = c.dtype
    return g.node("Where", [c.operand(g, 0, "bool"), c.operand(g, 1, dt), c.operand(g, 2, dt)])


@writes("Remainder")
def _remainder(g: Graph, c: Call) -> str:
    a, b = c.operand(g, 0), c.operand(g, 1)
    if c.dtype.startswith(("int", "uint")):
        return g.node("Mod", [a, b], fmod=0)
    floor = g.node("Floor", [g.node("Div", [a, b])])
    return g.node("Sub", [a, g.node("Mul", [floor, b])])


@writes("Fmod")
def _fmod(g: Graph, c: Call) -> str:
    return g.node("Mod", [c.operand(g, 0), c.operand(g, 1)], fmod=1)


# -- linear algebra and nn ops -------------------------------------------------------------
def linear(g: Graph, x: str, w: str, b: str | None, x_ndim: int) -> str:
    """``x @ w.T + b`` (Gemm for 2-d inputs)."""
    if x_ndim == 2:
        return g.node("Gemm", [x, w, b], transB=1)
    y = g.node("MatMul", [x, g.node("Transpose", [w], perm=[1, 0])])
    return y if b is None else g.node("Add", [y, b])


@writes("_Linear")
def _linear(g: Graph, c: Call) -> str:
    b = c.ins[2] if len(c.ins) > 2 else None
    return linear(g, c.ins[0], c.ins[1], b, len(c.shape(0)))


@writes("_Conv2d")
def _conv2d(g: Graph, c: Call) -> str:
    p = static(c.kw["p"])
    t, b, l_, r = p.pads
    return g.node("Conv", [c.ins[0], c.ins[1], c.ins[2] if len(c.ins) > 2 else None],
                  strides=list(p.stride), pads=[t, l_, b, r], dilations=list(p.dilation),
                  group=p.groups, kernel_shape=list(c.shape(1)[2:]))


@writes("_ConvInputGrad")
def _conv_transpose(g: Graph, c: Call) -> str:
    p = static(c.kw["p"])
    t, b, l_, r = p.pads
    out_hw = tuple(static(c.kw["x_shape"]))[2:]
    return g.node("ConvTranspose", [c.ins[0], c.ins[1]], strides=list(p.stride),
                  pads=[t, l_, b, r], dilations=list(p.dilation), group=p.groups,
                  kernel_shape=list(c.shape(1)[2:]),
                  output_padding=[o - _ct_size(i, k, s, d, lo + hi) for o, i, k, s, d, lo, hi
                                  in zip(out_hw, c.shape(0)[2:], c.shape(1)[2:], p.stride,
                                         p.dilation, (t, l_), (b, r))])


def _ct_size(i: int, k: int, s: int, d: int, pads: int) -> int:
    return (i - 1) * s - pads + d * (k - 1) + 1


@writes("_MaxPool2d")
def _maxpool(g: Graph, c: Call) -> str:
    p = static(c.kw["p"])
    ph, pw = p.padding
    return g.node("MaxPool", [c.ins[0]], kernel_shape=list(p.kernel), strides=list(p.stride),
                  pads=[ph, pw, ph, pw], dilations=list(p.dilation), ceil_mode=int(p.ceil_mode))


@writes("_AvgPool2d")
def _avgpool(g: Graph, c: Call) -> str:
    p = static(c.kw["p"])
    opts = dict(c.kw.get("opts", ()))
    if opts.get("divisor_override"):
        raise OnnxExportError("avg_pool2d with divisor_override has no ONNX equivalent")
    ph, pw = p.padding
    return g.node("AveragePool", [c.ins[0]], kernel_shape=list(p.kernel),
                  strides=list(p.stride), pads=[ph, pw, ph, pw], ceil_mode=int(p.ceil_mode),
                  count_include_pad=int(opts.get("count_include_pad", True)))


@writes("_LayerNorm")
def _layernorm(g: Graph, c: Call) -> str:
    nd = int(c.kw.get("ndim", 1))
    w = c.ins[1] if len(c.ins) > 1 else None
    b = c.ins[2] if len(c.ins) > 2 else None
    if w is None:
        w = g.node("ConstantOfShape", [g.const(list(c.shape(0)[-nd:]), "int64")],
                   value=_one(c.dtype))
    return g.node("LayerNormalization", [c.ins[0], w, b], axis=-nd,
                  epsilon=float(c.kw.get("eps", 1e-5)))


def _one(dtype: str, value: float = 1.0) -> Any:
    from onnx import helper

    return helper.make_tensor("value", ONNX_DTYPES[dtype], (1,), [value])


@writes("_Embedding")
def _embedding(g: Graph, c: Call) -> str:
    return g.node("Gather", [c.ins[0], c.ins[1]], axis=0)


@writes("_Attention")
def _attention(g: Graph, c: Call) -> str:
    if c.args[4] is not None:
        raise OnnxExportError("attention dropout is only exported in eval mode (call "
                              "model.eval() or pass dropout_p=0)")
    mask = c.ins[3] if len(c.ins) > 3 else None
    return _sdpa(g, c, float(c.kw.get("scale", 1.0)), mask, causal=False)


@writes("_FlashAttention")
def _flash_attention(g: Graph, c: Call) -> str:
    if c.kw.get("dropout_p"):
        raise OnnxExportError("attention dropout is only exported in eval mode (call "
                              "model.eval() or pass dropout_p=0)")
    return _sdpa(g, c, float(c.kw.get("scale", 1.0)), None, bool(c.kw.get("causal")))


def _sdpa(g: Graph, c: Call, scale: float, mask: str | None, causal: bool) -> str:
    """``softmax(q k^T * scale + mask) v`` of a recorded attention (q, k, v, or q packed
    ``(3, ..., L, E)`` with k and v None); ``causal`` masks the upper triangle."""
    dt = c.dtype
    q = c.ins[0]
    if c.args[1] is None:  # packed (3, ..., L, E)
        q, k, v = (g.node("Gather", [q, g.const(i, "int64")], axis=0) for i in range(3))
        nd = len(c.shape(0)) - 1
    else:
        k, v = c.ins[1], c.ins[2]
        nd = len(c.shape(1))
    perm = list(range(nd - 2)) + [nd - 1, nd - 2]
    qs = g.node("Mul", [q, g.const(scale, dt)])
    s = g.node("MatMul", [qs, g.node("Transpose", [k], perm=perm)])
    if causal:  # -inf above the diagonal, at whatever sizes the scores have
        ones = g.node("ConstantOfShape", [g.node("Shape", [s])],
                      value=_one(dt))
        keep = g.node("Cast", [g.node("Trilu", [ones, g.scalar_int(0)], upper=0)], to=9)
        s = g.node("Where", [keep, s, g.const(-math.inf, dt)])
    if mask is not None:
        s = g.node("Add", [s, mask])
    p = g.node("Softmax", [s], axis=-1)
    if mask is not None:  # a fully masked row attends to nothing (zeros), as in PyTorch
        top = _reduce(g, "ReduceMax", s, [-1], True)
        blocked = g.node("Equal", [top, g.const(-math.inf, dt)])
        p = g.node("Where", [blocked, g.const(0.0, dt), p])
    return g.node("MatMul", [p, v])


# -- movement ------------------------------------------------------------------------------
@writes("Reshape")
def _reshape(g: Graph, c: Call) -> str:
    shape = list(c.kw["shape"])
    syms = [i for i, s in enumerate(shape) if isinstance(s, Sym)]
    if len(syms) == 1:  # one size from the input's shape: let ONNX infer it (-1)
        shape[syms[0]] = -1
    return g.node("Reshape", [c.ins[0], g.ints(shape)])


@writes("Permute")
def _permute(g: Graph, c: Call) -> str:
    return g.node("Transpose", [c.ins[0]], perm=[int(d) for d in c.kw["dims"]])


@writes("Expand")
def _expand(g: Graph, c: Call) -> str:
    return g.node("Expand", [c.ins[0], g.ints(c.kw["shape"])])


@writes("Slice")
def _slice(g: Graph, c: Call) -> str:
    key = c.kw["key"]
    shape = c.shape(0)
    starts, ends, axes, steps, drop = [], [], [], [], []
    for d, k in enumerate(key):
        if isinstance(k, slice):
            start = 0 if k.start is None else k.start
            step = 1 if k.step is None else k.step
            stop = k.stop
            if (type(start) is int and start == 0 and step == 1 and type(stop) is int
                    and stop >= shape[d]):
                continue  # the whole dim
            starts.append(start)
            ends.append(INT_MAX if stop is None else stop)
        else:  # an int index: slice one element, then drop the dim
            starts.append(k)
            ends.append(k + 1 if not isinstance(k, Sym) else Sym(k.dims, k.coef, k.offset + 1,
                                                                   k.value + 1))
            drop.append(d)
            step = 1
        axes.append(d)
        steps.append(step)
    out = c.ins[0]
    if axes:
        out = g.node("Slice", [out, g.ints(starts), g.ints(ends), g.const(axes, "int64"),
                               g.const(steps, "int64")])
    if drop:
        out = g.node("Squeeze", [out, g.const(drop, "int64")])
    return out if out != c.ins[0] else g.node("Identity", [out])


@writes("ConstantPad")
def _pad(g: Graph, c: Call) -> str:
    pads = static(c.kw["pads"])
    begin = [lo for lo, _ in pads]
    end = [hi for _, hi in pads]
    return g.node("Pad", [c.ins[0], g.const(begin + end, "int64"),
                          g.const(c.kw.get("value", 0), c.dtype)], mode="constant")


@writes("Flip")
def _flip(g: Graph, c: Call) -> str:
    dims = [int(d) for d in c.kw["dims"]]
    n = len(dims)
    return g.node("Slice", [c.ins[0], g.const([-1] * n, "int64"), g.const([-INT_MAX] * n,
                            "int64"), g.const(dims, "int64"), g.const([-1] * n, "int64")])


@writes("Repeat")
def _repeat(g: Graph, c: Call) -> str:
    reps = list(c.kw["reps"])
    x = c.ins[0]
    extra = len(reps) - len(c.shape(0))
    if extra > 0:
        x = g.node("Unsqueeze", [x, g.const(list(range(extra)), "int64")])
    return g.node("Tile", [x, g.ints(reps)])


@writes("Cat")
def _cat(g: Graph, c: Call) -> str:
    return g.node("Concat", list(c.ins), axis=int(c.kw.get("dim", 0)))


@writes("Stack")
def _stack(g: Graph, c: Call) -> str:
    d = int(c.kw.get("dim", 0))
    ax = g.const([d], "int64")
    return g.node("Concat", [g.node("Unsqueeze", [i, ax]) for i in c.ins], axis=d)


@writes("Tril", "Triu")
def _tril(g: Graph, c: Call) -> str:
    upper = int(bool(getattr(c.target, "upper", False)))
    return g.node("Trilu", [c.ins[0], g.scalar_int(c.kw.get("k", 0))], upper=upper)


@writes("IndexSelect")
def _index_select(g: Graph, c: Call) -> str:
    return g.node("Gather", [c.ins[0], c.ins[1]], axis=int(c.kw.get("dim", 0)))


@writes("Gather")
def _gather(g: Graph, c: Call) -> str:
    return g.node("GatherElements", [c.ins[0], c.ins[1]], axis=int(c.kw.get("dim", 0)))


@writes("IndexPut")
def _index_put(g: Graph, c: Call) -> str:
    """``x`` with ``v`` (broadcast to ``pos``) written at the flat positions ``pos``."""
    flat = g.const([-1], "int64")
    pos = g.node("Reshape", [c.ins[2], flat])
    vals = g.node("Reshape", [g.node("Expand", [c.ins[1], g.node("Shape", [c.ins[2]])]),
                              flat])
    out = g.node("ScatterElements", [g.node("Reshape", [c.ins[0], flat]), pos, vals], axis=0)
    return g.node("Reshape", [out, g.node("Shape", [c.ins[0]])])


@writes("_Overwrite")
def _overwrite(g: Graph, c: Call) -> str:
    return g.node("Identity", [c.ins[1]])


@writes("Cumsum")
def _cumsum(g: Graph, c: Call) -> str:
    return g.node("CumSum", [c.ins[0], g.const(int(c.kw.get("dim", 0)), "int64")])


# -- reductions ----------------------------------------------------------------------------
def _reduce(g: Graph, op: str, x: str, axes: list[int], keepdims: bool) -> str:
    """A Reduce* node over ``axes`` (an input from opset 18 on, ReduceSum from 13)."""
    if op == "ReduceSum" or g.opset >= 18:
        return g.node(op, [x, g.const(axes, "int64")], keepdims=int(keepdims))
    return g.node(op, [x], axes=axes, keepdims=int(keepdims))


def _dims(c: Call) -> list[int]:
    dims = c.kw.get("dims", ())
    if dims is None:
        return list(range(len(c.shape(0))))
    return [int(d) for d in (dims if isinstance(dims, (tuple, list)) else (dims,))]


def _reducer(op: str) -> Writer:
    def write(g: Graph, c: Call) -> str:
        dims = _dims(c)
        if not dims:
            return g.node("Identity", [c.ins[0]])
        return _reduce(g, op, c.ins[0], dims, bool(c.kw.get("keepdim", False)))

    return write


OPS["Sum"] = _reducer("ReduceSum")
OPS["Max"] = _reducer("ReduceMax")
OPS["Min"] = _reducer("ReduceMin")
OPS["Prod"] = _reducer("ReduceProd")
OPS["LogSumExp"] = _reducer("ReduceLogSumExp")


@writes("_DimMax", "_DimMin")
def _dim_extremum(g: Graph, c: Call) -> str:
    op = "ReduceMax" if c.name == "_DimMax" else "ReduceMin"
    return _reduce(g, op, c.ins[0], [int(c.kw.get("dim", 0))], bool(c.kw.get("keepdim")))


@writes("Argmax", "Argmin")
def _arg(g: Graph, c: Call) -> str:
    op = "ArgMax" if c.name == "Argmax" else "ArgMin"
    dim, keep = c.kw.get("dim"), bool(c.kw.get("keepdim", False))
    x = c.ins[0]
    if dim is None:
        x, dim = g.node("Reshape", [x, g.const([-1], "int64")]), 0
        out = g.node(op, [x], axis=0, keepdims=0)
        if keep:
            out = g.node("Reshape", [out, g.const([1] * len(c.shape(0)), "int64")])
        return out
    return g.node(op, [x], axis=int(dim), keepdims=int(keep))


@writes("All", "Any_")
def _truth(g: Graph, c: Call) -> str:
    x = g.node("Cast", [c.ins[0]], to=ONNX_DTYPES["int32"])
    x = g.node("Not", [g.node("Equal", [x, g.const(0, "int32")])])
    x = g.node("Cast", [x], to=ONNX_DTYPES["int32"])
    op = "ReduceMin" if c.name == "All" else "ReduceMax"
    dims = _dims(c)
    out = _reduce(g, op, x, dims, bool(c.kw.get("keepdim", False))) if dims else x
    return g.node("Cast", [out], to=ONNX_DTYPES["bool"])


@writes("Var")
def _var(g: Graph, c: Call) -> str:
    dims = _dims(c)
    x, dt = c.ins[0], c.dtype
    mean = _reduce(g, "ReduceMean", x, dims, True)
    diff = g.node("Sub", [x, mean])
    total = _reduce(g, "ReduceSum", g.node("Mul", [diff, diff]), dims,
                    bool(c.kw.get("keepdim", False)))
    # the count from the input's shape, so that it follows dynamic axes
    sizes = g.node("Gather", [g.node("Shape", [x]), g.const(dims, "int64")], axis=0)
    n = g.node("Cast", [_reduce(g, "ReduceProd", sizes, [0], False)], to=ONNX_DTYPES[dt])
    denom = g.node("Max", [g.node("Sub", [n, g.const(float(c.kw.get("correction", 1)), dt)]),
                           g.const(0.0, dt)])
    return g.node("Div", [total, denom])


@writes("Std")
def _std(g: Graph, c: Call) -> str:
    return g.node("Sqrt", [_var(g, c)])


@writes("VectorNorm")
def _norm(g: Graph, c: Call) -> str:
    ord_ = float(c.kw.get("ord", 2.0))
    op = {2.0: "ReduceL2", 1.0: "ReduceL1"}.get(ord_)
    if op is None:
        raise OnnxExportError(f"vector_norm with ord={ord_} has no ONNX export (ord 1 and 2 do)")
    return _reduce(g, op, c.ins[0], _dims(c), bool(c.kw.get("keepdim", False)))


@writes("Softmax", "LogSoftmax")
def _softmax(g: Graph, c: Call) -> str:
    return g.node(c.name, [c.ins[0]], axis=int(c.kw.get("dim", -1)))
