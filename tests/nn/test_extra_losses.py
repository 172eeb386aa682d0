"""Extra losses against NumPy references, in every reduction, with float64 gradchecks."""

from __future__ import annotations

import math

import numpy as np
import pytest
from vt_helpers import assert_close, check_grad, rand

import volta_core as vt
import volta_core.nn.functional as F
from volta_core import nn

REDUCE = {"none": lambda v: v, "mean": np.mean, "sum": np.sum}


def _logsig(x):
    return -np.logaddexp(0, -x)


def _signs(*shape, seed=5):
    return np.where(np.random.default_rng(seed).random(shape) < 0.5, -1.0, 1.0)


@pytest.mark.parametrize("reduction", sorted(REDUCE))
def test_soft_margin_loss(reduction):
    x, y = rand(4, 3, low=-3, high=3), _signs(4, 3)
    want = REDUCE[reduction](np.log1p(np.exp(-y * x)))
    assert_close(nn.SoftMarginLoss(reduction=reduction)(vt.tensor(x), vt.tensor(y)), want)
    check_grad(lambda t: F.soft_margin_loss(t, vt.tensor(y), reduction=reduction), x)


@pytest.mark.parametrize("reduction", sorted(REDUCE))
def test_hinge_embedding_loss(reduction):
    x, y = rand(4, 3, low=-2, high=2), _signs(4, 3)
    want = REDUCE[reduction](np.where(y == 1, x, np.maximum(0, 0.7 - x)))
    m = nn.HingeEmbeddingLoss(margin=0.7, reduction=reduction)
    assert_close(m(vt.tensor(x), vt.tensor(y)), want)
    check_grad(lambda t: F.hinge_embedding_loss(t, vt.tensor(y), 0.7, reduction=reduction), x)


@pytest.mark.parametrize("reduction", sorted(REDUCE))
@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll_loss(reduction, full):
    x, t, v = rand(4, 3), rand(4, 3, seed=1), rand(4, 3, seed=2, low=0.2, high=2.0)
    v[0, 0] = 1e-9  # clamped to eps
    vc = np.maximum(v, 1e-6)
    want = 0.5 * (np.log(vc) + (x - t) ** 2 / vc) + (0.5 * math.log(2 * math.pi) if full else 0)
    m = nn.GaussianNLLLoss(full=full, reduction=reduction)
    assert_close(m(vt.tensor(x), vt.tensor(t), vt.tensor(v)), REDUCE[reduction](want))
    v[0, 0] = 0.5
    check_grad(lambda a, b: F.gaussian_nll_loss(a, vt.tensor(t), b, full, reduction=reduction),
               x, v)


def test_gaussian_nll_loss_variance_shapes_and_errors():
    x, t, v = rand(4, 3), rand(4, 3, seed=1), rand(4, seed=2, low=0.5, high=1.0)
    want = np.mean(0.5 * (np.log(v[:, None]) + (x - t) ** 2 / v[:, None]))
    for var in (vt.tensor(v), vt.tensor(v[:, None])):
        assert_close(F.gaussian_nll_loss(vt.tensor(x), vt.tensor(t), var), want)
    want = np.mean(0.5 * (np.log(0.5) + (x - t) ** 2 / 0.5))
    assert_close(F.gaussian_nll_loss(vt.tensor(x), vt.tensor(t), 0.5), want)
    with pytest.raises(vt.ShapeError, match="var"):
        F.gaussian_nll_loss(vt.tensor(x), vt.tensor(t), vt.ones(2, dtype=vt.float64))
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(vt.tensor(x), vt.tensor(t), -vt.ones(4, 3, dtype=vt.float64))


@pytest.mark.parametrize("reduction", sorted(REDUCE))
@pytest.mark.parametrize("log_input,full", [(True, False), (False, False), (True, True)])
def test_poisson_nll_loss(reduction, log_input, full):
    x = rand(4, 3, low=0.1, high=2.0)
    t = np.random.default_rng(3).integers(0, 5, (4, 3)).astype(float)
    want = np.exp(x) - t * x if log_input else x - t * np.log(x + 1e-8)
    if full:
        safe = np.where(t > 1, t, 1.0)
        want = want + np.where(t > 1, safe * np.log(safe) - safe
                               + 0.5 * np.log(2 * np.pi * safe), 0.0)
    m = nn.PoissonNLLLoss(log_input=log_input, full=full, reduction=reduction)
    assert_close(m(vt.tensor(x), vt.tensor(t)), REDUCE[reduction](want))
    check_grad(lambda a: F.poisson_nll_loss(a, vt.tensor(t), log_input, full,
                                            reduction=reduction), x)


def _multi_margin_ref(x, y, p=1, margin=1.0, w=None):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        for j in range(c):
            if j != y[i]:
                h = max(0.0, margin - x[i, y[i]] + x[i, j]) ** p
                out[i] += h * (1.0 if w is None else w[y[i]])
    return out / c


