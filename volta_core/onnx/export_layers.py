"""ONNX nodes for whole layers: the ``nn`` modules exported as one node (or a few).

Recurrent layers must be (their forward unrolls the time steps, which a trace would
freeze); the others map more directly this way than through their ops. The weights stay
the module's own parameters: the reordering ONNX wants (gate order, stacking) is written as
``Slice``/``Concat`` nodes on them, so that an imported model keeps Volta's parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import nn
from .errors import OnnxExportError
from .export_ops import Call, linear
from .graph import Graph

LayerWriter = Callable[[Graph, Call], Any]
LAYERS: dict[type, LayerWriter] = {}


def layer(*types: type) -> Callable[[LayerWriter], LayerWriter]:
    def register(fn: LayerWriter) -> LayerWriter:
        for t in types:
            LAYERS[t] = fn
        return fn

    return register


def param(g: Graph, mod: Any, name: str) -> str | None:
    p = getattr(mod, name, None)
    return None if p is None else g.tensor(p)


@layer(nn.Linear)
def _linear(g: Graph, c: Call) -> str:
    m = c.target
    return linear(g, c.ins[0], param(g, m, "weight"), param(g, m, "bias"), len(c.shape(0)))


@layer(nn.Conv1d, nn.Conv2d)
def _conv(g: Graph, c: Call) -> str:
    m = c.target
    if m.padding_mode != "zeros":
        raise OnnxExportError(f"{type(m).__name__} with padding_mode={m.padding_mode!r} has "
                              "no ONNX export (padding_mode='zeros' does)")
    nd = len(m.kernel_size)
    if isinstance(m.padding, str):
        pads = [0] * (2 * nd)
        if m.padding == "same":
            for i, (k, d) in enumerate(zip(m.kernel_size, m.dilation)):
                total = d * (k - 1)
                pads[i], pads[i + nd] = total // 2, total - total // 2
    else:
        pads = list(m.padding) * 2
    x = c.ins[0]
    unbatched = len(c.shape(0)) == nd + 1
    if unbatched:
        x = g.node("Unsqueeze", [x, g.const([0], "int64")])
    y = g.node("Conv", [x, param(g, m, "weight"), param(g, m, "bias")],
               kernel_shape=list(m.kernel_size), strides=list(m.stride), pads=pads,
               dilations=list(m.dilation), group=m.groups)
    return g.node("Squeeze", [y, g.const([0], "int64")]) if unbatched else y


@layer(nn.ConvTranspose2d)
def _conv_transpose(g: Graph, c: Call) -> str:
    m = c.target
    if c.args[1:] or c.kw:
        raise OnnxExportError("ConvTranspose2d with output_size has no ONNX export here; "
                              "set output_padding on the layer instead")
    nd = len(m.kernel_size)
    return g.node("ConvTranspose", [c.ins[0], param(g, m, "weight"), param(g, m, "bias")],
                  kernel_shape=list(m.kernel_size), strides=list(m.stride),
                  pads=list(m.padding) * 2, dilations=list(m.dilation), group=m.groups,
                  output_padding=list(m.output_padding)[:nd])


def _pair(v: Any, n: int) -> list[int]:
    return list(v) if isinstance(v, (tuple, list)) else [int(v)] * n


@layer(nn.MaxPool2d, nn.MaxPool1d)
def _maxpool(g: Graph, c: Call) -> str:
    m = c.target
    if getattr(m, "return_indices", False):
        raise OnnxExportError("MaxPool with return_indices=True has no ONNX export here")
    n = 2 if isinstance(m, nn.MaxPool2d) else 1
    pads = _pair(m.padding, n)
    x, unbatched = _batch(g, c, n)
    y = g.node("MaxPool", [x], kernel_shape=_pair(m.kernel_size, n),
               strides=_pair(m.stride, n), pads=pads * 2, dilations=_pair(m.dilation, n),
               ceil_mode=int(m.ceil_mode))
    return _unbatch(g, y, unbatched)


@layer(nn.AvgPool2d)
def _avgpool(g: Graph, c: Call) -> str:
    m = c.target
    if m.divisor_override:
        raise OnnxExportError("AvgPool2d with divisor_override has no ONNX equivalent")
    x, unbatched = _batch(g, c, 2)
    y = g.node("AveragePool", [x], kernel_shape=_pair(m.kernel_size, 2),
               strides=_pair(m.stride, 2), pads=_pair(m.padding, 2) * 2,
               ceil_mode=int(m.ceil_mode), count_include_pad=int(m.count_include_pad))
    return _unbatch(g, y, unbatched)


def _batch(g: Graph, c: Call, n: int) -> tuple[str, bool]:
    if len(c.shape(0)) == n + 1:
        return g.node("Unsqueeze", [c.ins[0], g.const([0], "int64")]), True
    return c.ins[0], False


def _unbatch(g: Graph, y: str, unbatched: bool) -> str:
    return g.node("Squeeze", [y, g.const([0], "int64")]) if unbatched else y


@layer(nn.BatchNorm1d, nn.BatchNorm2d)
def _batchnorm(g: Graph, c: Call) -> str:
    m = c.target
    if m.running_mean is None:
        raise OnnxExportError(f"{type(m).__name__} without running statistics "
                              "(track_running_stats=False) has no inference-mode ONNX export")
    ch = m.num_features
    w = param(g, m, "weight") or g.const([1.0] * ch, c.dtype)
    b = param(g, m, "bias") or g.const([0.0] * ch, c.dtype)
    return g.node("BatchNormalization", [c.ins[0], w, b, g.tensor(m.running_mean),
                                         g.tensor(m.running_var)], epsilon=float(m.eps))


@layer(nn.LayerNorm)
def _layernorm(g: Graph, c: Call) -> str:
    m = c.target
    nd = len(m.normalized_shape)
    w = param(g, m, "weight")
    if w is None:
        w = g.const([1.0] * _numel(m.normalized_shape), c.dtype, tuple(m.normalized_shape))
    return g.node("LayerNormalization", [c.ins[0], w, param(g, m, "bias")], axis=-nd,
                  epsilon=float(m.eps))


def _numel(shape: Any) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


@layer(nn.GroupNorm)
def _groupnorm(g: Graph, c: Call) -> str:
    m = c.target
    x, dt, nd = c.ins[0], c.dtype, len(c.shape(0))
    grouped = g.node("Reshape", [x, g.const([0, m.num_groups, -1], "int64")])
    mean = g.node("ReduceMean", [grouped], axes=[2], keepdims=1) if g.opset < 18 else \
        g.node("ReduceMean", [grouped, g.const([2], "int64")], keepdims=1)
    diff = g.node("Sub", [grouped, mean])
    sq = g.node("Mul", [diff, diff])
    var = g.node("ReduceMean", [sq], axes=[2], keepdims=1) if g.opset < 18 else \
        g.node("ReduceMean", [sq, g.const([2], "int64")], keepdims=1)
    y = g.node("Div", [diff, g.node("Sqrt", [g.node("Add", [var, g.const(float(m.eps), dt)])])])
    y = g.node("Reshape", [y, g.node("Shape", [x])])
    if m.affine:
        per_channel = g.const([m.num_channels] + [1] * (nd - 2), "int64")
        y = g.node("Mul", [y, g.node("Reshape", [param(g, m, "weight"), per_channel])])
        y = g.node("Add", [y, g.node("Reshape", [param(g, m, "bias"), per_channel])])
    return y


@layer(nn.Embedding)
def _embedding(g: Graph, c: Call) -> str:
    m = c.target
    if getattr(m, "max_norm", None) is not None:
        raise OnnxExportError("Embedding with max_norm has no ONNX export (it renormalises "
                              "the weights in place)")
    return g.node("Gather", [param(g, m, "weight"), c.ins[0]], axis=0)


@layer(nn.Dropout, nn.Identity)
def _identity(g: Graph, c: Call) -> str:
    return g.node("Identity", [c.ins[0]])


@layer(nn.PixelShuffle)
def _pixel_shuffle(g: Graph, c: Call) -> str:
    if len(c.shape(0)) != 4:
        raise OnnxExportError("PixelShuffle is exported for 4-D inputs (N, C, H, W)")
    return g.node("DepthToSpace", [c.ins[0]], blocksize=int(c.target.upscale_factor),
                  mode="CRD")


@layer(nn.Upsample)
def _upsample(g: Graph, c: Call) -> str:
    m = c.target
    return resize(g, c.ins[0], c.out, m.size, m.scale_factor, m.mode, m.align_corners,
                  m.recompute_scale_factor)


def resize(g: Graph, x: str, out: Any, size: Any, scale_factor: Any, mode: str,
           align_corners: bool | None, recompute: bool | None) -> str:
    """A ``Resize`` node doing what ``interpolate`` does."""
    nd = len(out.shape) - 2
    kind = {"nearest": "nearest", "nearest-exact": "nearest", "linear": "linear",
            "bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode)
    if kind is None:
        raise OnnxExportError(f"interpolate/Upsample mode {mode!r} has no ONNX export")
    if kind == "nearest":
        attrs = {"coordinate_transformation_mode": "asymmetric" if mode == "nearest"
                 else "half_pixel", "nearest_mode": "floor" if mode == "nearest"
                 else "round_prefer_ceil"}
    else:
        attrs = {"coordinate_transformation_mode": "align_corners" if align_corners
                 else "pytorch_half_pixel"}
        if kind == "cubic":
            attrs["cubic_coeff_a"] = -0.75
    if scale_factor is not None and not recompute:
        sf = scale_factor
        scales = [1.0, 1.0] + ([float(sf)] * nd if isinstance(sf, (int, float))
                               else [float(s) for s in sf])
        return g.node("Resize", [x, None, g.const(scales, "float32")], mode=kind, **attrs)
    lead = g.node("Shape", [x], start=0, end=2)
    sizes = g.node("Concat", [lead, g.const(list(out.shape[2:]), "int64")], axis=0)
    return g.node("Resize", [x, None, None, sizes], mode=kind, **attrs)


# -- recurrent layers ----------------------------------------------------------------------
_GATE_ORDER = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2], "RNN_TANH": [0], "RNN_RELU": [0]}


def _gates(g: Graph, w: str, hidden: int, order: list[int]) -> str:
    """``w``'s gate blocks (rows of ``hidden``) in ONNX's order."""
    if order == [0]:
        return w
    parts = [g.node("Slice", [w, g.const([k * hidden], "int64"),
                              g.const([(k + 1) * hidden], "int64"), g.const([0], "int64")])
             for k in order]
    return g.node("Concat", parts, axis=0)


@layer(nn.LSTM, nn.GRU, nn.RNN)
def _rnn(g: Graph, c: Call) -> Any:
    m = c.target
    if m.proj_size:
        raise OnnxExportError("LSTM with proj_size > 0 has no ONNX export")
    mode, hidden, layers = m.mode, m.hidden_size, m.num_layers
    dirs = 2 if m.bidirectional else 1
    order = _GATE_ORDER[mode]
    lstm = mode == "LSTM"
    x = c.ins[0]
    batched = len(c.shape(0)) == 3
    if not batched:
        x = g.node("Unsqueeze", [x, g.const([1], "int64")])
    elif m.batch_first:
        x = g.node("Transpose", [x], perm=[1, 0, 2])
    hx = c.args[1] if len(c.args) > 1 else c.kw.get("hx")
    h0 = c0 = None
    if hx is not None:
        names = [g.tensor(t) for t in (hx if lstm else (hx,))]
        if not batched:
            names = [g.node("Unsqueeze", [n, g.const([1], "int64")]) for n in names]
        h0 = names[0]
        c0 = names[1] if lstm else None
    ax0 = g.const([0], "int64")
    finals_h, finals_c = [], []
    for layer_i in range(layers):
        ws, rs, bs = [], [], []
        for d in range(dirs):
            w_ih, w_hh, b_ih, b_hh, _ = m._weights(layer_i, d)
            ws.append(g.node("Unsqueeze", [_gates(g, g.tensor(w_ih), hidden, order), ax0]))
            rs.append(g.node("Unsqueeze", [_gates(g, g.tensor(w_hh), hidden, order), ax0]))
            if b_ih is not None:
                b = g.node("Concat", [_gates(g, g.tensor(b_ih), hidden, order),
                                      _gates(g, g.tensor(b_hh), hidden, order)], axis=0)
                bs.append(g.node("Unsqueeze", [b, ax0]))
        cat = (lambda v: v[0]) if dirs == 1 else (lambda v: g.node("Concat", v, axis=0))
        inputs = [x, cat(ws), cat(rs), cat(bs) if bs else None, None]
        sl = [g.const([layer_i * dirs], "int64"), g.const([(layer_i + 1) * dirs], "int64"),
              ax0]
        inputs.append(None if h0 is None else g.node("Slice", [h0, *sl]))
        attrs: dict[str, Any] = {"hidden_size": hidden,
                                 "direction": "bidirectional" if dirs == 2 else "forward"}
        if lstm:
            inputs.append(None if c0 is None else g.node("Slice", [c0, *sl]))
            y, yh, yc = g.node("LSTM", inputs, n_out=3, **attrs)
            finals_c.append(yc)
        else:
            if mode == "GRU":
                attrs["linear_before_reset"] = 1
                op = "GRU"
            else:
                attrs["activations"] = ["Relu" if mode == "RNN_RELU" else "Tanh"] * dirs
                op = "RNN"
            y, yh = g.node(op, inputs, n_out=2, **attrs)
        finals_h.append(yh)
        # (seq, dirs, batch, hidden) -> (seq, batch, dirs * hidden)
        y = g.node("Transpose", [y], perm=[0, 2, 1, 3])
        x = g.node("Reshape", [y, g.const([0, 0, -1], "int64")])
    out = x
    h_n = finals_h[0] if layers == 1 else g.node("Concat", finals_h, axis=0)
    c_n = None
    if lstm:
        c_n = finals_c[0] if layers == 1 else g.node("Concat", finals_c, axis=0)
    if not batched:
        ax1 = g.const([1], "int64")
        out = g.node("Squeeze", [out, ax1])
        h_n = g.node("Squeeze", [h_n, ax1])
        c_n = None if c_n is None else g.node("Squeeze", [c_n, ax1])
    elif m.batch_first:
        out = g.node("Transpose", [out], perm=[1, 0, 2])
    return (out, (h_n, c_n)) if lstm else (out, h_n)


# -- losses --------------------------------------------------------------------------------
@layer(nn.CrossEntropyLoss)
def _cross_entropy(g: Graph, c: Call) -> str:
    m = c.target
    if getattr(m, "label_smoothing", 0.0) or len(c.shape(1)) != len(c.shape(0)) - 1:
        raise OnnxExportError("CrossEntropyLoss is exported for class-index targets without "
                              "label smoothing")
    w = param(g, m, "weight") if getattr(m, "weight", None) is not None else None
    return g.node("SoftmaxCrossEntropyLoss", [c.ins[0], c.ins[1], w],
                  reduction=m.reduction, ignore_index=int(m.ignore_index))


@layer(nn.NLLLoss)
def _nll(g: Graph, c: Call) -> str:
    m = c.target
    w = param(g, m, "weight") if getattr(m, "weight", None) is not None else None
    return g.node("NegativeLogLikelihoodLoss", [c.ins[0], c.ins[1], w],
                  reduction=m.reduction, ignore_index=int(m.ignore_index))
