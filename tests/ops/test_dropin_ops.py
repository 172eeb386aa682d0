"""The ops of issue 18 against PyTorch CPU (values, dtypes, grads, errors), on cpu, and
the same results on wgpu where an adapter is present."""

from __future__ import annotations

import math

import numpy as np
import pytest
from torch_ref import compare, raises_like_torch, torch

import volta_core as vt

R = np.random.default_rng(0)
X = R.normal(size=(3, 4))


def _wgpu() -> bool:
    try:
        vt.zeros(1, device="wgpu")
        return True
    except Exception:
        return False


DEVICES = ["cpu"] + (["wgpu"] if _wgpu() else [])


@pytest.mark.parametrize("rtol,atol,equal_nan", [(1e-5, 1e-8, False), (0.1, 0.0, True),
                                                 (0.0, 0.5, False)])
def test_isclose_allclose_equal(rtol, atol, equal_nan):
    a = np.array([1.0, 1.05, math.nan, math.inf, -math.inf, 0.0, 2.0])
    b = np.array([1.0, 1.0, math.nan, math.inf, math.inf, 1e-9, 2.4])
    compare(lambda m, x, y: m.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan),
            a, b, grad=False)
    for dt in ("float32", "int64"):
        ta, tb = torch.tensor(a[:2]).to(getattr(torch, dt)), torch.tensor(b[:2]).to(
            getattr(torch, dt))
        va, vb = vt.tensor(a[:2]).to(dt), vt.tensor(b[:2]).to(dt)
        assert vt.allclose(va, vb, rtol, atol, equal_nan) == torch.allclose(
            ta, tb, rtol, atol, equal_nan)
        assert vt.equal(va, vb) == torch.equal(ta, tb)
    assert vt.equal(vt.ones(2), vt.ones(2)) and not vt.equal(vt.ones(2), vt.ones(3))
    raises_like_torch(lambda m, x, y: m.isclose(x, y.long()), a, b)


@pytest.mark.parametrize("device", DEVICES)
def test_unique(device):
    x = np.array([3, 1, 2, 3, 1, 5, 5, 0])
    for kw in ({}, {"return_inverse": True}, {"return_counts": True},
               {"return_inverse": True, "return_counts": True}):
        got = vt.unique(vt.tensor(x, device=device), **kw)
        want = torch.unique(torch.tensor(x), **kw)
        for g, w in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_array_equal(g.cpu().numpy(), w.numpy())
    rows = np.array([[1, 2], [1, 2], [0, 5], [1, 0]])
    for dim in (0, 1):
        got = vt.unique(vt.tensor(rows, device=device), dim=dim, return_inverse=True,
                        return_counts=True)
        want = torch.unique(torch.tensor(rows), dim=dim, return_inverse=True,
                            return_counts=True)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.cpu().numpy(), w.numpy())
    f = vt.unique(vt.tensor([2.5, -1.0, 2.5], device=device))
    assert f.dtype is vt.float32 and f.cpu().tolist() == [-1.0, 2.5]


def test_unique_consecutive():
    x = np.array([1, 1, 2, 2, 3, 1, 1, 2])
    got = vt.unique_consecutive(vt.tensor(x), return_inverse=True, return_counts=True)
    want = torch.unique_consecutive(torch.tensor(x), return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    m = np.array([[1, 1, 2], [1, 1, 3]])
    np.testing.assert_array_equal(
        vt.unique_consecutive(vt.tensor(m), dim=1).numpy(),
        torch.unique_consecutive(torch.tensor(m), dim=1).numpy())


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_cartesian_prod(indexing):
    a, b, c = R.normal(size=3), R.normal(size=4), R.normal(size=2)
    compare(lambda m, x, y, z: m.meshgrid(x, y, z, indexing=indexing), a, b, c)
    compare(lambda m, x, y: m.meshgrid([x, y], indexing=indexing), a, b)
    compare(lambda m, x, y: m.cartesian_prod(x, y), a, b)
    compare(lambda m, x: m.cartesian_prod(x), a)
    raises_like_torch(lambda m, x: m.meshgrid(x, indexing="ji"), a)


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, math.inf])
def test_cdist(p):
    x1, x2 = R.normal(size=(2, 5, 3)), R.normal(size=(2, 4, 3))
    x2[0, 0] = x1[0, 0]  # a zero distance: PyTorch's gradient there is zero
    compare(lambda m, a, b: m.cdist(a, b, p=p), x1, x2, dtype="float64")  # p=0: zeros
    compare(lambda m, a, b: m.cdist(a, b, p=p), x1[0], x2[0], dtype="float32",
            grad=False)
    raises_like_torch(lambda m, a, b: m.cdist(a, b), x1, x2[..., :2])


