"""Volta implementations of ONNX ops, for :class:`~volta_core.onnx.importer.OnnxModule`.

Each runner takes the module, the node (its attributes parsed) and its input values
(Tensors, or None for an omitted optional input) and returns the output(s). Inputs that
ONNX passes as tensors but that are sizes (a Reshape's shape, a Slice's starts) are read
back to Python ints.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import onnx
from onnx import TensorProto, helper, numpy_helper

from .. import ops
from ..dtypes import get_dtype
from ..nn import functional as F
from ..tensor import Tensor
from .errors import OnnxImportError

DTYPES = {TensorProto.FLOAT: "float32", TensorProto.DOUBLE: "float64",
          TensorProto.FLOAT16: "float16", TensorProto.BFLOAT16: "bfloat16",
          TensorProto.INT64: "int64", TensorProto.INT32: "int32", TensorProto.INT16: "int16",
          TensorProto.INT8: "int8", TensorProto.UINT8: "uint8", TensorProto.UINT32: "uint32",
          TensorProto.BOOL: "bool"}


class Node:
    """An ONNX node with its attributes as Python values."""

    __slots__ = ("op_type", "name", "inputs", "outputs", "attrs", "cache")

    def __init__(self, proto: onnx.NodeProto) -> None:
        self.op_type, self.name = proto.op_type, proto.name
        self.inputs, self.outputs = list(proto.input), list(proto.output)
        self.attrs = {a.name: helper.get_attribute_value(a) for a in proto.attribute}
        self.cache: dict = {}

    def get(self, name: str, default: Any = None) -> Any:
        v = self.attrs.get(name, default)
        return v.decode() if isinstance(v, bytes) else v


Runner = Callable[[Any, Node, list], Any]
IMPORTS: dict[str, Runner] = {}


def runs(*names: str) -> Callable[[Runner], Runner]:
    def register(fn: Runner) -> Runner:
        for n in names:
            IMPORTS[n] = fn
        return fn

    return register


def ints(t: Tensor | None) -> list[int]:
    return [] if t is None else [int(v) for v in t.reshape(-1).tolist()]


def _device(m: Any, ins: list) -> Any:
    if getattr(m, "_device", None) is not None:
        return m._device
    for t in ins:
        if isinstance(t, Tensor):
            return t.device
    p = next(iter(m.parameters()), None)
    if p is None:
        p = next(iter(m.buffers()), None)
    return None if p is None else p.device


def _array_tensor(proto: onnx.TensorProto, device: Any) -> Tensor:
    from ..creation import tensor

    return tensor(numpy_helper.to_array(proto).copy(), device=device)


# -- elementwise ---------------------------------------------------------------------------
_UNARY = {"Neg": ops.neg, "Reciprocal": ops.reciprocal, "Sqrt": ops.sqrt, "Exp": ops.exp,
          "Log": ops.log, "Sin": ops.sin, "Cos": ops.cos, "Tanh": ops.tanh,
          "Sigmoid": ops.sigmoid, "Relu": ops.relu, "Abs": ops.abs, "Erf": ops.erf,
          "Floor": ops.floor, "Ceil": ops.ceil, "Sign": ops.sign, "Not": ops.logical_not,
          "IsNaN": ops.isnan, "Sinh": ops.sinh, "Cosh": ops.cosh, "Tan": ops.tan,
          "Asin": ops.asin, "Acos": ops.acos, "Atan": ops.atan}
_BINARY = {"Add": ops.add, "Sub": ops.sub, "Mul": ops.mul, "Div": None, "Pow": ops.pow,
           "Equal": ops.eq, "Less": ops.lt, "LessOrEqual": ops.le, "Greater": ops.gt,
           "GreaterOrEqual": ops.ge, "And": ops.logical_and, "Or": ops.logical_or,
           "Xor": ops.logical_xor, "MatMul": ops.matmul}

for _n, _f in _UNARY.items():
    IMPORTS[_n] = (lambda f: lambda m, n, x: f(x[0]))(_f)
for _n, _f in _BINARY.items():
    if _f is not None:
        IMPORTS[_n] = (lambda f: lambda m, n, x: f(x[0], x[1]))(_f)


@runs("Div")
def _div(m: Any, n: Node, x: list) -> Tensor:
    a, b = x
    if not a.dtype.is_floating_point and not b.dtype.is_floating_point:
        return ops.div(a, b, rounding_mode="trunc")
    return a / b


@runs("Identity", "Dropout")
def _identity(m: Any, n: Node, x: list) -> Any:
    if n.op_type == "Dropout" and len(x) > 2 and x[2] is not None and bool(x[2].item()):
        ratio = 0.5 if len(x) < 2 or x[1] is None else float(x[1].item())
        return F.dropout(x[0], ratio, True)
    return x[0]


@runs("Constant")
def _constant(m: Any, n: Node, x: list) -> Tensor:
    dev = _device(m, x)
    hit = n.cache.get(dev)
    if hit is None:
        from ..creation import tensor

        if "value" in n.attrs:
            hit = _array_tensor(n.attrs["value"], dev)
        elif "value_float" in n.attrs:
            hit = tensor(n.attrs["value_float"], dtype="float32", device=dev)
        elif "value_int" in n.attrs:
            hit = tensor(n.attrs["value_int"], dtype="int64", device=dev)
        elif "value_floats" in n.attrs:
            hit = tensor(list(n.attrs["value_floats"]), dtype="float32", device=dev)
        elif "value_ints" in n.attrs:
            hit = tensor(list(n.attrs["value_ints"]), dtype="int64", device=dev)
        else:
            raise OnnxImportError(f"Constant node {n.name}: unsupported value attribute "
                                  f"{sorted(n.attrs)}")
        n.cache[dev] = hit
    return hit


@runs("Cast")
def _cast(m: Any, n: Node, x: list) -> Tensor:
    return x[0].to(get_dtype(DTYPES[n.get("to")]))


@runs("Max", "Min")
def _max(m: Any, n: Node, x: list) -> Tensor:
    out = x[0]
    f = ops.maximum if n.op_type == "Max" else ops.minimum
    for t in x[1:]:
        out = f(out, t)
    return out


@runs("Sum", "Mean")
def _sum(m: Any, n: Node, x: list) -> Tensor:
    out = x[0]
    for t in x[1:]:
        out = out + t
    return out / len(x) if n.op_type == "Mean" else out


@runs("Clip")
def _clip(m: Any, n: Node, x: list) -> Tensor:
    out = x[0]
    lo = x[1] if len(x) > 1 else n.get("min")
    hi = x[2] if len(x) > 2 else n.get("max")
    if lo is not None:
        out = ops.maximum(out, lo if isinstance(lo, Tensor) else out.new_full((), lo))
    if hi is not None:
        out = ops.minimum(out, hi if isinstance(hi, Tensor) else out.new_full((), hi))
    return out


@runs("Where")
def _where(m: Any, n: Node, x: list) -> Tensor:
    return ops.where(x[0], x[1], x[2])


@runs("Mod")
def _mod(m: Any, n: Node, x: list) -> Tensor:
    return (ops.fmod if n.get("fmod", 0) else ops.remainder)(x[0], x[1])


@runs("Softplus")
def _softplus(m: Any, n: Node, x: list) -> Tensor:
    return F.softplus(x[0])


@runs("LeakyRelu")
def _leaky(m: Any, n: Node, x: list) -> Tensor:
    return F.leaky_relu(x[0], n.get("alpha", 0.01))


@runs("Elu")
def _elu(m: Any, n: Node, x: list) -> Tensor:
    return F.elu(x[0], n.get("alpha", 1.0))


@runs("Gelu")
def _gelu(m: Any, n: Node, x: list) -> Tensor:
    return F.gelu(x[0], approximate=n.get("approximate", "none"))


# -- linear algebra and nn -----------------------------------------------------------------
@runs("Gemm")
def _gemm(m: Any, n: Node, x: list) -> Tensor:
    a, b = x[0], x[1]
    if n.get("transA", 0):
        a = a.mT
    alpha, beta = n.get("alpha", 1.0), n.get("beta", 1.0)
    c = x[2] if len(x) > 2 else None
    if n.get("transB", 0) and alpha == 1.0:
        return F.linear(a, b, c if beta == 1.0 or c is None else c * beta)
    y = ops.matmul(a, b.mT if n.get("transB", 0) else b)
    if alpha != 1.0:
        y = y * alpha
    if c is not None:
        y = y + (c if beta == 1.0 else c * beta)
    return y


def _spatial_pads(n: Node, nd: int) -> tuple[list[int], list[int]]:
    if n.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise OnnxImportError(f"{n.op_type} node {n.name}: auto_pad={n.get('auto_pad')!r} "
                              "is not supported (explicit pads are)")
    pads = list(n.get("pads", [0] * (2 * nd)))
    return pads[:nd], pads[nd:]


@runs("Conv")
def _conv(m: Any, n: Node, x: list) -> Tensor:
    inp, w = x[0], x[1]
    b = x[2] if len(x) > 2 else None
    nd = w.ndim - 2
    begin, end = _spatial_pads(n, nd)
    strides = list(n.get("strides", [1] * nd))
    dil = list(n.get("dilations", [1] * nd))
    group = n.get("group", 1)
    if begin != end:
        flat = []
        for lo, hi in zip(reversed(begin), reversed(end)):
            flat += [lo, hi]
        inp, begin = F.pad(inp, flat), [0] * nd
    if nd == 1:
        return F.conv1d(inp, w, b, strides[0], begin[0], dil[0], group)
    if nd == 2:
        return F.conv2d(inp, w, b, tuple(strides), tuple(begin), tuple(dil), group)
    raise OnnxImportError(f"Conv node {n.name}: {nd}-D convolution is not supported (1-D and "
                          "2-D are)")


@runs("ConvTranspose")
def _conv_transpose(m: Any, n: Node, x: list) -> Tensor:
    inp, w = x[0], x[1]
    b = x[2] if len(x) > 2 else None
    nd = w.ndim - 2
    begin, end = _spatial_pads(n, nd)
    if begin != end or n.get("output_shape") is not None:
        raise OnnxImportError(f"ConvTranspose node {n.name}: asymmetric pads and output_shape "
                              "are not supported")
    strides = list(n.get("strides", [1] * nd))
    dil = list(n.get("dilations", [1] * nd))
    outp = list(n.get("output_padding", [0] * nd))
    group = n.get("group", 1)
    if nd == 1:
        y = F.conv_transpose2d(inp.unsqueeze(-2), w.unsqueeze(-2), b, (1, strides[0]),
                               (0, begin[0]), (0, outp[0]), group, (1, dil[0]))
        return y.squeeze(-2)
    if nd == 2:
        return F.conv_transpose2d(inp, w, b, tuple(strides), tuple(begin), tuple(outp), group,
                                  tuple(dil))
    raise OnnxImportError(f"ConvTranspose node {n.name}: only 1-D and 2-D are supported")


def _pool_args(n: Node) -> tuple:
    k = list(n.get("kernel_shape"))
    nd = len(k)
    begin, end = _spatial_pads(n, nd)
    if begin != end:
        raise OnnxImportError(f"{n.op_type} node {n.name}: asymmetric pads are not supported")
    return k, list(n.get("strides", [1] * nd)), begin, nd


@runs("MaxPool")
def _maxpool(m: Any, n: Node, x: list) -> Tensor:
    if len(n.outputs) > 1 and n.outputs[1]:
        raise OnnxImportError(f"MaxPool node {n.name}: the Indices output is not supported")
    k, s, p, nd = _pool_args(n)
    dil = list(n.get("dilations", [1] * nd))
    ceil = bool(n.get("ceil_mode", 0))
    if nd == 1:
        return F.max_pool1d(x[0], k[0], s[0], p[0], dil[0], ceil)
    return F.max_pool2d(x[0], tuple(k), tuple(s), tuple(p), tuple(dil), ceil)


@runs("AveragePool")
def _avgpool(m: Any, n: Node, x: list) -> Tensor:
    k, s, p, nd = _pool_args(n)
    ceil, inc = bool(n.get("ceil_mode", 0)), bool(n.get("count_include_pad", 0))
    inp = x[0]
    if nd == 1:
        return F.avg_pool2d(inp.unsqueeze(-2), (1, k[0]), (1, s[0]), (0, p[0]), ceil,
                            inc).squeeze(-2)
    return F.avg_pool2d(inp, tuple(k), tuple(s), tuple(p), ceil, inc)


@runs("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(m: Any, n: Node, x: list) -> Tensor:
    dims = tuple(range(2, x[0].ndim))
    if n.op_type == "GlobalAveragePool":
        return x[0].mean(dims, keepdim=True)
    return ops.amax(x[0], dims, keepdim=True)


@runs("BatchNormalization")
def _batchnorm(m: Any, n: Node, x: list) -> Tensor:
    if n.get("training_mode", 0):
        raise OnnxImportError(f"BatchNormalization node {n.name}: training_mode=1 is not "
                              "supported (inference graphs are)")
    return F.batch_norm(x[0], x[3], x[4], x[1], x[2], False, 0.0, n.get("epsilon", 1e-5))


@runs("LayerNormalization")
def _layernorm(m: Any, n: Node, x: list) -> Tensor:
    if len(n.outputs) > 1 and any(n.outputs[1:]):
        raise OnnxImportError(f"LayerNormalization node {n.name}: the Mean/InvStdDev outputs "
                              "are not supported")
    axis = n.get("axis", -1) % x[0].ndim
    shape = tuple(x[0].shape[axis:])
    w = x[1]
    b = x[2] if len(x) > 2 else None
    if tuple(w.shape) != shape:
        w = w.expand(*shape)
    if b is not None and tuple(b.shape) != shape:
        b = b.expand(*shape)
    return F.layer_norm(x[0], shape, w, b, n.get("epsilon", 1e-5))


@runs("InstanceNormalization")
def _instancenorm(m: Any, n: Node, x: list) -> Tensor:
    inp, w, b = x
    dims = tuple(range(2, inp.ndim))
    mean = inp.mean(dims, keepdim=True)
    var = ((inp - mean) ** 2).mean(dims, keepdim=True)
    shape = (1, -1) + (1,) * len(dims)
    y = (inp - mean) / (var + n.get("epsilon", 1e-5)).sqrt()
    return y * w.reshape(*shape) + b.reshape(*shape)


@runs("Softmax", "LogSoftmax")
def _softmax(m: Any, n: Node, x: list) -> Tensor:
    axis = n.get("axis", -1)
    if m.opset < 13:  # softmax over the flattened trailing dims
        shape = x[0].shape
        flat = x[0].reshape(*shape[:axis % x[0].ndim], -1)
        f = F.softmax if n.op_type == "Softmax" else F.log_softmax
        return f(flat, -1).reshape(*shape)
    return (F.softmax if n.op_type == "Softmax" else F.log_softmax)(x[0], axis)


@runs("Resize")
def _resize(m: Any, n: Node, x: list) -> Tensor:
    mode = n.get("mode", "nearest")
    ctm = n.get("coordinate_transformation_mode", "half_pixel")
    inp = x[0]
    scales = x[2] if len(x) > 2 and x[2] is not None and x[2].numel() else None
    sizes = x[3] if len(x) > 3 and x[3] is not None else None
    nd = inp.ndim - 2
    if mode == "nearest":
        if ctm == "asymmetric" and n.get("nearest_mode", "round_prefer_floor") == "floor":
            vmode = "nearest"
        elif ctm == "half_pixel":
            vmode = "nearest-exact"
        else:
            raise OnnxImportError(f"Resize node {n.name}: nearest with {ctm!r} and "
                                  f"nearest_mode={n.get('nearest_mode')!r} is not supported")
        align = None
    else:
        vmode = {"linear": {1: "linear", 2: "bilinear", 3: "trilinear"}[nd],
                 "cubic": "bicubic"}[mode]
        if ctm not in ("align_corners", "pytorch_half_pixel", "half_pixel"):
            raise OnnxImportError(f"Resize node {n.name}: coordinate_transformation_mode "
                                  f"{ctm!r} is not supported")
        align = ctm == "align_corners"
    if scales is not None:
        sc = [float(v) for v in scales.tolist()]
        if sc[:2] != [1.0, 1.0]:
            raise OnnxImportError(f"Resize node {n.name}: only spatial dims may be scaled")
        return F.interpolate(inp, None, tuple(sc[2:]), vmode, align)
    return F.interpolate(inp, tuple(ints(sizes)[2:]), None, vmode, align)


@runs("DepthToSpace")
def _depth_to_space(m: Any, n: Node, x: list) -> Tensor:
    r = n.get("blocksize")
    if n.get("mode", "DCR") == "CRD":
        return F.pixel_shuffle(x[0], r)
    b, c, h, w = x[0].shape
    y = x[0].reshape(b, r, r, c // (r * r), h, w).permute(0, 3, 4, 1, 5, 2)
    return y.reshape(b, c // (r * r), h * r, w * r)


@runs("SoftmaxCrossEntropyLoss")
def _sce(m: Any, n: Node, x: list) -> Tensor:
    if len(n.outputs) > 1 and n.outputs[1]:
        raise OnnxImportError(f"SoftmaxCrossEntropyLoss node {n.name}: the log_prob output "
                              "is not supported")
    w = x[2] if len(x) > 2 else None
    return F.cross_entropy(x[0], x[1], w, n.get("ignore_index", -100),
                           n.get("reduction", "mean"))


@runs("NegativeLogLikelihoodLoss")
def _nll(m: Any, n: Node, x: list) -> Tensor:
    w = x[2] if len(x) > 2 else None
    return F.nll_loss(x[0], x[1], w, n.get("ignore_index", -100), n.get("reduction", "mean"))


@runs("RandomNormalLike", "RandomUniformLike")
def _random_like(m: Any, n: Node, x: list) -> Tensor:
    from .. import creation

    dt = get_dtype(DTYPES[n.get("dtype")]) if n.get("dtype") is not None else x[0].dtype
    if n.op_type == "RandomNormalLike":
        out = creation.randn_like(x[0], dtype=dt)
        return out * n.get("scale", 1.0) + n.get("mean", 0.0)
    out = creation.rand_like(x[0], dtype=dt)
    lo, hi = n.get("low", 0.0), n.get("high", 1.0)
    return out * (hi - lo) + lo


# -- shapes and movement -------------------------------------------------------------------
@runs("Shape")
def _shape(m: Any, n: Node, x: list) -> Tensor:
    from ..creation import tensor

    shape = list(x[0].shape)
    start, end = n.get("start", 0), n.get("end")
    return tensor(shape[start:end], dtype="int64", device=x[0].device)


@runs("Size")
def _size(m: Any, n: Node, x: list) -> Tensor:
    from ..creation import tensor

    return tensor(x[0].numel(), dtype="int64", device=x[0].device)


@runs("Reshape")
def _reshape(m: Any, n: Node, x: list) -> Tensor:
    shape = ints(x[1])
    if not n.get("allowzero", 0):
        shape = [x[0].shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return x[0].reshape(*shape)


@runs("Flatten")
def _flatten(m: Any, n: Node, x: list) -> Tensor:
    axis = n.get("axis", 1) % (x[0].ndim + 1) if x[0].ndim else 0
    lead = 1
    for s in x[0].shape[:axis]:
        lead *= s
    return x[0].reshape(lead, -1)


@runs("Transpose")
def _transpose(m: Any, n: Node, x: list) -> Tensor:
    perm = n.get("perm")
    if perm is None:
        perm = list(range(x[0].ndim))[::-1]
    return x[0].permute(*perm)


@runs("Expand")
def _expand(m: Any, n: Node, x: list) -> Tensor:
    shape = ints(x[1])
    nd = max(len(shape), x[0].ndim)
    have = [1] * (nd - x[0].ndim) + list(x[0].shape)
    want = [1] * (nd - len(shape)) + shape
    target = [h if w == 1 else w for h, w in zip(have, want)]
    t = x[0].reshape(*have) if len(have) != x[0].ndim else x[0]
    return t.expand(*target)


def _axes(n: Node, x: list, pos: int) -> list[int] | None:
    if len(x) > pos and x[pos] is not None:
        return ints(x[pos])
    a = n.get("axes")
    return None if a is None else list(a)


@runs("Squeeze")
def _squeeze(m: Any, n: Node, x: list) -> Tensor:
    axes = _axes(n, x, 1)
    if axes is None:
        return x[0].squeeze()
    nd = x[0].ndim
    return x[0].squeeze(tuple(a % nd for a in axes)) if axes else x[0]


@runs("Unsqueeze")
def _unsqueeze(m: Any, n: Node, x: list) -> Tensor:
    axes = _axes(n, x, 1)
    out = x[0]
    nd = out.ndim + len(axes)
    for a in sorted(a % nd for a in axes):
        out = out.unsqueeze(a)
    return out


@runs("Concat")
def _concat(m: Any, n: Node, x: list) -> Tensor:
    parts = [t for t in x if t is not None]
    return ops.cat(parts, n.get("axis"))


@runs("Split")
def _split(m: Any, n: Node, x: list) -> tuple:
    axis = n.get("axis", 0)
    split = ints(x[1]) if len(x) > 1 and x[1] is not None else n.get("split")
    if split is None:
        k = len(n.outputs)
        size = x[0].shape[axis]
        step = -(-size // k)
        split = [min(step, size - i * step) for i in range(k)]
    return tuple(ops.split(x[0], list(split), axis))


@runs("Slice")
def _slice(m: Any, n: Node, x: list) -> Tensor:
    if len(x) > 1:
        starts, ends = ints(x[1]), ints(x[2])
        axes = ints(x[3]) if len(x) > 3 and x[3] is not None else list(range(len(starts)))
        steps = ints(x[4]) if len(x) > 4 and x[4] is not None else [1] * len(starts)
    else:
        starts, ends = list(n.get("starts")), list(n.get("ends"))
        axes = list(n.get("axes", range(len(starts))))
        steps = [1] * len(starts)
    out = x[0]
    key: list[Any] = [slice(None)] * out.ndim
    flips = []
    for s, e, a, st in zip(starts, ends, axes, steps):
        a %= out.ndim
        size = out.shape[a]
        if st > 0:
            s = min(max(s + size if s < 0 else s, 0), size)
            e = min(max(e + size if e < 0 else e, 0), size)
            key[a] = slice(s, max(e, s), st)
        else:  # a negative step: slice the reversed dim
            s = min(max(s + size if s < 0 else s, -1), size - 1)
            e = min(max(e + size if e < 0 else e, -1), size - 1)
            flips.append(a)
            key[a] = slice(size - 1 - s, max(size - 1 - e, size - 1 - s), -st)
    if flips:
        out = ops.flip(out, flips)
    return out[tuple(key)]


@runs("Gather")
def _gather(m: Any, n: Node, x: list) -> Tensor:
    data, idx = x
    axis = n.get("axis", 0) % data.ndim
    size = data.shape[axis]
    if not idx.dtype.is_floating_point:
        idx = ops.where(idx < 0, idx + size, idx)
    if axis == 0 and data.ndim == 2 and data.dtype.is_floating_point:
        return F.embedding(idx, data)
    flat = ops.index_select(data, axis, idx.reshape(-1))
    return flat.reshape(*data.shape[:axis], *idx.shape, *data.shape[axis + 1:])


@runs("GatherElements")
def _gather_elements(m: Any, n: Node, x: list) -> Tensor:
    data, idx = x
    axis = n.get("axis", 0) % data.ndim
    idx = ops.where(idx < 0, idx + data.shape[axis], idx)
    return ops.gather(data, axis, idx)


@runs("ScatterElements")
def _scatter_elements(m: Any, n: Node, x: list) -> Tensor:
    if n.get("reduction", "none") != "none":
        raise OnnxImportError(f"ScatterElements node {n.name}: reduction="
                              f"{n.get('reduction')!r} is not supported")
    data, idx, upd = x
    axis = n.get("axis", 0) % data.ndim
    idx = ops.where(idx < 0, idx + data.shape[axis], idx)
    return ops.scatter(data, axis, idx, upd)


@runs("Tile")
def _tile(m: Any, n: Node, x: list) -> Tensor:
    return ops.tile(x[0], tuple(ints(x[1])))


@runs("Pad")
def _pad(m: Any, n: Node, x: list) -> Tensor:
    mode = n.get("mode", "constant")
    pads = ints(x[1]) if len(x) > 1 and x[1] is not None else list(n.get("pads"))
    value = x[2].item() if len(x) > 2 and x[2] is not None else n.get("value", 0.0)
    nd = x[0].ndim
    axes = ints(x[3]) if len(x) > 3 and x[3] is not None else list(range(nd))
    k = len(axes)
    per = {a % nd: (pads[i], pads[i + k]) for i, a in enumerate(axes)}
    flat: list[int] = []
    for d in range(nd - 1, -1, -1):
        flat += list(per.get(d, (0, 0)))
    while len(flat) > 2 and flat[-2:] == [0, 0]:
        flat = flat[:-2]
    if mode == "constant":
        return F.pad(x[0], flat, "constant", value)
    # ONNX pads any dims in any mode (F.pad keeps PyTorch's limits)
    return ops.movement.pad_any_layout(x[0], tuple(flat), {
        "edge": "replicate", "reflect": "reflect", "wrap": "circular"}[mode])


@runs("ConstantOfShape")
def _constant_of_shape(m: Any, n: Node, x: list) -> Tensor:
    from ..creation import full

    v = n.attrs.get("value")
    arr = numpy_helper.to_array(v).reshape(-1) if v is not None else None
    value = arr[0].item() if arr is not None else 0.0
    dt = DTYPES[v.data_type] if v is not None else "float32"
    return full(tuple(ints(x[0])), value, dtype=dt, device=x[0].device)


@runs("Range")
def _range(m: Any, n: Node, x: list) -> Tensor:
    from ..creation import arange

    start, limit, delta = (t.item() for t in x)
    return arange(start, limit, delta, dtype=x[0].dtype, device=x[0].device)


@runs("Trilu")
def _trilu(m: Any, n: Node, x: list) -> Tensor:
    k = int(x[1].item()) if len(x) > 1 and x[1] is not None else 0
    return (ops.triu if n.get("upper", 1) else ops.tril)(x[0], k)


@runs("CumSum")
def _cumsum(m: Any, n: Node, x: list) -> Tensor:
    if n.get("exclusive", 0) or n.get("reverse", 0):
        raise OnnxImportError(f"CumSum node {n.name}: exclusive/reverse are not supported")
    return ops.cumsum(x[0], int(x[1].item()))


# -- reductions ----------------------------------------------------------------------------
def _reduce_axes(m: Any, n: Node, x: list) -> tuple[int, ...] | None:
    axes = None
    if len(x) > 1 and x[1] is not None:
        axes = ints(x[1])
    elif n.get("axes") is not None:
        axes = list(n.get("axes"))
    if not axes:
        if n.get("noop_with_empty_axes", 0):
            return ()
        return tuple(range(x[0].ndim))
    return tuple(a % x[0].ndim for a in axes)


def _reducer(fn: Callable[[Tensor, tuple, bool], Tensor]) -> Runner:
    def run(m: Any, n: Node, x: list) -> Tensor:
        axes = _reduce_axes(m, n, x)
        if axes == ():
            return x[0]
        return fn(x[0], axes, bool(n.get("keepdims", 1)))

    return run


IMPORTS["ReduceSum"] = _reducer(lambda t, a, k: t.sum(a, keepdim=k))
IMPORTS["ReduceMean"] = _reducer(lambda t, a, k: t.mean(a, keepdim=k))
IMPORTS["ReduceMax"] = _reducer(lambda t, a, k: ops.amax(t, a, keepdim=k))
IMPORTS["ReduceMin"] = _reducer(lambda t, a, k: ops.amin(t, a, keepdim=k))
IMPORTS["ReduceProd"] = _reducer(lambda t, a, k: _prod(t, a, k))
IMPORTS["ReduceL1"] = _reducer(lambda t, a, k: t.abs().sum(a, keepdim=k))
IMPORTS["ReduceL2"] = _reducer(lambda t, a, k: (t * t).sum(a, keepdim=k).sqrt())
IMPORTS["ReduceSumSquare"] = _reducer(lambda t, a, k: (t * t).sum(a, keepdim=k))
IMPORTS["ReduceLogSumExp"] = _reducer(lambda t, a, k: ops.logsumexp(t, a, keepdim=k))


def _prod(t: Tensor, axes: tuple, keep: bool) -> Tensor:
    for a in sorted(axes, reverse=True):
        t = ops.prod(t, a, keepdim=keep)
    return t


@runs("ArgMax", "ArgMin")
def _arg(m: Any, n: Node, x: list) -> Tensor:
    if n.get("select_last_index", 0):
        raise OnnxImportError(f"{n.op_type} node {n.name}: select_last_index=1 is not "
                              "supported")
    f = ops.argmax if n.op_type == "ArgMax" else ops.argmin
    return f(x[0], n.get("axis", 0), keepdim=bool(n.get("keepdims", 1)))


# -- recurrent layers ----------------------------------------------------------------------
def _act(name: str) -> Callable[[Tensor], Tensor]:
    fns = {"Sigmoid": ops.sigmoid, "Tanh": ops.tanh, "Relu": ops.relu}
    if name not in fns:
        raise OnnxImportError(f"recurrent activation {name!r} is not supported")
    return fns[name]


def _recurrent(m: Any, n: Node, x: list, gates: int) -> tuple:
    if n.get("layout", 0) or n.get("clip") is not None or (len(x) > 4 and x[4] is not None):
        raise OnnxImportError(f"{n.op_type} node {n.name}: layout=1, clip and sequence_lens "
                              "are not supported")
    inp, w, r = x[0], x[1], x[2]
    b = x[3] if len(x) > 3 else None
    h0 = x[5] if len(x) > 5 else None
    c0 = x[6] if len(x) > 6 else None
    hidden = n.get("hidden_size") or r.shape[-1]
    direction = n.get("direction", "forward")
    dirs = 2 if direction == "bidirectional" else 1
    steps, batch = inp.shape[0], inp.shape[1]
    defaults = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"],
                "RNN": ["Tanh"]}[n.op_type]
    acts = [a.decode() if isinstance(a, bytes) else a
            for a in (n.get("activations") or defaults * dirs)]
    per = len(defaults)
    ys, hs, cs = [], [], []
    for d in range(dirs):
        f = [_act(a) for a in acts[d * per:(d + 1) * per]]
        wd, rd = w[d], r[d]
        bw = br = None
        if b is not None:
            bw, br = b[d][:gates * hidden], b[d][gates * hidden:]
        h = h0[d] if h0 is not None else inp.new_zeros(batch, hidden)
        c = c0[d] if c0 is not None else inp.new_zeros(batch, hidden)
        xw = F.linear(inp, wd, bw)  # (steps, batch, gates * hidden) in one GEMM
        out = [None] * steps
        order = range(steps - 1, -1, -1) if (d == 1 or direction == "reverse") else range(steps)
        for t in order:
            hr = F.linear(h, rd, br)
            if n.op_type == "LSTM":
                i, o, fg, cc = (xw[t] + hr).chunk(4, -1)
                c = f[0](fg) * c + f[0](i) * f[1](cc)
                h = f[0](o) * f[2](c)
            elif n.op_type == "GRU":
                xz, xr, xh = xw[t].chunk(3, -1)
                hz, hr_, hh = hr.chunk(3, -1)
                if not n.get("linear_before_reset", 0):
                    raise OnnxImportError(f"GRU node {n.name}: linear_before_reset=0 is not "
                                          "supported")
                z = f[0](xz + hz)
                rg = f[0](xr + hr_)
                hn = f[1](xh + rg * hh)
                h = (1 - z) * hn + z * h
            else:
                h = f[0](xw[t] + hr)
            out[t] = h
        ys.append(ops.stack(out, 0))
        hs.append(h)
        cs.append(c)
    y = ops.stack(ys, 1)  # (steps, dirs, batch, hidden)
    outs = (y, ops.stack(hs, 0))
    return outs + (ops.stack(cs, 0),) if n.op_type == "LSTM" else outs


IMPORTS["LSTM"] = lambda m, n, x: _recurrent(m, n, x, 4)
IMPORTS["GRU"] = lambda m, n, x: _recurrent(m, n, x, 3)
IMPORTS["RNN"] = lambda m, n, x: _recurrent(m, n, x, 1)


def supported_ops() -> list[str]:
    """The ONNX op types :func:`~volta_core.onnx.load` can run."""
    return sorted(IMPORTS)

