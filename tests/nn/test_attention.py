"""MultiheadAttention and scaled_dot_product_attention against NumPy references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from vt_helpers import assert_close, check_grad, rand

import volta_core as vt
import volta_core.nn.functional as F
from volta_core import nn

# -- NumPy references ------------------------------------------------------------------------


def np_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=axis, keepdims=True)


def np_float_mask(mask, sdpa=False):
    if mask is None:
        return 0.0
    if mask.dtype == bool:
        blocked = ~mask if sdpa else mask
        return np.where(blocked, -np.inf, 0.0)
    return mask


def np_sdpa(q, k, v, mask=None, is_causal=False, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    if is_causal:
        s = s + np.where(np.tril(np.ones((q.shape[-2], k.shape[-2]), bool)), 0.0, -np.inf)
    s = s + np_float_mask(mask, sdpa=True)
    return np_softmax(s) @ v


def np_mha(q, k, v, p, heads, attn_mask=None, kpm=None, zero_attn=False):
    """Time-major (L, N, E) reference; returns output and per-head weights (N, H, L, S)."""
    e = q.shape[-1]
    if "in_proj_weight" in p:
        wq, wk, wv = np.split(p["in_proj_weight"], 3)
    else:
        wq, wk, wv = p["q_proj_weight"], p["k_proj_weight"], p["v_proj_weight"]
    bq, bk, bv = np.split(p.get("in_proj_bias", np.zeros(3 * e)), 3)
    Q, K, V = q @ wq.T + bq, k @ wk.T + bk, v @ wv.T + bv
    extra = [p["bias_k"], p["bias_v"]] if "bias_k" in p else []
    extra += [np.zeros((1, 1, e))] * 2 if zero_attn else []
    for bk_, bv_ in zip(extra[::2], extra[1::2]):
        n = q.shape[1]
        K = np.concatenate([K, np.repeat(bk_, n, axis=1)])
        V = np.concatenate([V, np.repeat(bv_, n, axis=1)])
        if attn_mask is not None:
            attn_mask = np.concatenate([attn_mask, np.zeros_like(attn_mask[..., :1])], -1)
        if kpm is not None:
            kpm = np.concatenate([kpm, np.zeros_like(kpm[..., :1])], -1)
    L, N, _ = Q.shape
    S = K.shape[0]
    hd = e // heads

    def split(x, length):
        return x.reshape(length, N, heads, hd).transpose(1, 2, 0, 3)

    Qh, Kh, Vh = split(Q, L), split(K, S), split(V, S)
    scores = Qh @ Kh.transpose(0, 1, 3, 2) / math.sqrt(hd)
    if attn_mask is not None:
        m = np_float_mask(attn_mask)
        scores = scores + (m.reshape(N, heads, L, S) if m.ndim == 3 else m)
    if kpm is not None:
        scores = scores + np_float_mask(kpm)[:, None, None, :]
    w = np_softmax(scores)
    out = (w @ Vh).transpose(2, 0, 1, 3).reshape(L, N, e)
    out = out @ p["out_proj.weight"].T + p.get("out_proj.bias", 0.0)
    return out, w


def params_np(m):
    return {k: v.numpy() for k, v in m.state_dict().items()}


# -- scaled_dot_product_attention ------------------------------------------------------------


def test_sdpa_forward():
    q, k, v = rand(2, 3, 4, 5, seed=1), rand(2, 3, 6, 5, seed=2), rand(2, 3, 6, 7, seed=3)
    out = F.scaled_dot_product_attention(vt.tensor(q), vt.tensor(k), vt.tensor(v))
    assert_close(out, np_sdpa(q, k, v), 1e-10, 1e-10)
    out = F.scaled_dot_product_attention(vt.tensor(q), vt.tensor(k), vt.tensor(v), scale=0.3)
    assert_close(out, np_sdpa(q, k, v, scale=0.3), 1e-10, 1e-10)


def test_sdpa_masks_and_causal():
    q, k, v = rand(2, 4, 3, seed=4), rand(2, 5, 3, seed=5), rand(2, 5, 2, seed=6)
    bmask = np.random.default_rng(0).random((4, 5)) > 0.3
    bmask[:, 0] = True
    fmask = rand(2, 4, 5, seed=7)
    for mask in (bmask, fmask):
        out = F.scaled_dot_product_attention(vt.tensor(q), vt.tensor(k), vt.tensor(v),
                                             attn_mask=vt.tensor(mask))
        assert_close(out, np_sdpa(q, k, v, mask), 1e-10, 1e-10)
    out = F.scaled_dot_product_attention(vt.tensor(q), vt.tensor(k), vt.tensor(v),
                                         is_causal=True)
    assert_close(out, np_sdpa(q, k, v, is_causal=True), 1e-10, 1e-10)


def test_sdpa_gradcheck():
    mask = rand(3, 4, seed=8)
    check_grad(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, vt.tensor(mask)),
               rand(2, 3, 2, seed=9), rand(2, 4, 2, seed=10), rand(2, 4, 3, seed=11))
    check_grad(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
               rand(3, 2, seed=12), rand(3, 2, seed=13), rand(3, 2, seed=14))


def test_sdpa_dropout():
    q = vt.tensor(rand(2, 8, 4, seed=15))
    same = F.scaled_dot_product_attention(q, q, q, dropout_p=0.0)
    assert_close(same, np_sdpa(q.numpy(), q.numpy(), q.numpy()), 1e-10, 1e-10)
    dropped = F.scaled_dot_product_attention(q, q, q, dropout_p=1.0)
    assert_close(dropped, np.zeros((2, 8, 4)))


def test_sdpa_errors():
    q = vt.randn(2, 3, 4)
    with pytest.raises(vt.ShapeError, match="scaled_dot_product_attention.*same feature"):
        F.scaled_dot_product_attention(q, vt.randn(2, 5, 3), vt.randn(2, 5, 4))
    with pytest.raises(vt.ShapeError, match="sequence length"):
        F.scaled_dot_product_attention(q, vt.randn(2, 5, 4), vt.randn(2, 6, 4))
    with pytest.raises(vt.ShapeError, match="attn_mask"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=vt.zeros(2, 5))
    with pytest.raises(ValueError, match="not both"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=vt.zeros(3, 3), is_causal=True)


# -- MultiheadAttention ----------------------------------------------------------------------


def test_mha_parameters_and_init():
    m = nn.MultiheadAttention(8, 2)
    sd = m.state_dict()
    assert list(sd) == ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    assert sd["in_proj_weight"].shape == (24, 8)
    assert np.all(sd["in_proj_bias"].numpy() == 0) and np.all(sd["out_proj.bias"].numpy() == 0)
    bound = math.sqrt(6 / (8 + 24))
    assert np.abs(sd["in_proj_weight"].numpy()).max() <= bound
    kv = nn.MultiheadAttention(8, 2, kdim=3, vdim=5, bias=False, add_bias_kv=True)
    assert set(kv.state_dict()) == {"q_proj_weight", "k_proj_weight", "v_proj_weight",
                                    "bias_k", "bias_v", "out_proj.weight"}
    assert kv.k_proj_weight.shape == (8, 3) and kv.bias_k.shape == (1, 1, 8)
    assert kv.in_proj_weight is None


@pytest.mark.parametrize("batch_first", [False, True])
def test_mha_forward_self_attention(batch_first):
    m = nn.MultiheadAttention(6, 3, batch_first=batch_first, dtype=vt.float64)
    x = rand(4, 2, 6, seed=20)
    xin = np.swapaxes(x, 0, 1) if batch_first else x
    out, w = m(vt.tensor(xin), vt.tensor(xin), vt.tensor(xin))
    ref, rw = np_mha(x, x, x, params_np(m), 3)
    assert_close(out, np.swapaxes(ref, 0, 1) if batch_first else ref, 1e-10, 1e-10)
    assert_close(w, rw.mean(1), 1e-10, 1e-10)
    out, w = m(vt.tensor(xin), vt.tensor(xin), vt.tensor(xin), average_attn_weights=False)
    assert_close(w, rw, 1e-10, 1e-10)
    assert m(vt.tensor(xin), vt.tensor(xin), vt.tensor(xin), need_weights=False)[1] is None


def test_mha_cross_attention_kdim_vdim_and_masks():
    m = nn.MultiheadAttention(4, 2, kdim=3, vdim=5, add_bias_kv=True, dtype=vt.float64)
    q, k, v = rand(3, 2, 4, seed=21), rand(5, 2, 3, seed=22), rand(5, 2, 5, seed=23)
    kpm = np.array([[False, False, True, False, True], [False, True, False, False, False]])
    amask = rand(3, 5, seed=24)
    out, w = m(vt.tensor(q), vt.tensor(k), vt.tensor(v), key_padding_mask=vt.tensor(kpm),
               attn_mask=vt.tensor(amask))
    ref, rw = np_mha(q, k, v, params_np(m), 2, amask, kpm)
    assert out.shape == (3, 2, 4) and w.shape == (2, 3, 6)
    assert_close(out, ref, 1e-10, 1e-10)
    assert_close(w, rw.mean(1), 1e-10, 1e-10)


def test_mha_add_zero_attn_with_bool_masks():
    m = nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True, dtype=vt.float64)
    q, k = rand(3, 2, 4, seed=32), rand(4, 2, 4, seed=33)
    kpm = np.array([[False, True, False, False], [False, False, False, True]])
    amask = np.zeros((3, 4), bool)
    amask[0, 2] = True
    out, w = m(vt.tensor(q), vt.tensor(k), vt.tensor(k), key_padding_mask=vt.tensor(kpm),
               attn_mask=vt.tensor(amask))
    ref, rw = np_mha(q, k, k, params_np(m), 2, amask, kpm, zero_attn=True)
    assert w.shape == (2, 3, 6)
    assert_close(out, ref, 1e-10, 1e-10)
    assert_close(w, rw.mean(1), 1e-10, 1e-10)


def test_mha_bool_3d_mask_and_causal():
    m = nn.MultiheadAttention(4, 2, dtype=vt.float64)
    x = rand(4, 3, 4, seed=25)
    mask = np.random.default_rng(1).random((6, 4, 4)) > 0.6
    mask[..., 0] = False
    out, w = m(vt.tensor(x), vt.tensor(x), vt.tensor(x), attn_mask=vt.tensor(mask),
               average_attn_weights=False)
    ref, rw = np_mha(x, x, x, params_np(m), 2, mask)
    assert_close(out, ref, 1e-10, 1e-10)
    assert_close(w, rw, 1e-10, 1e-10)
    causal = np.triu(np.ones((4, 4), bool), 1)
    out, _ = m(vt.tensor(x), vt.tensor(x), vt.tensor(x), is_causal=True)
    assert_close(out, np_mha(x, x, x, params_np(m), 2, causal)[0], 1e-10, 1e-10)


def test_mha_unbatched():
    m = nn.MultiheadAttention(4, 2, batch_first=True, dtype=vt.float64)
    q, k = rand(3, 4, seed=26), rand(5, 4, seed=27)
    kpm = np.array([False, True, False, False, False])
    out, w = m(vt.tensor(q), vt.tensor(k), vt.tensor(k), key_padding_mask=vt.tensor(kpm))
    ref, rw = np_mha(q[:, None], k[:, None], k[:, None], params_np(m), 2, kpm=kpm[None])
    assert_close(out, ref[:, 0], 1e-10, 1e-10)
    assert_close(w, rw.mean(1)[0], 1e-10, 1e-10)


def test_mha_dropout_only_in_training():
    m = nn.MultiheadAttention(4, 2, dropout=1.0, dtype=vt.float64)
    x = vt.tensor(rand(3, 2, 4, seed=28))
    out, w = m(x, x, x)
    assert_close(w, np.zeros((2, 3, 3)))
    m.eval()
    out, w = m(x, x, x)
    assert_close(out, np_mha(x.numpy(), x.numpy(), x.numpy(), params_np(m), 2)[0], 1e-10, 1e-10)


def test_mha_gradcheck_inputs_and_parameters():
    m = nn.MultiheadAttention(4, 2, kdim=3, dtype=vt.float64)
    names = [n for n, _ in m.named_parameters()]
    kpm = vt.tensor(np.array([[False, True, False], [False, False, False]]))

    def fn(q, k, v, *params):
        for n, p in zip(names, params):
            owner = m.out_proj if n.startswith("out_proj.") else m
            owner._parameters[n.split(".")[-1]] = p
        return m(q, k, v, key_padding_mask=kpm)

    params = [p.detach().numpy().copy() for p in m.parameters()]
    check_grad(fn, rand(2, 2, 4, seed=29), rand(3, 2, 3, seed=30), rand(3, 2, 4, seed=31),
               *params)


def test_mha_state_dict_round_trip():
    a, b = nn.MultiheadAttention(4, 2), nn.MultiheadAttention(4, 2)
    b.load_state_dict(a.state_dict())
    x = vt.randn(3, 2, 4)
    assert_close(b(x, x, x)[0], a(x, x, x)[0].detach().numpy())


def test_mha_errors():
    m = nn.MultiheadAttention(4, 2)
    x = vt.randn(3, 2, 4)
    with pytest.raises(ValueError, match="MultiheadAttention.*divisible"):
        nn.MultiheadAttention(5, 2)
    with pytest.raises(vt.ShapeError, match=r"MultiheadAttention.*query.*embed_dim.*\(3, 2, 5\)"):
        m(vt.randn(3, 2, 5), x, x)
    with pytest.raises(vt.ShapeError, match="MultiheadAttention.*3-D.*2-D"):
        m(vt.randn(1, 3, 2, 4), x, x)
    with pytest.raises(vt.ShapeError, match="MultiheadAttention.*batch sizes"):
        m(x, vt.randn(3, 5, 4), vt.randn(3, 5, 4))
    with pytest.raises(vt.ShapeError, match=r"MultiheadAttention.*attn_mask.*\(3, 3\)"):
        m(x, x, x, attn_mask=vt.zeros(3, 4))
    with pytest.raises(vt.ShapeError, match=r"MultiheadAttention.*N \* num_heads"):
        m(x, x, x, attn_mask=vt.zeros(2, 3, 3))
    with pytest.raises(vt.ShapeError, match="MultiheadAttention.*key_padding_mask"):
        m(x, x, x, key_padding_mask=vt.zeros(3, 3, dtype=vt.bool))
    with pytest.raises(vt.ShapeError, match="MultiheadAttention.*key.*value"):
        m(x, x, vt.randn(4, 2, 4))