@pytest.mark.parametrize("device", DEVICES)
def test_searchsorted_bucketize(device):
    seq = np.array([1, 3, 5, 7, 9])
    vals = np.array([[0, 3, 6], [9, 10, 5]])
    for right in (False, True):
        got = vt.searchsorted(vt.tensor(seq, device=device), vt.tensor(vals, device=device),
                              right=right)
        want = torch.searchsorted(torch.tensor(seq), torch.tensor(vals), right=right)
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
        assert got.dtype is vt.int64
        got = vt.bucketize(vt.tensor(vals, device=device), vt.tensor(seq, device=device),
                           right=right, out_int32=True)
        want = torch.bucketize(torch.tensor(vals), torch.tensor(seq), right=right,
                               out_int32=True)
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
        assert got.dtype is vt.int32
    nd = np.sort(R.normal(size=(2, 6)), axis=1)
    v = R.normal(size=(2, 3))
    compare(lambda m, s, x: m.searchsorted(s, x, side="right"), nd, v, grad=False)
    perm = np.argsort(R.normal(size=5))
    unsorted = seq[np.argsort(perm)]
    sorter = np.argsort(unsorted)
    np.testing.assert_array_equal(
        vt.searchsorted(vt.tensor(unsorted), vt.tensor([4, 8]), sorter=vt.tensor(sorter))
        .numpy(),
        torch.searchsorted(torch.tensor(unsorted), torch.tensor([4, 8]),
                           sorter=torch.tensor(sorter)).numpy())
    assert int(vt.searchsorted(vt.tensor(seq), 4)) == int(torch.searchsorted(
        torch.tensor(seq), 4))
    with pytest.raises(ValueError):
        vt.searchsorted(vt.tensor(seq), vt.tensor([1]), right=True, side="left")


@pytest.mark.parametrize("device", DEVICES)
def test_searchsorted_follows_torch_with_nan_inf_and_unsorted_boundaries(device):
    # PyTorch's binary search: a NaN value goes to the end; NaNs in the boundaries steer it
    rng = np.random.default_rng(1)
    for _ in range(60):
        seq = rng.choice([-1.0, 0.0, 1.0, 2.0, np.nan, np.inf, -np.inf], rng.integers(0, 8))
        if rng.random() < 0.6:
            seq = np.sort(seq)
        vals = rng.choice([-1.0, 0.5, 1.0, 2.0, np.nan, np.inf, -np.inf], (2, 3))
        seq, vals = seq.astype(np.float32), vals.astype(np.float32)  # OpenGL has no float64
        for right in (False, True):
            got = vt.searchsorted(vt.tensor(seq, device=device), vt.tensor(vals, device=device),
                                  right=right)
            want = torch.searchsorted(torch.tensor(seq), torch.tensor(vals), right=right)
            np.testing.assert_array_equal(got.cpu().numpy(), want.numpy(), err_msg=f"{seq}")


@pytest.mark.parametrize("device", DEVICES)
def test_histc(device):
    x = np.array([1.0, 2.0, 1.0, 4.0, -1.0, 2.999, 3.0])
    for kw in ({"bins": 4, "min": 0, "max": 3}, {"bins": 5}, {"bins": 3, "min": 1, "max": 2}):
        got = vt.histc(vt.tensor(x, dtype="float32", device=device), **kw)
        want = torch.histc(torch.tensor(x, dtype=torch.float32), **kw)
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
        assert got.dtype is vt.float32
    with pytest.raises(ValueError):
        vt.histc(vt.tensor(x), bins=0)
    for bad in (np.nan, np.inf):  # the data's range is not finite: refused, as PyTorch
        raises_like_torch(lambda m, a: m.histc(a, bins=3), np.array([1.0, bad]))


