"""The fused (flash-style) attention kernels of the wgpu backend: forward and gradients
against float64 NumPy math, causal masks, strided (packed) inputs, dropout drawn in the
kernel (the backward sees the forward's mask), and a replayed training step."""

from __future__ import annotations

import math

import numpy as np
import pytest

import volta_core as vt

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _lazy_default(xp, monkeypatch):
    monkeypatch.delenv("VOLTA_WGPU_EAGER", raising=False)
    # the kernels for every size here (sdpa takes them for large scores only)
    from volta_wgpu.kernels import attention

    monkeypatch.setattr(attention, "FLASH_MIN_SCORE_BYTES", 0)


def test_sdpa_keeps_small_scores_unfused(monkeypatch):
    """Below ``FLASH_MIN_SCORE_BYTES`` of scores sdpa runs unfused (faster there);
    ``VOLTA_WGPU_FLASH=1`` asks for the kernels at any size."""
    from volta_wgpu.kernels import attention

    monkeypatch.setattr(attention, "FLASH_MIN_SCORE_BYTES", 1 << 20)
    q = vt.randn(1, 2, 8, 4, device="wgpu")
    assert attention.sdpa_flash().supported(q.array, q.array, q.array) is False
    monkeypatch.setenv("VOLTA_WGPU_FLASH", "1")
    assert attention.sdpa_flash().supported(q.array, q.array, q.array) is True
    monkeypatch.setattr(attention, "FLASH_MIN_SCORE_BYTES", 8 * 8 * 2 * 4)
    monkeypatch.delenv("VOLTA_WGPU_FLASH")
    assert attention.sdpa_flash().supported(q.array, q.array, q.array) is True


def _host(a):
    return np.array(vt.Tensor._make(a, vt.device("wgpu")).tolist(), dtype=np.float64)


