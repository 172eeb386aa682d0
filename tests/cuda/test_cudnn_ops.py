"""cuDNN through ``volta_cupy.cudnn_ops``: ``cudnn.benchmark`` autotuning, and fused
attention with strided operands and with dropout drawn inside the kernel. Skipped, with
the reason, without CUDA or cuDNN."""

from __future__ import annotations

import numpy as np
import pytest

import volta_core as vt
import volta_core.nn.functional as F


@pytest.fixture(scope="module")
def ops():
    vt.device("cuda")
    from volta_cupy import cudnn_ops

    if not cudnn_ops.usable():
        pytest.skip("cuDNN needs the nvidia-cudnn-frontend package")
    return cudnn_ops


def _packed(cp, b=2, h=4, lq=64, e=64, seed=0):
    """q, k, v as head views of one packed projection (B, L, 3, H, E): not contiguous."""
    rng = np.random.default_rng(seed)
    qkv = cp.asarray(rng.standard_normal((b, lq, 3, h, e)).astype(np.float32)).astype(
        cp.float16)
    return tuple(qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))


def test_strided_operands_need_no_copy_and_match_contiguous(ops):
    import cupy as cp

    q, k, v = _packed(cp)
    assert not q.flags.c_contiguous
    o, stats = ops.sdpa_forward(q, k, v, scale=0.125, causal=False)
    oc, statsc = ops.sdpa_forward(*(cp.ascontiguousarray(a) for a in (q, k, v)),
                                  scale=0.125, causal=False)
    np.testing.assert_allclose(cp.asnumpy(o).astype(np.float32),
                               cp.asnumpy(oc).astype(np.float32), atol=2e-3)
    g = cp.ones_like(o)
    d = ops.sdpa_backward(q, k, v, o, g, stats, scale=0.125, causal=False)
    dc = ops.sdpa_backward(*(cp.ascontiguousarray(a) for a in (q, k, v)), oc, g, statsc,
                           scale=0.125, causal=False)
    for a, c in zip(d, dc):
        np.testing.assert_allclose(cp.asnumpy(a).astype(np.float32),
                                   cp.asnumpy(c).astype(np.float32), atol=2e-3)


def test_dropout_backward_uses_the_forwards_mask(ops):
    """``out = P_d @ v`` is linear in ``v``, so ``<out, g> == <dv, v>`` exactly when the
    backward rebuilt the forward's dropped probabilities ``P_d``."""
    import cupy as cp

    q, k, v = _packed(cp, seed=1)
    g = cp.asarray(np.random.default_rng(2).standard_normal((2, 4, 64, 64))).astype(
        cp.float16)
    o, stats = ops.sdpa_forward(q, k, v, scale=0.125, causal=False, dropout_p=0.3)
    _, _, dv = ops.sdpa_backward(q, k, v, o, g, stats, scale=0.125, causal=False,
                                 dropout_p=0.3)
    lhs = float((o.astype(cp.float32) * g.astype(cp.float32)).sum())
    rhs = float((dv.astype(cp.float32) * v.astype(cp.float32)).sum())
    assert abs(lhs - rhs) <= 2e-2 * max(1.0, abs(lhs)), (lhs, rhs)
    o2, _ = ops.sdpa_forward(q, k, v, scale=0.125, causal=False, dropout_p=0.3)
    assert not bool((o2 == o).all())  # a new mask per call


def test_dropout_keeps_the_expectation(ops):
    import cupy as cp

    q, k, v = _packed(cp, seed=3, lq=32)
    ref, _ = ops.sdpa_forward(q, k, v, scale=0.125, causal=False)
    mean = sum(ops.sdpa_forward(q, k, v, scale=0.125, causal=False, dropout_p=0.5)[0]
               .astype(cp.float32) for _ in range(400)) / 400
    err = float(abs(mean - ref.astype(cp.float32)).mean())
    assert err < 0.05, err  # E[mask / (1 - p)] = 1


def test_sdpa_with_dropout_takes_the_fused_kernel_and_trains(ops):
    vt.manual_seed(0)
    q, k, v = (vt.randn(2, 4, 32, 64, device="cuda", dtype=vt.float16, requires_grad=True)
               for _ in range(3))
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.2)
    assert "Flash" in type(out.grad_fn).__name__
    out.float().sum().backward()
    assert all(t.grad is not None and bool(vt.isfinite(t.grad).all()) for t in (q, k, v))


def test_benchmark_times_the_plans_and_keeps_the_answer(ops):
    import cupy as cp

    rng = np.random.default_rng(5)
    x = cp.asarray(rng.standard_normal((8, 16, 20, 20)).astype(np.float32))
    w = cp.asarray(rng.standard_normal((24, 16, 3, 3)).astype(np.float32))
    kw = dict(stride=(1, 1), pads=(1, 1, 1, 1), dilation=(1, 1), groups=1)
    tf32 = vt.backends.cudnn.allow_tf32
    vt.backends.cudnn.allow_tf32 = False  # plans then differ only in summation order
    try:
        want = ops.conv_fprop(x, w, out_hw=(20, 20), **kw)
        gx = ops.conv_dgrad(want, w, x_shape=x.shape, **kw)
        tuned = len(ops._tuned)
        vt.backends.cudnn.benchmark = True
        got = ops.conv_fprop(x, w, out_hw=(20, 20), **kw)
        got_gx = ops.conv_dgrad(want, w, x_shape=x.shape, **kw)
    finally:
        vt.backends.cudnn.benchmark = False
        vt.backends.cudnn.allow_tf32 = tf32
    assert len(ops._tuned) == tuned + 2  # both new graphs were timed
    np.testing.assert_allclose(cp.asnumpy(got), cp.asnumpy(want), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(cp.asnumpy(got_gx), cp.asnumpy(gx), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_conv_bias_in_the_graph_matches_a_separate_add(ops, dtype):
    """The bias inside cuDNN's graph (or, where no engine fuses it, a second kernel) gives
    the convolution plus the bias added afterwards, within one rounding."""
    import cupy as cp
    from volta_cupy._util import BFLOAT16

    if dtype == "bfloat16" and BFLOAT16 is None:
        pytest.skip("bfloat16 on CUDA needs CuPy >= 14 and ml_dtypes")
    dt = BFLOAT16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(6)
    x, w, b = (cp.asarray(rng.standard_normal(s).astype(np.float32)).astype(dt)
               for s in ((4, 8, 12, 12), (16, 8, 3, 3), (16,)))
    kw = dict(stride=(1, 1), pads=(1, 1, 1, 1), dilation=(1, 1), groups=1, out_hw=(12, 12))
    tf32 = vt.backends.cudnn.allow_tf32
    vt.backends.cudnn.allow_tf32 = False
    try:
        plain = ops.conv_fprop(x, w, **kw)
        fused = ops.conv_fprop(x, w, b, **kw)
    finally:
        vt.backends.cudnn.allow_tf32 = tf32
    want = plain.astype(cp.float32) + b.astype(cp.float32).reshape(1, -1, 1, 1)
    assert fused.dtype == dt and fused.shape == want.shape
    tol = {"float32": 1e-5, "float16": 2e-2, "bfloat16": 1e-1}[dtype]
    np.testing.assert_allclose(cp.asnumpy(fused.astype(cp.float32)), cp.asnumpy(want),
                               rtol=tol, atol=tol)
