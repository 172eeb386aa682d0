"""matmul (batched, broadcasting, strided, 1-d), tensordot, vecdot, and the linalg
factorizations that run on the device (det, slogdet, inv, solve, cholesky, qr, eigh)."""

from __future__ import annotations

import numpy as np
import pytest

RNG = np.random.default_rng(2)

SHAPES = [((3, 4), (4, 5)), ((33, 17), (17, 40)), ((2, 1, 5, 6), (3, 6, 2)), ((4,), (4, 3)),
          ((2, 3, 4), (4,)), ((5,), (5,)), ((1, 0), (0, 3)), ((0, 2), (2, 3)), ((64, 70), (70, 3))]


@pytest.mark.parametrize("sa,sb", SHAPES, ids=[f"{a}@{b}" for a, b in SHAPES])
def test_matmul(xp, check, sa, sb):
    a = RNG.standard_normal(sa).astype(np.float32)
    b = RNG.standard_normal(sb).astype(np.float32)
    check(xp.matmul(xp.asarray(a), xp.asarray(b)), a @ b, rtol=1e-4, atol=1e-4)


def test_matmul_strided_and_int(xp, check):
    a = RNG.standard_normal((6, 5)).astype(np.float32)
    b = RNG.standard_normal((7, 5)).astype(np.float32)
    x, y = xp.asarray(a), xp.asarray(b)
    check(x @ y.T, a @ b.T, rtol=1e-4, atol=1e-5)
    check(x[::2] @ y[1:, ::-1].T, a[::2] @ b[1:, ::-1].T, rtol=1e-4, atol=1e-5)
    i = RNG.integers(-3, 3, (3, 4)).astype(np.int32)
    check(xp.asarray(i) @ xp.asarray(i.T.copy()), i @ i.T)
    with pytest.raises(ValueError):
        x @ x
    with pytest.raises(ValueError):
        xp.matmul(xp.asarray(np.float32(1)), x)


def test_tensordot_vecdot(xp, check):
    a = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    b = RNG.standard_normal((4, 5, 2)).astype(np.float32)
    check(xp.tensordot(xp.asarray(a), xp.asarray(b), axes=2), np.tensordot(a, b, 2),
          rtol=1e-4, atol=1e-5)
    check(xp.tensordot(xp.asarray(a), xp.asarray(b), axes=([1], [0])),
          np.tensordot(a, b, ([1], [0])), rtol=1e-4, atol=1e-5)
    check(xp.tensordot(xp.asarray(a), xp.asarray(b), axes=0).shape and
          xp.tensordot(xp.asarray(a[0, 0]), xp.asarray(b[0, 0]), axes=0),
          np.tensordot(a[0, 0], b[0, 0], 0), rtol=1e-5)
    c = RNG.standard_normal((3, 5)).astype(np.float32)
    check(xp.vecdot(xp.asarray(a), xp.asarray(c[:, None, :])), np.sum(a * c[:, None], -1),
          rtol=1e-4, atol=1e-5)
    check(xp.vector_norm(xp.asarray(c), axis=1), np.linalg.norm(c, axis=1), rtol=1e-5)


def test_factorizations_on_the_device(xp):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4, 4)).astype(np.float32)
    b = rng.standard_normal((3, 4, 2)).astype(np.float32)
    x = xp.asarray(a)

    def close(got, exp, tol=1e-4):
        got = xp.to_numpy(got)
        assert got.shape == np.shape(exp)
        np.testing.assert_allclose(got, exp, rtol=tol, atol=tol)

    close(xp.linalg.det(x), np.linalg.det(a))
    s, e = xp.linalg.slogdet(x), np.linalg.slogdet(a)
    close(s.sign, e.sign)
    close(s.logabsdet, e.logabsdet)
    close(xp.linalg.inv(x), np.linalg.inv(a), 1e-3)
    close(xp.linalg.solve(x, xp.asarray(b)), np.linalg.solve(a, b), 1e-3)
    close(xp.linalg.solve(x, xp.asarray(b[0])), np.linalg.solve(a, b[0]), 1e-3)  # broadcast
    close(xp.linalg.solve(x[0], xp.asarray(b[0, :, 0])), np.linalg.solve(a[0], b[0, :, 0]),
          1e-3)
    spd = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4, dtype=np.float32)
    close(xp.linalg.cholesky(xp.asarray(spd)), np.linalg.cholesky(spd))
    close(xp.linalg.cholesky(xp.asarray(spd), upper=True),
          np.swapaxes(np.linalg.cholesky(spd), -1, -2))
    close(xp.linalg.det(xp.asarray(np.zeros((0, 0), np.float32))), 1.0)
    assert xp.linalg.cholesky(xp.asarray(np.zeros((2, 0, 0), np.float32))).shape == (2, 0, 0)


