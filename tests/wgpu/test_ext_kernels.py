"""The WGSL extension kernels against the core's generic fallbacks run on NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import volta_core.ops.indexing  # noqa: F401 - these register the fallbacks
import volta_core.ops.nn  # noqa: F401
import volta_core.ops.softmax  # noqa: F401
import volta_core.optim.kernels  # noqa: F401
from volta_core.backend.kernels import get_fallback

from .conftest import has

RNG = np.random.default_rng(0)


@pytest.fixture(scope="module")
def npx():
    import array_api_compat.numpy as npx
    return npx


@pytest.fixture(scope="module")
def ext():
    from volta_wgpu.kernels import ext
    return ext


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _cmp(got, exp, rtol=1e-4, atol=1e-5):
    import volta_wgpu
    if exp is None:
        assert got is None
        return
    host = volta_wgpu.to_numpy(got)
    exp = np.asarray(exp)
    assert host.shape == exp.shape, (host.shape, exp.shape)
    np.testing.assert_allclose(host, exp, rtol=rtol, atol=atol)


def _run(name, ext, xp, npx, arrays, atol=1e-5, **kw):
    """Run kernel ``name`` on wgpu and the fallback on NumPy; compare every output."""
    dev = [xp.asarray(a) if isinstance(a, np.ndarray) else a for a in arrays]
    got = ext.KERNELS[name](xp, *dev, **kw)
    exp = get_fallback(name)(npx, *arrays, **kw)
    if not isinstance(exp, tuple):
        got, exp = (got,), (exp,)
    for g, e in zip(got, exp):
        _cmp(g, e, atol=atol)


@pytest.mark.parametrize("case", [
    dict(x=(2, 3, 7, 6), w=(4, 3, 3, 3), stride=(1, 1), pads=(1, 1, 1, 1), dilation=(1, 1),
         groups=1, bias=True),
    dict(x=(1, 4, 9, 8), w=(6, 2, 3, 2), stride=(2, 1), pads=(0, 1, 2, 0), dilation=(2, 1),
         groups=2, bias=False),
    dict(x=(2, 3, 5, 5), w=(70, 3, 1, 1), stride=(1, 1), pads=(0, 0, 0, 0), dilation=(1, 1),
         groups=1, bias=True),
])
def test_conv2d_forward_backward(case, xp, npx, ext):
    x, w = _f32(*case["x"]), _f32(*case["w"])
    b = _f32(case["w"][0]) if case["bias"] else None
    geo = {k: case[k] for k in ("stride", "pads", "dilation", "groups")}
    _run("conv2d", ext, xp, npx, [x, w, b], **geo)
    y = get_fallback("conv2d")(npx, x, w, b, **geo)
    g = _f32(*y.shape)
    _run("conv2d_backward", ext, xp, npx, [g, x, w], x_shape=x.shape, w_shape=w.shape, **geo)
    _run("conv2d_backward", ext, xp, npx, [g, None, w], x_shape=x.shape, w_shape=w.shape,
         needs=(True, False), **geo)


def test_conv2d_weight_grad_split_k(xp, npx, ext):
    # a long K (N * Ho * Wo = 8192) is split over several workgroups, then summed
    x, w = _f32(8, 2, 32, 32), _f32(3, 2, 3, 3)
    g = _f32(8, 3, 32, 32)
    geo = dict(stride=(1, 1), pads=(1, 1, 1, 1), dilation=(1, 1), groups=1)
    _run("conv2d_backward", ext, xp, npx, [g, x, None], x_shape=x.shape, w_shape=w.shape,
         needs=(False, True), atol=2e-3, **geo)


@pytest.mark.parametrize("kw", [
    dict(kernel=(2, 2), stride=(2, 2)),
    dict(kernel=(3, 3), stride=(2, 1), padding=(1, 1), dilation=(1, 2), ceil_mode=True),
])
def test_max_pool2d(kw, xp, npx, ext):
    x = _f32(2, 3, 7, 8)
    _run("max_pool2d", ext, xp, npx, [x], **kw)
    vals, idx = get_fallback("max_pool2d")(npx, x, **kw)
    g = _f32(*vals.shape)
    _run("max_pool2d_backward", ext, xp, npx, [g, idx], x_shape=x.shape, **kw)


@pytest.mark.parametrize("kw", [
    dict(kernel=(2, 2), stride=(2, 2)),
    dict(kernel=(3, 3), stride=(2, 2), padding=(1, 1), ceil_mode=True),
    dict(kernel=(3, 2), stride=(1, 2), padding=(1, 1), count_include_pad=False),
    dict(kernel=(2, 2), stride=(1, 1), divisor_override=3),
])
def test_avg_pool2d(kw, xp, npx, ext):
    x = _f32(2, 2, 7, 6)
    _run("avg_pool2d", ext, xp, npx, [x], **kw)
    y = get_fallback("avg_pool2d")(npx, x, **kw)
    _run("avg_pool2d_backward", ext, xp, npx, [_f32(*y.shape)], x_shape=x.shape, **kw)


def test_global_pooling_past_a_cpu_adapters_loop_limit(xp, npx, ext):
    """One window over a whole 300x400 map (120000 taps: one thread walking them ended
    early on llvmpipe): the average as a mean reduction, the max as a walk over W then
    over H, with the generic kernel's winner (a NaN, the last one, wins); any other
    window that long is refused on a CPU adapter."""
    import volta_wgpu

    from volta_core.errors import VoltaError

    x = np.round(_f32(2, 2, 300, 400) * 3)  # ties
    x[0, 1, 10, 20] = x[0, 1, 200, 5] = np.nan
    kw = dict(kernel=(300, 400), stride=(300, 400))
    _run("avg_pool2d", ext, xp, npx, [x], **kw)
    got, idx = ext.max_pool2d(xp, xp.asarray(x), **kw)
    want, want_idx = get_fallback("max_pool2d")(npx, x, **kw)
    np.testing.assert_array_equal(volta_wgpu.to_numpy(got), want)
    np.testing.assert_array_equal(volta_wgpu.to_numpy(idx), want_idx)
    assert want_idx[0, 1, 0, 0] == 200 * 400 + 5
    eng = xp.asarray(x).engine
    if not eng.is_gpu:
        with pytest.raises(VoltaError, match="CPU adapter"):
            ext.max_pool2d(xp, xp.asarray(x), kernel=(250, 250), stride=(50, 50))


@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_add(dim, xp, npx, ext):
    target = _f32(4, 5)
    index = RNG.integers(0, target.shape[dim], size=(3, 4)).astype(np.int64)
    src = _f32(3, 5)
    _run("scatter_add", ext, xp, npx, [target, dim, index, src])
    ti = RNG.integers(-5, 5, size=(4, 5)).astype(np.int32)
    _run("scatter_add", ext, xp, npx, [ti, dim, index, ti[:3] * 2])


def test_scatter_add_out_of_range_raises(xp, ext):
    from volta_core.errors import IndexOutOfRangeError
    out = ext.scatter_add(xp, xp.asarray(_f32(3)), 0, xp.asarray(np.array([0, 7])),
                          xp.asarray(_f32(2)))
    with pytest.raises(IndexOutOfRangeError, match="index 7"):
        xp.to_numpy(out)
    with pytest.raises(IndexOutOfRangeError, match="unreadable"):  # spoiled, as on CUDA
        xp.to_numpy(out)
    xp.to_numpy(xp.asarray(_f32(2)))  # the flag is cleared once reported


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_backward(padding_idx, xp, npx, ext):
    grad = _f32(9, 6)
    idx = RNG.integers(0, 5, size=9).astype(np.int64)
    _run("embedding_backward", ext, xp, npx, [grad, idx], num_weights=5,
         padding_idx=padding_idx)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("c", [5, 300])
def test_cross_entropy(weighted, smoothing, c, xp, npx, ext):
    logits = _f32(6, c) * 3
    target = RNG.integers(0, c, size=6).astype(np.int64)
    target[2] = -100
    w = np.abs(_f32(c)) if weighted else None
    _run("cross_entropy", ext, xp, npx, [logits, target, w], label_smoothing=smoothing)


@pytest.mark.parametrize("ndim,affine", [(1, True), (2, False), (1, False)])
def test_layer_norm(ndim, affine, xp, npx, ext):
    x = _f32(3, 4, 150) + 2
    norm = x.shape[x.ndim - ndim:]
    w, b = (_f32(*norm), _f32(*norm)) if affine else (None, None)
    _run("layer_norm", ext, xp, npx, [x, w, b], ndim=ndim, eps=1e-5)


@pytest.mark.parametrize("ndim,affine,needs", [(1, True, (True, True, True)),
                                               (2, False, (True, False, False)),
                                               (1, True, (True, False, True)),
                                               (1, True, (False, True, True))])
@pytest.mark.parametrize("length", [7, 300])
def test_layer_norm_backward(ndim, affine, needs, length, xp, npx, ext):
    x, g = _f32(3, 4, length) + 2, _f32(3, 4, length)
    norm = x.shape[x.ndim - ndim:]
    w = _f32(*norm) if affine else None
    _, mean, rstd = get_fallback("layer_norm")(npx, x, w, None, ndim=ndim, eps=1e-5)
    _run("layer_norm_backward", ext, xp, npx, [g, x, w, mean, rstd], atol=1e-4, ndim=ndim,
         needs=needs)


@pytest.mark.parametrize("shape,dim", [((5, 9), -1), ((3, 4, 200), -1), ((3, 70, 4), 1),
                                       ((2, 2, 64, 64), 3), ((9, 65), -1), ((3, 17, 1024), -1),
                                       ((3, 1025), -1)])
def test_softmax_backward(shape, dim, xp, npx, ext):
    x, g = _f32(*shape), _f32(*shape)
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    y = (e / e.sum(axis=dim, keepdims=True)).astype(np.float32)
    _run("softmax_backward", ext, xp, npx, [g, y], dim=dim)


@pytest.mark.parametrize("wd,maximize,decoupled", [(0.0, False, False), (0.01, True, False),
                                                   (0.1, False, True)])
@pytest.mark.parametrize("step", [2, 9])  # RAdam's rectification applies from step 6
def test_adamax_radam_nadam_steps(wd, maximize, decoupled, step, xp, npx, ext):
    p, g, m, v = _f32(50), _f32(50), _f32(50), np.abs(_f32(50))
    hp = dict(step=step, lr=1e-2, beta1=0.9, beta2=0.99, eps=1e-8, weight_decay=wd,
              maximize=maximize)
    _run("adamax_step", ext, xp, npx, [p, g, m, v], **hp)
    _run("radam_step", ext, xp, npx, [p, g, m, v], decoupled=decoupled, **hp)
    _run("nadam_step", ext, xp, npx, [p, g, m, v], decoupled=decoupled, mu=0.85,
         mu_next=0.86, mu_product=0.5, mu_product_next=0.43, **hp)


@pytest.mark.parametrize("kw", [
    dict(momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False),
    dict(momentum=0.9, dampening=0.1, weight_decay=0.01, nesterov=False, maximize=True),
    dict(momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=True, maximize=False),
])
@pytest.mark.parametrize("has_buf", [False, True])
def test_sgd_step(kw, has_buf, xp, npx, ext):
    p, g, buf = _f32(7, 3), _f32(7, 3), (_f32(7, 3) if has_buf else None)
    _run("sgd_step", ext, xp, npx, [p, g, buf], lr=0.1, **kw)


@pytest.mark.parametrize("amsgrad,decoupled,wd,maximize", [
    (False, False, 0.0, False), (True, False, 0.01, True), (False, True, 0.01, False),
    (True, True, 0.1, False)])
def test_adam_step(amsgrad, decoupled, wd, maximize, xp, npx, ext):
    p, g, m, v = _f32(50), _f32(50), _f32(50), np.abs(_f32(50))
    mx = np.abs(_f32(50)) if amsgrad else None
    _run("adam_step", ext, xp, npx, [p, g, m, v, mx], step=3, lr=1e-2, beta1=0.9, beta2=0.99,
         eps=1e-8, weight_decay=wd, amsgrad=amsgrad, maximize=maximize, decoupled=decoupled)


@pytest.mark.parametrize("centered,momentum", [(False, 0.0), (True, 0.9)])
def test_rmsprop_and_adagrad_steps(centered, momentum, xp, npx, ext):
    p, g, sq = _f32(20), _f32(20), np.abs(_f32(20)) + 1
    ga = _f32(20) * 0.1 if centered else None
    buf = _f32(20) if momentum else None
    _run("rmsprop_step", ext, xp, npx, [p, g, sq, ga, buf], lr=0.01, alpha=0.99, eps=1e-8,
         weight_decay=0.01, momentum=momentum, centered=centered, maximize=False)
    _run("adagrad_step", ext, xp, npx, [p, g, sq], step=2, lr=0.1, lr_decay=0.01,
         weight_decay=0.0, eps=1e-10, maximize=centered)


def test_float64_uses_the_fallback(xp, npx, ext):
    if not has("float64"):
        pytest.skip("adapter lacks float64 (shader-f64)")
    x = RNG.standard_normal((1, 2, 5, 5))
    w = RNG.standard_normal((3, 2, 3, 3))
    geo = dict(stride=(1, 1), pads=(0, 0, 0, 0), dilation=(1, 1), groups=1)
    got = ext.conv2d(xp, xp.asarray(x), xp.asarray(w), None, **geo)
    _cmp(got, get_fallback("conv2d")(npx, x, w, None, **geo), rtol=1e-10, atol=1e-10)


def test_signatures_match_the_core_fallbacks(ext):
    import inspect
    for name, fn in ext.KERNELS.items():
        mine = [(p.name, p.kind) for p in inspect.signature(fn).parameters.values()]
        core = [(p.name, p.kind) for p in inspect.signature(get_fallback(name)).parameters.values()]
        assert mine == core, name


@pytest.mark.parametrize("kind", ["sgd", "sgd_momentum", "adam", "adamw"])
def test_multi_tensor_steps_match_the_single_ones(kind, xp, ext):
    """The in-place multi-tensor steps compute what the per-parameter kernels do, bit for
    bit (a non-contiguous gradient is copied first)."""
    import volta_wgpu
    shapes = [(7, 3), (300,), (2, 2, 5)]
    host = [[_f32(*s) for s in shapes] for _ in range(4)]
    host[3] = [np.abs(a) for a in host[3]]
    p, g, m, v = ([xp.asarray(a) for a in col] for col in host)
    g[0] = xp.asarray(np.ascontiguousarray(host[1][0].T)).T  # a transposed view
    if kind.startswith("sgd"):
        mom = 0.9 if kind == "sgd_momentum" else 0.0
        hp = dict(lr=0.1, momentum=mom, dampening=0.1, weight_decay=0.01, nesterov=False,
                  maximize=False)
        want = [ext.sgd_step(xp, *a, **hp) for a in zip(p, g, m if mom else [None] * 3)]
        assert ext.sgd_step_multi(xp, p, g, m if mom else [None] * 3, **hp)
        got = [(a, b if mom else None) for a, b in zip(p, m)]
    else:
        hp = dict(step=4, lr=1e-2, beta1=0.9, beta2=0.99, eps=1e-8, weight_decay=0.01,
                  maximize=True, decoupled=kind == "adamw")
        want = [ext.adam_step(xp, *a, None, amsgrad=False, **hp)[:3] for a in zip(p, g, m, v)]
        assert ext.adam_step_multi(xp, p, g, m, v, **hp)
        got = list(zip(p, m, v))
    for w_row, g_row in zip(want, got):
        for a, b in zip(w_row, g_row):
            if a is not None:
                assert volta_wgpu.to_numpy(b).tobytes() == volta_wgpu.to_numpy(a).tobytes()


def test_multi_tensor_step_declines_a_gradient_on_the_parameters_buffer(xp, ext):
    """A buffer written by the in-place step may be bound once: a gradient that shares the
    parameter's buffer sends the optimizer to the per-parameter path."""
    p = xp.asarray(_f32(8))
    assert not ext.sgd_step_multi(xp, [p], [p[:]], [None], lr=0.1, momentum=0.0,
                                  dampening=0.0, weight_decay=0.0, nesterov=False,
                                  maximize=False)
