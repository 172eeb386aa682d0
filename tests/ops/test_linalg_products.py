"""``addmv``, ``addr``, ``addbmm``, ``chain_matmul``, ``renorm`` and ``linalg.norm``'s
choice between vector and matrix norms, against PyTorch on every device: values, the
gradients of every input, ``beta=0`` ignoring NaN in ``input``, errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vt_helpers import available_devices

import volta_core as vt

torch = pytest.importorskip("torch")

DEVICES = available_devices()
INF = float("inf")


def _run(lib, device, fn, arrays, grad_seed=1):
    """``fn`` on leaves made from ``arrays``; returns the output and every input's grad."""
    if lib is torch:
        leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    else:
        leaves = [vt.tensor(a, device=device, requires_grad=True) for a in arrays]
    out = fn(lib, *leaves)
    g = np.random.default_rng(grad_seed).standard_normal(tuple(out.shape)).astype(arrays[0].dtype)
    out.backward(torch.tensor(g) if lib is torch else vt.tensor(g, device=device))
    return [out] + [t.grad for t in leaves]


def _compare(device, fn, arrays, tol=1e-5):
    want = _run(torch, device, fn, arrays)
    got = _run(vt, device, fn, arrays)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g.detach().cpu().numpy(), w.detach().numpy(), rtol=tol,
                                   atol=tol)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=15, deadline=None)
@given(n=st.integers(0, 4), m=st.integers(0, 4), k=st.integers(0, 3), b=st.integers(0, 3),
       beta=st.sampled_from([1.0, 0.5, 0.0]), alpha=st.sampled_from([1.0, -2.0]),
       bshape=st.sampled_from(["full", "row"]), seed=st.integers(0, 99))
def test_addmv_addr_addbmm_match_pytorch(device, n, m, k, b, beta, alpha, bshape, seed):
    rng = np.random.default_rng(seed)

    def r(*s):
        return rng.standard_normal(s).astype(np.float32)

    def inp(*s):
        return r(*s) if bshape == "full" else r(s[-1])

    kw = {"beta": beta, "alpha": alpha}
    _compare(device, lambda lib, i, a, v: lib.addmv(i, a, v, **kw), [inp(n), r(n, m), r(m)])
    _compare(device, lambda lib, i, a, v: lib.addr(i, a, v, **kw), [inp(n, m), r(n), r(m)])
    _compare(device, lambda lib, i, a, c: lib.addbmm(i, a, c, **kw),
             [inp(n, m), r(b, n, k), r(b, k, m)])


@pytest.mark.parametrize("device", DEVICES)
def test_beta_zero_ignores_nan_and_methods_exist(device):
    nan = np.full((2, 3), np.nan, np.float32)
    a = np.ones((4, 2, 5), np.float32)
    c = np.ones((4, 5, 3), np.float32)
    got = vt.tensor(nan, device=device).addbmm(vt.tensor(a, device=device),
                                               vt.tensor(c, device=device), beta=0)
    np.testing.assert_array_equal(got.cpu().numpy(), np.full((2, 3), 20.0))
    got = vt.tensor(nan[0, :2], device=device).addmv(vt.tensor(a[0], device=device),
                                                     vt.tensor(a[0, 0], device=device),
                                                     beta=0)
    np.testing.assert_array_equal(got.cpu().numpy(), [5.0, 5.0])
    with pytest.raises(vt.VoltaError):
        vt.addmv(vt.zeros(2, device=device), vt.zeros(2, 3, device=device),
                 vt.zeros(2, device=device))


@pytest.mark.parametrize("device", DEVICES)
def test_chain_matmul_is_multi_dot(device):
    rng = np.random.default_rng(0)
    mats = [rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (4, 2), (2, 5))]
    _compare(device, lambda lib, *ms: lib.chain_matmul(*ms), mats, tol=1e-4)
    _compare(device, lambda lib, a: lib.chain_matmul(a), mats[:1])
    with pytest.raises(vt.VoltaError):
        vt.chain_matmul(vt.zeros(3, device=device), vt.zeros(3, 2, device=device))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("p,dim,maxnorm", [(2, 0, 1.0), (1, 1, 2.0), (INF, 2, 0.5),
                                           (3, -1, 100.0), (2, 1, 0.0), (0.5, 0, 1.0)])
def test_renorm_matches_pytorch(device, p, dim, maxnorm):
    x = np.random.default_rng(3).standard_normal((3, 4, 2)).astype(np.float32)
    _compare(device, lambda lib, t: lib.renorm(t, p, dim, maxnorm), [x], tol=1e-4)


def test_renorm_gradcheck_and_errors():
    x = vt.tensor(np.random.default_rng(1).standard_normal((3, 4)), requires_grad=True)
    assert vt.autograd.gradcheck(lambda t: vt.renorm(t, 2, 1, 1.0), (x,))
    assert vt.autograd.gradcheck(lambda t: t.renorm(1, 0, 0.5), (x,))
    for bad, match in [(lambda: vt.renorm(vt.zeros(3), 2, 0, 1), "2 dimensions"),
                       (lambda: vt.renorm(vt.zeros(2, 2), -1, 0, 1), "non-positive"),
                       (lambda: vt.renorm(vt.zeros(2, 2), 2, 0, -1), "maxnorm"),
                       (lambda: vt.renorm(vt.zeros(2, 2, dtype=vt.int64), 2, 0, 1),
                        "floating")]:
        with pytest.raises((vt.VoltaError, ValueError), match=match):
            bad()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,ord,dim,keepdim", [
    ((3, 4), None, None, False), ((3, 4), 2, None, False), ((3, 4), "nuc", None, False),
    ((3, 4), "fro", None, True), ((3, 4), 1, None, False), ((3, 4), -INF, None, False),
    ((3, 4), -2, None, False), ((2, 3, 3), None, None, False), ((2, 3, 3), 2, (1, 2), False),
    ((2, 3, 3), 3, 1, True), ((2, 3, 3), None, (0, 2), False), ((4,), 3, None, False),
    ((4,), None, None, False), ((3, 4), 2, 0, False), ((2, 3, 3), "fro", (2, 0), True)])
def test_linalg_norm_picks_vector_or_matrix_norms_as_pytorch(device, shape, ord, dim,
                                                             keepdim):
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    _compare(device, lambda lib, t: lib.linalg.norm(t, ord, dim, keepdim), [x], tol=1e-4)


def test_linalg_norm_refuses_what_pytorch_refuses():
    with pytest.raises(vt.VoltaError, match="1D or 2D"):
        vt.linalg.norm(vt.zeros(2, 3, 3), 2)
    with pytest.raises(vt.VoltaError, match="matrices"):
        vt.linalg.norm(vt.zeros(4), "nuc")
