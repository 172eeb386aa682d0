"""``vt.distributions`` against ``torch.distributions``: log_prob, entropy, moments, KL
(values and gradients in float64), shapes, validation errors; samples loosely."""

from __future__ import annotations

import numpy as np
import pytest
from torch_ref import torch

import volta_core as vt

TD = torch.distributions
VD = vt.distributions
R = np.random.default_rng(0)


def _pos(*shape):
    return R.uniform(0.5, 3.0, size=shape)


def _simplex(*shape):
    p = R.uniform(0.1, 1.0, size=shape)
    return p / p.sum(-1, keepdims=True)


# name -> (params as numpy, value sampler, torch-style constructor kwargs builder)
CASES = {
    "Normal": (lambda: {"loc": R.normal(size=3), "scale": _pos(3)},
               lambda: R.normal(size=(2, 3))),
    "LogNormal": (lambda: {"loc": R.normal(size=3), "scale": _pos(3)},
                  lambda: _pos(2, 3)),
    "Uniform": (lambda: {"low": np.array([0.0, -1.0, 1.0]), "high": np.array([1.0, 2.0, 4.0])},
                lambda: np.array([[0.5, 0.0, 1.5], [0.1, 1.9, 3.9]])),
    "Laplace": (lambda: {"loc": R.normal(size=3), "scale": _pos(3)},
                lambda: R.normal(size=(2, 3))),
    "Exponential": (lambda: {"rate": _pos(3)}, lambda: _pos(2, 3)),
    "Gamma": (lambda: {"concentration": _pos(3), "rate": _pos(3)}, lambda: _pos(2, 3)),
    "Chi2": (lambda: {"df": _pos(3) + 0.5}, lambda: _pos(2, 3)),
    "Beta": (lambda: {"concentration1": _pos(3), "concentration0": _pos(3)},
             lambda: R.uniform(0.05, 0.95, size=(2, 3))),
    "Dirichlet": (lambda: {"concentration": _pos(2, 4)}, lambda: _simplex(2, 4)),
    "Poisson": (lambda: {"rate": _pos(3)}, lambda: R.integers(0, 6, size=(2, 3)).astype(float)),
    "Geometric": (lambda: {"probs": R.uniform(0.1, 0.9, size=3)},
                  lambda: R.integers(0, 6, size=(2, 3)).astype(float)),
    "GeometricLogits": (lambda: {"logits": R.normal(size=3)},
                        lambda: R.integers(0, 6, size=(2, 3)).astype(float)),
    "Cauchy": (lambda: {"loc": R.normal(size=3), "scale": _pos(3)},
               lambda: R.normal(size=(2, 3))),
    "StudentT": (lambda: {"df": _pos(3) + 1.5, "loc": R.normal(size=3), "scale": _pos(3)},
                 lambda: R.normal(size=(2, 3))),
    "Bernoulli": (lambda: {"probs": R.uniform(0.1, 0.9, size=3)},
                  lambda: R.integers(0, 2, size=(2, 3)).astype(float)),
    "BernoulliLogits": (lambda: {"logits": R.normal(size=3)},
                        lambda: R.integers(0, 2, size=(2, 3)).astype(float)),
    "Categorical": (lambda: {"probs": _simplex(3, 4)}, lambda: R.integers(0, 4, size=(2, 3))),
    "CategoricalLogits": (lambda: {"logits": R.normal(size=(3, 4))},
                          lambda: R.integers(0, 4, size=(5, 3))),
    "OneHotCategorical": (lambda: {"probs": _simplex(3, 4)},
                          lambda: np.eye(4)[R.integers(0, 4, size=(2, 3))]),
    "MultivariateNormal": (lambda: {"loc": R.normal(size=(2, 3)),
                                    "covariance_matrix": _spd(2, 3)},
                           lambda: R.normal(size=(4, 2, 3))),
    "MultivariateNormalTril": (lambda: {"loc": R.normal(size=3),
                                        "scale_tril": np.linalg.cholesky(_spd(1, 3)[0])},
                               lambda: R.normal(size=(4, 3))),
    "MultivariateNormalPrecision": (lambda: {"loc": R.normal(size=3),
                                             "precision_matrix": _spd(1, 3)[0]},
                                    lambda: R.normal(size=(4, 3))),
}


def _spd(b, n):
    m = R.normal(size=(b, n, n))
    return m @ m.transpose(0, 2, 1) + n * np.eye(n)


