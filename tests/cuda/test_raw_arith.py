"""The raw arithmetic kernels (``volta_cupy.raw_arith``) against CuPy's own loops and
PyTorch: same bits for float32 and bfloat16, every size (odd bfloat16 ones end in a
single element), NaN, inf, subnormals and rounding ties, arrays with arrays, rows or
Python numbers; views that start mid-pair or are not contiguous go to CuPy's loop."""

from __future__ import annotations

import numpy as np
import pytest

import volta_core as vt

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)



def _values(n: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32) * 100
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1 + 2**-8, 3e38, 1e-40],
                        np.float32)  # 1 + 2**-8 is a rounding tie in bfloat16
    x[: min(n, len(specials))] = specials[: min(n, len(specials))]
    return x


def _same(a, b) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    nan = np.isnan(a.astype(np.float32))
    np.testing.assert_array_equal(nan, np.isnan(b.astype(np.float32)))
    np.testing.assert_array_equal(a.view(np.uint16)[~nan] if a.itemsize == 2 else a[~nan],
                                  b.view(np.uint16)[~nan] if b.itemsize == 2 else b[~nan])


@pytest.mark.parametrize("n", [1, 2, 7, 4096, 100_001])
def test_casts_match_cupy_and_torch(cp, n):
    import torch
    from volta_cupy import raw_arith

    x = _values(n, 0)
    got = raw_arith.astype(cp.asarray(x), BF16)
    _same(cp.asnumpy(got), x.astype(BF16))
    want = torch.from_numpy(x).to(torch.bfloat16).view(torch.int16).numpy().view(BF16)
    _same(cp.asnumpy(got), want)
    back = raw_arith.astype(got, np.float32)
    _same(cp.asnumpy(back), cp.asnumpy(got).astype(np.float32))


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide"])
@pytest.mark.parametrize("n", [1, 3, 1024, 65_537])
def test_binary_matches_cupy(cp, name, n):
    from volta_cupy import raw_arith

    a, b = (cp.asarray(_values(n, s).astype(BF16)) for s in (1, 2))
    got = raw_arith.binary(name, a, b)
    want = getattr(cp, name)(a.astype(np.float32), b.astype(np.float32)).astype(BF16)
    _same(cp.asnumpy(got), cp.asnumpy(want))


def test_views_off_the_pair_boundary_use_cupys_loop(cp):
    from volta_cupy import raw_arith

    a = cp.asarray(_values(101, 3).astype(BF16))
    assert raw_arith.binary("add", a[1:], a[:-1]) is None  # starts mid-pair
    assert raw_arith.astype(a[1:], np.float32) is None
    assert raw_arith.binary("add", a[::2], a[::2]) is None  # not contiguous
    xp = vt.device("cuda").xp
    _same(cp.asnumpy(xp.add(a[1:], a[:-1])),
          (cp.asnumpy(a[1:]).astype(np.float32) + cp.asnumpy(a[:-1]).astype(np.float32))
          .astype(BF16))


def test_namespace_routes_through_the_paired_kernels(cp):
    xp = vt.device("cuda").xp
    a = cp.asarray(_values(64, 4).astype(BF16))
    _same(cp.asnumpy(xp.multiply(a, a)),
          (cp.asnumpy(a).astype(np.float32) ** 2).astype(BF16))
    f = xp.astype(a, cp.float32)
    assert f.dtype == np.float32 and xp.astype(f, BF16).dtype == BF16
    assert xp.astype(a, BF16, copy=False) is a


