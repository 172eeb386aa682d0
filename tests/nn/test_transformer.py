"""Transformer encoder/decoder layers and stacks against a NumPy reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
from vt_helpers import assert_close, check_grad, rand

import volta_core as vt
from volta_core import nn

# -- NumPy reference -------------------------------------------------------------------------


def np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_mask(m):
    if m is None:
        return 0.0
    return np.where(m, -np.inf, 0.0) if m.dtype == bool else m


def np_mha(q, k, v, p, heads, attn_mask=None, kpm=None):
    """Time-major (L, N, E) multi-head attention with PyTorch's parameter layout."""
    e = q.shape[-1]
    wq, wk, wv = np.split(p["in_proj_weight"], 3)
    bq, bk, bv = np.split(p["in_proj_bias"], 3)
    L, N, S, hd = q.shape[0], q.shape[1], k.shape[0], e // heads

    def split(x, n):
        return x.reshape(n, N, heads, hd).transpose(1, 2, 0, 3)

    Q, K, V = split(q @ wq.T + bq, L), split(k @ wk.T + bk, S), split(v @ wv.T + bv, S)
    scores = Q @ K.transpose(0, 1, 3, 2) / math.sqrt(hd) + np_mask(attn_mask)
    if kpm is not None:
        scores = scores + np_mask(kpm)[:, None, None, :]
    out = (np_softmax(scores) @ V).transpose(2, 0, 1, 3).reshape(L, N, e)
    return out @ p["out_proj.weight"].T + p["out_proj.bias"]


def np_ln(x, p, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * p["weight"] + p["bias"]


def sub(p, prefix):
    return {k[len(prefix):]: v for k, v in p.items() if k.startswith(prefix)}


def np_gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


ACTS = {"relu": lambda x: np.maximum(x, 0), "gelu": np_gelu}


def np_ff(x, p, act):
    h = ACTS[act](x @ p["linear1.weight"].T + p["linear1.bias"])
    return h @ p["linear2.weight"].T + p["linear2.bias"]


def np_encoder_layer(x, p, heads, norm_first=False, act="relu", mask=None, kpm=None):
    def sa(y):
        return np_mha(y, y, y, sub(p, "self_attn."), heads, mask, kpm)

    n1, n2 = sub(p, "norm1."), sub(p, "norm2.")
    if norm_first:
        x = x + sa(np_ln(x, n1))
        return x + np_ff(np_ln(x, n2), p, act)
    x = np_ln(x + sa(x), n1)
    return np_ln(x + np_ff(x, p, act), n2)


def np_decoder_layer(x, mem, p, heads, norm_first=False, act="relu", tgt_mask=None,
                     mem_mask=None, tgt_kpm=None, mem_kpm=None):
    def sa(y):
        return np_mha(y, y, y, sub(p, "self_attn."), heads, tgt_mask, tgt_kpm)

    def ca(y):
        return np_mha(y, mem, mem, sub(p, "multihead_attn."), heads, mem_mask, mem_kpm)

    n1, n2, n3 = sub(p, "norm1."), sub(p, "norm2."), sub(p, "norm3.")
    if norm_first:
        x = x + sa(np_ln(x, n1))
        x = x + ca(np_ln(x, n2))
        return x + np_ff(np_ln(x, n3), p, act)
    x = np_ln(x + sa(x), n1)
    x = np_ln(x + ca(x), n2)
    return np_ln(x + np_ff(x, p, act), n3)


def params_np(m):
    return {k: v.numpy() for k, v in m.state_dict().items()}


def perturb(m, seed=0):
    """Give every parameter (biases and norms included) random values."""
    rng = np.random.default_rng(seed)
    for p in m.parameters():
        p.data = vt.tensor(rng.uniform(-0.5, 0.5, size=p.shape), dtype=p.dtype)


# -- encoder layer ---------------------------------------------------------------------------


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("act", ["relu", "gelu"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_encoder_layer_forward(norm_first, act, batch_first):
    layer = nn.TransformerEncoderLayer(6, 2, dim_feedforward=5, dropout=0.0, activation=act,
                                       batch_first=batch_first, norm_first=norm_first,
                                       dtype=vt.float64)
    perturb(layer, 1)
    x = rand(4, 3, 6, seed=2)
    mask = np.triu(np.ones((4, 4), bool), 1)
    kpm = np.zeros((3, 4), bool)
    kpm[1, 3] = True
    xin = np.swapaxes(x, 0, 1) if batch_first else x
    out = layer(vt.tensor(xin), src_mask=vt.tensor(mask), src_key_padding_mask=vt.tensor(kpm))
    ref = np_encoder_layer(x, params_np(layer), 2, norm_first, act, mask, kpm)
    assert_close(out, np.swapaxes(ref, 0, 1) if batch_first else ref, 1e-6, 1e-9)


def test_encoder_layer_unbatched_and_is_causal():
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=3, dropout=0.0, dtype=vt.float64)
    x = rand(5, 4, seed=3)
    mask = np.triu(np.ones((5, 5), bool), 1)
    out = layer(vt.tensor(x), is_causal=True)
    ref = np_encoder_layer(x[:, None], params_np(layer), 2, mask=mask)[:, 0]
    assert_close(out, ref, 1e-9, 1e-9)


def test_encoder_layer_parameter_names():
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    assert list(layer.state_dict()) == [
        "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
        "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
        "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"]
    assert layer.linear1.weight.shape == (16, 8)
    for name in ("dropout", "dropout1", "dropout2"):
        assert isinstance(getattr(layer, name), nn.Dropout)
    nobias = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, bias=False)
    assert not any("bias" in k for k in nobias.state_dict())


def test_encoder_layer_dropout_in_training():
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=3, dropout=1.0, dtype=vt.float64)
    perturb(layer, 4)
    x = rand(3, 2, 4, seed=5)
    p = params_np(layer)
    # p=1: both residual branches are zero, leaving the two layer norms
    assert_close(layer(vt.tensor(x)), np_ln(np_ln(x, sub(p, "norm1.")), sub(p, "norm2.")),
                 1e-9, 1e-9)
    layer.eval()
    assert_close(layer(vt.tensor(x)), np_encoder_layer(x, p, 2), 1e-9, 1e-9)


