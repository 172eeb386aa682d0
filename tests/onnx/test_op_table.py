"""The op table: small modules covering each exported layer and op family, checked with
ONNX Runtime (at two batch sizes) and through a round trip into Volta."""

from __future__ import annotations

import io

import numpy as np
import pytest

import volta_core as vt
from volta_core import nn
from volta_core.nn import functional as F

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


class Fn(nn.Module):
    """A module around a function, with optional submodules."""

    def __init__(self, fn, **mods) -> None:
        super().__init__()
        self.fn = fn
        for k, v in mods.items():
            setattr(self, k, v)

    def forward(self, *xs):
        return self.fn(self, *xs)


def _x(*shape):
    return lambda b: (vt.randn(b, *shape),)


ZOO = {
    "conv1d": (lambda: nn.Sequential(nn.Conv1d(3, 5, 3, stride=2, padding=1), nn.Tanh()),
               _x(3, 11)),
    "conv1d_same": (lambda: nn.Conv1d(3, 4, 4, padding="same", dilation=2), _x(3, 9)),
    "conv2d_groups": (lambda: nn.Conv2d(4, 6, 3, groups=2, dilation=2, bias=False),
                      _x(4, 9, 9)),
    "conv_transpose2d": (lambda: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1,
                                                    output_padding=1), _x(3, 4, 5)),
    "f_conv_transpose2d": (lambda: Fn(lambda m, x: F.conv_transpose2d(
        x, m.w.weight, None, 2, 1), w=nn.Conv2d(3, 2, 3)), _x(2, 4, 4)),
    "f_conv2d": (lambda: Fn(lambda m, x: F.conv2d(x, m.c.weight, m.c.bias, 1, 1),
                            c=nn.Conv2d(2, 3, 3)), _x(2, 6, 6)),
    "pools": (lambda: nn.Sequential(nn.MaxPool2d(3, 2, 1), nn.AvgPool2d(2)), _x(2, 9, 9)),
    "adaptive_avg_pool": (lambda: Fn(lambda m, x: (m.a(x), m.b(x)), a=nn.AdaptiveAvgPool2d(1),
                                     b=nn.AdaptiveAvgPool2d((2, 3))), _x(3, 6, 7)),
    "maxpool1d": (lambda: nn.MaxPool1d(2), _x(3, 8)),
    "f_pools": (lambda: Fn(lambda m, x: F.avg_pool2d(F.max_pool2d(x, 2), 2, ceil_mode=True,
                                                      count_include_pad=False)), _x(2, 10, 10)),
    "batchnorm": (lambda: nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6)), _x(4)),
    "f_batch_norm_conv1d": (lambda: Fn(lambda m, x: F.conv1d(F.batch_norm(
        x, m.bn.running_mean, m.bn.running_var, m.bn.weight, m.bn.bias), m.c.weight, m.c.bias,
        padding=1), bn=nn.BatchNorm1d(3), c=nn.Conv1d(3, 2, 3)), _x(3, 7)),
    "groupnorm": (lambda: nn.GroupNorm(2, 6), _x(6, 3, 3)),
    "f_layer_norm": (lambda: Fn(lambda m, x: F.layer_norm(x, (5,)) + F.group_norm(x, 1)),
                     _x(3, 5)),
    "activations": (lambda: nn.Sequential(
        nn.Linear(6, 6), nn.GELU(), nn.Linear(6, 6), nn.GELU("tanh"), nn.SiLU(),
        nn.Softplus(), nn.ELU(), nn.LeakyReLU(0.1), nn.Hardtanh(-0.5, 0.5), nn.Sigmoid()),
        _x(6)),
    "softmaxes": (lambda: Fn(lambda m, x: (F.softmax(x, 1), F.log_softmax(x, -1))), _x(5, 4)),
    "dropout_eval": (lambda: nn.Sequential(nn.Conv2d(2, 2, 1), nn.Dropout(0.5), nn.Dropout2d()),
                     _x(2, 3, 3)),
    "embedding": (lambda: nn.Embedding(10, 4), lambda b: (vt.randint(0, 10, (b, 3)),)),
    "movement": (lambda: Fn(lambda m, x: vt.cat([
        x.permute(0, 2, 1).reshape(x.shape[0], -1), x[:, 1:3, ::2].flatten(1),
        vt.stack(x.split(2, dim=1), 1).sum((1, 2)), x.chunk(3, 2)[1].squeeze(-1),
        x.unsqueeze(1).expand(-1, 2, -1, -1).mean(1).amax(-1),
        x.flip(1)[:, 0], x.index_select(1, vt.tensor([0, 3])).sum(-1),
        x.gather(2, vt.zeros(x.shape[0], 4, 1, dtype=vt.int64)).reshape(-1, 4)], 1)),
        _x(4, 3)),
    "reductions": (lambda: Fn(lambda m, x: (x.sum(), x.mean(1), x.var(1), x.std(0),
                                             x.amin(1, keepdim=True), vt.logsumexp(x, 1),
                                             x.argmax(1), x.norm(dim=1), x.prod(1))), _x(5)),
    "elementwise": (lambda: Fn(lambda m, x: vt.where(
        x > 0, (x.abs() + 1).log() * 2 - x.exp() / 3, (x ** 2).sqrt().clamp(0.1, 0.8))
        + x.sin() * x.cos() - vt.maximum(x, x.tanh()) + (x.rsqrt() if False else 0)),
        _x(4)),
    "sdpa": (lambda: Fn(lambda m, q, k, v: F.scaled_dot_product_attention(q, k, v)),
             lambda b: (vt.randn(b, 2, 5, 4), vt.randn(b, 2, 6, 4), vt.randn(b, 2, 6, 4))),
    "sdpa_mask": (lambda: Fn(lambda m, q: F.scaled_dot_product_attention(
        q, q, q, attn_mask=vt.ones(5, 5).tril() > 0)), lambda b: (vt.randn(b, 2, 5, 4),)),
    "mha": (lambda: nn.MultiheadAttention(8, 2, batch_first=True),
            lambda b: (vt.randn(b, 5, 8), vt.randn(b, 7, 8), vt.randn(b, 7, 8))),
    "mha_self": (lambda: Fn(lambda m, x: m.a(x, x, x, need_weights=False)[0],
                            a=nn.MultiheadAttention(8, 2)), lambda b: (vt.randn(6, b, 8),)),
    "transformer_layer": (lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                             batch_first=True),
                          lambda b: (vt.randn(b, 5, 8),)),
    "gru": (lambda: nn.GRU(3, 5, num_layers=2, bidirectional=True), lambda b: (
        vt.randn(6, b, 3),)),
    "rnn_relu": (lambda: nn.RNN(3, 4, nonlinearity="relu", batch_first=True),
                 lambda b: (vt.randn(b, 6, 3), vt.randn(1, b, 4))),
    "lstm_state": (lambda: nn.LSTM(3, 4, num_layers=2), lambda b: (
        vt.randn(5, b, 3), (vt.randn(2, b, 4), vt.randn(2, b, 4)))),
    "upsample": (lambda: nn.Sequential(nn.Upsample(scale_factor=2), nn.Upsample(
        scale_factor=2, mode="bilinear", align_corners=True), nn.Upsample(size=(9, 7),
                                                                          mode="bicubic")),
        _x(2, 3, 4)),
    "f_interpolate": (lambda: Fn(lambda m, x: F.interpolate(x, scale_factor=2,
                                                            mode="bilinear")), _x(2, 3, 3)),
    "pixel_shuffle": (lambda: nn.Sequential(nn.PixelShuffle(2)), _x(8, 3, 2)),
    "losses": (lambda: Fn(lambda m, x, y: (
        m.ce(x, y), F.mse_loss(x, x.tanh()), F.l1_loss(x, x.sigmoid()),
        F.binary_cross_entropy_with_logits(x, x.sigmoid()), m.nll(F.log_softmax(x, 1), y)),
        ce=nn.CrossEntropyLoss(), nll=nn.NLLLoss()),
        lambda b: (vt.randn(b, 5), vt.randint(0, 5, (b,)))),
}


