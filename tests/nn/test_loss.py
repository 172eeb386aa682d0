"""Losses against NumPy references, gradchecks and errors; nn.init."""

from __future__ import annotations

import math

import numpy as np
import pytest
from vt_helpers import assert_close, check_grad, rand, to_np

import volta_core as vt
import volta_core.nn.functional as F
from volta_core import nn


def red(x, reduction):
    return {"none": x, "mean": x.mean(), "sum": x.sum()}[reduction]


def log_softmax_np(x, axis=1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_regression_losses(reduction):
    x, y = rand(3, 4), rand(3, 4, seed=1) * 2
    d = x - y
    a = np.abs(d)
    cases = [
        (nn.MSELoss(reduction), d * d),
        (nn.L1Loss(reduction), a),
        (nn.SmoothL1Loss(reduction, beta=0.5), np.where(a < 0.5, 0.5 * d * d / 0.5, a - 0.25)),
        (nn.HuberLoss(reduction, delta=0.7), np.where(a <= 0.7, 0.5 * d * d, 0.7 * (a - 0.35))),
    ]
    for mod, want in cases:
        assert_close(mod(vt.tensor(x), vt.tensor(y)), red(want, reduction), rtol=1e-10)
        check_grad(lambda x, y, mod=mod: mod(x, y), x, y)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_cross_entropy_class_indices_weight_ignore_smoothing(reduction):
    x = rand(5, 4, low=-2, high=2)
    t = np.array([0, 3, -100, 2, 3])
    w = np.array([0.5, 1.0, 2.0, 1.5])
    eps = 0.2
    logp = log_softmax_np(x)
    valid = t != -100
    ts = np.where(valid, t, 0)
    nll = -logp[np.arange(5), ts] * w[ts]
    smooth = -(logp * w).sum(1) / 4
    per = ((1 - eps) * nll + eps * smooth) * valid
    want = per if reduction == "none" else per.sum() if reduction == "sum" else \
        per.sum() / (w[ts] * valid).sum()
    fn = nn.CrossEntropyLoss(vt.tensor(w), reduction=reduction, label_smoothing=eps)
    assert_close(fn(vt.tensor(x), vt.tensor(t)), want, rtol=1e-10, atol=1e-12)
    check_grad(lambda x: F.cross_entropy(x, vt.tensor(t), vt.tensor(w), reduction=reduction,
                                         label_smoothing=eps), x)


def test_cross_entropy_plain_and_kdim_and_unbatched():
    x, t = rand(3, 5, 2, 2), np.random.default_rng(0).integers(0, 5, (3, 2, 2))
    logp = log_softmax_np(x)
    want = -np.take_along_axis(logp, t[:, None], 1)[:, 0]
    assert_close(F.cross_entropy(vt.tensor(x), vt.tensor(t), reduction="none"), want,
                 rtol=1e-10)
    assert_close(F.cross_entropy(vt.tensor(x), vt.tensor(t)), want.mean(), rtol=1e-10)
    check_grad(lambda x: F.cross_entropy(x, vt.tensor(t)), x)
    v = rand(4)
    assert_close(F.cross_entropy(vt.tensor(v), vt.tensor(2)), -log_softmax_np(v, 0)[2])
    big = vt.tensor([[1000.0, 0.0], [0.0, -1000.0]])
    assert_close(F.cross_entropy(big, vt.tensor([0, 1])), 500.0, rtol=1e-6)


def test_cross_entropy_probabilities():
    x, p = rand(4, 3), np.random.default_rng(1).dirichlet(np.ones(3), 4)
    w = np.array([1.0, 2.0, 0.5])
    want = -(log_softmax_np(x) * (p * 0.9 + 0.1 / 3) * w).sum(1).mean()
    got = F.cross_entropy(vt.tensor(x), vt.tensor(p), vt.tensor(w), label_smoothing=0.1)
    assert_close(got, want, rtol=1e-10)
    check_grad(lambda x, p: F.cross_entropy(x, p), x, p)


def test_cross_entropy_errors():
    x = vt.randn(4, 3)
    with pytest.raises(vt.IndexOutOfRangeError, match="target 3 is out of bounds for 3"):
        F.cross_entropy(x, vt.tensor([0, 1, 2, 3]))
    with pytest.raises(vt.IndexOutOfRangeError, match="target -1"):
        F.cross_entropy(x, vt.tensor([0, 1, -1, 2]))
    # narrow integer targets, also with more classes than the dtype has positive values
    for dtype, c in ((vt.int8, 3), (vt.int8, 300), (vt.int16, 3), (vt.int32, 3)):
        with pytest.raises(vt.IndexOutOfRangeError, match="target -2 is out of bounds"):
            F.cross_entropy(vt.randn(4, c), vt.tensor([0, 1, -2, 2], dtype=dtype))
    with pytest.raises(vt.IndexOutOfRangeError, match="target 3 is out of bounds"):
        F.cross_entropy(x, vt.tensor([0, 3, 1, 2], dtype=vt.uint8))
    with pytest.raises(vt.ShapeError, match=r"cross_entropy: expected target of shape \(4,\)"):
        nn.CrossEntropyLoss()(x, vt.tensor([0, 1]))
    with pytest.raises(vt.ShapeError, match="probability targets"):
        F.cross_entropy(x, vt.rand(5, 3))
    with pytest.raises(vt.ShapeError, match="weight"):
        F.cross_entropy(x, vt.tensor([0, 1, 2, 0]), vt.ones(4))
    with pytest.raises(ValueError, match="reduction"):
        nn.CrossEntropyLoss(reduction="avg")


def test_nll_loss():
    lp = log_softmax_np(rand(4, 3))
    t = np.array([2, 0, -100, 1])
    w = np.array([1.0, 3.0, 0.5])
    ts = np.where(t == -100, 0, t)
    per = -lp[np.arange(4), ts] * w[ts] * (t != -100)
    want = per.sum() / (w[ts] * (t != -100)).sum()
    assert_close(nn.NLLLoss(vt.tensor(w))(vt.tensor(lp), vt.tensor(t)), want, rtol=1e-10)
    assert_close(F.nll_loss(vt.tensor(lp), vt.tensor(t), reduction="none"),
                 -lp[np.arange(4), ts] * (t != -100), rtol=1e-10)
    check_grad(lambda x: F.nll_loss(x, vt.tensor(t), vt.tensor(w)), lp)
    with pytest.raises(vt.IndexOutOfRangeError, match="nll_loss"):
        F.nll_loss(vt.tensor(lp), vt.tensor([3, 0, 0, 0]))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_binary_cross_entropy(reduction):
    p = rand(3, 4, low=0.05, high=0.95)
    y = (rand(3, 4, seed=1) > 0).astype(np.float64)
    w = rand(4, seed=2, low=0.5, high=1.5)
    want = -(y * np.log(p) + (1 - y) * np.log(1 - p)) * w
    got = nn.BCELoss(vt.tensor(w), reduction)(vt.tensor(p), vt.tensor(y))
    assert_close(got, red(want, reduction), rtol=1e-10)
    check_grad(lambda p: F.binary_cross_entropy(p, vt.tensor(y), reduction=reduction), p)
    edge = F.binary_cross_entropy(vt.tensor([0.0, 1.0]), vt.tensor([1.0, 0.0]),
                                  reduction="none")
    assert_close(edge, [100.0, 100.0])
    with pytest.raises(ValueError, match="probabilities"):
        F.binary_cross_entropy(vt.tensor([1.5]), vt.tensor([1.0]))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_bce_with_logits_pos_weight(reduction):
    x = rand(3, 4, low=-30, high=30)
    y = (rand(3, 4, seed=1) > 0).astype(np.float64)
    pw = rand(4, seed=2, low=0.5, high=3)

    want = pw * y * np.logaddexp(0, -x) + (1 - y) * np.logaddexp(0, x)
    got = nn.BCEWithLogitsLoss(reduction=reduction, pos_weight=vt.tensor(pw))(
        vt.tensor(x), vt.tensor(y))
    assert_close(got, red(want, reduction), rtol=1e-8, atol=1e-10)
    check_grad(lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction=reduction),
               rand(2, 3), rand(2, 3, seed=1, low=0, high=1))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum", "batchmean"])