def test_singular_and_indefinite_matrices(xp):
    sing = xp.asarray(np.ones((2, 2), np.float32))
    assert float(xp.to_numpy(xp.linalg.det(sing))) == 0.0
    s = xp.linalg.slogdet(sing)
    assert float(xp.to_numpy(s.sign)) == 0.0 and xp.to_numpy(s.logabsdet) == -np.inf
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        xp.linalg.inv(sing)
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        xp.linalg.cholesky(xp.asarray(-np.eye(2, dtype=np.float32)))


@pytest.mark.parametrize("shape", [(3, 5, 3), (2, 3, 5), (4, 4), (1, 1)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_on_the_device(xp, shape, mode):
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    q, r = (xp.to_numpy(v) for v in xp.linalg.qr(xp.asarray(a), mode=mode))
    eq, er = np.linalg.qr(a, mode=mode)
    assert q.shape == eq.shape and r.shape == er.shape
    np.testing.assert_allclose(q @ r, a, atol=1e-5)
    qtq = np.swapaxes(q, -1, -2) @ q
    np.testing.assert_allclose(qtq, np.broadcast_to(np.eye(q.shape[-1]), qtq.shape), atol=1e-5)
    np.testing.assert_array_equal(r, np.triu(r))


@pytest.mark.parametrize("n", [1, 3, 8])
def test_eigh_on_the_device(xp, n):
    a = np.random.default_rng(n).standard_normal((2, n, n)).astype(np.float32)
    s = a + np.swapaxes(a, -1, -2)
    w, v = (xp.to_numpy(t) for t in xp.linalg.eigh(xp.asarray(s)))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(s), atol=1e-4)  # ascending
    np.testing.assert_allclose(v @ (w[..., None] * np.swapaxes(v, -1, -2)), s, atol=1e-4)
    np.testing.assert_allclose(xp.to_numpy(xp.linalg.eigvalsh(xp.asarray(s))), w, atol=1e-6)


def test_matrices_past_the_device_size_go_through_the_host(xp):
    from volta_wgpu.linalg import DEVICE_MAX_N
    n = DEVICE_MAX_N + 2
    a = np.random.default_rng(1).standard_normal((n, n)).astype(np.float32)
    np.testing.assert_allclose(xp.to_numpy(xp.linalg.slogdet(xp.asarray(a)).logabsdet),
                               np.linalg.slogdet(a).logabsdet, rtol=1e-4)
    np.testing.assert_allclose(xp.to_numpy(xp.linalg.inv(xp.asarray(a))) @ a, np.eye(n),
                               atol=1e-3)


@pytest.mark.parametrize("n", [40, 64, 100])
def test_mid_sized_matrices_are_right_on_every_adapter(xp, n):
    # llvmpipe ends a shader's loops after 65535 iterations; such sizes go to the host there
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype(np.float32)
    s = a + a.T
    x = xp.asarray(a)
    np.testing.assert_allclose(xp.to_numpy(xp.linalg.inv(x)) @ a, np.eye(n), atol=2e-3)
    np.testing.assert_allclose(xp.to_numpy(xp.linalg.slogdet(x).logabsdet),
                               np.linalg.slogdet(a).logabsdet, rtol=1e-4)
    np.testing.assert_allclose(xp.to_numpy(xp.linalg.eigvalsh(xp.asarray(s))),
                               np.linalg.eigvalsh(s), atol=1e-3)
    q, r = (xp.to_numpy(t) for t in xp.linalg.qr(x))
    np.testing.assert_allclose(q @ r, a, atol=1e-4)
    spd = a @ a.T + n * np.eye(n, dtype=np.float32)
    low = xp.to_numpy(xp.linalg.cholesky(xp.asarray(spd)))
    np.testing.assert_allclose(low @ low.T, spd, rtol=1e-4, atol=1e-3)
    u, sv, vh = (xp.to_numpy(t) for t in xp.linalg.svd(x))
    np.testing.assert_allclose((u * sv) @ vh, a, atol=1e-4)
    np.testing.assert_allclose(sv, np.linalg.svd(a, compute_uv=False), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("sa,sb,ta", [((100, 1000), (1000, 70), False),
                                      ((300, 64), (300, 64), True),
                                      ((2, 1, 70, 1300), (3, 1300, 66), False)])
def test_matmul_split_over_k(xp, check, monkeypatch, sa, sb, ta):
    """Products cut along K (a big GPU's weight gradients: few output tiles, long K) add
    their partial products after: forced here on any adapter, with transposed, batched
    and broadcast operands and a K that leaves the last piece short or empty."""
    from volta_wgpu.kernels import matmul

    monkeypatch.setattr(matmul, "_k_splits", lambda t, m, n, k, nb, big: 4)
    rng = np.random.default_rng(3)
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    x, y = xp.asarray(a), xp.asarray(b)
    if ta:
        x, a = xp.matrix_transpose(x), np.swapaxes(a, -1, -2)
    check(xp.matmul(x, y), (a.astype(np.float64) @ b).astype(np.float32), rtol=1e-4,
          atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_long_k_products_are_right_on_every_adapter(xp, check, dtype):
    """A K past 2**19 (llvmpipe ends an invocation after 65535 loop iterations: the
    product came out short there) is cut into slices on a CPU adapter: the tiled kernels
    by their K splits, the generic one (integers) by slices summed after."""
    rng = np.random.default_rng(4)
    a = rng.integers(-2, 3, (2, 600_000)).astype(dtype)
    b = rng.integers(-2, 3, (600_000, 3)).astype(dtype)
    check(xp.matmul(xp.asarray(a), xp.asarray(b)), a @ b)
    check(xp.matmul(xp.asarray(a[None]), xp.asarray(b[None])), (a @ b)[None])


def test_matmul_vec4_reads_in_every_layout(xp, check, monkeypatch):
    """float32 operands whose rows or columns are aligned runs are read four at a time
    (A along k or m, B along n or k): every combination, unaligned views (one at a time)
    and every tiling give the float64 product."""
    from volta_wgpu.kernels import gemm, matmul

    seen = set()
    vec_dims = matmul._vec_dims

    def spy(*args):
        dims = vec_dims(*args)
        seen.add(dims)
        return dims

    monkeypatch.setattr(matmul, "_vec_dims", spy)
    rng = np.random.default_rng(5)
    for tile in (gemm.BIG, gemm.MID, gemm.WIDE, gemm.DEEP):
        monkeypatch.setattr(matmul, "_pick_tile",
                            lambda m, n, nb, g, wide_ok=False, tile=tile: tile)
        for sa, sb in (((200, 300), (300, 172)), ((3, 1, 64, 128), (2, 128, 64)),
                       ((130, 7), (7, 133))):
            for ta in (False, True):
                for tb in (False, True):
                    a = rng.standard_normal(sa).astype(np.float32)
                    b = rng.standard_normal(sb).astype(np.float32)
                    x = (xp.matrix_transpose(xp.asarray(np.swapaxes(a, -1, -2).copy()))
                         if ta else xp.asarray(a))
                    y = (xp.matrix_transpose(xp.asarray(np.swapaxes(b, -1, -2).copy()))
                         if tb else xp.asarray(b))
                    check(xp.matmul(x, y), (a.astype(np.float64) @ b).astype(np.float32),
                          rtol=1e-4, atol=1e-3)
        a = rng.standard_normal((9, 64)).astype(np.float32)
        check(xp.matmul(xp.asarray(a)[1:], xp.asarray(a.T.copy())),  # offset 64: aligned
              (a[1:].astype(np.float64) @ a.T).astype(np.float32), rtol=1e-4, atol=1e-3)
        check(xp.matmul(xp.asarray(a)[1:, 1:], xp.asarray(a.T.copy())[1:]),  # unaligned
              (a[1:, 1:].astype(np.float64) @ a.T[1:]).astype(np.float32), rtol=1e-4,
              atol=1e-3)
    assert {("k", "n"), ("k", "k"), ("m", "n"), ("m", "k"), (None, None)} <= seen