def _cls(lib, name):
    for suffix in ("Logits", "Tril", "Precision"):
        name = name.removesuffix(suffix)
    return getattr(lib, name)


def _build(name, params):
    vparams = {k: vt.tensor(v).requires_grad_(v.dtype.kind == "f") for k, v in params.items()}
    tparams = {k: torch.tensor(v).requires_grad_(v.dtype.kind == "f") for k, v in
               params.items()}
    return (_cls(VD, name)(**vparams), _cls(TD, name)(**tparams), vparams, tparams)


def _close(a, b, what, rtol=1e-9, atol=1e-10):
    a = a.detach().numpy() if isinstance(a, vt.Tensor) else np.asarray(a)
    b = b.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    params, values = CASES[name]
    p, v = params(), values()
    d, t, vp, tp = _build(name, p)
    assert d.batch_shape == tuple(t.batch_shape) and d.event_shape == tuple(t.event_shape)
    value_v = vt.tensor(v).to(vt.int64) if v.dtype.kind == "i" else vt.tensor(v)
    lp, tlp = d.log_prob(value_v), t.log_prob(torch.tensor(v))
    _close(lp, tlp, "log_prob")
    assert lp.dtype.name == str(tlp.dtype).replace("torch.", "")
    try:
        tent = t.entropy()
    except NotImplementedError:  # PyTorch has none (Poisson): neither has Volta
        with pytest.raises(NotImplementedError):
            d.entropy()
        tent = ent = None
    else:
        ent = d.entropy()
        _close(ent, tent, "entropy")
    for moment in ("mean", "variance", "stddev", "mode"):
        try:
            want = getattr(t, moment)
        except NotImplementedError:
            continue
        _close(getattr(d, moment), want, moment)
    # gradients of log_prob and entropy with respect to the parameters
    up = R.uniform(-1, 1, size=tuple(tlp.shape))
    total = (lp * vt.tensor(up)).sum() + (ent.sum() if ent is not None else 0)
    ttotal = (tlp * torch.tensor(up)).sum() + (tent.sum() if tent is not None else 0)
    total.backward()
    ttotal.backward()
    for k in vp:
        if tp[k].grad is not None:
            _close(vp[k].grad, tp[k].grad, f"grad of {k}", rtol=1e-7, atol=1e-9)
    # samples: shape, dtype, support
    s, ts = d.sample((5,)), t.sample((5,))
    assert s.shape == tuple(ts.shape) and s.dtype.name == str(ts.dtype).replace("torch.", "")
    assert not s.requires_grad
    assert d.has_rsample == t.has_rsample


@pytest.mark.parametrize("name", ["Normal", "LogNormal", "Uniform", "Laplace", "Exponential",
                                  "Gamma", "Beta", "Dirichlet", "Bernoulli", "Categorical",
                                  "OneHotCategorical", "MultivariateNormal", "Poisson",
                                  "Geometric"])
def test_kl_against_torch(name):
    params, _ = CASES[name]
    p_np, q_np = params(), params()
    if name == "Uniform":  # q must cover p for a finite value; one inf as well
        q_np = {"low": p_np["low"] - [0.5, 0.0, -0.1], "high": p_np["high"] + 1}
    dp, tp_, vpp, tpp = _build(name, p_np)
    dq, tq, vqp, tqp = _build(name, q_np)
    kl, tkl = VD.kl_divergence(dp, dq), TD.kl_divergence(tp_, tq)
    _close(kl, tkl, "kl")
    finite = np.isfinite(tkl.detach().numpy())
    kl_sum = (kl * vt.tensor(finite.astype(float))).nan_to_num(0.0).sum()
    tkl_sum = (tkl * torch.tensor(finite.astype(float))).nan_to_num(0.0).sum()
    kl_sum.backward()
    tkl_sum.backward()
    for vparams, tparams in ((vpp, tpp), (vqp, tqp)):
        for k in vparams:
            if tparams[k].grad is not None:
                _close(vparams[k].grad, tparams[k].grad, f"kl grad of {k}", 1e-7, 1e-9)


