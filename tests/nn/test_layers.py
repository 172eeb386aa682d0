"""Linear, normalisation, dropout, embedding, shape and activation layers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from vt_helpers import assert_close, check_grad, rand, to_np

import volta_core as vt
import volta_core.nn.functional as F
from volta_core import nn


def test_linear_forward_init_and_gradcheck():
    vt.manual_seed(0)
    m = nn.Linear(5, 3)
    assert m.weight.shape == (3, 5) and m.bias.shape == (3,)
    assert np.abs(to_np(m.weight)).max() <= 1 / math.sqrt(5)
    x = rand(4, 2, 5).astype(np.float32)
    want = x @ to_np(m.weight).T + to_np(m.bias)
    assert_close(m(vt.tensor(x)), want, rtol=1e-5, atol=1e-6)
    check_grad(F.linear, rand(3, 5), rand(2, 5, seed=1), rand(2, seed=2))
    check_grad(lambda x, w: F.linear(x, w), rand(5), rand(2, 5, seed=1))
    assert nn.Linear(2, 2, bias=False).bias is None
    assert repr(m) == "Linear(in_features=5, out_features=3, bias=True)"


def test_linear_errors():
    m = nn.Linear(4, 2)
    with pytest.raises(vt.ShapeError, match="in_features=4"):
        m(vt.randn(3, 5))
    with pytest.raises(vt.DTypeError, match="linear"):
        m(vt.randn(3, 4, dtype="float64"))


def test_bilinear_and_identity():
    m = nn.Bilinear(3, 4, 2, dtype=vt.float64)
    x1, x2 = rand(5, 3), rand(5, 4, seed=1)
    w, b = to_np(m.weight), to_np(m.bias)
    want = np.stack([np.sum((x1 @ w[k]) * x2, axis=1) for k in range(2)], axis=1) + b
    assert_close(m(vt.tensor(x1), vt.tensor(x2)), want, rtol=1e-10)
    check_grad(F.bilinear, rand(2, 3), rand(2, 4, seed=1), rand(2, 3, 4, seed=2), rand(2))
    with pytest.raises(vt.ShapeError, match="bilinear"):
        m(vt.tensor(x1), vt.tensor(rand(4, 4)))
    x = vt.randn(2)
    assert nn.Identity(3, foo=1)(x) is x


def ref_bn(x, w, b, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w.reshape(shape) + b.reshape(shape)


@pytest.mark.parametrize("cls,shape", [(nn.BatchNorm1d, (6, 3)), (nn.BatchNorm1d, (4, 3, 5)),
                                       (nn.BatchNorm2d, (3, 3, 4, 2))])
def test_batchnorm_train_eval_and_running_stats(cls, shape):
    m = cls(3, momentum=0.3, dtype=vt.float64)
    x = rand(*shape)
    m.weight.data = vt.tensor(rand(3, seed=5))
    assert_close(m(vt.tensor(x)), ref_bn(x, to_np(m.weight), np.zeros(3)), rtol=1e-8, atol=1e-8)
    axes = (0,) + tuple(range(2, x.ndim))
    n = x.size // 3
    assert_close(m.running_mean, 0.3 * x.mean(axis=axes), rtol=1e-10)
    assert_close(m.running_var, 0.7 + 0.3 * x.var(axis=axes) * n / (n - 1), rtol=1e-10)
    assert int(m.num_batches_tracked.item()) == 1
    m.eval()
    rm, rv = to_np(m.running_mean), to_np(m.running_var)
    shp = (1, -1) + (1,) * (x.ndim - 2)
    want = (x - rm.reshape(shp)) / np.sqrt(rv.reshape(shp) + 1e-5) * to_np(m.weight).reshape(shp)
    assert_close(m(vt.tensor(x)), want, rtol=1e-8, atol=1e-8)
    assert int(m.num_batches_tracked.item()) == 1


def test_batchnorm_gradcheck_and_cumulative_momentum():
    check_grad(lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
               rand(4, 3, 2), rand(3, seed=1), rand(3, seed=2))
    m = nn.BatchNorm1d(2, momentum=None, dtype=vt.float64)
    xs = [rand(5, 2, seed=i) for i in range(3)]
    for x in xs:
        m(vt.tensor(x))
    assert_close(m.running_mean, np.mean([x.mean(0) for x in xs], axis=0), rtol=1e-10)


def test_batchnorm_errors_and_state_dict():
    m = nn.BatchNorm2d(3)
    with pytest.raises(vt.ShapeError, match="BatchNorm2d: expected 3 channels"):
        m(vt.randn(2, 4, 5, 5))
    with pytest.raises(vt.ShapeError, match="BatchNorm2d: expected a 4-D"):
        m(vt.randn(2, 3, 5))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(vt.randn(1, 3))
    sd = m.state_dict()
    del sd["num_batches_tracked"]  # old checkpoints lack the counter
    nn.BatchNorm2d(3).load_state_dict(sd)
    assert nn.BatchNorm1d(3, affine=False, track_running_stats=False)(vt.randn(4, 3)).shape \
        == (4, 3)


def test_layer_norm():
    m = nn.LayerNorm((3, 4), dtype=vt.float64)
    m.weight.data, m.bias.data = vt.tensor(rand(3, 4, seed=1)), vt.tensor(rand(3, 4, seed=2))
    x = rand(2, 3, 4)
    mean = x.mean(axis=(1, 2), keepdims=True)
    var = x.var(axis=(1, 2), keepdims=True)
    want = (x - mean) / np.sqrt(var + 1e-5) * to_np(m.weight) + to_np(m.bias)
    assert_close(m(vt.tensor(x)), want, rtol=1e-8, atol=1e-8)
    check_grad(lambda x, w, b: F.layer_norm(x, (4,), w, b), rand(3, 4), rand(4, seed=1),
               rand(4, seed=2))
    check_grad(lambda x: F.layer_norm(x, (2, 3)), rand(2, 2, 3))
    with pytest.raises(vt.ShapeError, match="LayerNorm"):
        m(vt.randn(2, 4, 3, dtype="float64"))


def test_layer_norm_double_backward():
    def fn(x, w):
        with vt.enable_grad():
            if not x.requires_grad:
                x = x.detach().requires_grad_()
            y = F.layer_norm(x, (3,), w)
            (gx,) = vt.autograd.grad((y * y * y).sum(), x, create_graph=True)
        return gx

    check_grad(fn, rand(2, 3), rand(3, seed=1))


def test_group_norm():
    m = nn.GroupNorm(2, 4, dtype=vt.float64)
    m.weight.data = vt.tensor(rand(4, seed=3))
    x = rand(3, 4, 2, 2)
    g = x.reshape(3, 2, -1)
    want = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5))
    want = want.reshape(x.shape) * to_np(m.weight).reshape(1, 4, 1, 1)
    assert_close(m(vt.tensor(x)), want, rtol=1e-8, atol=1e-8)
    check_grad(lambda x, w, b: F.group_norm(x, 2, w, b), rand(2, 4, 3), rand(4, seed=1),
               rand(4, seed=2))
    with pytest.raises(vt.ShapeError, match="GroupNorm"):
        m(vt.randn(3, 6, 2, dtype="float64"))
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)


def test_rms_norm():
    m = nn.RMSNorm(4, eps=1e-6, dtype=vt.float64)
    m.weight.data = vt.tensor(rand(4, seed=1))
    x = rand(3, 4)
    want = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * to_np(m.weight)
    assert_close(m(vt.tensor(x)), want, rtol=1e-10)
    check_grad(lambda x, w: F.rms_norm(x, (4,), w), rand(2, 4), rand(4, seed=1))
    with pytest.raises(vt.ShapeError, match="rms_norm"):
        m(vt.randn(3, 5, dtype="float64"))


def test_dropout():
    vt.manual_seed(1)
    m = nn.Dropout(0.25)
    x = vt.ones(400, 50)
    y = to_np(m(x))
    kept = y != 0
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.7 < kept.mean() < 0.8
    m.eval()
    assert m(x) is x
    vt.manual_seed(3)
    a = to_np(F.dropout(x, 0.5))
    vt.manual_seed(3)
    np.testing.assert_array_equal(a, to_np(F.dropout(x, 0.5)))
    xg = vt.ones(3, 4, requires_grad=True)
    out = F.dropout(xg, 0.5)
    out.sum().backward()
    np.testing.assert_array_equal(to_np(xg.grad), to_np(out))
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)


def test_dropout_keeps_one_byte_per_element_for_backward():
    """Backward needs only which elements were kept (PyTorch keeps a bool mask too); the
    gradient is the same as multiplying by the float mask."""
    import tracemalloc

    x = vt.randn(256, 256, requires_grad=True)
    w = vt.randn(256, 256)
    vt.manual_seed(4)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        y = F.dropout(x, 0.3)
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    # the output (4 bytes an element) and the booleans (1), not a float32 mask (4 more)
    assert held < 256 * 256 * 6, held
    (y * w).sum().backward()
    scaled = np.where(to_np(y) != 0, np.float32(1 / 0.7), np.float32(0))
    np.testing.assert_array_equal(to_np(x.grad), to_np(w) * scaled)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_dropout_scales_in_float32_as_pytorch(dtype):
    """PyTorch multiplies a float16/bfloat16 input by ``1 / (1 - p)`` in float32 and rounds
    once (not by the scale rounded to the input's dtype); the gradient the same way."""
    torch = pytest.importorskip("torch")
    x = vt.randn(4000).to(getattr(vt, dtype)).requires_grad_()
    y = F.dropout(x, 0.1)
    kept = to_np(y.float()) != 0
    want = (torch.from_numpy(to_np(x.float())).to(getattr(torch, dtype)).float()
            * (1 / 0.9)).to(getattr(torch, dtype)).float().numpy()
    np.testing.assert_array_equal(to_np(y.float())[kept], want[kept])
    assert 0.85 < kept.mean() < 0.95
    y.backward(vt.ones_like(y))
    grad = to_np(x.grad.float())
    assert set(np.unique(grad)) == {0.0, float(torch.tensor(1 / 0.9).to(getattr(torch, dtype)))}
    np.testing.assert_array_equal(grad != 0, kept)


def test_dropout2d_zeroes_whole_channels():
    vt.manual_seed(2)
    y = to_np(nn.Dropout2d(0.5)(vt.ones(8, 16, 3, 3)))
    per_channel = y.reshape(8, 16, 9)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))
    assert 0 < (per_channel == 0).all(-1).mean() < 1
    with pytest.raises(vt.ShapeError, match="dropout2d"):
        F.dropout2d(vt.ones(3, 3), 0.5)


