"""The dense elementwise fast path (vec4 kernel), integer division semantics that must
not depend on the driver, and buffer/staging pool reuse."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import has

RNG = np.random.default_rng(3)
SIZES = (1, 3, 4, 5, 7, 8, 13, 1030)


def _contig_kernels():
    from volta_wgpu.engine import get_engine
    return {k for k in get_engine(0)._kernels if k[0] == "contig"}


def _host(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float16) if a.dtype == np.float16 else a


@pytest.mark.parametrize("n", SIZES)
def test_dense_add_sizes_and_offsets(xp, eager, check, n):
    a = RNG.standard_normal(n + 6).astype(np.float32)
    b = RNG.standard_normal(n + 6).astype(np.float32)
    x, y = xp.asarray(a), xp.asarray(b)
    for oa in (0, 1, 2, 4):
        for ob in (0, 3):
            check(xp.add(x[oa:oa + n], y[ob:ob + n]), a[oa:oa + n] + b[ob:ob + n])
    if n > 1:  # one element collapses to rank 0: the general kernel serves it
        modes = {tuple(m for _, m in k[3]) for k in _contig_kernels() if "+" in k[1]}
        assert {("a", "a"), ("u", "a"), ("a", "u")} <= modes


@pytest.mark.parametrize("n", (5, 1030))
def test_dense_broadcast_scalars_and_splats(xp, check, n):
    a = RNG.standard_normal(n).astype(np.float32)
    x = xp.asarray(a)
    check(x * 2.5, a * np.float32(2.5))
    check(3.0 - x[1:], np.float32(3.0) - a[1:])
    s = np.float32(-1.25)
    check(xp.multiply(x, xp.asarray(s)), a * s)                          # 0-d array
    check(xp.add(xp.asarray(np.array([s])), x[2:]), s + a[2:])             # size-1 array
    c = a > 0
    check(xp.where(xp.asarray(c), x, 0.0), np.where(c, a, np.float32(0)))  # 3 operands


@pytest.mark.parametrize("name", ["bool", "int32", "uint32", "float32", "float16",
                                  "float64", "int64"])
def test_dense_all_dtypes(xp, check, name):
    if not has(name):
        pytest.skip(f"adapter lacks {name}")
    n = 11
    if name == "bool":
        a, b = RNG.random(n + 2) > 0.5, RNG.random(n + 2) > 0.5
        check(xp.logical_xor(xp.asarray(a)[1:], xp.asarray(b)[:n + 1]), a[1:] ^ b[:n + 1])
        check(xp.astype(xp.asarray(a)[2:], xp.float32), a[2:].astype(np.float32))
        return
    a = (RNG.uniform(1, 50, n + 2)).astype(name)
    b = (RNG.uniform(1, 50, n + 2)).astype(name)
    x, y = xp.asarray(a), xp.asarray(b)
    tol = {"rtol": 2e-3} if name == "float16" else {}
    check(xp.add(x[1:], y[:n + 1]), _host(a[1:] + b[:n + 1]), **tol)
    check(xp.multiply(x, 3), _host(a * a.dtype.type(3)), **tol)
    check(xp.astype(x[3:], xp.float32), a[3:].astype(np.float32), **tol)
    check(xp.greater(x, y), a > b)


def test_dense_arange_like_index_expressions(xp, check):
    for n in (5, 9, 1030):
        check(xp.arange(n, dtype=xp.float32) * 2.0, np.arange(n, dtype=np.float32) * 2)
        check(xp.eye(n % 7 + 2, dtype=xp.float32), np.eye(n % 7 + 2, dtype=np.float32))


def test_dense_one_vec4_per_thread_groups():
    from volta_wgpu.kernels import contig
    assert contig.groups(0) == (1, 1, 1)
    assert contig.groups(256 * 4) == (1, 1, 1)
    assert contig.groups(256 * 4 + 1) == (2, 1, 1)
    assert contig.groups(1 << 26) == (32768, 2, 1)  # 2^24 vec4s: past the x limit
    for n in (1, 1023, 1 << 20, (1 << 26) + 3, 1 << 30):
        x, y, _ = contig.groups(n)
        assert x <= contig.MAX_X and x * y * 256 * 4 >= n
        assert (x * y - 1) * 256 * 4 < n + x * 256 * 4  # no more than one spare row


def test_dense_2d_dispatch_covers_every_vec4(xp, monkeypatch):
    from volta_wgpu.kernels import contig, mapkernel
    real = contig.groups
    monkeypatch.setattr(contig, "groups", lambda n: real(n, max_x=3))
    monkeypatch.setattr(mapkernel, "_plans", {}, raising=False)
    for n in (1024 * 7 + 5, 1024 * 9, 1024 * 10 + 3):  # 3x3 and 3x4 grids, spare groups
        assert real(n, max_x=3)[1] > 1
        a = (np.arange(n, dtype=np.float32) % 1000)
        b = RNG.standard_normal(n).astype(np.float32)
        got = xp.to_numpy(xp.asarray(a) + xp.asarray(b))
        np.testing.assert_array_equal(got, a + b)
        got = xp.to_numpy(xp.asarray(a)[1:] * 2.0)   # unaligned offset
        np.testing.assert_array_equal(got, a[1:] * 2)


def test_strided_views_still_use_the_general_path(xp, check):
    a = RNG.standard_normal((6, 8)).astype(np.float32)
    x = xp.asarray(a)
    check(x[:, ::2] + x[:, 1::2], a[:, ::2] + a[:, 1::2])
    check(xp.permute_dims(x, (1, 0)) * 2.0, a.T * np.float32(2))
    out = xp.asarray(a.copy())
    out[1:3] = out[1:3] + 1.0                      # writes into a view: not a fresh output
    b = a.copy()
    b[1:3] += 1
    check(out, b)


@pytest.mark.parametrize("name", ["int32", "int64", "uint32"])
def test_integer_remainder_floor_divide_signs_and_zero(xp, check, name):
    if not has(name):
        pytest.skip(f"adapter lacks {name}")
    info = np.iinfo(name)
    if name == "uint32":
        a = np.array([0, 1, 7, 100, info.max, 5, 9, 4], dtype=name)
        b = np.array([1, 3, 0, 7, 3, info.max, 2, 4], dtype=name)
    else:
        a = np.array([-7, 7, -7, 7, 0, 0, info.min, info.min, info.max, -1, 5, -5,
                      info.min, 3, -6, 6], dtype=name)
        b = np.array([3, 3, -3, -3, 5, -5, -1, 7, -2, 0, 0, info.min, info.max,
                      info.min, 3, -3], dtype=name)
    with np.errstate(all="ignore"):                # x % 0 and x // 0 are 0, as NumPy
        rem, fdiv = np.remainder(a, b), np.floor_divide(a, b)
    x, y = xp.asarray(a), xp.asarray(b)
    check(xp.remainder(x, y), rem)
    check(xp.floor_divide(x, y), fdiv)
    check(xp.remainder(x, 3), np.remainder(a, a.dtype.type(3)))
    if name != "uint32":
        check(xp.pow(x[:4], xp.asarray(np.array([-1, -2, 0, 3], name))),
              np.array([0, 0, 1, 343], name))


def test_float_remainder_floor_divide_special_values(xp, check):
    a = np.array([5.5, -5.5, 5.5, -5.5, 1.0, 0.0, np.inf, 1.0, -1.0, np.nan, 3.0],
                 np.float32)
    b = np.array([2.0, 2.0, -2.0, -2.0, 0.0, 3.0, 2.0, np.inf, np.inf, 1.0, -np.inf],
                 np.float32)
    x, y = xp.asarray(a), xp.asarray(b)
    with np.errstate(all="ignore"):
        check(xp.remainder(x, y), np.remainder(a, b))
        check(xp.floor_divide(x, y), np.floor_divide(a, b))


def test_repeated_op_reuses_pooled_buffers(xp):
    from volta_wgpu.engine import get_engine
    eng = get_engine(0)
    x = xp.asarray(np.ones(1 << 12, np.float32))
    y = xp.asarray(np.ones(1 << 12, np.float32))
    for _ in range(3):
        x + y
        eng.synchronize()
    xp.to_numpy(x + y)
    made = []
    create = eng.device.create_buffer
    eng.device.create_buffer = lambda **kw: made.append(kw) or create(**kw)
    try:
        for _ in range(5):
            x + y
            eng.synchronize()
        r = xp.to_numpy(x + y)
    finally:
        del eng.device.create_buffer
    assert made == []  # outputs and readback staging buffers come from the pools
    np.testing.assert_array_equal(r, 2.0)
