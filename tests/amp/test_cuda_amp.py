"""Mixed precision on a real CUDA GPU: autocast (float16 and bfloat16), GradScaler,
bfloat16 ops/optimizers/checkpoints, TF32 flags and the cuDNN paths (convolution and
flash attention), each checked against PyTorch CPU or Volta's cpu reference.

Skipped, with the reason, where the CUDA backend is unavailable; the cuDNN tests also
need ``nvidia-cudnn-frontend`` and bfloat16 tests CuPy >= 14 with ``ml_dtypes``.
"""

from __future__ import annotations

import numpy as np
import pytest

import volta_core as vt
import volta_core.nn.functional as F

_rows = {b.name: b for b in vt.backends()}
pytestmark = pytest.mark.skipif(
    not _rows["cupy"].available, reason=f"CUDA backend unavailable: {_rows['cupy'].reason}")

torch = pytest.importorskip("torch")


def _bf16_ok() -> bool:
    return _rows["cupy"].available and "bfloat16" in vt.device("cuda").backend.dtype_names(0)


needs_bf16 = pytest.mark.skipif("not _bf16_ok()",
                                reason="bfloat16 on CUDA needs CuPy >= 14 and ml_dtypes")
needs_cudnn = pytest.mark.skipif("not vt.backends.cudnn.is_available()",
                                 reason="cuDNN needs the nvidia-cudnn-frontend package")

rng = np.random.default_rng(5)
X = rng.standard_normal((8, 16)).astype(np.float32)
W = (rng.standard_normal((4, 16)) * 0.3).astype(np.float32)
Y = rng.integers(0, 4, 8)
IMG = rng.standard_normal((4, 3, 12, 12)).astype(np.float32)
CW = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)


def _cuda(a, dtype=None, grad=False):
    t = vt.tensor(a, device="cuda")
    if dtype is not None:
        t = t.to(dtype)
    return t.requires_grad_(True) if grad else t


@pytest.mark.parametrize("dtype", ["float16", pytest.param("bfloat16", marks=needs_bf16)])
def test_autocast_policy_on_cuda(dtype):
    x, w = _cuda(X), _cuda(W, grad=True)
    with vt.autocast("cuda", dtype=getattr(vt, dtype)):
        out = F.linear(x, w)
        assert out.dtype.name == dtype
        assert out.softmax(-1).dtype is vt.float32  # on CUDA's float32 list
        assert out.sum().dtype is vt.float32
        assert F.layer_norm(out, (4,)).dtype is vt.float32
        loss = F.cross_entropy(out, _cuda(Y))
        with pytest.raises(TypeError, match="unsafe to autocast"):
            F.binary_cross_entropy(out.sigmoid(), out.sigmoid().detach())
    loss.backward()
    assert w.grad.dtype is vt.float32
    wc = vt.tensor(W, requires_grad=True)
    ref = F.cross_entropy(F.linear(vt.tensor(X), wc), vt.tensor(Y))
    ref.backward()
    np.testing.assert_allclose(loss.cpu().item(), ref.item(), rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(w.grad.cpu().numpy(), wc.grad.numpy(), rtol=5e-2, atol=5e-3)


def test_grad_scaler_matches_torch_on_cuda_with_infs():
    results = []
    for m in (vt, torch):
        w = (vt.tensor(W, device="cuda") if m is vt else torch.tensor(W)).requires_grad_(True)
        opt = m.optim.Adam([w], lr=1e-2)
        scaler = (vt.amp.GradScaler("cuda", init_scale=2.0**12, growth_interval=2)
                  if m is vt else torch.amp.GradScaler("cpu", init_scale=2.0**12,
                                                       growth_interval=2))
        scales = []
        for i in range(8):
            opt.zero_grad()
            x = vt.tensor(X, device="cuda") if m is vt else torch.tensor(X)
            loss = (x @ w.T).pow(2).mean() * (float("inf") if i in (1, 4) else 1.0)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            (vt.nn.utils if m is vt else torch.nn.utils).clip_grad_norm_([w], 1.0)
            scaler.step(opt)
            scaler.update()
            scales.append(scaler.get_scale())
        results.append((scales, (w.detach().cpu() if m is vt else w.detach()).numpy()))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-4, atol=1e-5)


@needs_bf16
def test_bfloat16_training_and_checkpoint_on_cuda(tmp_path):
    net = vt.nn.Sequential(vt.nn.Linear(16, 32), vt.nn.GELU(), vt.nn.LayerNorm(32),
                           vt.nn.Linear(32, 4)).to("cuda").to(vt.bfloat16)
    opt = vt.optim.AdamW(net.parameters(), lr=1e-2)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = F.cross_entropy(net(_cuda(X, "bfloat16")).float(), _cuda(Y))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    assert all(p.dtype is vt.bfloat16 for p in net.parameters())
    assert all(v.dtype is vt.bfloat16 for s in opt.state.values() for v in s.values()
               if isinstance(v, vt.Tensor))
    path = tmp_path / "bf16.safetensors"
    vt.io.save_state_dict(net.state_dict(), path)
    back = vt.io.load_state_dict(path)
    for k, v in net.state_dict().items():
        assert back[k].numpy().view(np.uint16).tobytes() == \
            v.cpu().numpy().view(np.uint16).tobytes()


