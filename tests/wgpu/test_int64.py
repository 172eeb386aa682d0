"""int64 on every adapter: a real i64 with shader-int64, a (lo, hi) pair of u32 without it
(WGPU_BACKEND_TYPE=OpenGL runs these on an adapter without it)."""

from __future__ import annotations

import numpy as np


def test_int64_is_offered_and_is_the_default_int(xp):
    assert "int64" in xp.__array_namespace_info__().dtypes()
    assert xp.asarray([1, 2]).dtype == xp.int64
    assert xp.result_type(xp.int32, xp.uint32) == xp.int64


def test_index_results_are_int64(xp, check):
    a = np.array([[3.0, 1.0, 7.0], [2.0, 9.0, -1.0]], np.float32)
    x = xp.asarray(a)
    check(xp.argmax(x, axis=1), np.argmax(a, axis=1))
    check(xp.argmin(x), np.argmin(a))
    check(xp.argsort(x, axis=1), np.argsort(a, axis=1, kind="stable"))
    check(xp.sum(xp.asarray(a > 0), axis=0), np.sum(a > 0, axis=0))


def test_round_trip_and_arithmetic_are_exact(xp, check):
    a = np.array([-(2 ** 31), -7, 0, 5, 2 ** 31 - 1], np.int64)
    x = xp.asarray(a)
    check(x, a)
    check(x // 2, a // 2)
    check(x[1:4] * 3 - 1, a[1:4] * 3 - 1)
    check(xp.astype(xp.asarray([2.9, -2.9]), xp.int64), np.array([2, -2], np.int64))
    check(xp.full((2,), -5, dtype=xp.int64), np.full((2,), -5, np.int64))
    check(xp.take(xp.asarray([10.0, 20.0, 30.0]), xp.asarray([2, 0], dtype=xp.int64)),
          np.array([30.0, 10.0], np.float32))


def test_values_beyond_int32(xp, check):
    big = np.array([2 ** 40, -(2 ** 40)], np.int64)
    check(xp.asarray(big), big)
    check(xp.asarray(big) + 1, big + 1)
    check(xp.asarray([1, 2]) + 2 ** 40, np.array([1, 2]) + 2 ** 40)
    check(xp.full((2,), 2 ** 33, dtype=xp.int64), np.full((2,), 2 ** 33, np.int64))
    check(xp.asarray([2 ** 31 - 1]) + 1, np.array([2 ** 31]))


_A = np.array([2 ** 40 + 3, -5, 2 ** 31, -(2 ** 63), 2 ** 63 - 1, 7, -7, 0], np.int64)
_B = np.array([3, -(2 ** 33), 2 ** 31, 1, 1, -2, 2, 5], np.int64)


def test_arithmetic_comparisons_and_bitwise_across_the_range(xp, check):
    a, b = xp.asarray(_A), xp.asarray(_B)
    with np.errstate(all="ignore"):
        for got, exp in [(a + b, _A + _B), (a - b, _A - _B), (a * b, _A * _B), (-a, -_A),
                         (xp.abs(a), np.abs(_A)), (xp.square(b), _B * _B),
                         (xp.sign(a), np.sign(_A)), (a // b, _A // _B), (a % b, _A % _B),
                         (xp.maximum(a, b), np.maximum(_A, _B)),
                         (xp.minimum(a, b), np.minimum(_A, _B)),
                         (a & b, _A & _B), (a | b, _A | _B), (a ^ b, _A ^ _B), (~a, ~_A),
                         (xp.where(a > b, a, b), np.where(_A > _B, _A, _B))]:
            check(got, exp)
    for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
        check(getattr(a, op)(b), getattr(_A, op)(_B))
    check(a // xp.zeros_like(a), np.zeros(8, np.int64))  # NumPy's 0 for a zero divisor
    s = np.array([0, 1, 31, 32, 33, 63, 64, 5], np.int64)
    check(a << xp.asarray(s), np.where(s < 64, _A << np.minimum(s, 63), 0))
    check(a >> xp.asarray(s), _A >> np.minimum(s, 63))
    base, ex = np.array([3, -2, 2, 1, -1, 5]), np.array([39, 63, 70, -3, -3, -1])
    check(xp.pow(xp.asarray(base), xp.asarray(ex)),
          np.array([3 ** 39, -(2 ** 63), 0, 1, -1, 0], np.int64))


def test_reductions_sorting_and_matmul(xp, check):
    a = xp.asarray(_A)
    check(xp.sum(a), _A.sum())
    check(xp.prod(xp.asarray(_B[:3])), _B[:3].prod())
    check(xp.min(a), _A.min())
    check(xp.max(a), _A.max())
    check(xp.argmax(a), np.argmax(_A))
    check(xp.argmin(a), np.argmin(_A))
    check(xp.cumulative_sum(a), np.cumsum(_A))
    long = np.arange(1000, dtype=np.int64) * 2 ** 34  # the shared-memory tree
    check(xp.sum(xp.asarray(long)), long.sum())
    check(xp.sort(a), np.sort(_A))
    check(xp.argsort(a, descending=True), np.argsort(-_A.astype(object), kind="stable"))
    m1, m2 = _A.reshape(2, 4), _B.reshape(4, 2)
    with np.errstate(all="ignore"):
        check(xp.matmul(xp.asarray(m1), xp.asarray(m2)), m1 @ m2)


def test_casts_creation_and_indexing(xp, check):
    a = xp.asarray(_A)
    check(xp.astype(a, xp.float32), _A.astype(np.float32))
    check(xp.astype(a, xp.int32), _A.astype(np.int32))
    check(xp.astype(a, xp.uint32), _A.astype(np.uint32))
    check(xp.astype(a, xp.bool), _A.astype(bool))
    f = np.array([1e18, -1e18, 3.7, -3.7, 2.0 ** 31, -(2.0 ** 31) - 1024], np.float32)
    check(xp.astype(xp.asarray(f), xp.int64), f.astype(np.int64))
    u = xp.asarray(np.array([2 ** 32 - 1], np.uint32))
    check(xp.astype(u, xp.int64), np.array([2 ** 32 - 1]))
    check(u + xp.asarray(np.array([-1], np.int32)), np.array([2 ** 32 - 2]))
    check(xp.arange(2 ** 40, 2 ** 40 + 10, 3), np.arange(2 ** 40, 2 ** 40 + 10, 3))
    check(xp.eye(2, k=1, dtype=xp.int64), np.eye(2, k=1, dtype=np.int64))
    check(xp.linspace(0, 10, 5, dtype=xp.int64), np.linspace(0, 10, 5).astype(np.int64))
    check(xp.take(a, xp.asarray([1, 0, -1])), _A[[1, 0, -1]])
    check(a[xp.asarray([2, 3])], _A[[2, 3]])
    check(a[2:5], _A[2:5])


def test_random_values_over_the_whole_range(xp, check):
    rng = np.random.default_rng(5)
    bits = rng.integers(0, 64, 4000)  # magnitudes of every size, both signs
    v = (rng.integers(0, 2 ** 62, 4000) >> (62 - np.minimum(bits, 62))) * rng.choice([-1, 1], 4000)
    a, b = v[:2000].astype(np.int64), v[2000:].astype(np.int64)
    b[b == 0] = 3
    x, y = xp.asarray(a), xp.asarray(b)
    with np.errstate(all="ignore"):
        for got, exp in [(x + y, a + b), (x - y, a - b), (x * y, a * b), (x // y, a // b),
                         (x % y, a % b), (x < y, a < b), (x == y, a == b),
                         (xp.maximum(x, y), np.maximum(a, b)),
                         (x >> xp.asarray(b % 64), a >> (b % 64)),
                         (x << xp.asarray(b % 64), a << (b % 64))]:
            check(got, exp)
    check(xp.astype(x, xp.float32), a.astype(np.float32))  # correctly rounded
    f = (rng.standard_normal(2000) * 10.0 ** rng.integers(0, 18, 2000)).astype(np.float32)
    check(xp.astype(xp.asarray(f), xp.int64), f.astype(np.int64))