def test_gamma_and_chi2_cdf_against_torch():
    """``Gamma.cdf`` (the regularized incomplete gamma function of ``rate * value``) and
    ``Chi2.cdf``: values, and gradients w.r.t. the value and the rate."""
    conc, rate, value = _pos(3), _pos(3), _pos(2, 3)
    vr, tr = vt.tensor(rate, requires_grad=True), torch.tensor(rate, requires_grad=True)
    # (no gradient w.r.t. the concentration: PyTorch's gammainc has none)
    d, t = VD.Gamma(vt.tensor(conc), vr), TD.Gamma(torch.tensor(conc), tr)
    vv, tv = vt.tensor(value, requires_grad=True), torch.tensor(value, requires_grad=True)
    vc, tc = d.cdf(vv), t.cdf(tv)
    _close(vc, tc, "cdf", rtol=1e-7)
    up = R.uniform(-1, 1, size=(2, 3))
    (vc * vt.tensor(up)).sum().backward()
    (tc * torch.tensor(up)).sum().backward()
    _close(vv.grad, tv.grad, "grad of value", rtol=1e-7)
    _close(vr.grad, tr.grad, "grad of rate", rtol=1e-7)
    df = _pos(3) + 0.5
    _close(VD.Chi2(vt.tensor(df)).cdf(vt.tensor(value)),
           TD.Chi2(torch.tensor(df)).cdf(torch.tensor(value)), "Chi2 cdf", rtol=1e-7)


def test_kl_independent_and_register():
    loc, scale = R.normal(size=(2, 3)), _pos(2, 3)
    p = VD.Independent(VD.Normal(vt.tensor(loc), vt.tensor(scale)), 1)
    q = VD.Independent(VD.Normal(vt.zeros(2, 3, dtype="float64"), 1.0), 1)
    tp_ = TD.Independent(TD.Normal(torch.tensor(loc), torch.tensor(scale)), 1)
    tq = TD.Independent(TD.Normal(torch.zeros(2, 3, dtype=torch.float64), 1.0), 1)
    assert p.batch_shape == (2,) and p.event_shape == (3,)
    _close(VD.kl_divergence(p, q), TD.kl_divergence(tp_, tq), "kl independent")
    x = R.normal(size=(2, 3))
    _close(p.log_prob(vt.tensor(x)), tp_.log_prob(torch.tensor(x)), "independent log_prob")
    with pytest.raises(NotImplementedError):
        VD.kl_divergence(VD.Normal(0.0, 1.0), VD.Gamma(1.0, 1.0))

    class MyNormal(VD.Normal):
        pass

    @VD.register_kl(MyNormal, VD.Normal)
    def _kl(a, b):
        return vt.tensor(42.0)

    assert float(VD.kl_divergence(MyNormal(0.0, 1.0), VD.Normal(0.0, 1.0))) == 42.0
    assert float(VD.kl_divergence(VD.Normal(0.0, 1.0), MyNormal(0.0, 1.0))) == 0.0


def test_validation_errors_like_torch():
    # torch.cond (tests/ops) turns PyTorch's default validation off for the process
    TD.Distribution.set_default_validate_args(True)
    for lib in (VD, TD):
        m = vt if lib is VD else torch
        with pytest.raises(ValueError, match="constraint"):
            lib.Normal(m.zeros(2), -m.ones(2))
        with pytest.raises(ValueError, match="broadcastable"):
            lib.Normal(m.zeros(2), 1.0).log_prob(m.zeros(3))
        with pytest.raises(ValueError, match="support"):
            lib.Bernoulli(probs=m.tensor([0.5])).log_prob(m.tensor([0.5]))
        with pytest.raises(ValueError, match="not both"):
            lib.Categorical()
        with pytest.raises(ValueError):
            lib.MultivariateNormal(m.zeros(2))
        lib.Normal(m.zeros(2), -m.ones(2), validate_args=False)  # no check