def _reference(q, k, v, g, scale, causal, z=None):
    """Output and ``(dq, dk, dv)`` in float64; ``z``: the scaled dropout factors."""
    s = q @ k.transpose(0, 1, 3, 2) * scale
    if causal:
        s = np.where(np.arange(k.shape[2])[None, :] > np.arange(q.shape[2])[:, None],
                     -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    pd = p if z is None else p * z
    out = pd @ v
    dpd = g @ v.transpose(0, 1, 3, 2)
    dp = dpd if z is None else dpd * z
    ds = p * (dp - (g * out).sum(-1, keepdims=True))
    return out, (ds @ k * scale, ds.transpose(0, 1, 3, 2) @ q * scale,
                 pd.transpose(0, 1, 3, 2) @ g)


@pytest.mark.parametrize("b,h,l,s,e,causal", [(2, 3, 5, 5, 8, False), (1, 2, 70, 70, 16, True),
                                              (2, 2, 33, 65, 64, False),
                                              (1, 1, 130, 130, 32, True),
                                              (1, 1, 9, 9, 128, False)])
def test_kernels_match_float64_math(b, h, l, s, e, causal, xp):
    from volta_wgpu.kernels import attention as A
    q, k, v, g = (RNG.standard_normal(sh) for sh in [(b, h, l, e), (b, h, s, e), (b, h, s, e),
                                                      (b, h, l, e)])
    scale = 1 / math.sqrt(e)
    out, grads = _reference(q, k, v, g, scale, causal)
    qa, ka, va, ga = (xp.asarray(a.astype(np.float32)) for a in (q, k, v, g))
    o, stats = A.forward(qa, ka, va, scale=scale, causal=causal)
    np.testing.assert_allclose(_host(o), out, atol=2e-5)
    for got, want in zip(A.backward(qa, ka, va, o, ga, stats, scale=scale, causal=causal),
                         grads):
        np.testing.assert_allclose(_host(got), want, atol=2e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_dropout_mask_is_the_same_in_the_backward(causal, xp):
    """With one-hot values the output exposes each kept weight (``p * z``): the backward,
    run on the forward's stats, computes the gradients of that very mask."""
    from volta_wgpu.kernels import attention as A
    b, h, n, e, drop = 2, 2, 40, 48, 0.3
    q, k, g = (RNG.standard_normal(sh) for sh in [(b, h, n, e), (b, h, n, e), (b, h, n, e)])
    v = np.zeros((b, h, n, e))
    v[..., np.arange(n), np.arange(n)] = 1.0
    scale = 0.2
    eye = np.broadcast_to(np.eye(n), (b, h, n, n))
    p, _ = _reference(q, k, eye, np.zeros((b, h, n, n)), scale, causal)  # the weights
    qa, ka, va, ga = (xp.asarray(a.astype(np.float32)) for a in (q, k, v, g))
    o, stats = A.forward(qa, ka, va, scale=scale, causal=causal, dropout_p=drop)
    z = np.where(p > 0, _host(o)[..., :n] / np.where(p > 0, p, 1), 0)
    kept = np.isclose(z, 1 / (1 - drop), rtol=1e-4)
    assert np.all(kept | np.isclose(z, 0, atol=1e-4))
    assert 0.6 < kept[p > 0].mean() < 0.8
    _, grads = _reference(q, k, v, g, scale, causal, np.where(kept, 1 / (1 - drop), 0.0))
    got = A.backward(qa, ka, va, o, ga, stats, scale=scale, causal=causal, dropout_p=drop)
    for a, want in zip(got, grads):
        np.testing.assert_allclose(_host(a), want, atol=2e-5)


def test_sdpa_and_packed_self_attention_use_it_with_gradients():
    """``scaled_dot_product_attention`` (causal) and MultiheadAttention's packed QKV view
    run the fused kernels; values and gradients equal the CPU backend's."""
    from volta_wgpu.engine import get_engine
    q, k, v = (RNG.standard_normal((2, 3, 20, 8)).astype(np.float32) for _ in range(3))
    res = {}
    for dev in ("cpu", "wgpu"):
        ts = [vt.tensor(a, device=dev, requires_grad=True) for a in (q, k, v)]
        y = vt.nn.functional.scaled_dot_product_attention(*ts, is_causal=True)
        (y * y).sum().backward()
        res[dev] = [y.tolist()] + [t.grad.tolist() for t in ts]
        vt.manual_seed(1)
        m = vt.nn.MultiheadAttention(16, 4, batch_first=True).to(dev)
        x = vt.tensor(q.reshape(2, 30, 16), device=dev, requires_grad=True)
        out, _ = m(x, x, x, need_weights=False)
        out.pow(2).sum().backward()
        res[dev] += [out.tolist(), x.grad.tolist(), m.in_proj_weight.grad.tolist()]
    for a, b in zip(res["cpu"], res["wgpu"]):
        np.testing.assert_allclose(np.array(b), np.array(a), rtol=1e-4, atol=1e-5)
    assert any(k[0] == "flash_fwd" for k in get_engine()._kernels if isinstance(k, tuple))


def test_double_backward_through_its_dropout_raises():
    q = vt.randn(1, 2, 8, 4, device="wgpu", requires_grad=True)
    y = vt.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    with pytest.raises(vt.errors.AutogradError, match="create_graph"):
        vt.autograd.grad(y.sum(), q, create_graph=True)


def test_encoder_training_step_with_dropout_replays_like_eager():
    """A pre-norm encoder layer with dropout (the attention's drawn in the kernel) under
    ``vt.compile(mode="reduce-overhead")``: replayed steps equal eager ones bit for bit."""
    def make():
        vt.manual_seed(2)
        net = vt.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.2, batch_first=True,
                                            norm_first=True).to("wgpu")
        return net, vt.optim.AdamW(net.parameters(), lr=1e-2)

    def train(net, opt, x):
        opt.zero_grad()
        loss = (net(x) ** 2).mean()
        loss.backward()
        opt.step()
        return loss.detach()

    x = vt.randn(3, 12, 16, device="wgpu")
    net_e, opt_e = make()
    vt.wgpu.set_lazy(False)
    try:
        eager = [train(net_e, opt_e, x).item() for _ in range(7)]
    finally:
        vt.wgpu.set_lazy(True)
    net, opt = make()
    n = []
    step = vt.compile(lambda: n.append(1) or train(net, opt, x), mode="reduce-overhead")
    assert [step().item() for _ in range(7)] == eager
    assert len(n) == 3


def test_float16_inputs(xp):
    """float16 q, k, v (autocast's): computed in float32, stored in float16."""
    from volta_wgpu.engine import get_engine
    from volta_wgpu.kernels import attention as A
    if "shader-f16" not in get_engine().features:
        pytest.skip("adapter lacks shader-f16")
    q, k, v, g = (RNG.standard_normal((2, 2, 24, 16)).astype(np.float16) for _ in range(4))
    out, grads = _reference(*(a.astype(np.float64) for a in (q, k, v, g)), 0.25, True)
    qa, ka, va, ga = (xp.asarray(a) for a in (q, k, v, g))
    o, stats = A.forward(qa, ka, va, scale=0.25, causal=True)
    assert o.dtype.name == "float16"
    np.testing.assert_allclose(_host(o), out, atol=5e-3)
    for got, want in zip(A.backward(qa, ka, va, o, ga, stats, scale=0.25, causal=True),
                         grads):
        assert got.dtype.name == "float16"
        np.testing.assert_allclose(_host(got), want, atol=2e-2)