def test_edge_shapes_and_values_as_pytorch():
    """Cases a random sweep against PyTorch found: one variable's covariance is a scalar,
    combinations longer than the input are ``(0, r)``, and an even-spacing trapezoid of
    one infinite or NaN sample is NaN (PyTorch's sum-less-the-ends formula)."""
    compare(lambda m, a: m.cov(a), R.normal(size=(1, 5)))
    compare(lambda m, a: m.corrcoef(a), R.normal(size=(1, 4)))
    compare(lambda m, a: m.combinations(a, 3), R.normal(size=2))
    compare(lambda m, a: m.combinations(a, 2), R.normal(size=0))
    compare(lambda m, a: m.combinations(a, 0), R.normal(size=3))
    for y in ([np.nan], [np.inf], [[np.inf, 1.0], [2.0, 3.0]], [1.0, 2.0, 4.0, 7.0]):
        compare(lambda m, a: m.trapezoid(a, dx=0.5), np.array(y), dtype="float64")
        compare(lambda m, a: m.trapezoid(a, dim=0), np.array(y), dtype="float64")


def test_gamma_functions():
    x = np.array([0.1, 0.5, 1.0, 2.5, 7.0, 30.0, -0.5, -2.3, 1e-3, 200.0])
    compare(lambda m, a: m.lgamma(a), x, dtype="float64", tol=(1e-12, 1e-12))
    compare(lambda m, a: m.digamma(a), x, dtype="float64", tol=(1e-10, 1e-10),
            grad_tol=(1e-8, 1e-8))
    compare(lambda m, a: m.polygamma(1, a), x, dtype="float64", tol=(1e-8, 1e-8),
            grad=False)
    compare(lambda m, a: m.lgamma(a), x, dtype="float32", tol=(1e-5, 1e-5))
    compare(lambda m, a: m.mvlgamma(a, 3), x[x > 1.5], dtype="float64", tol=(1e-12, 1e-12))
    assert vt.lgamma(vt.tensor([0.0, -1.0])).tolist() == [math.inf, math.inf]
    assert vt.digamma(vt.tensor([0.0])).tolist() == [-math.inf]


def test_linalg_cholesky_solve():
    m = R.normal(size=(2, 3, 3))
    spd = m @ m.transpose(0, 2, 1) + 3 * np.eye(3)
    b = R.normal(size=(2, 3, 2))
    compare(lambda mod, a: mod.linalg.cholesky(a), spd, dtype="float64",
            grad_tol=(1e-9, 1e-9))
    compare(lambda mod, a: mod.linalg.cholesky(a, upper=True), spd, dtype="float64")
    compare(lambda mod, a, y: mod.linalg.solve(a, y), spd, b, dtype="float64")
    for upper in (False, True):
        compare(lambda mod, a, y, u=upper: mod.linalg.solve_triangular(a, y, upper=u), spd, b,
                dtype="float64")
    compare(lambda mod, a, y: mod.linalg.solve_triangular(
        a, y, upper=False, unitriangular=True), spd, b, dtype="float64")
    for m in (vt, torch):  # a LinAlgError, which is a RuntimeError
        with pytest.raises(m.linalg.LinAlgError):
            m.linalg.cholesky(-m.eye(3))
        with pytest.raises(RuntimeError):
            m.linalg.cholesky(-m.eye(3))


