"""A 50+-op composite: a hand-written pre-norm multi-head causal attention block.

Built only from Volta ops (einsum, softmax, var, rsqrt, where, gelu, ...), compared with a
NumPy implementation in the forward and checked with float64 gradcheck in the backward.
"""

import math

import numpy as np
import pytest
import vt_helpers as sp
from vt_helpers import assert_close, check_grad, rand

import volta_core as vt

B, S, D, H = 2, 3, 4, 2
DH = D // H
CAUSAL = np.triu(np.ones((S, S), dtype=bool), k=1)  # True above the diagonal: masked


def vt_block(x, wq, wk, wv, wo, bo, gamma):
    """One attention block in Volta ops."""
    mu = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True, correction=0)
    h = (x - mu) * (var + 1e-5).rsqrt() * gamma

    def heads(w):
        return vt.einsum("bsd,de->bse", h, w).reshape(B, S, H, DH).permute(0, 2, 1, 3)

    q, k, v = heads(wq), heads(wk), heads(wv)
    scores = vt.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(DH)
    scores = vt.where(vt.tensor(CAUSAL), -math.inf, scores)
    probs = vt.softmax(scores, -1)
    ctx = vt.einsum("bhqk,bhkd->bhqd", probs, v).permute(0, 2, 1, 3).reshape(B, S, D)
    y = x + vt.addmm(bo, ctx.reshape(B * S, D), wo).reshape(B, S, D)
    gate = vt.sigmoid(y.sum(-1, keepdim=True) * 0.1)
    out = y + gate * vt.gelu(y) * 0.5 - vt.logsumexp(y, -1, keepdim=True) * 0.05
    return vt.clamp(out, -10.0, 10.0) + vt.tanh(vt.log_softmax(y, -1)).mean(-1, keepdim=True)


def np_block(x, wq, wk, wv, wo, bo, gamma):
    """The same block in NumPy, written independently."""
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    h = (x - mu) / np.sqrt(var + 1e-5) * gamma

    def heads(w):
        return (h @ w).reshape(B, S, H, DH).transpose(0, 2, 1, 3)

    q, k, v = heads(wq), heads(wk), heads(wv)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(DH)
    scores = np.where(CAUSAL, -np.inf, scores)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(B, S, D)
    y = x + ctx @ wo + bo
    gate = sp.expit(y.sum(-1, keepdims=True) * 0.1)
    gelu = 0.5 * y * (1 + sp.erf(y / math.sqrt(2)))
    lse = sp.logsumexp(y, -1, keepdims=True)
    out = y + gate * gelu * 0.5 - lse * 0.05
    log_sm = y - lse
    return np.clip(out, -10, 10) + np.tanh(log_sm).mean(-1, keepdims=True)


def _inputs():
    return [rand(B, S, D, seed=1, low=-2, high=2)] + [
        rand(D, D, seed=s, low=-0.8, high=0.8) for s in (2, 3, 4, 5)] + [
        rand(D, seed=6), rand(D, seed=7, low=0.5, high=1.5)]


def _count_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen or isinstance(node, vt.Tensor):
            continue
        seen.add(id(node))
        stack.extend(node.parents)
    return len(seen)


def test_attention_block_forward_matches_numpy():
    arrays = _inputs()
    tensors = [vt.tensor(a, requires_grad=True) for a in arrays]
    out = vt_block(*tensors)
    assert_close(out, np_block(*arrays), rtol=1e-10, atol=1e-12)
    assert _count_nodes(out) >= 50


def test_attention_block_is_causal():
    arrays = _inputs()
    x2 = arrays[0].copy()
    x2[:, -1] += 5.0  # changing the last position must not change earlier ones
    a = vt_block(*[vt.tensor(v) for v in arrays]).numpy()
    b = vt_block(*[vt.tensor(v) for v in [x2] + arrays[1:]]).numpy()
    np.testing.assert_allclose(a[:, :-1], b[:, :-1], rtol=1e-12)
    assert not np.allclose(a[:, -1], b[:, -1])


def test_attention_block_gradcheck():
    check_grad(vt_block, *_inputs())


def test_attention_block_float32_close_to_float64():
    arrays = _inputs()
    out32 = vt_block(*[vt.tensor(a, dtype=vt.float32) for a in arrays])
    assert out32.dtype == vt.float32
    assert_close(out32, np_block(*arrays), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("seed", [11, 12])
def test_attention_block_backward_finite_for_large_inputs(seed):
    arrays = _inputs()
    arrays[0] = rand(B, S, D, seed=seed, low=-1e3, high=1e3)
    tensors = [vt.tensor(a, requires_grad=True) for a in arrays]
    vt_block(*tensors).sum().backward()
    for t in tensors:
        assert np.all(np.isfinite(t.grad.numpy()))
