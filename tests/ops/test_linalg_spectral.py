"""``vt.linalg``'s decompositions and what is built on them against PyTorch CPU on every
device: eigh, svd (reduced and full), qr (tall and wide), pinv, lstsq, matrix_rank, cond,
matrix_norm (every ord), matrix_power, matrix_exp, multi_dot, vecdot, cross, the ``_ex``
forms and LinAlgError; values and gradients, with hypothesis drawing batch and matrix
shapes. Factors defined up to sign are compared through sign-free quantities."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vt_helpers import available_devices

import volta_core as vt

torch = pytest.importorskip("torch")

DEVICES = available_devices()


def _gauge(u, a):
    """``u`` with each column's sign fixed by ``a`` ``(..., k)`` (a sign-free form)."""
    return u * a.sign().unsqueeze(-2)


CASES = {  # name: (fn(L, *tensors), input kinds)
    "eigh": (lambda L, a: L.linalg.eigh(a).eigenvalues, "spd"),
    "eigh_vectors": (lambda L, a: L.linalg.eigh(a).eigenvectors.abs(), "spd"),
    "eigh_upper": (lambda L, a: L.linalg.eigvalsh(a, UPLO="U"), "square"),
    "svd_S": (lambda L, a: L.linalg.svd(a).S, "rect"),
    "svd_factors": (lambda L, a: (lambda u, s, vh: _gauge(u, u[..., 0, :]) * s.unsqueeze(-2)
                                  )(*L.linalg.svd(a, full_matrices=False)), "rect"),
    "svd_reconstruct": (lambda L, a: (lambda u, s, vh: (u * s.unsqueeze(-2)) @ vh)(
        *L.linalg.svd(a, full_matrices=False)), "rect"),
    "qr": (lambda L, a: (lambda q, r: _gauge(q, r.diagonal(0, -2, -1)))(*L.linalg.qr(a)),
           "rect"),
    "qr_R": (lambda L, a: (lambda q, r: r * r.diagonal(0, -2, -1).sign().unsqueeze(-1))(
        *L.linalg.qr(a)), "rect"),
    "pinv": (lambda L, a: L.linalg.pinv(a), "rect"),
    "lstsq": (lambda L, a, b: L.linalg.lstsq(a, b).solution, "tall_rhs"),
    "matrix_rank": (lambda L, a: L.linalg.matrix_rank(a).to(a.dtype) + 0 * a.sum(), "rect"),
    "cond": (lambda L, a: L.linalg.cond(a), "square"),
    "cond_fro": (lambda L, a: L.linalg.cond(a, "fro"), "square"),
    "norm_fro": (lambda L, a: L.linalg.matrix_norm(a), "rect"),
    "norm_nuc": (lambda L, a: L.linalg.matrix_norm(a, "nuc"), "rect"),
    "norm_2": (lambda L, a: L.linalg.matrix_norm(a, 2), "rect"),
    "norm_-2": (lambda L, a: L.linalg.matrix_norm(a, -2, keepdim=True), "rect"),
    "norm_1": (lambda L, a: L.linalg.matrix_norm(a, 1), "rect"),
    "norm_-inf": (lambda L, a: L.linalg.matrix_norm(a, -float("inf")), "rect"),
    "power_3": (lambda L, a: L.linalg.matrix_power(a, 3), "square"),
    "power_-2": (lambda L, a: L.linalg.matrix_power(a, -2), "spd"),
    "power_0": (lambda L, a: L.linalg.matrix_power(a, 0) + 0 * a, "square"),
    "matrix_exp": (lambda L, a: L.linalg.matrix_exp(a), "square"),
    "multi_dot": (lambda L, a: (lambda b: L.linalg.multi_dot([b[0], b.mT, b]))(
        a.flatten(0, -2)), "rect"),
    "vecdot": (lambda L, a: L.linalg.vecdot(a, a.flip(-1)), "rect"),
    "inv_ex": (lambda L, a: L.linalg.inv_ex(a).inverse, "spd"),
    "cholesky_ex": (lambda L, a: L.linalg.cholesky_ex(a).L, "spd"),
}


def _inputs(kind, batch, m, n, rng, dt):
    a = rng.standard_normal((*batch, m, n))
    if kind == "square":
        a = rng.standard_normal((*batch, n, n))
    elif kind == "spd":
        b = rng.standard_normal((*batch, n, n))
        a = b @ np.swapaxes(b, -1, -2) + n * np.eye(n)
    elif kind == "tall_rhs":
        a = rng.standard_normal((*batch, max(m, n), n))
        return [a.astype(dt), rng.standard_normal((*batch, max(m, n), 2)).astype(dt)]
    return [a.astype(dt)]


def _run(lib, fn, arrays, device, grad=True):
    ts = [(vt.tensor(a, device=device) if lib is vt else torch.tensor(a)).requires_grad_(grad)
          for a in arrays]
    y = fn(lib, *ts)
    host = (lambda t: t.detach().cpu().numpy()) if lib is vt else (lambda t: t.detach().numpy())
    if not grad:
        return [host(y)]
    up = np.random.default_rng(1).standard_normal(tuple(y.shape)).astype(arrays[0].dtype)
    y.backward(vt.tensor(up, device=device) if lib is vt else torch.tensor(up))
    return [host(y)] + [host(t.grad) for t in ts]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
