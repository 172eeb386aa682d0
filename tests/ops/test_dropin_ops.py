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
    compare(lambda m, a, b: m.cdist(a, b, p=p), x1, x2, dtype="float64",
            grad=p != 0.0)
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
def test_histc(device):
    x = np.array([1.0, 2.0, 1.0, 4.0, -1.0, 2.999, 3.0])
    for kw in ({"bins": 4, "min": 0, "max": 3}, {"bins": 5}, {"bins": 3, "min": 1, "max": 2}):
        got = vt.histc(vt.tensor(x, dtype="float32", device=device), **kw)
        want = torch.histc(torch.tensor(x, dtype=torch.float32), **kw)
        np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())
        assert got.dtype is vt.float32
    with pytest.raises(ValueError):
        vt.histc(vt.tensor(x), bins=0)


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
    with pytest.raises(ValueError):
        vt.linalg.cholesky(-vt.eye(3))