def test_queries_and_dims():
    x = R.normal(size=(2, 3, 4))
    for m in (vt, torch):
        t = m.tensor(x)
        assert m.is_tensor(t) and not m.is_tensor([1])
        assert m.is_floating_point(t) and not m.is_complex(t) and m.numel(t) == 24
        assert m.is_nonzero(m.tensor([2]))
        with pytest.raises(RuntimeError):
            m.is_nonzero(m.tensor([1, 2]))
        # the Tensor's own queries, as methods or attributes as PyTorch has them
        assert t.is_floating_point() and t.is_signed() and not m.ones(2, dtype=m.uint8
                                                                        ).is_signed()
        assert not (t.is_pinned() or t.is_shared() or t.is_inference())
        assert (t.nbytes, t.itemsize, t.layout) == (24 * 8, 8, m.strided)
        assert not (t.is_sparse or t.is_quantized or t.is_meta)
        assert t[0].H.shape == (4, 3) and t.mH.shape == (2, 4, 3)
        assert t.data_ptr() == t[0].data_ptr() and t[1].data_ptr() - t.data_ptr() == 12 * 8
        assert t.clone(memory_format=m.contiguous_format).shape == t.shape
    compare(lambda m, a: m.swapaxes(a, 0, 2), x)
    compare(lambda m, a: m.swapdims(a, 1, 2), x)
    compare(lambda m, a: a.swapaxes(0, 1), x)
    compare(lambda m, a: m.moveaxis(a, 0, -1), x)
    compare(lambda m, a: m.ravel(a), x)
    compare(lambda m, a: m.fliplr(a), x)
    compare(lambda m, a: m.flipud(a), x)
    compare(lambda m, a: m.absolute(a), x)
    for f in ("atleast_1d", "atleast_2d", "atleast_3d"):
        for a in (np.array(1.5), R.normal(size=3), R.normal(size=(2, 3)), x):
            compare(lambda m, t, f=f: getattr(m, f)(t), a)
        compare(lambda m, a, b, f=f: getattr(m, f)(a, b), np.array(1.0), R.normal(size=2))


def test_matrix_builders():
    v, mat = R.normal(size=3), R.normal(size=(3, 4))
    for off in (-1, 0, 2):
        compare(lambda m, a, o=off: m.diag(a, o), v)
        compare(lambda m, a, o=off: m.diag(a, o), mat)
        compare(lambda m, a, o=off: m.diagflat(a, o), mat[:2, :2])
        compare(lambda m, a, o=off: m.diag_embed(a, o), mat)
    compare(lambda m, a: m.diag_embed(a, 0, 0, 2), mat)
    compare(lambda m, a, b, c: m.block_diag(a, b, c), mat[:2], v, np.array(2.0))
    compare(lambda m, a, b: m.kron(a, b), mat[:2, :2], mat[:3, :2])
    compare(lambda m, a, b: m.kron(a, b), v, mat)
    compare(lambda m, a, b: m.inner(a, b), mat, R.normal(size=(2, 4)))
    for args in ((3, 3), (3, 4, 1), (4, 3, -2), (2, 5, 10)):
        for f in ("tril_indices", "triu_indices"):
            np.testing.assert_array_equal(getattr(vt, f)(*args).numpy(),
                                          getattr(torch, f)(*args).numpy())


def test_statistics():
    idx = np.array([0, 2, 2, 5, 1])
    w = R.normal(size=5)
    for kw in ({}, {"minlength": 9}):
        np.testing.assert_array_equal(vt.bincount(vt.tensor(idx), **kw).numpy(),
                                      torch.bincount(torch.tensor(idx), **kw).numpy())
    compare(lambda m, i, ww: m.bincount(i, ww), idx, w, grad=False)
    raises_like_torch(lambda m, i: m.bincount(i), np.array([1, -1]))
    compare(lambda m, a, b: m.isin(a, b), np.array([[1, 2], [3, 4]]), np.array([2, 4, 9]),
            grad=False)
    compare(lambda m, a, b: m.isin(a, b, invert=True), np.array([1, 2, 3]), np.array([2]),
            grad=False)
    data = R.normal(size=(3, 6))
    compare(lambda m, a: m.cov(a), data)
    compare(lambda m, a: m.cov(a, correction=0), data)
    compare(lambda m, a: m.cov(a[0]), data)
    fw, aw = np.array([1, 2, 1, 3, 1, 1]), R.uniform(0.5, 1.0, size=6)
    compare(lambda m, a, f, ww: m.cov(a, fweights=f, aweights=ww), data, fw, aw,
            dtype=None)
    compare(lambda m, a: m.corrcoef(a), data)


