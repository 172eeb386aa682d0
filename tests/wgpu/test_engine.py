"""The engine's small-op path (cached bind groups and launch plans), index errors and
NumPy's placement of advanced-index dims."""

from __future__ import annotations

import os

import numpy as np
import pytest


def test_small_op_chain_reuses_bind_groups_and_plans(xp, eager):
    from volta_wgpu.engine import get_engine
    from volta_wgpu.kernels import mapkernel
    eng = get_engine(0)
    a = xp.asarray(np.ones(16, np.float32))
    b = xp.asarray(np.full(16, 0.5, np.float32))
    x = a
    for _ in range(10):
        x = xp.add(x, b)
    eng.synchronize()
    groups, plans, count = len(eng._groups), len(mapkernel._plans), eng.dispatch_count
    for _ in range(200):
        x = xp.add(x, b)
    np.testing.assert_allclose(xp.to_numpy(x), 1 + 0.5 * 210)
    assert eng.dispatch_count - count >= 200
    assert len(eng._groups) - groups <= 4  # pooled buffers: the same few groups again
    assert len(mapkernel._plans) == plans


def test_work_goes_out_in_growing_batches_before_the_sync(xp, eager):
    """Recorded dispatches are submitted after the first 8, then 16, 32, 64, 64, ... (the
    GPU starts while Python records the rest); a sync starts the series again. Every
    kernel reads its own metadata although later ones overwrite the metadata buffer
    meanwhile: each step adds a different number."""
    from volta_wgpu import engine
    eng = engine.get_engine(0)
    x = xp.asarray(np.zeros(4, np.float32))
    eng.synchronize()
    for _ in range(2):  # the second time the series starts at 8 again
        s0, d0 = eng.submit_count, eng.dispatch_count
        want = np.zeros(4, np.float64)
        for i in range(300):
            x = xp.add(x, float(i % 7))
            want += i % 7
        d = eng.dispatch_count - d0
        sizes, at = [], engine.SUBMIT_FIRST
        while sum(sizes) + at <= d:
            sizes.append(at)
            at = min(at * 2, engine.SUBMIT_MAX)
        assert eng.submit_count - s0 == len(sizes)
        np.testing.assert_array_equal(xp.to_numpy(x), want.astype(np.float32))
        x = xp.asarray(np.zeros(4, np.float32))
        eng.synchronize()


def test_plan_cache_keeps_offsets_and_scalars_apart(xp):
    base = np.arange(12, dtype=np.float32)
    a = xp.asarray(base)
    for lo in (0, 3, 5):
        got = xp.to_numpy(xp.multiply(a[lo:lo + 4], float(lo)))
        np.testing.assert_allclose(got, base[lo:lo + 4] * lo)


def test_xdg_runtime_dir_is_valid_after_engine_start(xp):
    from volta_wgpu.engine import get_engine
    get_engine(0)
    path = os.environ.get("XDG_RUNTIME_DIR")
    assert path and os.path.isdir(path)


def test_take_out_of_range_raises_at_the_next_readback(xp):
    from volta_core.errors import IndexOutOfRangeError
    x = xp.asarray(np.arange(10, dtype=np.float32))
    r = xp.take(x, xp.asarray(np.array([1, 12], np.int32)))
    with pytest.raises(IndexOutOfRangeError, match="index 12 for a dim of size 10"):
        xp.to_numpy(r)
    np.testing.assert_array_equal(xp.to_numpy(xp.take(x, xp.asarray([-1, 2]))), [9.0, 2.0])


@pytest.mark.parametrize("key", [
    (0, slice(None), [1, 2]), (slice(None), 0, [1, 2]), ([0, 1], slice(None), 0),
    ([0, 1], 0, [1, 2]), (0, [1, 2], slice(None), [0, 1]),
    (slice(None), [1, 2], None, [0, 1]), (Ellipsis, 1, [0, 2]),
    ([[0], [1]], slice(None), [[1, 2]]), (slice(1, 3), [0, 2], 1)])
def test_mixed_advanced_indexing_matches_numpy(key, xp):
    a = np.arange(3 * 4 * 5 * 6, dtype=np.float32).reshape(3, 4, 5, 6)
    x = xp.asarray(a)
    exp = a[key]
    got = xp.to_numpy(x[key])
    assert got.shape == exp.shape
    np.testing.assert_array_equal(got, exp)
    b = a.copy()
    y = xp.asarray(b)
    v = np.arange(exp.size, dtype=np.float32).reshape(exp.shape) + 1000
    b[key] = v
    y[key] = xp.asarray(v)
    np.testing.assert_array_equal(xp.to_numpy(y), b)


def test_vt_synchronize_without_device_flushes_wgpu():
    # vt.synchronize() waits for every device in use, not only the default (cpu) one
    from volta_wgpu.engine import get_engine

    import volta_core as vt
    x = vt.ones(64, device="wgpu") * 3
    assert get_engine(0)._encoder is not None  # recorded, not yet submitted
    vt.synchronize()
    assert get_engine(0)._encoder is None
    assert x.sum().item() == 192