# the batch axis of each input, where it is not 0
BATCH_AXES = {"gru": [1], "mha_self": [1], "lstm_state": [1, 1, 1], "rnn_relu": [0, 1]}


def _names(inputs) -> list[str]:
    return [f"in{i}" for i in range(len(inputs))]


def _flat(inputs):
    out = []
    for t in inputs:
        out += list(t) if isinstance(t, tuple) else [t]
    return out


def _outs(y):
    if isinstance(y, vt.Tensor):
        return [y]
    return [t for o in y if o is not None for t in _outs(o)]


def _close(got, want, rel: float) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(float(np.abs(want).max()) if want.size else 0.0, 1.0)
    err = float(np.abs(got.astype(np.float64) - want).max()) if want.size else 0.0
    assert err <= rel * scale, f"max difference {err:.3g} > {rel} * {scale:.3g}"


@pytest.mark.parametrize("name", sorted(ZOO))
def test_op_table(name: str) -> None:
    build, make = ZOO[name]
    vt.manual_seed(0)
    model = build().eval()
    example = make(2)
    names = _names(_flat(example))
    axes = BATCH_AXES.get(name, [0] * len(names))
    dyn = {n: {a: "batch"} for n, a in zip(names, axes)}
    buf = io.BytesIO()
    vt.onnx.export(model, example, buf, input_names=names, dynamic_axes=dyn)
    data = buf.getvalue()
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    loaded = vt.onnx.load(data).eval()
    for b in (2, 5):
        vt.manual_seed(b)
        inputs = make(b)
        with vt.no_grad():
            want = _outs(model(*inputs))
        got = session.run(None, {n: t.numpy() for n, t in zip(names, _flat(inputs))})
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w.numpy(), 1e-5)
        with vt.no_grad():
            back = _outs(loaded(*_flat(inputs)))
        for g, w in zip(back, want):
            _close(g.numpy(), w.numpy(), 1e-6)


def test_every_exported_op_name_is_a_volta_function() -> None:
    """The exporter maps ops by their Function class names: a renamed op shows up here."""
    from volta_core.autograd.function import Function
    from volta_core.onnx.export_ops import OPS

    names, todo = set(), [Function]
    while todo:
        cls = todo.pop()
        names.add(cls.__name__)
        todo += cls.__subclasses__()
    assert not set(OPS) - names, sorted(set(OPS) - names)