def test_logspace_dist_det():
    for kw in ({}, {"base": 2.0}, {"dtype": "float64"}):
        tkw = {k: (getattr(torch, v) if k == "dtype" else v) for k, v in kw.items()}
        got, want = vt.logspace(-1, 2, 5, **kw), torch.logspace(-1, 2, 5, **tkw)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        assert got.dtype.name == str(want.dtype).replace("torch.", "")
    a, b = R.normal(size=(3, 4)), R.normal(size=(4,))
    for p in (0, 1, 2, 3.5, math.inf, -math.inf):
        compare(lambda m, x, y, p=p: m.dist(x, y, p), a, b, grad=p != 0)
    sq = R.normal(size=(2, 3, 3))
    compare(lambda m, x: m.det(x), sq, dtype="float64")
    compare(lambda m, x: m.linalg.det(x), sq, dtype="float64")
    compare(lambda m, x: m.inverse(x), sq, dtype="float64")
    compare(lambda m, x: m.linalg.inv(x), sq, dtype="float64")
    compare(lambda m, x: m.slogdet(x), sq, dtype="float64")
    spd = sq @ sq.transpose(0, 2, 1) + np.eye(3)
    compare(lambda m, x: m.logdet(x), spd, dtype="float64")


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_nanquantile(interpolation):
    x = R.normal(size=(3, 5))
    x[1, 2] = math.nan
    for f in ("quantile", "nanquantile"):
        for dim, keepdim in ((None, False), (1, False), (0, True), (None, True)):
            for q in (0.3, np.array([0.0, 0.25, 1.0])):
                compare(lambda m, a, qq=q, f=f, d=dim, k=keepdim: getattr(m, f)(
                    a, m.tensor(qq) if isinstance(qq, np.ndarray) else qq, d, k,
                    interpolation=interpolation), x, dtype="float64", grad=False)
    y = R.normal(size=(4, 6))
    compare(lambda m, a: m.quantile(a, 0.7, dim=1, interpolation=interpolation), y)
    raises_like_torch(lambda m, a: m.quantile(a, 1.5), y)


def test_type_queries_bitwise_splits():
    for m in (vt, torch):
        assert str(m.result_type(m.tensor([1]), 1.0)).endswith("float32")
        assert str(m.result_type(m.tensor([1], dtype=m.int8), m.tensor(5))).endswith("int8")
        assert m.can_cast(m.float32, m.int32) is False and m.can_cast(m.int32, m.float16)
        assert m.typename(m.zeros(1)) == "torch.FloatTensor"
        assert tuple(m.broadcast_shapes((2, 1), (3,), 1)) == (2, 3)
        assert isinstance(m.float32, m.dtype)
    raises_like_torch(lambda m: m.broadcast_shapes((2,), (3,)))
    a, b = np.array([3, 5, 12]), np.array([1, 4, 10])
    for f in ("bitwise_and", "bitwise_or", "bitwise_xor"):
        compare(lambda m, x, y, f=f: getattr(m, f)(x, y), a, b, grad=False)
    compare(lambda m, x: m.bitwise_not(x), a, grad=False)
    compare(lambda m, x: m.bitwise_not(x), np.array([True, False]), grad=False)
    x = R.normal(size=(4, 6, 2))
    compare(lambda m, t: m.hsplit(t, 3), x)
    compare(lambda m, t: m.vsplit(t, [1, 3]), x)
    compare(lambda m, t: m.dsplit(t, 2), x)
    compare(lambda m, t: m.hsplit(t, 2), x[:, 0, 0])
    raises_like_torch(lambda m, t: m.hsplit(t, 4), x)
    raises_like_torch(lambda m, t: m.dsplit(t, 2), x[0])
    compare(lambda m, t: m.argwhere(t), np.array([[0, 1.5], [2, 0]]), grad=False)


