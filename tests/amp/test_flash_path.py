"""The core's fused-attention path (``sdpa_flash`` kernels, cuDNN on CUDA), driven on cpu
by a stand-in kernel so the plumbing is tested without a GPU: outputs and gradients
match the plain path, and a refused case falls back."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

import volta_core as vt
import volta_core.nn.functional as F
from volta_core.backend.kernels import clear_cache


def _np_forward(q, k, v, *, scale, causal):
    s = np.matmul(q.astype(np.float32), np.swapaxes(k, -1, -2).astype(np.float32)) * scale
    if causal:
        s = np.where(np.triu(np.ones(s.shape[-2:], bool), 1), -np.inf, s)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    lse = m + np.log(e.sum(-1, keepdims=True))
    return (np.matmul(e / e.sum(-1, keepdims=True), v.astype(np.float32))).astype(q.dtype), lse


@pytest.fixture
def fake_flash(monkeypatch):
    calls = {"forward": 0, "backward": 0}

    def forward(q, k, v, *, scale, causal):
        calls["forward"] += 1
        return _np_forward(q, k, v, scale=scale, causal=causal)

    def backward(*args, **kwargs):
        calls["backward"] += 1
        return None  # refuse: the core's float32 math takes over

    backend = vt.device("cpu").backend
    kernels = dict(backend.kernels)
    kernels["sdpa_flash"] = SimpleNamespace(
        supported=lambda q, k, v: q.ndim == 4 and q.dtype == np.float32, forward=forward,
        backward=backward)
    monkeypatch.setattr(type(backend), "kernels", property(lambda self: kernels))
    clear_cache()
    yield calls
    clear_cache()


@pytest.mark.parametrize("causal", [False, True])
def test_flash_path_matches_plain_attention(fake_flash, causal):
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal((2, 3, 5, 8)).astype(np.float32) for _ in range(3)]
    ref = [vt.tensor(a, requires_grad=True) for a in arrays]
    out_ref = F.scaled_dot_product_attention(*ref, is_causal=causal)
    assert fake_flash["forward"] == 1  # the reference went through the stand-in too
    fast = [vt.tensor(a, requires_grad=True) for a in arrays]
    out = F.scaled_dot_product_attention(*fast, is_causal=causal)
    (out * out).sum().backward()
    assert fake_flash["backward"] == 1
    # the plain path: a mask forces it (a zero float mask changes nothing)
    plain = [vt.tensor(a, requires_grad=True) for a in arrays]
    zero = vt.zeros(5, 5)
    if causal:
        zero = vt.tensor(np.triu(np.full((5, 5), -np.inf, np.float32), 1))
    out_plain = F.scaled_dot_product_attention(*plain, attn_mask=zero)
    (out_plain * out_plain).sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), out_plain.detach().numpy(), atol=1e-5)
    np.testing.assert_allclose(out_ref.detach().numpy(), out_plain.detach().numpy(), atol=1e-5)
    for a, b in zip(fast, plain):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_unsupported_inputs_take_the_plain_path(fake_flash):
    q = vt.randn(5, 8)  # 2-d: the stand-in declines
    out = F.scaled_dot_product_attention(q, q, q)
    assert fake_flash["forward"] == 0
    want = (q @ q.T / math.sqrt(8)).softmax(-1) @ q
    np.testing.assert_allclose(out.numpy(), want.numpy(), atol=1e-5)


def test_multihead_attention_uses_the_flash_path_without_dropout(fake_flash):
    mha = vt.nn.MultiheadAttention(16, 2, batch_first=True, dropout=0.0)
    x = vt.randn(2, 5, 16, requires_grad=True)
    out, _ = mha(x, x, x, need_weights=False)
    assert fake_flash["forward"] == 1
    out.sum().backward()
    ref_x = vt.tensor(x.detach().numpy(), requires_grad=True)
    vt.backend.kernels.clear_cache()
    mha2 = vt.nn.MultiheadAttention(16, 2, batch_first=True, dropout=0.0)
    mha2.load_state_dict(mha.state_dict())
    out2, _ = mha2(ref_x, ref_x, ref_x, need_weights=False,
                   attn_mask=vt.zeros(5, 5))  # a mask: the plain path
    out2.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), out2.detach().numpy(), atol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), ref_x.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_double_backward_through_the_flash_path(fake_flash):
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal((1, 2, 4, 8)).astype(np.float32) for _ in range(3)]
    fast = [vt.tensor(a, requires_grad=True) for a in arrays]
    plain = [vt.tensor(a, requires_grad=True) for a in arrays]
    results = []
    for ts, mask in ((fast, None), (plain, vt.zeros(4, 4))):
        out = F.scaled_dot_product_attention(*ts, attn_mask=mask)
        (gq,) = vt.autograd.grad([(out * out).sum()], [ts[0]], create_graph=True)
        gq.sum().backward()
        results.append([t.grad.numpy() for t in ts])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
