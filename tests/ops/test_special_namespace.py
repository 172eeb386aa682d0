"""``vt.special`` against ``torch.special``: every name Volta has, values on every device
(zeros, NaN, infinities, negative numbers), ``xlog1py``'s and ``entr``'s gradients and
gradchecks."""

from __future__ import annotations

import numpy as np
import pytest
from vt_helpers import assert_matches_torch, available_devices, device_has

import volta_core as vt

torch = pytest.importorskip("torch")

DEVICES = available_devices()
EDGES = np.array([0.0, -0.0, 1.0, 0.5, 2.0, -1.0, -0.5, 3.0, np.nan, np.inf, -np.inf, 1e-4,
                  -2.5, 7.0])


def _same(want, got, tol=1e-5):
    assert_matches_torch(want, got, rtol=tol, atol=tol)


def test_the_namespace_is_torch_special_for_the_names_it_has():
    assert set(vt.special.__all__) <= set(dir(torch.special))
    assert vt.special.expit is vt.sigmoid and vt.special.gammaln is vt.lgamma
    import volta_core.special

    assert volta_core.special is vt.special


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["expit", "erf", "erfc", "exp2", "expm1", "log1p",
                                  "gammaln", "digamma", "psi", "entr", "ndtr", "sinc",
                                  "spherical_bessel_j0", "round"])
def test_unary_functions_match_torch_special(device, name):
    for dtype in ("float32", "float64"):
        if dtype == "float64" and not device_has(device, "float64"):
            continue
        x = EDGES.astype(dtype)
        if name == "ndtr" and dtype == "float32":
            x = x[np.isnan(x) | (np.abs(x) < 3)]  # PyTorch's float32 erfc is off in the tail
        tol = 1e-5 if dtype == "float32" else 1e-10
        _same(getattr(torch.special, name)(torch.tensor(x)),
              getattr(vt.special, name)(vt.tensor(x, device=device)), tol)


@pytest.mark.parametrize("device", DEVICES)
def test_binary_and_parameterised_functions_match(device):
    x = np.array([0.0, 0.0, 1.0, 2.0, np.nan, -1.0, 3.0], np.float32)
    y = np.array([np.nan, 1.0, -1.0, 0.5, 1.0, np.inf, -0.5], np.float32)
    for name in ("xlog1py", "xlogy"):
        _same(getattr(torch.special, name)(torch.tensor(x), torch.tensor(y)),
              getattr(vt.special, name)(vt.tensor(x, device=device),
                                        vt.tensor(y, device=device)))
    p = np.array([0.2, 0.5, 0.9], np.float32)
    _same(torch.special.logit(torch.tensor(p), eps=0.3),
          vt.special.logit(vt.tensor(p, device=device), eps=0.3))
    _same(torch.special.erfinv(torch.tensor(p)), vt.special.erfinv(vt.tensor(p, device=device)))
    a = np.array([2.5, 4.0], np.float32)
    _same(torch.special.multigammaln(torch.tensor(a), 3),
          vt.special.multigammaln(vt.tensor(a, device=device), 3))
    _same(torch.special.polygamma(2, torch.tensor(a)),
          vt.special.polygamma(2, vt.tensor(a, device=device)))
    m = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    for name in ("softmax", "log_softmax", "logsumexp"):
        _same(getattr(torch.special, name)(torch.tensor(m), 1),
              getattr(vt.special, name)(vt.tensor(m, device=device), 1))
    _same(torch.special.ndtr(torch.tensor([1, 2])),
          vt.special.ndtr(vt.tensor([1, 2], device=device)))