@pytest.mark.parametrize("name", ["add", "multiply"])
def test_a_row_broadcast_over_rows(cp, name):
    from volta_cupy import raw_arith

    x = cp.asarray(_values(6 * 34, 5).astype(BF16).reshape(2, 3, 34))
    b = cp.asarray(_values(34, 6).astype(BF16))
    got = raw_arith.binary(name, x, b)
    want = getattr(cp, name)(x.astype(np.float32), b.astype(np.float32)).astype(BF16)
    _same(cp.asnumpy(got), cp.asnumpy(want))
    assert raw_arith.binary(name, x[..., :33], b[:33]) is None  # odd rows: CuPy's loop


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide"])
@pytest.mark.parametrize("n", [1, 3, 1024, 65_537])
def test_float32_matches_torch_and_cupy(cp, name, n):
    """float32 arrays with arrays, rows and numbers (inside float32's range: a number
    beyond it is left to CuPy) give PyTorch CUDA's bits, subnormals included, and CuPy's
    where CuPy does not flush a subnormal to zero."""
    import torch
    from volta_cupy import raw_arith

    a, b = (cp.asarray(_values(n, s)) for s in (10, 11))
    ta, tb = (torch.as_tensor(x, device="cuda") for x in (a, b))
    want = getattr(torch, name)(ta, tb).cpu().numpy()
    got = cp.asnumpy(raw_arith.binary_f32(name, a, b))
    _same(got, want)
    tiny = np.finfo(np.float32).tiny
    normal = ~((np.abs(cp.asnumpy(a)) < tiny) | (np.abs(cp.asnumpy(b)) < tiny)
               | (np.abs(want) < tiny))
    _same(got[normal], cp.asnumpy(getattr(cp, name)(a, b))[normal])
    for s in (1.001, -0.5, 3, 0.1, 1e-30):
        # PyTorch divides by a number as a product with its reciprocal: not compared
        if name != "divide":
            _same(cp.asnumpy(raw_arith.binary_f32(name, a, s)),
                  getattr(torch, name)(ta, s).cpu().numpy())
        _same(cp.asnumpy(raw_arith.binary_f32(name, s, a)),
              getattr(torch, name)(s, ta).cpu().numpy())
    rows = cp.asarray(_values(3 * n, 12).reshape(3, n))
    _same(cp.asnumpy(raw_arith.binary_f32(name, rows, b)),
          getattr(torch, name)(torch.as_tensor(rows, device="cuda"), tb).cpu().numpy())
    assert raw_arith.binary_f32(name, a, 1e300) is None  # beyond float32: CuPy's loop
    assert raw_arith.binary_f32(name, a, float("nan")) is None


def test_float32_odd_operands_go_to_cupys_ufuncs(cp):
    from volta_cupy import raw_arith

    a = cp.asarray(_values(64, 7))
    a[7] = 1.0  # no subnormal: CuPy's loops flush them
    assert raw_arith.binary_f32("add", a[::2], a[1::2]) is None  # not contiguous
    assert raw_arith.binary_f32("add", a, a.astype(cp.float64)) is None
    assert raw_arith.binary_f32("add", a[:0], a[:0]) is None
    assert raw_arith.binary_f32("add", a.reshape(8, 8), a[:8].reshape(8, 1)) is None
    assert raw_arith.binary_f32("add", a.astype(cp.float64), 2.0) is None
    xp = vt.device("cuda").xp
    _same(cp.asnumpy(xp.multiply(a[::2], 1.5)), cp.asnumpy(cp.multiply(a[::2], 1.5)))
    _same(cp.asnumpy(xp.multiply(a, 1.5)), cp.asnumpy(cp.multiply(a, 1.5)))


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide"])
def test_bfloat16_with_numbers(cp, name):
    from volta_cupy import raw_arith

    a = cp.asarray(_values(999, 9).astype(BF16))
    for s, rev in ((1.001, False), (-0.5, True), (3, False)):
        got = raw_arith.binary(name, s, a) if rev else raw_arith.binary(name, a, s)
        # float32 math on the GPU (whose kernels flush subnormal results to zero, where
        # PyTorch's don't), rounded once to bfloat16
        f, s32 = a.astype(cp.float32), np.float32(s)
        want = cp.asnumpy(getattr(cp, name)(s32, f) if rev else getattr(cp, name)(f, s32))
        _same(cp.asnumpy(got), want.astype(BF16))