def test_tf32_flags_change_float32_matmul_precision():
    a = vt.tensor(rng.standard_normal((512, 512)).astype(np.float32), device="cuda")
    exact = (a.cpu().double() @ a.cpu().double()).numpy()
    try:
        vt.backends.cuda.matmul.allow_tf32 = False
        full = np.abs((a @ a).cpu().numpy() - exact).max()
        vt.backends.cuda.matmul.allow_tf32 = True
        tf32 = np.abs((a @ a).cpu().numpy() - exact).max()
    finally:
        vt.backends.cuda.matmul.allow_tf32 = False
    assert full < 1e-3 < tf32  # TF32 keeps a 10-bit mantissa


@needs_cudnn
@pytest.mark.parametrize("dtype", ["float32", "float16", pytest.param("bfloat16",
                                                                      marks=needs_bf16)])
def test_cudnn_conv_matches_cpu(dtype):
    tol = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 5e-2}[dtype]
    x, w = _cuda(IMG, dtype, grad=True), _cuda(CW, dtype, grad=True)
    b = _cuda(CW[:, 0, 0, 0], dtype, grad=True)
    y = F.conv2d(x, w, b, stride=2, padding=1)
    assert y.dtype.name == dtype
    (y.float() ** 2).sum().backward()
    xc, wc, bc = (vt.tensor(a, requires_grad=True) for a in (IMG, CW, CW[:, 0, 0, 0]))
    yc = F.conv2d(xc, wc, bc, stride=2, padding=1)
    (yc ** 2).sum().backward()
    scale = np.abs(yc.detach().numpy()).max()
    np.testing.assert_allclose(y.float().detach().cpu().numpy(), yc.detach().numpy(),
                               atol=tol * scale)
    for g, gc in ((x.grad, xc.grad), (w.grad, wc.grad), (b.grad, bc.grad)):
        np.testing.assert_allclose(g.float().cpu().numpy(), gc.numpy(),
                                   atol=tol * 4 * np.abs(gc.numpy()).max())


@needs_cudnn
def test_cudnn_conv_respects_allow_tf32():
    x = _cuda(rng.standard_normal((8, 64, 16, 16)).astype(np.float32))
    w = _cuda(rng.standard_normal((64, 64, 3, 3)).astype(np.float32))
    ref = F.conv2d(x.cpu().double(), w.cpu().double(), padding=1).numpy()
    try:
        vt.backends.cudnn.allow_tf32 = False
        exact = np.abs(F.conv2d(x, w, padding=1).cpu().numpy() - ref).max()
    finally:
        vt.backends.cudnn.allow_tf32 = True
    assert exact < 1e-3


@needs_cudnn
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype", ["float16", pytest.param("bfloat16", marks=needs_bf16)])
def test_cudnn_flash_attention_matches_plain(dtype, causal):
    q, k, v = (rng.standard_normal((2, 4, 64, 32)).astype(np.float32) for _ in range(3))
    fast = [_cuda(a, dtype, grad=True) for a in (q, k, v)]
    out = F.scaled_dot_product_attention(*fast, is_causal=causal)
    assert out.grad_fn is not None and type(out.grad_fn).__name__ == "_FlashAttention"
    (out.float() ** 2).sum().backward()
    ref = [vt.tensor(a, requires_grad=True) for a in (q, k, v)]
    out_ref = F.scaled_dot_product_attention(*ref, is_causal=causal)
    (out_ref ** 2).sum().backward()
    tol = 2e-2 if dtype == "float16" else 6e-2
    np.testing.assert_allclose(out.float().detach().cpu().numpy(),
                               out_ref.detach().numpy(), atol=tol)
    for a, b in zip(fast, ref):
        np.testing.assert_allclose(a.grad.float().cpu().numpy(), b.grad.numpy(),
                                   atol=tol * 4 * max(1.0, np.abs(b.grad.numpy()).max()))


@needs_bf16
def test_autocast_memory_is_flat_over_many_steps():
    net = vt.nn.Sequential(vt.nn.Linear(16, 64), vt.nn.ReLU(), vt.nn.Linear(64, 4)).to("cuda")
    opt = vt.optim.SGD(net.parameters(), lr=1e-3)
    x, y = _cuda(X), _cuda(Y)
    marks = []
    for step in range(400):
        opt.zero_grad()
        with vt.autocast("cuda", dtype=vt.bfloat16):
            loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        if step in (50, 399):
            vt.cuda.synchronize()
            marks.append(vt.cuda.memory_allocated())
    assert marks[1] <= marks[0] * 1.05 + 4096
