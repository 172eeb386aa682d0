"""Views and copies: reshape, permute, broadcast, squeeze, flip, concat, stack, roll..."""

from __future__ import annotations

import numpy as np
import pytest

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def test_views_share_memory(xp, check):
    x = xp.asarray(A)
    for v in (xp.reshape(x, (6, 4)), xp.permute_dims(x, (2, 0, 1)),
              xp.broadcast_to(x[:, :1], (2, 5, 4)), xp.expand_dims(x, axis=1),
              xp.squeeze(x[:, :1], axis=1), xp.flip(x, axis=1), x[:, ::-2]):
        assert v._st is x._st
    check(xp.reshape(x, (6, 4)), A.reshape(6, 4))
    check(xp.reshape(x, (-1,)), A.reshape(-1))
    check(xp.permute_dims(x, (2, 0, 1)), A.transpose(2, 0, 1))
    check(xp.broadcast_to(x[:, :1], (2, 5, 4)), np.broadcast_to(A[:, :1], (2, 5, 4)))
    check(xp.expand_dims(x, axis=-1), A[..., None])
    check(xp.squeeze(x[:, :1]), A[:, 0])
    check(xp.flip(x, axis=1), np.flip(A, axis=1))
    check(xp.flip(x), np.flip(A))
    check(xp.moveaxis(x, 0, -1), np.moveaxis(A, 0, -1))
    check(xp.swapaxes(x, 0, 2), np.swapaxes(A, 0, 2))
    check(xp.matrix_transpose(x), np.swapaxes(A, -1, -2))


def test_reshape_of_noncontiguous_copies(xp, check):
    x = xp.permute_dims(xp.asarray(A), (2, 1, 0))
    r = xp.reshape(x, (4, 6))
    check(r, A.transpose(2, 1, 0).reshape(4, 6))
    check(xp.reshape(xp.asarray(A)[:, :, ::2], (12,)), A[:, :, ::2].reshape(12))
    check(xp.reshape(xp.asarray(A)[:, 1:], (2, 2, 4)), A[:, 1:].reshape(2, 2, 4))
    with pytest.raises(ValueError):
        xp.reshape(xp.asarray(A), (5, 5))
    check(xp.reshape(xp.zeros((0, 3)), (3, 0)), np.zeros((3, 0), np.float32))


def test_concat_stack(xp, check):
    a, b = A[:, :1], A[:, 1:]
    check(xp.concat([xp.asarray(a), xp.asarray(b)], axis=1), np.concatenate([a, b], axis=1))
    check(xp.concat([xp.asarray(A), xp.asarray(A)], axis=None),
          np.concatenate([A.ravel(), A.ravel()]))
    check(xp.concat([xp.asarray(A).mT, xp.asarray(A).mT], axis=-1),
          np.concatenate([A.swapaxes(1, 2)] * 2, axis=-1))
    check(xp.stack([xp.asarray(A[0]), xp.asarray(A[1])], axis=1), np.stack([A[0], A[1]], 1))
    i = np.arange(3, dtype=np.int32)
    check(xp.concat([xp.asarray(i), xp.asarray(i.astype(np.float32))]),
          np.concatenate([i, i.astype(np.float32)]).astype(np.float32))
    parts = xp.unstack(xp.asarray(A), axis=1)
    assert len(parts) == 3
    check(parts[2], A[:, 2])


def test_roll_tile_repeat(xp, check):
    x = xp.asarray(A)
    check(xp.roll(x, 1, axis=2), np.roll(A, 1, axis=2))
    check(xp.roll(x, -2, axis=1), np.roll(A, -2, axis=1))
    check(xp.roll(x, 5), np.roll(A, 5))
    check(xp.roll(x, (1, 2), axis=(0, 2)), np.roll(A, (1, 2), axis=(0, 2)))
    check(xp.tile(xp.asarray(A[0]), (2, 1, 2)), np.tile(A[0], (2, 1, 2)))
    check(xp.repeat(xp.asarray(A[0]), 2, axis=1), np.repeat(A[0], 2, axis=1))
    check(xp.repeat(xp.asarray(A[0]), 3), np.repeat(A[0], 3))
    check(xp.repeat(xp.asarray(A[0]), xp.asarray(np.array([1, 0, 2], np.int32)), axis=0),
          np.repeat(A[0], [1, 0, 2], axis=0))


def test_broadcast_arrays(xp, check):
    a, b = np.ones((3, 1), np.float32), np.arange(4, dtype=np.float32)
    for g, r in zip(xp.broadcast_arrays(xp.asarray(a), xp.asarray(b)),
                    np.broadcast_arrays(a, b)):
        check(g, r)
    with pytest.raises(ValueError):
        xp.broadcast_to(xp.asarray(b), (3, 5))