def test_gradients_match_pytorch_and_gradcheck():
    b, c = np.array([0.0, 1.0, 0.0, 2.0]), np.array([0.5, -0.5, -1.0, 3.0])
    tb, tc = torch.tensor(b, requires_grad=True), torch.tensor(c, requires_grad=True)
    vb, vc = vt.tensor(b, requires_grad=True), vt.tensor(c, requires_grad=True)
    torch.special.xlog1py(tb, tc).sum().backward()
    vt.special.xlog1py(vb, vc).sum().backward()
    _same(tb.grad, vb.grad)
    _same(tc.grad, vc.grad)
    e = np.array([0.0, 0.5, 2.0, -1.0])
    te, ve = torch.tensor(e, requires_grad=True), vt.tensor(e, requires_grad=True)
    torch.special.entr(te).sum().backward()
    vt.special.entr(ve).sum().backward()
    _same(te.grad, ve.grad)
    pos = vt.tensor([0.3, 1.5, 2.0], dtype=vt.float64, requires_grad=True)
    other = vt.tensor([0.2, -0.5, 4.0], dtype=vt.float64, requires_grad=True)
    assert vt.autograd.gradcheck(vt.special.xlog1py, (pos, other))
    assert vt.autograd.gradcheck(vt.special.entr, (pos,))
    assert vt.autograd.gradcheck(vt.special.ndtr, (other,))


@pytest.mark.parametrize("device", DEVICES)
def test_polygamma_of_any_order_and_zeta_match_pytorch(device):
    x = np.array([0.3, 1.0, 2.5, 10.0, 100.0, -0.5, -3.7, 1e-3, 0.0, np.nan])  # no poles below 0
    s = np.array([1.0, 1.5, 2.0, 3.0, 0.5, 4.2, 2, 3, 2, 7, 2, 2])
    q = np.array([1.0, 2.0, 0.5, -2.5, 1.0, 3.0, 0.0, -1.0, 1e-3, 10.0, 1e9, -0.5])
    for dtype, tol in (("float32", 1e-5), ("float64", 1e-8)):  # PyTorch's trigamma: ~1e-9
        if dtype == "float64" and not device_has(device, "float64"):
            continue
        for n in (0, 1, 2, 3, 5):
            _same(torch.polygamma(n, torch.tensor(x.astype(dtype))),
                  vt.polygamma(n, vt.tensor(x.astype(dtype), device=device)), tol)
        _same(torch.special.zeta(torch.tensor(s.astype(dtype)), torch.tensor(q.astype(dtype))),
              vt.special.zeta(vt.tensor(s.astype(dtype), device=device),
                              vt.tensor(q.astype(dtype), device=device)), tol)
    _same(torch.special.zeta(torch.tensor([2.0, 3.0]), 2.0),
          vt.special.zeta(vt.tensor([2.0, 3.0], device=device), 2.0))
    with pytest.raises(ValueError, match="negative"):
        vt.polygamma(-1, vt.tensor([1.0], device=device))


def test_polygamma_and_zeta_gradients():
    for n in (1, 2, 3):
        t = torch.tensor([0.7, 2.0, -1.5], dtype=torch.float64, requires_grad=True)
        v = vt.tensor([0.7, 2.0, -1.5], dtype=vt.float64, requires_grad=True)
        torch.polygamma(n, t).sum().backward()
        vt.polygamma(n, v).sum().backward()
        _same(t.grad, v.grad, 1e-9)
    q = vt.tensor([0.7, 2.5], dtype=vt.float64, requires_grad=True)
    assert vt.autograd.gradcheck(lambda a: vt.special.zeta(3.0, a), (q,))
    assert vt.autograd.gradcheck(lambda a: vt.polygamma(2, a), (q,))


@pytest.mark.parametrize("device", DEVICES)
def test_erfinv_keeps_the_sign_of_zero(device):
    got = vt.special.erfinv(vt.tensor([-0.0, 0.0], device=device)).cpu().numpy()
    want = torch.special.erfinv(torch.tensor([-0.0, 0.0])).numpy()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_polygamma_method_takes_the_order_after_the_tensor():
    x = np.array([0.7, 2.5], np.float32)
    _same(torch.tensor(x).polygamma(2), vt.tensor(x).polygamma(2))
    _same(torch.tensor(x).polygamma(0), vt.tensor(x).polygamma(0))