def test_embedding():
    m = nn.Embedding(6, 3, padding_idx=1, dtype=vt.float64)
    assert np.all(to_np(m.weight)[1] == 0)
    idx = np.array([[0, 1, 5], [5, 5, 2]])
    assert_close(m(vt.tensor(idx)), to_np(m.weight)[idx])
    out = m(vt.tensor(idx))
    (out * vt.tensor(rand(2, 3, 3))).sum().backward()
    want = np.zeros((6, 3))
    np.add.at(want, idx.reshape(-1), rand(2, 3, 3).reshape(-1, 3))
    want[1] = 0
    assert_close(m.weight.grad, want, rtol=1e-10)
    check_grad(lambda w: F.embedding(vt.tensor([[1, 2], [2, 0]]), w), rand(4, 2))
    with pytest.raises(vt.IndexOutOfRangeError, match="out of range"):
        m(vt.tensor([0, 6]))
    with pytest.raises(vt.DTypeError, match="integer"):
        m(vt.tensor([0.0]))
    pre = nn.Embedding.from_pretrained(vt.tensor(rand(3, 2)))
    assert not pre.weight.requires_grad


def test_embedding_generic_fallback():
    import array_api_compat.numpy as xp

    from volta_core.ops import nn as generic
    g, idx = rand(5, 3), np.array([0, 2, 2, 3, 0])
    want = np.zeros((4, 3))
    np.add.at(want, idx, g)
    want[3] = 0
    np.testing.assert_allclose(generic.embedding_backward(xp, g, idx, num_weights=4,
                                                          padding_idx=3), want)


