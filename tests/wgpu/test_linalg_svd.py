"""linalg.svd / svdvals on the device (one-sided Jacobi, one workgroup per matrix), and
matrix_rank, pinv and the 2-, -2- and nuclear matrix_norm built on them."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import has

_SVD = np.linalg.svd  # the reference, kept before a test takes NumPy's away

SHAPES = [(4, 4), (5, 3), (3, 5), (2, 3, 6, 2), (2, 2, 7), (1, 1), (1, 6), (16, 16), (3, 9, 9)]
DTYPES = ["float32"] + (["float64"] if has("float64") else [])
TOL = {"float32": 2e-5, "float64": 1e-12}


@pytest.fixture
def on_device(monkeypatch):
    """Fail if the SVD goes through NumPy on the host."""
    def boom(*a, **k):
        raise AssertionError("the SVD went through NumPy on the host")
    monkeypatch.setattr(np.linalg, "svd", boom)


def _eye_err(q: np.ndarray) -> float:
    """How far ``q^T q`` is from the identity."""
    return float(np.abs(np.swapaxes(q, -1, -2) @ q - np.eye(q.shape[-1])).max(initial=0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_svd_on_the_device(xp, on_device, shape, full, dtype):
    a = np.random.default_rng(len(shape) + shape[-1]).standard_normal(shape).astype(dtype)
    eu, es, evh = _SVD(a, full_matrices=full)
    res = xp.linalg.svd(xp.asarray(a), full_matrices=full)
    u, s, vh = (xp.to_numpy(t) for t in res)
    assert (u.shape, s.shape, vh.shape) == (eu.shape, es.shape, evh.shape)
    assert u.dtype == s.dtype == vh.dtype == np.dtype(dtype)
    tol = TOL[dtype]
    np.testing.assert_allclose(s, es, rtol=tol, atol=tol * es.max())
    assert np.all(s[..., :-1] >= s[..., 1:])  # descending
    k = s.shape[-1]
    np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=tol * 4)
    assert _eye_err(u) < tol and _eye_err(np.swapaxes(vh, -1, -2)) < tol
    # S alone is the same computation, bit for bit
    np.testing.assert_array_equal(xp.to_numpy(xp.linalg.svdvals(xp.asarray(a))), s)


def test_a_stack_gives_what_its_matrices_give(xp, on_device):
    a = np.random.default_rng(3).standard_normal((3, 2, 5, 4)).astype(np.float32)
    x = xp.asarray(a)
    u, s, vh = (xp.to_numpy(t) for t in xp.linalg.svd(x))
    for i in range(3):
        for j in range(2):
            one = [xp.to_numpy(t) for t in xp.linalg.svd(x[i, j])]
            for got, whole in zip(one, (u, s, vh)):
                np.testing.assert_array_equal(got, whole[i, j])


@pytest.mark.parametrize("full", [True, False])
def test_rank_deficient_and_special_matrices(xp, on_device, full):
    rng = np.random.default_rng(4)
    cases = [(rng.standard_normal((6, 2)) @ rng.standard_normal((2, 5))).astype(np.float32),
             np.zeros((4, 3), np.float32), np.ones((5, 5), np.float32) * 1e30,
             np.ones((3, 4), np.float32) * 1e-30, np.diag([3.0, -1.0, 2.0]).astype(np.float32),
             np.eye(4, 2, dtype=np.float32)]
    for a in cases:
        u, s, vh = (xp.to_numpy(t) for t in xp.linalg.svd(xp.asarray(a), full_matrices=full))
        es = _SVD(a.astype(np.float64), compute_uv=False)
        np.testing.assert_allclose(s, es, rtol=1e-5, atol=1e-6 * es.max())
        k = s.shape[-1]
        np.testing.assert_allclose((u[:, :k] * s) @ vh[:k], a, rtol=1e-5,
                                   atol=1e-6 * max(1.0, float(np.abs(a).max())))
        # the columns of a zero singular value are completed to an orthonormal basis
        assert _eye_err(u) < 1e-5 and _eye_err(vh.T) < 1e-5


def test_empty_matrices(xp, on_device):
    for shape in [(3, 0), (0, 3), (0, 4, 4), (2, 0, 0)]:
        a = np.zeros(shape, np.float32)
        for full in (True, False):
            exp = _SVD(a, full_matrices=full)
            got = xp.linalg.svd(xp.asarray(a), full_matrices=full)
            for g, e in zip(got, exp):
                np.testing.assert_array_equal(xp.to_numpy(g), e)
        assert xp.linalg.svdvals(xp.asarray(a)).shape == shape[:-2] + (min(shape[-2:]),)


def test_float16_computes_in_float32(xp):
    if not has("float16"):
        pytest.skip("the adapter has no shader-f16")
    a = np.random.default_rng(5).standard_normal((3, 4)).astype(np.float16)
    res = xp.linalg.svd(xp.asarray(a))
    assert res.U.dtype == res.S.dtype == xp.float16
    np.testing.assert_allclose(xp.to_numpy(res.S).astype(np.float32),
                               _SVD(a.astype(np.float32), compute_uv=False), rtol=2e-3)


def test_rank_pinv_and_norms(xp, on_device):
    rng = np.random.default_rng(6)
    low = (rng.standard_normal((2, 6, 2)) @ rng.standard_normal((2, 2, 5))).astype(np.float32)
    b = rng.standard_normal((3, 5, 4)).astype(np.float32)
    with pytest.MonkeyPatch.context() as mp:  # the references need NumPy's SVD back
        mp.setattr(np.linalg, "svd", _SVD)
        ranks = np.linalg.matrix_rank(low)
        pinv = np.linalg.pinv(b, rtol=5 * np.finfo(np.float32).eps)
        pinv_low = np.linalg.pinv(low, rtol=6 * np.finfo(np.float32).eps)
        norms = {o: np.linalg.norm(b, ord=o, axis=(-2, -1)) for o in (2, -2, "nuc")}
    r = xp.linalg.matrix_rank(xp.asarray(low))
    assert r.dtype == xp.int64
    np.testing.assert_array_equal(xp.to_numpy(r), ranks)
    assert xp.to_numpy(xp.linalg.matrix_rank(xp.asarray(low), rtol=0.9)).tolist() == [1, 1]
    rt = xp.asarray(np.array([1e-6, 0.99], np.float32))
    assert xp.to_numpy(xp.linalg.matrix_rank(xp.asarray(low), rtol=rt)).tolist() == [2, 1]
    np.testing.assert_allclose(xp.to_numpy(xp.linalg.pinv(xp.asarray(b))), pinv, atol=1e-4)
    np.testing.assert_allclose(xp.to_numpy(xp.linalg.pinv(xp.asarray(low))), pinv_low,
                               atol=1e-4)
    for o, e in norms.items():
        got = xp.linalg.matrix_norm(xp.asarray(b), ord=o)
        np.testing.assert_allclose(xp.to_numpy(got), e, rtol=1e-5)
    assert xp.linalg.matrix_norm(xp.asarray(b), ord=2, keepdims=True).shape == (3, 1, 1)
    assert xp.to_numpy(xp.linalg.matrix_rank(xp.asarray(np.zeros((2, 0, 3), np.float32)))
                       ).tolist() == [0, 0]
    assert xp.linalg.pinv(xp.asarray(np.zeros((0, 3), np.float32))).shape == (3, 0)


def test_large_matrices_go_through_the_host(xp):
    from volta_wgpu.linalg import DEVICE_MAX_N
    a = np.random.default_rng(7).standard_normal((DEVICE_MAX_N + 3, 5)).astype(np.float32)
    u, s, vh = (xp.to_numpy(t) for t in xp.linalg.svd(xp.asarray(a), full_matrices=False))
    np.testing.assert_allclose(s, _SVD(a, compute_uv=False), rtol=1e-5)
    np.testing.assert_allclose((u * s) @ vh, a, atol=1e-5)


def test_a_nan_or_inf_gives_nan_without_touching_its_neighbours(xp, on_device):
    a = np.random.default_rng(8).standard_normal((3, 4, 3)).astype(np.float32)
    a[0, 1, 1], a[1, 2, 2] = np.nan, -np.inf
    for full in (True, False):
        u, s, vh = (xp.to_numpy(t) for t in xp.linalg.svd(xp.asarray(a), full_matrices=full))
        for t in (u, s, vh):
            assert np.isnan(t[:2]).all() and np.isfinite(t[2]).all()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(np.linalg, "svd", _SVD)
        np.testing.assert_allclose(xp.to_numpy(xp.linalg.svdvals(xp.asarray(a[2]))),
                                   np.linalg.svd(a[2], compute_uv=False), rtol=1e-5)


def _sweep(w: np.ndarray) -> np.ndarray:
    """One sweep of the kernel's rotations (same tournament order), in float64."""
    m, n = w.shape
    w = w.copy()
    npos = n + (n & 1)

    def place(i: int, r: int) -> int:
        return 0 if i == 0 else (i - 1 + r) % (npos - 1) + 1
    for r in range(npos - 1):
        for k in range(npos // 2):
            p, q = sorted((place(k, r), place(npos - 1 - k, r)))
            if q < n:
                x, y = w[:, p].copy(), w[:, q].copy()
                al, be, ga = x @ x, y @ y, x @ y
                if abs(ga) > np.sqrt(m) * 2.0 ** -23 * np.sqrt(al * be):
                    z = (be - al) / (2 * ga)
                    t = np.copysign(1 / (abs(z) + np.sqrt(1 + z * z)), z)
                    c = 1 / np.sqrt(1 + t * t)
                    w[:, p], w[:, q] = c * x - c * t * y, c * t * x + c * y
    return w


def test_one_sweep_with_every_thread_busy(xp, monkeypatch):
    # a whole SVD of 128 x 128 overruns llvmpipe's loop cap, one sweep does not: all 64
    # threads rotate at once, and the result must keep W W^T and match the sweep on the host
    from volta_wgpu.array import to_numpy
    from volta_wgpu.kernels import svd as K
    monkeypatch.setattr(K, "SWEEPS", 1)
    a = np.random.default_rng(9).standard_normal((1, 128, 128)).astype(np.float32)
    w = xp.asarray(a)
    K.jacobi_svd(w, False, False, False)
    got = to_numpy(w)[0].astype(np.float64)
    w0 = a[0].astype(np.float64) / 2.0 ** np.floor(np.log2(np.abs(a).max()))

    def off(v: np.ndarray) -> float:
        g = v.T @ v
        return float(np.linalg.norm(g - np.diag(np.diag(g))))
    np.testing.assert_allclose(got @ got.T, w0 @ w0.T, atol=1e-5 * np.abs(w0 @ w0.T).max())
    assert off(got) == pytest.approx(off(_sweep(w0)), rel=1e-3) and off(got) < 0.7 * off(w0)