@pytest.mark.parametrize("device", DEVICES)
def test_erfcx_log_ndtr_ndtri_match_torch_into_the_tails(device):
    """``erfcx``, ``log_ndtr`` and ``ndtri`` against PyTorch's float64 values (its float32
    ``erfcx`` loses digits where exp(x^2) is large; Volta's float32 on the CPU is its
    float64 rounded), tails, edges, NaN and infinities included; gradients in float64."""
    rng = np.random.default_rng(9)
    x = np.concatenate([[-30, -26.5, -10, -2, -1, -1e-10, 0.0, 1e-10, 0.9, 1.0, 1.1, 2, 10,
                         27, 1e10, 1e300, np.inf, -np.inf, np.nan], rng.standard_normal(300) * 5])
    p = np.concatenate([[0.0, 1e-300, 1e-100, 1e-10, 0.5, 0.5 + 1e-9, 0.5 - 1e-12, 1 - 1e-7,
                         1.0, -0.1, 1.1, np.nan], rng.uniform(size=300),
                        10 ** rng.uniform(-300, 0, 300)])
    for name, arg in (("erfcx", x), ("log_ndtr", x), ("ndtri", p)):
        for dtype in ("float64", "float32"):
            if dtype == "float64" and not device_has(device, "float64"):
                continue
            with np.errstate(all="ignore"):
                a = arg.astype(dtype)
                ref = getattr(torch.special, name)(torch.tensor(a.astype(np.float64))).numpy()
            got = getattr(vt.special, name)(vt.tensor(a, device=device)).cpu().numpy()
            tol = 1e-13 if dtype == "float64" else (3e-7 if device == "cpu" else 2e-5)
            keep = np.abs(ref) < np.finfo(dtype).max  # finite in the dtype
            if device != "cpu" and name == "ndtri":  # GPUs flush subnormals to zero
                keep &= ~((np.abs(a) < np.finfo(dtype).tiny) & (a != 0))
            np.testing.assert_allclose(got[keep], ref[keep].astype(dtype), rtol=tol,
                                       atol=np.finfo(dtype).tiny, err_msg=f"{name} {dtype}")
            assert ((np.isnan(got) == np.isnan(ref)) | ~keep).all(), (name, dtype)
    for name, arg in (("erfcx", rng.standard_normal(6) * 3),
                      ("log_ndtr", rng.standard_normal(6) * 5),
                      ("ndtri", rng.uniform(0.01, 0.99, 6))):
        t = torch.tensor(arg, requires_grad=True)
        getattr(torch.special, name)(t).sum().backward()
        v = vt.tensor(arg, requires_grad=True, device=device if device_has(device, "float64")
                      else "cpu")
        getattr(vt.special, name)(v).sum().backward()
        np.testing.assert_allclose(v.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-10,
                                   err_msg=name)
        assert vt.autograd.gradcheck(getattr(vt.special, name), (vt.tensor(arg,
                                                                           requires_grad=True),))