@settings(max_examples=8, deadline=None)
@given(batch=st.lists(st.integers(1, 2), max_size=1), m=st.integers(1, 4),
       n=st.integers(1, 4), seed=st.integers(0, 999))
def test_linalg_as_pytorch(device, name, batch, m, n, seed):
    fn, kind = CASES[name]
    dt = np.float64 if device == "cpu" else np.float32
    arrays = _inputs(kind, tuple(batch), m, n, np.random.default_rng(seed), dt)
    if name == "cond_fro" or name == "cond":  # a condition number needs an invertible A
        arrays[0] = arrays[0] + 4 * np.eye(arrays[0].shape[-1], dtype=dt)
    grad = name != "cond_fro"  # PyTorch's backward of cond(A, 'fro') fails (in place)
    want = _run(torch, fn, [a.astype(np.float64) for a in arrays], "cpu", grad)
    got = _run(vt, fn, arrays, device, grad)
    tol = 1e-7 if dt == np.float64 else 2e-3
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_full_svd_factors_and_mode_r():
    a = np.random.default_rng(0).standard_normal((4, 2))
    u, s, vh = vt.linalg.svd(vt.tensor(a))
    assert u.shape == (4, 4) and vh.shape == (2, 2)
    np.testing.assert_allclose((u[:, :2] * s) @ vh, a, atol=1e-12)
    np.testing.assert_allclose(u.mT @ u, np.eye(4), atol=1e-12)
    assert vt.linalg.qr(vt.tensor(a), mode="r").Q.shape == (0,)
    # as in PyTorch: the forward runs, a backward through R (or a tall complete Q) raises
    for mode in ("r", "complete"):
        x = vt.tensor(a, requires_grad=True)
        q, r = vt.linalg.qr(x, mode=mode)
        assert r.requires_grad
        np.testing.assert_allclose(r.detach().numpy(),
                                   torch.linalg.qr(torch.tensor(a), mode=mode).R.numpy(),
                                   atol=1e-12)
        with pytest.raises(vt.AutogradError, match=f"mode='{mode}'"):
            r.sum().backward()


def test_singular_and_indefinite_matrices_raise_linalg_error():
    """A backend's LAPACK error is Volta's LinAlgError (a RuntimeError, as PyTorch's);
    the ``_ex`` forms report the first failing minor or pivot instead."""
    indefinite = vt.tensor([[[1.0, 2.0], [2.0, 1.0]], [[2.0, 0.0], [0.0, 3.0]]])
    with pytest.raises(vt.linalg.LinAlgError, match="positive-definite"):
        vt.linalg.cholesky(indefinite)
    with pytest.raises(RuntimeError, match="singular"):
        vt.linalg.inv(vt.zeros(2, 2))
    with pytest.raises(vt.LinAlgError, match="singular"):
        vt.linalg.solve(vt.zeros(2, 2), vt.ones(2))
    for m in (torch, vt):
        assert m.linalg.cholesky_ex(m.tensor(indefinite.numpy())).info.tolist() == [2, 0]
        for a, info in [([[1.0, 0.0], [0.0, 0.0]], 2), ([[0.0, 0.0], [0.0, 0.0]], 1),
                        ([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], 3)]:
            assert int(m.linalg.inv_ex(m.tensor(a)).info) == info


def test_sweep_findings_against_pytorch():
    """Cases a random sweep against PyTorch found: slogdet/logdet of large matrices (det
    overflows; PyTorch sums the LU factors' logarithms), matrix norms and condition
    numbers of empty matrices, identity powers in the graph, and the older solve
    functions (cholesky_solve/cholesky_inverse/triangular_solve, tensorinv/tensorsolve)
    with PyTorch's gradients."""
    from torch_ref import compare

    rng = np.random.default_rng(4)
    big = rng.standard_normal((300, 300)) * 10
    got, want = vt.linalg.slogdet(vt.tensor(big)), torch.linalg.slogdet(torch.tensor(big))
    assert float(got.sign) == float(want.sign)
    np.testing.assert_allclose(float(got.logabsdet), float(want.logabsdet), rtol=1e-10)
    spd = big @ big.T
    np.testing.assert_allclose(float(vt.logdet(vt.tensor(spd))),
                               float(torch.logdet(torch.tensor(spd))), rtol=1e-10)
    sq = rng.standard_normal((2, 3, 3))
    compare(lambda m, a: tuple(m.linalg.slogdet(a)), sq)
    compare(lambda m, a: m.linalg.matrix_power(a, 0), sq)
    for o in ("fro", "nuc", 2, 1, float("inf")):
        compare(lambda m, a, o=o: m.linalg.matrix_norm(a, o), np.zeros((2, 0, 3)), grad=False)
    compare(lambda m, a: m.linalg.cond(a), np.zeros((2, 0, 0)), grad=False)
    low = np.linalg.cholesky(sq @ sq.transpose(0, 2, 1) + 3 * np.eye(3))
    b = rng.standard_normal((2, 3, 2))
    for upper in (False, True):
        f = low.transpose(0, 2, 1) if upper else low
        compare(lambda m, x, c, u=upper: m.cholesky_solve(x, c, upper=u), b, f)
        compare(lambda m, c, u=upper: m.cholesky_inverse(c, upper=u), f[0])
        for tr in (False, True):
            compare(lambda m, x, c, u=upper, t=tr: tuple(m.triangular_solve(
                x, c, upper=u, transpose=t)), b, f)
    compare(lambda m, a: m.linalg.tensorinv(a, ind=2), rng.standard_normal((2, 3, 6)))
    compare(lambda m, a, c: m.linalg.tensorsolve(a, c), rng.standard_normal((2, 3, 6)),
            rng.standard_normal((2, 3)))


