"""matmul (batched, broadcasting, strided, 1-d), tensordot, vecdot."""

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