@pytest.mark.parametrize("reduction", sorted(REDUCE))
@pytest.mark.parametrize("p,with_weight", [(1, False), (2, True)])
def test_multi_margin_loss(reduction, p, with_weight):
    x, y = rand(5, 4), np.array([0, 3, 1, 1, 2])
    w = rand(4, seed=7, low=0.5, high=2.0) if with_weight else None
    want = REDUCE[reduction](_multi_margin_ref(x, y, p, 0.6, w))
    m = nn.MultiMarginLoss(p, 0.6, None if w is None else vt.tensor(w), reduction=reduction)
    assert_close(m(vt.tensor(x), vt.tensor(y)), want)
    wt = None if w is None else vt.tensor(w)
    check_grad(lambda a: F.multi_margin_loss(a, vt.tensor(y), p, 0.6, wt,
                                             reduction=reduction), x)
    one = F.multi_margin_loss(vt.tensor(x[1]), vt.tensor(y[1]), p, 0.6, wt, reduction="none")
    assert_close(one, _multi_margin_ref(x[1:2], y[1:2], p, 0.6, w)[0])
    with pytest.raises(ValueError, match="p == 1"):
        nn.MultiMarginLoss(p=3)


@pytest.mark.parametrize("reduction", sorted(REDUCE))
def test_multilabel_soft_margin_loss(reduction):
    x, y, w = rand(4, 3, low=-3, high=3), rand(4, 3, seed=1, low=0, high=1), rand(3, seed=2)
    per = -(y * _logsig(x) + (1 - y) * _logsig(-x)) * w
    want = REDUCE[reduction](per.mean(-1))
    m = nn.MultiLabelSoftMarginLoss(vt.tensor(w), reduction=reduction)
    assert_close(m(vt.tensor(x), vt.tensor(y)), want)
    check_grad(lambda a: F.multilabel_soft_margin_loss(a, vt.tensor(y), vt.tensor(w),
                                                       reduction=reduction), x)


@pytest.mark.parametrize("reduction", sorted(REDUCE))
def test_margin_ranking_loss(reduction):
    a, b, y = rand(6), rand(6, seed=1), _signs(6)
    want = REDUCE[reduction](np.maximum(0, -y * (a - b) + 0.1))
    m = nn.MarginRankingLoss(0.1, reduction=reduction)
    assert_close(m(vt.tensor(a), vt.tensor(b), vt.tensor(y)), want)
    check_grad(lambda s, t: F.margin_ranking_loss(s, t, vt.tensor(y), 0.1,
                                                  reduction=reduction), a, b)
    with pytest.raises(vt.ShapeError, match="broadcast"):  # same ndim: they broadcast
        m(vt.tensor(a), vt.tensor(b[:3]), vt.tensor(y))
    with pytest.raises(vt.ShapeError, match="number of dims"):
        m(vt.tensor(a), vt.tensor(b[None]), vt.tensor(y))


def _pdist(a, b, p, eps=1e-6):
    return (np.abs(a - b + eps) ** p).sum(-1) ** (1 / p)


@pytest.mark.parametrize("reduction", sorted(REDUCE))
@pytest.mark.parametrize("p,swap", [(2, False), (1, True), (3, False)])
def test_triplet_margin_loss(reduction, p, swap):
    a, pos, neg = rand(5, 3), rand(5, 3, seed=1), rand(5, 3, seed=2)
    d_neg = _pdist(a, neg, p)
    if swap:
        d_neg = np.minimum(d_neg, _pdist(pos, neg, p))
    want = REDUCE[reduction](np.maximum(0, _pdist(a, pos, p) - d_neg + 0.8))
    m = nn.TripletMarginLoss(margin=0.8, p=p, swap=swap, reduction=reduction)
    assert_close(m(vt.tensor(a), vt.tensor(pos), vt.tensor(neg)), want)
    check_grad(lambda x, y, z: F.triplet_margin_loss(x, y, z, 0.8, p, swap=swap,
                                                     reduction=reduction), a, pos, neg)


def test_legacy_reduction_arguments_and_errors():
    x, y = rand(4, 3), _signs(4, 3)
    per = np.log1p(np.exp(-y * x))
    assert_close(F.soft_margin_loss(vt.tensor(x), vt.tensor(y), reduce=False), per)
    assert_close(F.soft_margin_loss(vt.tensor(x), vt.tensor(y), size_average=False),
                 per.sum())
    assert nn.PoissonNLLLoss(size_average=False).reduction == "sum"
    assert repr(nn.HingeEmbeddingLoss(reduction="sum")) == "HingeEmbeddingLoss(reduction='sum')"
    with pytest.raises(ValueError, match="reduction"):
        nn.SoftMarginLoss(reduction="avg")
    with pytest.raises(vt.ShapeError, match="soft_margin_loss"):
        F.soft_margin_loss(vt.tensor(x), vt.tensor(y[:2]))
    with pytest.raises(ValueError, match="margin"):
        nn.TripletMarginLoss(margin=0.0)
    with pytest.raises(vt.DTypeError, match="multi_margin_loss"):
        F.multi_margin_loss(vt.tensor(x), vt.tensor(np.zeros(4)))