@pytest.mark.skipif("wgpu" not in DEVICES, reason="no wgpu adapter")
def test_new_ops_and_distributions_on_wgpu():
    """The composed ops and the distributions give the CPU's values on wgpu."""
    x, y = R.normal(size=(3, 4)).astype(np.float32), R.normal(size=(5, 4)).astype(np.float32)
    pos = R.uniform(0.5, 4, size=6).astype(np.float32)
    checks = [
        lambda m, d: m.cdist(m.tensor(x, device=d), m.tensor(y, device=d)),
        lambda m, d: m.isclose(m.tensor(x, device=d), m.tensor(x, device=d) + 1e-7),
        lambda m, d: m.meshgrid(m.tensor(pos, device=d), m.tensor(x[0], device=d))[1],
        lambda m, d: m.lgamma(m.tensor(pos, device=d)),
        lambda m, d: m.digamma(m.tensor(pos, device=d)),
        lambda m, d: m.quantile(m.tensor(x, device=d), 0.3, dim=1),
        lambda m, d: m.cov(m.tensor(x, device=d)),
        lambda m, d: m.diag_embed(m.tensor(x, device=d)),
        lambda m, d: m.distributions.Gamma(m.tensor(pos, device=d), 2.0).log_prob(
            m.tensor(pos, device=d)),
        lambda m, d: m.distributions.Beta(m.tensor(pos, device=d), 1.5).entropy(),
        lambda m, d: m.distributions.MultivariateNormal(
            m.tensor(x[0], device=d), m.eye(4, device=d) * 2).log_prob(m.tensor(y, device=d)),
        lambda m, d: m.distributions.kl_divergence(
            m.distributions.Dirichlet(m.tensor(pos, device=d)),
            m.distributions.Dirichlet(m.tensor(pos[::-1].copy(), device=d))),
    ]
    for i, f in enumerate(checks):
        got, want = f(vt, "wgpu"), f(vt, "cpu")
        assert got.device.type == "wgpu"
        np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=f"check {i}")


def test_erfinv_and_normal_icdf():
    y = np.concatenate([[-0.999999, -1e-8, 0.0, 0.0999, 0.1001, 0.9999999, 1.0, -1.0, 1.5],
                        np.linspace(-0.9999, 0.9999, 201)])
    compare(lambda m, a: m.erfinv(a), y, dtype="float64", tol=(1e-10, 1e-12), grad=False)
    compare(lambda m, a: m.erfinv(a), y[:8], dtype="float32", tol=(2e-6, 1e-7), grad=False)
    compare(lambda m, a: m.erfinv(a), np.linspace(-0.9, 0.9, 7), dtype="float64",
            tol=(1e-10, 1e-12), grad_tol=(1e-8, 1e-10))
    p = np.array([0.01, 0.3, 0.5, 0.9])
    np.testing.assert_allclose(
        vt.distributions.Normal(1.0, 2.0).icdf(vt.tensor(p)).numpy(),
        torch.distributions.Normal(1.0, 2.0).icdf(torch.tensor(p)).numpy(), rtol=1e-6)


def test_integration_index_sets_histogram():
    y, x = R.normal(size=(3, 5)), np.cumsum(R.uniform(0.1, 1, size=5))
    compare(lambda m, a: m.trapezoid(a), y)
    compare(lambda m, a, b: m.trapezoid(a, b), y, x)
    compare(lambda m, a: m.trapezoid(a, dx=0.5, dim=0), y)
    compare(lambda m, a: m.trapz(a, dim=0), y)
    compare(lambda m, a, b: m.cumulative_trapezoid(a, b), y, x)
    compare(lambda m, a: m.trapezoid(a, dx=2), np.array([1, 2, 3]), grad=False)
    v = R.normal(size=4)
    for r in (0, 1, 2, 3):
        compare(lambda m, a, r=r: m.combinations(a, r), v)
        # PyTorch's own backward of this form fails (an in-place version check): values only
        compare(lambda m, a, r=r: m.combinations(a, r, with_replacement=True), v, grad=False)
    got = vt.unravel_index(vt.tensor([5, 7, -1]), (2, 4))
    want = torch.unravel_index(torch.tensor([5, 7, -1]), (2, 4))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    # PyTorch's own vander backward fails (an in-place version check): its values, and
    # the gradients of the same powers written out
    compare(lambda m, a: m.vander(a), v, grad=False)
    compare(lambda m, a: m.vander(a, N=2, increasing=True), v, grad=False)
    compare(lambda m, a: m.vander(a) if m is vt else a.unsqueeze(1) ** m.arange(
        3, -1, -1, dtype=a.dtype), v)
    compare(lambda m, a: m.vander(a, 3), np.array([1, 2, 3]), grad=False)
    a, b = np.array([12, -18, 0, 7, 0]), np.array([8, 12, 0, -21, 5])
    compare(lambda m, x, y: m.gcd(x, y), a, b, grad=False)
    compare(lambda m, x, y: m.lcm(x, y), a, b, grad=False)
    pts = R.normal(size=(5, 3))
    pts[3] = pts[1]
    for p in (0, 1, 2, 3.0, math.inf):
        compare(lambda m, t, p=p: m.pdist(t, p), pts, grad=p != 0)
    data = R.normal(size=40)
    for kw in ({"bins": 5}, {"bins": 4, "range": (-1.0, 1.0)}, {"bins": 3, "density": True}):
        got, want = vt.histogram(vt.tensor(data), **kw), torch.histogram(torch.tensor(data),
                                                                          **kw)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)
    edges = np.array([-2.0, -0.5, 0.0, 2.5])
    wts = R.uniform(size=40)
    got = vt.histogram(vt.tensor(data), vt.tensor(edges), weight=vt.tensor(wts))
    want = torch.histogram(torch.tensor(data), torch.tensor(edges), weight=torch.tensor(wts))
    np.testing.assert_allclose(got.hist.numpy(), want.hist.numpy(), rtol=1e-12)
    same = vt.histogram(vt.tensor([2.0, 2.0]), bins=2)
    np.testing.assert_array_equal(same.bin_edges.numpy(), [1.5, 2.0, 2.5])