def test_rsample_gradients():
    vt.manual_seed(0)  # the draws, not whatever the tests before left in the generator
    loc = vt.tensor([0.5, -1.0], requires_grad=True)
    scale = vt.tensor([1.0, 2.0], requires_grad=True)
    s = VD.Normal(loc, scale).rsample((7,))
    s.sum().backward()
    assert loc.grad.tolist() == [7.0, 7.0]
    np.testing.assert_allclose(scale.grad.numpy(), ((s.detach() - loc.detach()) /
                                                    scale.detach()).sum(0).numpy(), 1e-5, 1e-6)
    # Gamma: each sample's gradient is PyTorch's implicit one for that sample
    alpha = vt.tensor([0.3, 1.0, 2.5, 9.0], dtype="float64", requires_grad=True)
    z = VD.Gamma(alpha, 1.0).rsample()
    z.sum().backward()
    want = torch._standard_gamma_grad(torch.tensor(alpha.detach().numpy()),
                                      torch.tensor(z.detach().numpy()))
    np.testing.assert_allclose(alpha.grad.numpy(), want.numpy(), rtol=1e-3)
    # Beta/Dirichlet: per-sample gradients differ from PyTorch's, expectations agree:
    # d/da E[x] = b / (a + b)^2 for Beta(a, b)
    vt.manual_seed(0)
    a = vt.tensor(2.0, dtype="float64", requires_grad=True)
    VD.Beta(a, 3.0).rsample((20000,)).mean().backward()
    assert abs(float(a.grad) - 3.0 / 25.0) < 0.01
    c = vt.tensor([1.0, 2.0, 3.0], dtype="float64", requires_grad=True)
    (VD.Dirichlet(c).rsample((20000,))[:, 0]).mean().backward()
    np.testing.assert_allclose(c.grad.numpy(), [5 / 36, -1 / 36, -1 / 36], atol=0.01)
    mvn_loc = vt.zeros(3, requires_grad=True)
    VD.MultivariateNormal(mvn_loc, vt.eye(3)).rsample((4,)).sum().backward()
    assert mvn_loc.grad.tolist() == [4.0, 4.0, 4.0]


@pytest.mark.parametrize("name,expect_mean,expect_var", [
    ("gamma", 2.5 / 2.0, 2.5 / 4.0), ("gamma_small", 0.3, 0.3), ("beta", 2 / 5, 6 / 150),
    ("normal", 1.0, 4.0), ("laplace", 1.0, 2 * 0.25), ("exponential", 0.5, 0.25),
    ("uniform", 1.0, 4 / 12), ("poisson", 3.0, 3.0), ("geometric", 3.0, 12.0),
    ("studentt", 0.0, 5 / 3), ("lognormal", np.exp(0.125), (np.exp(0.25) - 1) *
                               np.exp(0.25)), ("bernoulli", 0.3, 0.21)])
def test_sample_statistics(name, expect_mean, expect_var):
    vt.manual_seed(1)
    d = {"gamma": VD.Gamma(2.5, 2.0), "gamma_small": VD.Gamma(0.3, 1.0),
         "beta": VD.Beta(2.0, 3.0), "normal": VD.Normal(1.0, 2.0),
         "laplace": VD.Laplace(1.0, 0.5), "exponential": VD.Exponential(2.0),
         "uniform": VD.Uniform(0.0, 2.0), "lognormal": VD.LogNormal(0.0, 0.5),
         "bernoulli": VD.Bernoulli(0.3), "poisson": VD.Poisson(3.0),
         "geometric": VD.Geometric(0.25), "studentt": VD.StudentT(5.0)}[name]
    s = d.sample((40000,)).to("float64")
    assert abs(float(s.mean()) - expect_mean) < 0.03 * max(1, abs(expect_mean))
    assert abs(float(s.var()) - expect_var) < 0.06 * max(1, expect_var)


def test_categorical_and_dirichlet_samples():
    vt.manual_seed(2)
    probs = vt.tensor([0.1, 0.2, 0.7])
    s = VD.Categorical(probs).sample((30000,))
    assert s.dtype is vt.int64 and s.shape == (30000,)
    freq = np.bincount(s.numpy(), minlength=3) / 30000
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.7], atol=0.015)
    oh = VD.OneHotCategorical(probs).sample((10,))
    assert oh.shape == (10, 3) and oh.sum(-1).tolist() == [1.0] * 10
    dz = VD.Dirichlet(vt.tensor([1.0, 2.0, 3.0])).sample((20000,))
    np.testing.assert_allclose(dz.sum(-1).numpy(), 1.0, rtol=1e-5)
    np.testing.assert_allclose(dz.mean(0).numpy(), [1 / 6, 2 / 6, 3 / 6], atol=0.01)
    mvn = VD.MultivariateNormal(vt.tensor([1.0, -1.0]), vt.tensor([[2.0, 0.5], [0.5, 1.0]]))
    x = mvn.sample((40000,)).to("float64").numpy()
    np.testing.assert_allclose(np.cov(x.T), [[2.0, 0.5], [0.5, 1.0]], atol=0.06)
    assert VD.Bernoulli(logits=vt.zeros(2)).enumerate_support().shape == (2, 2)