def test_encoder_layer_gradcheck():
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=3, dropout=0.0,
                                       activation="gelu", dtype=vt.float64)
    perturb(layer, 6)
    names = [n for n, _ in layer.named_parameters()]

    def fn(x, *params):
        for n, p in zip(names, params):
            owner = layer.get_submodule(n.rpartition(".")[0]) if "." in n else layer
            owner._parameters[n.rpartition(".")[2]] = p
        return layer(x, src_mask=vt.tensor(np.triu(np.ones((3, 3)), 1) * -1.5))

    params = [p.detach().numpy().copy() for p in layer.parameters()]
    check_grad(fn, rand(3, 2, 4, seed=7), *params)


# -- decoder layer ---------------------------------------------------------------------------


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_forward(norm_first):
    layer = nn.TransformerDecoderLayer(6, 3, dim_feedforward=4, dropout=0.0,
                                       norm_first=norm_first, dtype=vt.float64)
    perturb(layer, 8)
    tgt, mem = rand(3, 2, 6, seed=9), rand(5, 2, 6, seed=10)
    tmask = np.triu(np.ones((3, 3), bool), 1)
    mmask = rand(3, 5, seed=11)
    mkpm = np.array([[False] * 5, [False, False, True, True, False]])
    out = layer(vt.tensor(tgt), vt.tensor(mem), tgt_mask=vt.tensor(tmask),
                memory_mask=vt.tensor(mmask), memory_key_padding_mask=vt.tensor(mkpm))
    ref = np_decoder_layer(tgt, mem, params_np(layer), 3, norm_first, "relu", tmask, mmask,
                           None, mkpm)
    assert_close(out, ref, 1e-9, 1e-9)
    assert list(layer.state_dict())[4:8] == [
        "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
        "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias"]
    assert "norm3.weight" in layer.state_dict() and isinstance(layer.dropout3, nn.Dropout)


def test_decoder_layer_gradcheck_inputs():
    layer = nn.TransformerDecoderLayer(4, 2, dim_feedforward=3, dropout=0.0,
                                       norm_first=True, dtype=vt.float64)
    check_grad(lambda t, m: layer(t, m, tgt_is_causal=True), rand(3, 1, 4, seed=12),
               rand(2, 1, 4, seed=13))


# -- stacks and the full model ---------------------------------------------------------------