@pytest.mark.parametrize("shape,kw", [
    ((100, 2), {"bins": 4}), ((100, 2), {"bins": [3, 5]}),
    ((100, 2), {"bins": 3, "range": [-1.0, 1.0, -2.0, 2.0]}),
    ((100, 2), {"bins": 3, "density": True}), ((4, 5, 3), {"bins": 2}),
    ((100, 1), {"bins": 3}), ((0, 2), {"bins": 2}), ((3, 2), {"bins": 2, "same": True}),
    ((100, 2), {"bins": "edges"}), ((100, 2), {"bins": 3, "weight": True, "density": True}),
])
def test_histogramdd_matches_pytorch(shape, kw):
    """histogramdd: counts, weights, density and the edges of every dim, as PyTorch's
    (a constant dim gets v -+ 0.5, no data gets (0, 1), the last edge closes the last bin)."""
    kw = dict(kw)
    x = np.ones(shape) if kw.pop("same", False) else R.normal(size=shape)
    x = x.astype(np.float32)
    vkw, tkw = dict(kw), dict(kw)
    if kw.get("bins") == "edges":
        edges = [np.array([-3.0, 0.0, 3.0], "f4"), np.array([-1.0, 0.0, 0.5, 1.0], "f4")]
        vkw["bins"], tkw["bins"] = ([m.tensor(e) for e in edges] for m in (vt, torch))
    if kw.pop("weight", False):
        w = R.random(shape[0]).astype(np.float32)
        vkw["weight"], tkw["weight"] = vt.tensor(w), torch.tensor(w)
    got, want = vt.histogramdd(vt.tensor(x), **vkw), torch.histogramdd(torch.tensor(x), **tkw)
    np.testing.assert_allclose(got.hist.numpy(), want.hist.numpy(), rtol=1e-5, atol=1e-6)
    assert len(got.bin_edges) == len(want.bin_edges)
    for g, w_ in zip(got.bin_edges, want.bin_edges):
        np.testing.assert_allclose(g.numpy(), w_.numpy(), rtol=1e-6)
    got1, want1 = vt.histogram(vt.tensor(x[:, 0]), bins=3), torch.histogram(
        torch.tensor(x[:, 0]), bins=3)
    np.testing.assert_allclose(got1.bin_edges.numpy(), want1.bin_edges.numpy(), rtol=1e-6)
    np.testing.assert_allclose(got1.hist.numpy(), want1.hist.numpy())


def test_histogramdd_refuses_as_pytorch():
    with pytest.raises(vt.ShapeError, match="at least 2 dimensions"):
        vt.histogramdd(vt.tensor([1.0, 2.0]), bins=3)
    with pytest.raises(vt.ShapeError, match="range should have 4 elements"):
        vt.histogramdd(vt.ones(3, 2), bins=2, range=[0.0, 1.0])
    with pytest.raises(vt.ShapeError, match="expected 2 sequences"):
        vt.histogramdd(vt.ones(3, 2), bins=[2, 2, 2])