def test_one_hot():
    out = F.one_hot(vt.tensor([0, 2, 1]), 4)
    assert out.dtype.name == "int64"
    np.testing.assert_array_equal(out.numpy(), np.eye(4, dtype=np.int64)[[0, 2, 1]])
    assert F.one_hot(vt.tensor([1, 3])).shape == (2, 4)


def test_flatten_unflatten():
    x = vt.randn(2, 3, 4, 5)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    assert nn.Unflatten(1, (3, 20))(nn.Flatten()(x)).shape == (2, 3, 20)
    assert nn.Unflatten(-1, (-1, 4))(vt.randn(2, 8)).shape == (2, 2, 4)
    with pytest.raises(vt.ShapeError, match="Unflatten"):
        nn.Unflatten(1, (7, 2))(vt.randn(2, 8))


ACTS = [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.Tanh(), np.tanh),
    (nn.GELU(), lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    (nn.GELU("tanh"), lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi)
                                                       * (x + 0.044715 * x ** 3)))),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.LeakyReLU(0.2), lambda x: np.where(x >= 0, x, 0.2 * x)),
    (nn.ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    (nn.Softplus(2.0), lambda x: np.log1p(np.exp(2 * x)) / 2),
    (nn.Hardtanh(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5)),
    (nn.Softmax(1), lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True)),
    (nn.LogSoftmax(-1), lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))),
]


@pytest.mark.parametrize("mod,ref", ACTS, ids=[type(m).__name__ for m, _ in ACTS])
def test_activation_modules(mod, ref):
    x = rand(3, 4, low=-2, high=2)
    assert_close(mod(vt.tensor(x)), ref(x), rtol=1e-7, atol=1e-7)
    check_grad(mod, rand(2, 3, low=-2, high=2) + 0.01)


def test_softmax_legacy_dim_and_reprs():
    x = rand(2, 3)
    assert_close(nn.Softmax()(vt.tensor(x)), np.exp(x) / np.exp(x).sum(1, keepdims=True))
    assert repr(nn.LeakyReLU(0.1)) == "LeakyReLU(negative_slope=0.1)"
    assert repr(nn.GELU()) == "GELU(approximate='none')"
    with pytest.raises(ValueError, match="approximate"):
        nn.GELU("fast")