def test_encoder_stack_copies_layers_and_applies_norm():
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=3, dropout=0.0, dtype=vt.float64)
    enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(4, dtype=vt.float64))
    keys = list(enc.state_dict())
    assert keys[0] == "layers.0.self_attn.in_proj_weight" and keys[-1] == "norm.bias"
    assert "layers.1.linear2.weight" in keys
    l0, l1 = enc.layers[0], enc.layers[1]
    assert l0.linear1.weight is not l1.linear1.weight
    assert l0.linear1.weight is not layer.linear1.weight
    perturb(enc, 14)
    x = rand(3, 2, 4, seed=15)
    kpm = np.array([[False, False, True], [False, False, False]])
    mask = rand(3, 3, seed=16)
    p = params_np(enc)
    ref = x
    for i in range(2):
        ref = np_encoder_layer(ref, sub(p, f"layers.{i}."), 2, mask=mask, kpm=kpm)
    ref = np_ln(ref, sub(p, "norm."))
    out = enc(vt.tensor(x), mask=vt.tensor(mask), src_key_padding_mask=vt.tensor(kpm))
    assert_close(out, ref, 1e-9, 1e-9)
    out.sum().backward()
    assert all(q.grad is not None for q in enc.parameters())


def test_full_transformer():
    model = nn.Transformer(d_model=4, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
                           dim_feedforward=3, dropout=0.0, batch_first=True, dtype=vt.float64)
    keys = list(model.state_dict())
    assert "encoder.layers.1.norm2.bias" in keys and "encoder.norm.weight" in keys
    assert "decoder.layers.0.multihead_attn.in_proj_weight" in keys
    assert "decoder.norm.bias" in keys and "decoder.layers.1.norm1.weight" not in keys
    perturb(model, 17)
    src, tgt = rand(2, 5, 4, seed=18), rand(2, 3, 4, seed=19)
    tmask = model.generate_square_subsequent_mask(3, dtype=vt.float64)
    assert_close(tmask, np.where(np.triu(np.ones((3, 3), bool), 1), -np.inf, 0.0))
    out = model(vt.tensor(src), vt.tensor(tgt), tgt_mask=tmask)
    p = params_np(model)
    mem = np.swapaxes(src, 0, 1)
    for i in range(2):
        mem = np_encoder_layer(mem, sub(p, f"encoder.layers.{i}."), 2)
    mem = np_ln(mem, sub(p, "encoder.norm."))
    ref = np_decoder_layer(np.swapaxes(tgt, 0, 1), mem, sub(p, "decoder.layers.0."), 2,
                           tgt_mask=tmask.numpy())
    ref = np_ln(ref, sub(p, "decoder.norm."))
    assert_close(out, np.swapaxes(ref, 0, 1), 1e-9, 1e-9)


def test_default_init_and_float32():
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                           dim_feedforward=6)
    w = model.encoder.layers[0].linear1.weight.detach().numpy()
    assert np.abs(w).max() <= math.sqrt(6 / (6 + 8))
    out = model(vt.randn(4, 2, 8), vt.randn(3, 2, 8))
    assert out.shape == (3, 2, 8) and out.dtype is vt.float32


# -- errors ----------------------------------------------------------------------------------


def test_errors():
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=3)
    with pytest.raises(vt.ShapeError, match=r"TransformerEncoderLayer.*d_model=4.*\(3, 2, 5\)"):
        layer(vt.randn(3, 2, 5))
    with pytest.raises(vt.ShapeError, match="TransformerEncoderLayer"):
        layer(vt.randn(1, 3, 2, 4))
    dec = nn.TransformerDecoderLayer(4, 2, dim_feedforward=3)
    with pytest.raises(vt.ShapeError, match="TransformerDecoderLayer.*batch sizes"):
        dec(vt.randn(3, 2, 4), vt.randn(5, 3, 4))
    with pytest.raises(vt.ShapeError, match="TransformerDecoderLayer.*memory"):
        dec(vt.randn(3, 2, 4), vt.randn(5, 2, 6))
    with pytest.raises(ValueError, match="activation"):
        nn.TransformerEncoderLayer(4, 2, activation="swish")
    model = nn.Transformer(4, 2, 1, 1, 3)
    with pytest.raises(vt.ShapeError, match="Transformer.*batch sizes"):
        model(vt.randn(3, 2, 4), vt.randn(3, 3, 4))
