"""Extra activations, pooling, padding, normalisation, dropout and EmbeddingBag layers.

Each is compared with a NumPy reference written here, and gradchecked in float64.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from vt_helpers import assert_close, check_grad, rand, to_np

import volta_core as vt
import volta_core.nn.functional as F
from volta_core import nn

SELU_A, SELU_S = 1.6732632423543772, 1.0507009873554805


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(0, x)


ACTIVATIONS = {
    # name: (functional, module, numpy reference)
    "relu6": (F.relu6, nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    "hardsigmoid": (F.hardsigmoid, nn.Hardsigmoid(), lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    "hardswish": (F.hardswish, nn.Hardswish(), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "mish": (F.mish, nn.Mish(), lambda x: x * np.tanh(_softplus(x))),
    "selu": (F.selu, nn.SELU(),
             lambda x: SELU_S * np.where(x > 0, x, SELU_A * (np.exp(x) - 1))),
    "celu": (lambda x: F.celu(x, 0.7), nn.CELU(0.7),
             lambda x: np.maximum(x, 0) + np.minimum(0, 0.7 * (np.exp(x / 0.7) - 1))),
    "softsign": (F.softsign, nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    "logsigmoid": (F.logsigmoid, nn.LogSigmoid(), lambda x: np.log(_sig(x))),
    "tanhshrink": (F.tanhshrink, nn.Tanhshrink(), lambda x: x - np.tanh(x)),
    "softshrink": (lambda x: F.softshrink(x, 0.8), nn.Softshrink(0.8),
                   lambda x: np.where(x > 0.8, x - 0.8, np.where(x < -0.8, x + 0.8, 0))),
    "hardshrink": (F.hardshrink, nn.Hardshrink(), lambda x: np.where(np.abs(x) > 0.5, x, 0)),
    "glu": (lambda x: F.glu(x, 1), nn.GLU(1), lambda x: x[:, :2] * _sig(x[:, 2:])),
    "softmin": (lambda x: F.softmin(x, 1), nn.Softmin(1),
                lambda x: np.exp(-x) / np.exp(-x).sum(1, keepdims=True)),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_forward_and_gradcheck(name):
    fn, mod, ref = ACTIVATIONS[name]
    x = rand(3, 4, low=-4, high=4)
    assert_close(fn(vt.tensor(x)), ref(x), rtol=1e-10, atol=1e-12)
    assert_close(mod(vt.tensor(x)), ref(x), rtol=1e-10, atol=1e-12)
    assert_close(mod(vt.tensor(x, dtype="float32")), ref(x), rtol=1e-5, atol=1e-6)
    check_grad(fn, x)


def test_logsigmoid_is_stable_and_activation_errors():
    x = np.array([-200.0, 0.0, 200.0])
    assert_close(F.logsigmoid(vt.tensor(x)), [-200.0, -math.log(2), 0.0])
    with pytest.raises(vt.ShapeError, match="glu"):
        F.glu(vt.zeros(3, 5))
    with pytest.raises(ValueError, match="celu"):
        F.celu(vt.zeros(2), alpha=0.0)
    with pytest.raises(ValueError, match="lambd"):
        nn.Softshrink(-1.0)
    with pytest.raises(vt.DTypeError, match="mish"):
        F.mish(vt.tensor([1, 2]))
    assert repr(nn.ReLU6()) == "ReLU6()" and repr(nn.GLU()) == "GLU(dim=-1)"


@pytest.mark.parametrize("shape,num", [((2, 3, 4), 3), ((2, 3), 1), ((3,), 3), ((2, 3, 2, 2), 1)])
def test_prelu(shape, num):
    m = nn.PReLU(num, init=0.1, dtype=vt.float64)
    assert_close(m.weight, np.full(num, 0.1))
    x = rand(*shape)
    w = np.array([0.2, -0.3, 0.5])[:num]
    with vt.no_grad():
        m.weight.copy_(vt.tensor(w))
    wshape = (num,) + (1,) * (len(shape) - 2) if num > 1 and len(shape) > 1 else (num,)
    want = np.where(x > 0, x, w.reshape(wshape) * x)
    assert_close(m(vt.tensor(x)), want)
    check_grad(F.prelu, x, w)
    with pytest.raises(vt.ShapeError, match="prelu"):
        nn.PReLU(4)(vt.zeros(2, 3))


def test_avg_pool1d_and_module():
    x = rand(2, 3, 9)
    want = x[..., :8].reshape(2, 3, 4, 2).mean(-1)
    assert_close(F.avg_pool1d(vt.tensor(x), 2), want)
    assert_close(nn.AvgPool1d(2)(vt.tensor(x)), want)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1)))
    want = np.stack([padded[..., i:i + 3].mean(-1) for i in range(0, 9, 2)], -1)
    assert_close(F.avg_pool1d(vt.tensor(x), 3, stride=2, padding=1), want)
    check_grad(lambda t: F.avg_pool1d(t, 3, 2, 1), x)
    assert F.avg_pool1d(vt.tensor(x[0]), 3).shape == (3, 3)
    assert repr(nn.AvgPool1d(3)) == "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"


def _adaptive_max_ref(x, oh, ow):
    h, w = x.shape[-2:]
    out = np.empty(x.shape[:-2] + (oh, ow))
    for i in range(oh):
        r0, r1 = (i * h) // oh, -(-((i + 1) * h) // oh)
        for j in range(ow):
            c0, c1 = (j * w) // ow, -(-((j + 1) * w) // ow)
            out[..., i, j] = x[..., r0:r1, c0:c1].max(axis=(-2, -1))
    return out


@pytest.mark.parametrize("hw,out", [((6, 6), 2), ((7, 5), (3, 2)), ((5, 4), (None, 3))])
def test_adaptive_max_pool2d(hw, out):
    x = rand(2, 3, *hw)
    oh, ow = (out, out) if isinstance(out, int) else (out[0] or hw[0], out[1])
    want = _adaptive_max_ref(x, oh, ow)
    y, idx = F.adaptive_max_pool2d(vt.tensor(x), out, return_indices=True)
    assert_close(y, want)
    flat = x.reshape(2, 3, -1)
    picked = np.take_along_axis(flat, to_np(idx).reshape(2, 3, -1), 2).reshape(want.shape)
    np.testing.assert_array_equal(picked, want)
    assert_close(nn.AdaptiveMaxPool2d(out)(vt.tensor(x)), want)
    check_grad(lambda t: F.adaptive_max_pool2d(t, out), x)
    assert F.adaptive_max_pool2d(vt.tensor(x[0]), out).shape == want.shape[1:]


def test_zero_pad2d():
    x = rand(2, 3, 4, 4)
    m = nn.ZeroPad2d((1, 2, 0, 1))
    assert_close(m(vt.tensor(x)), np.pad(x, ((0, 0), (0, 0), (0, 1), (1, 2))))
    assert_close(nn.ZeroPad2d(1)(vt.tensor(x[0])), np.pad(x[0], ((0, 0), (1, 1), (1, 1))))
    assert_close(nn.ZeroPad2d((-1, 0, 0, 0))(vt.tensor(x)), x[..., 1:])
    check_grad(lambda t: m(t), x)
    assert repr(m) == "ZeroPad2d((1, 2, 0, 1))"


def _instance_ref(x, eps=1e-5):
    axes = tuple(range(2, x.ndim))
    return (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)


def test_instance_norm2d():
    x = rand(2, 3, 4, 5)
    m = nn.InstanceNorm2d(3)
    assert m.weight is None and m.running_mean is None
    assert_close(m(vt.tensor(x)), _instance_ref(x), rtol=1e-5, atol=1e-6)
    assert_close(m.eval()(vt.tensor(x)), _instance_ref(x), rtol=1e-5, atol=1e-6)
    assert_close(m(vt.tensor(x[0])), _instance_ref(x[:1])[0], rtol=1e-5, atol=1e-6)
    w, b = rand(3, seed=1), rand(3, seed=2)
    check_grad(lambda t, w, b: F.instance_norm(t, weight=w, bias=b), x, w, b)
    t = nn.InstanceNorm2d(3, affine=True, track_running_stats=True, dtype=vt.float64)
    t(vt.tensor(x))
    assert_close(t.running_mean, 0.1 * x.mean((0, 2, 3)))
    assert_close(t.running_var, 0.9 + 0.1 * x.var((2, 3), ddof=1).mean(0))
    rm, rv = to_np(t.running_mean), to_np(t.running_var)
    want = (x - rm[:, None, None]) / np.sqrt(rv[:, None, None] + 1e-5)
    assert_close(t.eval()(vt.tensor(x)), want)
    with pytest.raises(vt.ShapeError, match="channels"):
        m(vt.zeros(2, 4, 3, 3))


def _lrn_ref(x, size, alpha=1e-4, beta=0.75, k=1.0):
    c = x.shape[1]
    sq = np.pad(x * x, [(0, 0), (size // 2, (size - 1) // 2)] + [(0, 0)] * (x.ndim - 2))
    total = sum(sq[:, i:i + c] for i in range(size))
    return x / (k + alpha / size * total) ** beta


@pytest.mark.parametrize("size,shape", [(3, (2, 5, 3, 3)), (2, (2, 4, 6)), (4, (1, 6, 2, 2))])
def test_local_response_norm(size, shape):
    x = rand(*shape, low=-3, high=3)
    m = nn.LocalResponseNorm(size, alpha=0.5, beta=0.6, k=2.0)
    assert_close(m(vt.tensor(x)), _lrn_ref(x, size, 0.5, 0.6, 2.0))
    check_grad(lambda t: F.local_response_norm(t, size, 0.5, 0.6, 2.0), x)
    assert repr(m) == f"LocalResponseNorm({size}, alpha=0.5, beta=0.6, k=2.0)"


def test_dropout1d():
    vt.manual_seed(0)
    x = vt.ones(20, 8, 5)
    m = nn.Dropout1d(0.5)
    y = to_np(m(x))
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert (y == y[..., :1]).all()  # whole channels
    assert 0.3 < (y[..., 0] == 0).mean() < 0.7
    assert m.eval()(x) is x
    with pytest.raises(vt.ShapeError, match="dropout1d"):
        F.dropout1d(vt.ones(2, 3, 4, 5))


def test_alpha_dropout_keeps_mean_and_variance():
    vt.manual_seed(0)
    x = F.selu(vt.randn(200_000, dtype=vt.float64))
    m = nn.AlphaDropout(0.2)
    y = to_np(m(x))
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1.0) < 0.02
    a = (0.8 * (1 + 0.2 * 1.7580993408473766 ** 2)) ** -0.5
    dropped = a * (-1.7580993408473766) + a * 1.7580993408473766 * 0.2
    assert 0.18 < np.isclose(y, dropped).mean() < 0.22
    assert m.eval()(x) is x and F.alpha_dropout(x, 0.5) is x  # training=False by default
    xt = vt.tensor(rand(3, 4), requires_grad=True)
    out = F.alpha_dropout(xt, 0.3, training=True)
    out.sum().backward()
    kept = np.abs(to_np(xt.grad)) > 0
    assert_close(xt.grad, kept * (0.7 * (1 + 0.3 * 1.7580993408473766 ** 2)) ** -0.5)


def _bags_ref(w, bags, mode, weights=None):
    out = []
    for i, bag in enumerate(bags):
        rows = w[bag] * (1.0 if weights is None else weights[i][:, None])
        if not len(bag):
            out.append(np.zeros(w.shape[1]))
        else:
            out.append({"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode])
    return np.stack(out)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d_and_offsets(mode):
    w = rand(10, 3)
    idx = np.array([[1, 4, 4, 7], [0, 9, 2, 3]])
    m = nn.EmbeddingBag(10, 3, mode=mode, _weight=vt.tensor(w))
    assert_close(m(vt.tensor(idx)), _bags_ref(w, list(idx), mode))
    flat, offsets = np.array([1, 4, 4, 7, 0, 9, 2]), np.array([0, 3, 3])
    bags = [flat[0:3], flat[3:3], flat[3:]]
    assert_close(m(vt.tensor(flat), vt.tensor(offsets)), _bags_ref(w, bags, mode))
    last = F.embedding_bag(vt.tensor(flat), vt.tensor(w), vt.tensor(np.array([0, 3, 3, 7])),
                           mode=mode, include_last_offset=True)
    assert_close(last, _bags_ref(w, bags, mode))
    check_grad(lambda t: F.embedding_bag(vt.tensor(flat), t, vt.tensor(offsets), mode=mode), w)


def test_embedding_bag_weights_padding_and_errors():
    w, idx = rand(6, 2), np.array([[1, 0, 3], [0, 0, 5]])
    psw = rand(2, 3, seed=3)
    got = F.embedding_bag(vt.tensor(idx), vt.tensor(w), mode="sum",
                          per_sample_weights=vt.tensor(psw))
    assert_close(got, _bags_ref(w, list(idx), "sum", psw))
    check_grad(lambda t, p: F.embedding_bag(vt.tensor(idx), t, mode="sum",
                                            per_sample_weights=p), w, psw)
    m = nn.EmbeddingBag(6, 2, padding_idx=0, dtype=vt.float64)
    assert_close(m.weight[0], [0.0, 0.0])
    wm = to_np(m.weight)
    assert_close(m(vt.tensor(idx)), _bags_ref(wm, [np.array([1, 3]), np.array([5])], "mean"))
    m(vt.tensor(idx)).sum().backward()
    assert_close(m.weight.grad[0], [0.0, 0.0])
    with pytest.raises(ValueError, match="per_sample_weights"):
        F.embedding_bag(vt.tensor(idx), vt.tensor(w), per_sample_weights=vt.tensor(psw))
    with pytest.raises(ValueError, match="offsets"):
        F.embedding_bag(vt.tensor(idx[0]), vt.tensor(w))
    with pytest.raises(vt.IndexOutOfRangeError):
        m(vt.tensor(np.array([[7]])))


@pytest.mark.parametrize("momentum", [None, 0.1, 0.5])
def test_instance_norm_running_stats_follow_torch(momentum):
    """PyTorch's InstanceNorm has no cumulative average: momentum=None keeps the running
    statistics at their initial values (its module passes momentum 0.0)."""
    import torch

    x = np.random.default_rng(0).standard_normal((3, 4, 5, 6))
    tm = torch.nn.InstanceNorm2d(4, momentum=momentum, track_running_stats=True).double()
    vm = vt.nn.InstanceNorm2d(4, momentum=momentum, track_running_stats=True).double()
    for _ in range(3):
        tm(torch.tensor(x))
        vm(vt.tensor(x))
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(vm, name).numpy(), getattr(tm, name).numpy(),
                                   rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("shape,groups", [((4, 2, 3), 1), ((6, 3, 3, 3), 2),
                                          ((2, 4, 3, 3, 3), 1), ((6, 2, 5, 5), 3)])
def test_init_dirac_matches_torch(shape, groups):
    import torch

    t = torch.empty(shape)
    torch.nn.init.dirac_(t, groups)
    v = vt.empty(*shape)
    nn.init.dirac_(v, groups)
    np.testing.assert_array_equal(v.numpy(), t.numpy())
    with pytest.raises(ValueError):
        nn.init.dirac_(vt.empty(3, 3))


def test_init_sparse_zeros_per_column():
    w = vt.empty(10, 6)
    nn.init.sparse_(w, 0.3, std=0.02)
    assert ((w.numpy() == 0).sum(0) == 3).all()  # ceil(0.3 * 10) per column
    assert 0.005 < w.numpy()[w.numpy() != 0].std() < 0.05
    with pytest.raises(ValueError):
        nn.init.sparse_(vt.empty(2, 2, 2), 0.1)