def test_kl_div(reduction):
    inp = log_softmax_np(rand(3, 4))
    tgt = np.random.default_rng(0).dirichlet(np.ones(4), 3)
    tgt[0, 1] = 0.0
    pointwise = np.where(tgt > 0, tgt * (np.log(np.where(tgt > 0, tgt, 1)) - inp), 0)
    want = pointwise.sum() / 3 if reduction == "batchmean" else red(pointwise, reduction)
    assert_close(nn.KLDivLoss(reduction)(vt.tensor(inp), vt.tensor(tgt)), want, rtol=1e-10)
    logt = np.log(tgt + 0.1)
    assert_close(F.kl_div(vt.tensor(inp), vt.tensor(logt), "sum", log_target=True),
                 (np.exp(logt) * (logt - inp)).sum(), rtol=1e-10)
    check_grad(lambda i, t: F.kl_div(i, t, reduction), inp, tgt + 0.1)


def test_cosine_embedding_loss():
    a, b = rand(4, 3), rand(4, 3, seed=1)
    y = np.array([1, -1, 1, -1])
    cos = (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))
    want = np.where(y == 1, 1 - cos, np.maximum(0, cos - 0.1))
    got = nn.CosineEmbeddingLoss(0.1, "none")(vt.tensor(a), vt.tensor(b), vt.tensor(y))
    assert_close(got, want, rtol=1e-8)
    check_grad(lambda a, b: F.cosine_embedding_loss(a, b, vt.tensor(y)), a, b)
    with pytest.raises(vt.ShapeError, match="cosine_embedding_loss"):
        F.cosine_embedding_loss(vt.tensor(a), vt.tensor(b), vt.tensor([1, 1]))


