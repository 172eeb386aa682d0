"""Lazy elementwise fusion (volta_wgpu.lazy): fused results equal eager ones bit for bit,
a chain runs as one dispatch, and the second run compiles nothing."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import has


@pytest.fixture
def lazy(xp):
    was = xp.is_lazy()
    xp.set_lazy(True)
    yield xp
    xp.set_lazy(was)


def _engine():
    from volta_wgpu.engine import get_engine
    return get_engine()


def _bits(a: np.ndarray) -> np.ndarray:
    """The raw bytes of ``a`` (NaN payloads and signed zeros included)."""
    return np.ascontiguousarray(a).view(np.uint8)


def _rtol(rtol=None):
    """Fused kernels give eager's bits on every driver: each op's result reaches the next
    through an opaque identity, so no driver contracts ``a * b + c`` across ops."""
    return rtol


def _same(xp, fn, *hosts, pending=True, rtol=None):
    """Run ``fn`` eagerly and lazily on device copies of ``hosts``; compare bit for bit
    (within ``rtol`` where a driver may keep fused intermediates more precise)."""
    rtol = _rtol(rtol)
    was = xp.is_lazy()
    try:
        xp.set_lazy(False)
        eager = xp.to_numpy(fn(*[xp.asarray(h) for h in hosts]))
        xp.set_lazy(True)
        args = [xp.asarray(h) for h in hosts]
        eng = _engine()
        d0 = eng.dispatch_count
        res = fn(*args)
        assert res._s is None or not pending, "the chain should be pending"
        got = xp.to_numpy(res)
        dispatches = eng.dispatch_count - d0
    finally:
        xp.set_lazy(was)
    assert got.dtype == eager.dtype and got.shape == eager.shape
    if rtol is None:
        np.testing.assert_array_equal(_bits(got), _bits(eager))
    else:
        np.testing.assert_allclose(got, eager, rtol=rtol, equal_nan=True)
    return got, dispatches


SPECIAL = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 1e-30, 3e38, -7.0, 0.5,
                    100.0], dtype=np.float32)


def test_float_chain_with_broadcast_scalars_and_specials(xp):
    a = SPECIAL.reshape(3, 4)
    b = np.array([2.0, -0.0, np.nan, np.inf], dtype=np.float32)

    def f(x, y):
        z = x * y + 1.5
        z = z / (y - 2.0)
        z = xp.exp(xp.sin(z)) - xp.cos(x) + xp.sqrt(xp.abs(x))
        z = xp.where(xp.isnan(z), x, z * 0.25)
        return xp.maximum(xp.atan2(z, y), xp.log1p(xp.abs(x))) ** 2

    _, d = _same(xp, f, a, b)
    assert d == 1


def test_casts_and_bool(xp):
    # NaN -> integer is unspecified (in WGSL as in C, NumPy and PyTorch): not compared
    a = np.where(np.isnan(SPECIAL), np.float32(4.0), SPECIAL).reshape(4, 3)

    def f(x):
        i = xp.astype(x * 1e9, xp.int32)  # clamped conversion, as eager
        u = xp.astype(xp.abs(x), xp.uint32)
        b = xp.logical_and(x > 0, xp.logical_not(xp.isinf(x)))
        return xp.where(b, xp.astype(i, xp.float32), xp.astype(u, xp.float32) + 0.5)

    _same(xp, f, a)
    _same(xp, lambda x: xp.logical_xor(x > 1, xp.astype(x, xp.bool)), SPECIAL)


def test_int64_chain(xp):
    a = np.array([[-(2 ** 40), -7, 0, 5], [2 ** 35 + 3, 123456789012, -1, 9]], dtype=np.int64)
    b = np.array([3, -4, 7, 2 ** 33], dtype=np.int64)

    def f(x, y):
        z = x * 3 + y
        z = xp.floor_divide(z, y) + xp.remainder(x, y)
        z = (z ^ y) - (x & 0xFFFF) + (x >> 3)
        return xp.where(z > 0, z, -z) + xp.astype(xp.astype(z, xp.float32), xp.int64)

    _, d = _same(xp, f, a, b)
    assert d <= 2  # the int64 scalar operands are uploaded, not dispatched


def test_int32_and_uint32_chain(xp):
    a = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    _same(xp, lambda x: xp.floor_divide(x * 7 - 3, 4) % 5 + (x << 2), a)
    u = np.arange(12, dtype=np.uint32)
    _same(xp, lambda x: (x * 4000000000) // 3 + xp.astype(x > 5, xp.uint32), u)


@pytest.mark.skipif(not has("float16"), reason="the adapter lacks shader-f16")
def test_float16_chain(xp):
    with np.errstate(over="ignore"):  # 3e38 becomes inf
        a = SPECIAL.astype(np.float16)
    # NVIDIA's driver may keep float16 intermediates of one fused kernel in float32 (eager
    # stores each op's result as float16): equal within float16 rounding, not bit for bit
    _same(xp, lambda x: xp.tanh(x * 3.0 + 0.1) / (x - 1.0) + xp.astype(x, xp.float32), a,
          rtol=2.0 ** -9)


@pytest.mark.skipif(not has("float64"), reason="the adapter lacks shader-f64")
def test_float64_runs_eagerly(xp):
    # NVIDIA's compiler folded float64 NaN tests inside fused kernels: float64 isn't fused
    a = SPECIAL.astype(np.float64)
    got, dispatches = _same(xp, lambda x: xp.exp(x * 1e-3) + xp.log(xp.abs(x)) * x / 3.0, a,
                            pending=False)
    assert dispatches >= 5
    nan = _same(xp, lambda x: xp.isnan(x * 1.0), a, pending=False)[0]
    np.testing.assert_array_equal(nan, np.isnan(a))


def test_views_as_leaves(xp):
    a = np.arange(24, dtype=np.float32).reshape(4, 6)

    def f(x):
        t = xp.permute_dims(x, (1, 0))  # strided leaf
        s = x[1:, ::2]  # offset and step
        return t[::2, 1:] * 2.0 + s - xp.permute_dims(s, (1, 0))[:1, :]

    _same(xp, f, a)


def test_dag_and_pending_operand_reused(xp):
    a = np.linspace(-2, 2, 10, dtype=np.float32)

    def f(x):
        y = x * x + 1.0
        return y * y - y / (y + 2.0)

    _same(xp, f, a)


def test_hundred_op_chain_is_one_dispatch_and_cached(lazy):
    xp = lazy
    eng = _engine()
    x = xp.asarray(np.linspace(-1, 1, 1000, dtype=np.float32))

    def chain(z):
        for i in range(50):
            z = z * 1.0001 + (i * 1e-4)
        return z

    xp.synchronize()
    d0, k0 = eng.dispatch_count, len(eng._kernels)
    first = xp.to_numpy(chain(x))
    assert eng.dispatch_count - d0 == 1
    assert len(eng._kernels) - k0 == 1
    d0, k0 = eng.dispatch_count, len(eng._kernels)
    x2 = xp.asarray(np.linspace(-1, 1, 1000, dtype=np.float32))  # a new buffer
    second = xp.to_numpy(chain(x2))
    assert eng.dispatch_count - d0 == 1
    assert len(eng._kernels) - k0 == 0  # the cached pipeline serves
    np.testing.assert_array_equal(first, second)
    xp.set_lazy(False)
    try:
        d0 = eng.dispatch_count
        eager = xp.to_numpy(chain(x))
        assert eng.dispatch_count - d0 == 100
    finally:
        xp.set_lazy(True)
    np.testing.assert_array_equal(_bits(first), _bits(eager))


def test_long_chain_splits_at_the_size_limit(lazy):
    from volta_wgpu import lazy as L
    xp = lazy
    eng = _engine()
    x = xp.asarray(np.ones(8, dtype=np.float32))
    d0 = eng.dispatch_count
    z = x
    for _ in range(2 * L.MAX_OPS + 10):
        z = z + 1.0
    got = xp.to_numpy(z)
    assert eng.dispatch_count - d0 == 3
    np.testing.assert_array_equal(got, np.full(8, 2 * L.MAX_OPS + 11, np.float32))


def test_many_leaves_split_at_the_binding_limit(lazy):
    xp = lazy
    hosts = [np.full(5, i, dtype=np.float32) for i in range(20)]
    arrs = [xp.asarray(h) for h in hosts]
    z = arrs[0]
    for a in arrs[1:]:
        z = z + a
    np.testing.assert_array_equal(xp.to_numpy(z), sum(hosts))


def test_consumers_materialize(lazy):
    xp = lazy
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = xp.asarray(a)
    y = x * 2.0 + 1.0
    assert y._s is None
    np.testing.assert_allclose(xp.to_numpy(xp.sum(y, axis=1)), (a * 2 + 1).sum(1))
    y = x * 2.0 + 1.0
    np.testing.assert_allclose(xp.to_numpy(xp.matmul(y, xp.permute_dims(y, (1, 0)))),
                               (a * 2 + 1) @ (a * 2 + 1).T)
    y = x - 1.0
    assert y[1, 2].item() == a[1, 2] - 1.0
    y = x + 3.0
    xp.synchronize()
    assert y._s is not None  # a sync point runs every pending array
    assert float(xp.sum(x * 0.0 + 1.0)) == 12.0


def test_inplace_write_after_pending_read(lazy):
    xp = lazy
    x = xp.asarray(np.arange(6, dtype=np.float32))
    y = x + 1.0  # pending: reads x
    x += 10.0  # a write into x: y must still see the old x
    x[0] = -5.0
    np.testing.assert_array_equal(xp.to_numpy(y), np.arange(6, dtype=np.float32) + 1)
    assert xp.to_numpy(x)[0] == -5.0


def test_zero_size_and_scalar_shapes(lazy):
    xp = lazy
    e = xp.asarray(np.zeros((0, 3), dtype=np.float32))
    assert xp.to_numpy(e * 2.0 + 1.0).shape == (0, 3)
    s = xp.asarray(np.float32(2.5))
    assert (s * s - 1.0).item() == 5.25


def test_eager_switch(xp):
    was = xp.is_lazy()
    try:
        xp.set_lazy(False)
        x = xp.asarray(np.ones(4, dtype=np.float32))
        assert (x + 1.0)._s is not None
        xp.set_lazy(True)
        assert (x + 1.0)._s is None
    finally:
        xp.set_lazy(was)


def test_materialization_errors_name_the_ops(lazy, monkeypatch):
    from volta_wgpu import lazy as L

    from volta_core.errors import DeviceError
    xp = lazy
    x = xp.asarray(np.ones(4, dtype=np.float32))
    y = xp.exp(x * 3.0)
    monkeypatch.setattr(L, "_source", lambda g, rank, out: ("this is not WGSL", 4))
    monkeypatch.setattr(L, "_signature", lambda g, rank: ("lazy-broken",))
    with pytest.raises(DeviceError, match=r"(?s)\[multiply, exp\].*VOLTA_WGPU_EAGER"):
        xp.to_numpy(y)


def _train(vt, lazy_on: bool) -> tuple[list, int]:
    from volta_wgpu.engine import get_engine
    vt.wgpu.set_lazy(lazy_on)
    vt.manual_seed(0)
    model = vt.nn.Sequential(vt.nn.Linear(8, 16), vt.nn.GELU(), vt.nn.Linear(16, 3))
    model = model.to("wgpu")
    opt = vt.optim.Adam(model.parameters(), lr=1e-2)
    gen = np.random.default_rng(0)
    x = vt.tensor(gen.standard_normal((32, 8)).astype(np.float32), device="wgpu")
    y = vt.tensor(gen.standard_normal((32, 3)).astype(np.float32), device="wgpu")
    eng = get_engine()
    losses = []
    d0 = eng.dispatch_count
    for _ in range(3):
        opt.zero_grad()
        loss = vt.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses + [p.tolist() for p in model.parameters()], eng.dispatch_count - d0


def test_training_steps_match_eager_bit_for_bit(xp):
    import volta_core as vt
    was = vt.wgpu.is_lazy()
    try:
        eager, n_eager = _train(vt, False)
        fused, n_lazy = _train(vt, True)
    finally:
        vt.wgpu.set_lazy(was)
    assert fused == eager
    assert n_lazy < n_eager


def test_dropped_pending_results_never_run(lazy):
    xp = lazy
    eng = _engine()
    x = xp.asarray(np.ones(8, dtype=np.float32))
    xp.synchronize()
    d0 = eng.dispatch_count
    y = xp.exp(x) * 2.0
    del y
    xp.synchronize()
    assert eng.dispatch_count == d0


def test_inplace_update_of_a_pending_value_is_one_kernel(xp):
    a = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
    b = np.linspace(1, 2, 6, dtype=np.float32)

    def f(x, y):
        x += xp.exp(y) * 0.5 - 1.0  # fused, written straight into x
        v = x[:, ::2]  # a strided view as the target
        v *= xp.sqrt(y[:3])
        return x

    got, d = _same(xp, f, a, b, pending=False)
    assert d == 2
    eng = _engine()
    with pytest.MonkeyPatch.context():
        was = xp.is_lazy()
        xp.set_lazy(True)
        try:
            x, y = xp.asarray(a), xp.asarray(b)
            xp.synchronize()
            d0 = eng.dispatch_count
            x += y * 2.0
            xp.synchronize()
            assert eng.dispatch_count - d0 == 1
        finally:
            xp.set_lazy(was)


def test_inplace_with_the_target_read_falls_back_correctly(xp):
    a = np.arange(10, dtype=np.float32)

    def shift(x):
        x[1:] = x[:-1] * 2.0 + 1.0  # overlapping views of one buffer
        return x

    _same(xp, shift, a, pending=False)

    def self_update(x):
        x += x * 3.0
        x[::2] = xp.exp(x[1::2] * 0.01)
        return x

    _same(xp, self_update, a, pending=False)


def test_inplace_write_into_a_buffer_read_by_a_pending_graph(lazy):
    xp = lazy
    p = xp.asarray(np.arange(4, dtype=np.float32)) * 2.0  # pending
    q = p + 1.0  # pending, reads p's graph
    r = p * 1.0
    xp.to_numpy(r)  # r runs; p stays pending (inside q)
    p += 100.0  # p materializes, then is written in place: q must see the old p
    d = xp.abs(p) * 1.0  # pending, reads the new p
    p -= 50.0
    np.testing.assert_array_equal(xp.to_numpy(q), np.arange(4, dtype=np.float32) * 2 + 1)
    np.testing.assert_array_equal(xp.to_numpy(d), np.arange(4, dtype=np.float32) * 2 + 100)
    np.testing.assert_array_equal(xp.to_numpy(p), np.arange(4, dtype=np.float32) * 2 + 50)


def test_no_folding_across_ops(xp):
    """A compare feeding a select is not folded into a NaN-dropping max (OpenGL llvmpipe
    did: hardtanh(remainder(-0., -0.)) gave -1), x - x is not folded to 0 (lavapipe did),
    and a product feeding a sum is not contracted into an FMA (NVIDIA did): each op's
    operands are opaque, as loads from memory are."""
    import volta_core as vt
    a = np.array([-0.0, 1.0, -0.0, 3.0, np.nan, 2.0], dtype=np.float32)
    b = np.array([-0.0, 0.0, 2.0, np.nan, 1.0, -np.inf], dtype=np.float32)

    def clamp(x, y):
        r = xp.remainder(x, y)
        r = xp.where(r < -1.0, -1.0, r)
        return xp.where(r > 1.0, 1.0, r)

    got, _ = _same(xp, clamp, a, b)
    assert np.isnan(got[:2]).all() and np.isnan(got[3:5]).all()
    # one value as both operands: x - x is NaN for a NaN x (lavapipe folded it to 0)
    got, _ = _same(xp, lambda x, y: (x * 1.0) - (x * 1.0) + (y - y), a, b)
    assert np.isnan(got[[3, 4, 5]]).all()
    # 1 + 2**-23 squared minus its rounded square: 2**-46 with an FMA, 0 without
    e = np.full(4, 1 + 2.0 ** -23, dtype=np.float32)
    got, _ = _same(xp, lambda x: x * x - (1 + 2.0 ** -22), e)
    assert (got == 0).all()
    was = vt.wgpu.is_lazy()
    try:
        vt.wgpu.set_lazy(True)
        t = vt.tensor(a, device="wgpu")
        out = vt.nn.functional.hardtanh(vt.remainder(t, vt.tensor(b, device="wgpu")))
        assert np.isnan(out.tolist()[0])
    finally:
        vt.wgpu.set_lazy(was)


def test_reductions_and_softmax_compute_a_pending_input_in_their_kernel(xp):
    from volta_wgpu.kernels.softmax import log_softmax, softmax
    a = np.random.default_rng(1).standard_normal((37, 300)).astype(np.float32)
    a[3, 7], a[5, 0] = np.nan, np.inf

    def f(x):
        y = xp.exp(x * 0.5) - 1.0
        z = xp.maximum(x, 0.1) * 2.0
        return [xp.sum(y, axis=-1), xp.mean(y * y, axis=1), xp.max(xp.abs(y)),
                xp.sum(y > 0.5, axis=0), xp.max(z, axis=0), xp.min(xp.minimum(z, 1.0)),
                xp.sum(y), softmax(x * 0.125 + 1.0, -1), log_softmax(x[:, :40] * 2.0, -1)]

    was = xp.is_lazy()
    eng = _engine()
    try:
        res = {}
        for on in (False, True):
            xp.set_lazy(on)
            x = xp.asarray(a)
            xp.synchronize()
            d0 = eng.dispatch_count
            res[on] = [xp.to_numpy(r) for r in f(x)], eng.dispatch_count - d0
    finally:
        xp.set_lazy(was)
    for e, g in zip(res[False][0], res[True][0]):
        assert e.dtype == g.dtype and e.shape == g.shape
        np.testing.assert_array_equal(_bits(np.atleast_1d(g)), _bits(np.atleast_1d(e)))
    # one kernel per reduction or softmax, none for the elementwise ops feeding them
    assert res[True][1] == 9, res[True][1]
    assert res[False][1] > 20


def test_pending_graphs_survive_unrelated_kernels_and_shared_subgraphs_count_once(lazy):
    xp = lazy
    eng = _engine()
    a = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
    x = xp.asarray(a)
    xp.synchronize()
    d0 = eng.dispatch_count
    y = xp.tanh(x) * 0.2
    m = xp.matmul(x, x)  # writes a fresh buffer: y stays pending
    assert y._s is None
    z = y
    for _ in range(200):  # every op reads z twice: as a tree this would be 2**200 ops
        z = z * z + y
    out = xp.to_numpy(xp.sum(z, axis=1) + xp.sum(m))
    assert eng.dispatch_count - d0 <= 8  # 402 ops: two fused kernels, not one per op
    yy = np.tanh(a) * np.float32(0.2)
    zz = yy
    for _ in range(200):
        zz = zz * zz + yy
    np.testing.assert_allclose(out, zz.sum(axis=1) + (a @ a).sum(), rtol=1e-4)


def test_long_chain_keeps_saved_values_and_the_second_run_compiles_nothing(lazy):
    """A 1,000-op chain with its backward: the fused kernels store the activations
    autograd saved, so the backward reads them (a few dozen kernels, not one per op nor
    a recomputed forward), the gradient equals eager's bit for bit, and the second run
    finds every kernel in the cache."""
    import volta_core as vt
    eng = _engine()

    def run():
        x = vt.tensor(np.linspace(-1, 1, 16, dtype=np.float32), device="wgpu",
                      requires_grad=True)
        y = x
        for i in range(1000):  # benchmarks/op_overhead.py's chain
            k = i % 4
            y = y * 1.001 if k == 0 else y + x if k == 1 else vt.tanh(y) if k == 2 else y - 0.5
        y.sum().backward()
        return x.grad.numpy()

    lazy.set_lazy(False)
    try:
        eager = run()
    finally:
        lazy.set_lazy(True)
    run()
    k0, d0, s0 = len(eng._kernels), eng.dispatch_count, eng.submit_count
    got = run()
    assert len(eng._kernels) == k0
    assert eng.dispatch_count - d0 <= 40
    # a few submissions: the first 8 kernels go out early, then batches of 16, 32, ...
    assert eng.submit_count - s0 <= 3
    np.testing.assert_array_equal(_bits(got), _bits(eager))