@pytest.mark.parametrize("device", DEVICES)
def test_gammainc_gammaincc_match_mpmath_and_torch(device):
    """The regularized incomplete gamma functions against mpmath (40 digits; PyTorch's
    own asymptotic expansion is off by up to ~2e-9 for mid-sized ``a``, Volta's series and
    continued fraction by ~1e-13 up to ``a`` = 1000), PyTorch's edge values (NaN for
    negative arguments, the step at ``a = 0``, the infinities) and its gradient w.r.t.
    ``x``; none w.r.t. ``a``, as PyTorch."""
    mpmath = pytest.importorskip("mpmath")
    rng = np.random.default_rng(11)
    a = np.concatenate([10 ** rng.uniform(-2, 3, 60), [0.5, 1.0, 30.0, 500.0]])
    x = np.concatenate([a[:60] * 10 ** rng.uniform(-1, 0.6, 60), [0.1, 7.0, 29.0, 480.0]])
    mpmath.mp.dps = 40
    ref_p = np.array([float(mpmath.gammainc(ai, 0, xi, regularized=True))
                      for ai, xi in zip(a, x)])
    f64 = device_has(device, "float64")
    dt = "float64" if f64 else "float32"
    got_p = vt.special.gammainc(vt.tensor(a, dtype=dt, device=device),
                                vt.tensor(x, dtype=dt, device=device)).cpu().numpy()
    got_q = vt.special.gammaincc(vt.tensor(a, dtype=dt, device=device),
                                 vt.tensor(x, dtype=dt, device=device)).cpu().numpy()
    # in float32 alone (a GPU without float64) the prefactor x^a e^-x / Gamma(a) comes
    # from a sum of terms of size ~a: ~1e-4 relative for a of 500
    tol = 1e-11 if f64 else 1e-3
    np.testing.assert_allclose(got_p, ref_p, rtol=tol, atol=1e-300 if f64 else 1e-30)
    np.testing.assert_allclose(got_q, 1.0 - ref_p, rtol=tol, atol=1e-15 if f64 else 1e-6)
    np.testing.assert_allclose(got_p, torch.special.gammainc(torch.tensor(a), torch.tensor(x)),
                               rtol=1e-7 if f64 else 1e-3, atol=1e-300 if f64 else 1e-30)
    inf, nan = np.inf, np.nan
    ea = np.array([0.0, 0.0, -1.0, 1.0, 1.0, 1.0, inf, inf, 2.0, nan, 1.0])
    ex = np.array([0.0, 1.0, 1.0, -1.0, 0.0, inf, 1.0, inf, 0.0, 1.0, nan])
    for name in ("gammainc", "gammaincc"):
        want = getattr(torch.special, name)(torch.tensor(ea), torch.tensor(ex)).numpy()
        got = getattr(vt.special, name)(vt.tensor(ea, dtype=dt, device=device),
                                        vt.tensor(ex, dtype=dt, device=device)).cpu().numpy()
        np.testing.assert_array_equal(got, want.astype(dt), err_msg=name)
    ta = torch.tensor([2.5, 0.7, 40.0], dtype=torch.float64)
    tx = torch.tensor([1.3, 2.0, 45.0], dtype=torch.float64, requires_grad=True)
    va = vt.tensor(ta.numpy())
    vx = vt.tensor(tx.detach().numpy(), requires_grad=True)
    for name in ("gammainc", "gammaincc"):
        tx.grad, vx.grad = None, None
        getattr(torch.special, name)(ta, tx).sum().backward()
        getattr(vt.special, name)(va, vx).sum().backward()
        np.testing.assert_allclose(vx.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    with pytest.raises(NotImplementedError):
        vt.special.gammainc(vt.tensor([2.0], requires_grad=True), vt.tensor([1.0])).backward()


POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_orthogonal_polynomials_match_torch(device, name):
    """Every degree form (negative: 0; fractional: truncated; above PyTorch's switch to
    the trigonometric forms), the points +-1 and 0, outside [-1, 1], tensor or number
    degrees, integer inputs (in the default float dtype); no gradient, as PyTorch."""
    x = np.array([-1.0, -0.5, 0.0, 0.3, 1.0, 1.5, -2.0, 0.999, -0.2, 0.7, 0.5, 0.25])
    f64 = device_has(device, "float64")
    dt = "float64" if f64 else "float32"
    for n in (-1, 0, 1, 2, 3, 5, 7, 9, 10, 12, 2.7):
        want = getattr(torch.special, name)(torch.tensor(x), torch.tensor(np.full_like(x, n)))
        got = getattr(vt.special, name)(vt.tensor(x, dtype=dt, device=device),
                                        vt.tensor(np.full_like(x, n), dtype=dt, device=device))
        assert not got.requires_grad
        # float32 on a GPU: its sin/cos of (n + 1/2) t for degrees past 8
        tol = 1e-12 if f64 else 1e-4
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=tol, atol=tol,
                                   err_msg=f"{name} n={n}")
    degrees = [0, 1, 2, 5, 11]
    want = getattr(torch.special, name)(torch.tensor([0.3, 0.3, 2.0, -1.0, 0.5]),
                                        torch.tensor(degrees))
    got = getattr(vt.special, name)(vt.tensor([0.3, 0.3, 2.0, -1.0, 0.5], device=device),
                                    vt.tensor(degrees, device=device))
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=2e-5, atol=2e-5)
    assert got.dtype == vt.float32
    np.testing.assert_allclose(
        getattr(vt.special, name)(vt.tensor([2, 3], device=device), 3).cpu().numpy(),
        getattr(torch.special, name)(torch.tensor([2, 3]), 3).numpy(), rtol=1e-5)
    assert np.isnan(getattr(vt.special, name)(vt.tensor([np.nan]), 4).item())