def test_loss_shape_errors_name_the_loss():
    for fn in (F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss,
               F.binary_cross_entropy_with_logits, F.kl_div):
        with pytest.raises(vt.ShapeError, match=fn.__name__):
            fn(vt.rand(4, 2), vt.rand(3, 2))


# -- init ---------------------------------------------------------------------------------

def test_init_distributions_and_seeding():
    w = nn.Parameter(vt.empty(200, 300))
    vt.manual_seed(7)
    nn.init.kaiming_uniform_(w, a=math.sqrt(5))
    first = to_np(w).copy()
    vt.manual_seed(7)
    nn.init.kaiming_uniform_(w, a=math.sqrt(5))
    np.testing.assert_array_equal(first, to_np(w))
    assert isinstance(w, nn.Parameter) and w.requires_grad
    assert abs(np.abs(first).max() - 1 / math.sqrt(300)) < 1e-3
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(to_np(w).std() - math.sqrt(2 / 200)) < 0.005
    nn.init.xavier_uniform_(w, gain=2.0)
    assert np.abs(to_np(w)).max() <= 2 * math.sqrt(6 / 500)
    nn.init.xavier_normal_(w)
    assert abs(to_np(w).std() - math.sqrt(2 / 500)) < 0.003
    nn.init.normal_(w, 1.0, 0.5)
    assert abs(to_np(w).mean() - 1.0) < 0.01
    nn.init.uniform_(w, -3, -2)
    assert to_np(w).min() >= -3 and to_np(w).max() < -2
    nn.init.trunc_normal_(w, std=2.0, a=-1.0, b=1.5)
    assert to_np(w).min() >= -1.0 and to_np(w).max() <= 1.5
    nn.init.constant_(w, 0.25)
    assert np.all(to_np(w) == 0.25)


def test_init_eye_orthogonal_gain():
    w = vt.empty(3, 5)
    np.testing.assert_array_equal(to_np(nn.init.eye_(w)), np.eye(3, 5))
    q = to_np(nn.init.orthogonal_(vt.empty(4, 6), gain=2.0))
    np.testing.assert_allclose(q @ q.T, 4 * np.eye(4), atol=1e-5)
    assert np.all(to_np(nn.init.zeros_(vt.ones(2))) == 0)
    assert np.all(to_np(nn.init.ones_(vt.zeros(2))) == 1)
    assert nn.init.calculate_gain("relu") == math.sqrt(2)
    assert nn.init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    assert nn.init.calculate_gain("tanh") == 5 / 3
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.init.calculate_gain("swish")
    with pytest.raises(vt.ShapeError, match="fan in"):
        nn.init.xavier_uniform_(vt.empty(3))