def test_det_gradient_of_a_singular_matrix_is_its_cofactor_matrix():
    """Where the determinant is 0 the gradient is the cofactor matrix (from the SVD),
    not an error: for [[1, 2], [2, 4]] it is [[4, -2], [-2, 1]]."""
    x = vt.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=vt.float64, requires_grad=True)
    vt.linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)
    check = vt.tensor(np.random.default_rng(5).standard_normal((3, 3)), dtype=vt.float64)
    check[2] = check[0]  # rank 2: the cofactors of the dependent rows are not all 0
    x = check.detach().requires_grad_()
    vt.linalg.det(x).backward()
    assert float(x.grad.abs().sum()) > 0


@pytest.mark.parametrize("shape,k", [((5, 3), 3), ((4, 4), 2), ((2, 6, 3), 3), ((3, 3), 3)])
def test_householder_product_and_geqrf_match_torch(shape, k):
    """``linalg.householder_product`` (``orgqr``): values and gradients of A and tau;
    ``geqrf``: LAPACK's reflectors and scales (a column already zero below the diagonal
    gets tau 0), and their product is the QR's Q."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    a = rng.standard_normal(shape)
    tau = rng.standard_normal(shape[:-2] + (k,))
    w = rng.standard_normal(shape)
    ta, tt = torch.tensor(a, requires_grad=True), torch.tensor(tau, requires_grad=True)
    va, vtau = vt.tensor(a, requires_grad=True), vt.tensor(tau, requires_grad=True)
    tq, vq = torch.linalg.householder_product(ta, tt), vt.orgqr(va, vtau)
    np.testing.assert_allclose(vq.detach().numpy(), tq.detach().numpy(), atol=1e-13)
    (tq * torch.tensor(w)).sum().backward()
    (vq * vt.tensor(w)).sum().backward()
    np.testing.assert_allclose(va.grad.numpy(), ta.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(vtau.grad.numpy(), tt.grad.numpy(), atol=1e-12)
    for m in (a, np.eye(shape[-2], shape[-1])):  # the identity: no reflection needed
        (t_a, t_tau), (v_a, v_tau) = torch.geqrf(torch.tensor(m)), vt.geqrf(vt.tensor(m))
        np.testing.assert_allclose(v_a.numpy(), t_a.numpy(), atol=1e-13)
        np.testing.assert_allclose(v_tau.numpy(), t_tau.numpy(), atol=1e-13)
        q = vt.linalg.householder_product(v_a, v_tau).numpy()
        np.testing.assert_allclose(q @ np.triu(v_a.numpy())[..., :shape[-1], :], m, atol=1e-12)
    for bad_a, bad_tau in ((np.ones((2, 4)), np.ones(2)), (np.ones((4, 2)), np.ones(3))):
        with pytest.raises(vt.ShapeError):
            vt.linalg.householder_product(vt.tensor(bad_a), vt.tensor(bad_tau))
        with pytest.raises(RuntimeError):
            torch.linalg.householder_product(torch.tensor(bad_a), torch.tensor(bad_tau))


def test_slogdet_gradient_of_a_singular_matrix_is_infinite_not_an_error():
    """PyTorch's backward of ``slogdet`` at a singular matrix gives infinities (its LU
    solve divides by a zero pivot); Volta's is the cofactor matrix over a signed zero
    (it raised LinAlgError). The batch's regular matrices keep their ``A^-T``."""
    a = np.array([[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], [2.0, 4.0]]])
    x = vt.tensor(a, requires_grad=True)
    vt.linalg.slogdet(x).logabsdet.sum().backward()
    t = torch.tensor(a, requires_grad=True)
    torch.linalg.slogdet(t).logabsdet.sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[0], t.grad.numpy()[0], rtol=1e-12)
    assert np.isinf(x.grad.numpy()[1]).all() and np.isinf(t.grad.numpy()[1]).all()
    np.testing.assert_array_equal(np.abs(x.grad.numpy()[1]), np.abs(t.grad.numpy()[1]))
