"""The CuPy backend's extension kernels against the generic fallbacks run on NumPy.

Every kernel in ``volta_cupy.kernels.KERNELS`` gets random inputs of several shapes and
dtypes; the reference is the core's generic fallback of the same name, run with the
NumPy backend's namespace (in float64 unless the comparison must be exact). Skipped,
with the reason, where CUDA is unavailable.
"""

from __future__ import annotations

import importlib
import time

import numpy as np
import pytest

import volta_core as vt
from volta_core.ops import _scatter as gscatter
from volta_core.ops import math as gmath
from volta_core.ops import nn as gnn
from volta_core.optim import kernels as goptim

# ops/__init__ star-imports the function `softmax`, which shadows the module
gsoftmax = importlib.import_module("volta_core.ops.softmax")


NP = vt.device("cpu").xp
TOL = {"float64": (1e-9, 1e-9), "float32": (2e-4, 2e-4), "float16": (2e-2, 5e-2)}



@pytest.fixture(scope="module")
def K(cp):
    from volta_cupy.kernels import KERNELS

    return KERNELS


@pytest.fixture(scope="module")
def XP(cp):
    return vt.device("cuda").xp


def rnd(*shape, seed=0, dtype="float64", scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def close(got, want, dtype, scale=1.0):
    import cupy

    g = cupy.asnumpy(got).astype(np.float64)
    w = np.asarray(want, dtype=np.float64)
    assert g.shape == w.shape, f"shape {g.shape} != {w.shape}"
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * scale, equal_nan=True)


@pytest.fixture(autouse=True)
def _ieee_float32():
    """Compare float32 kernels at float32 precision: TF32 convolutions off (cuDNN's default
    is on, as in PyTorch)."""
    vt.backends.cudnn.allow_tf32 = False
    yield
    vt.backends.cudnn.allow_tf32 = True


def test_every_kernel_is_registered_and_resolved(K):
    from volta_core.backend.kernels import get_kernel, kernel_names

    backend = vt.device("cuda").backend
    assert set(K) <= set(kernel_names())
    for name, fn in K.items():
        assert get_kernel(backend, name) is fn, name


# -- convolution --------------------------------------------------------------------------

CONV = [
    ((2, 3, 9, 8), (4, 3, 3, 3), dict(stride=(1, 1), pads=(1, 1, 1, 1), dilation=(1, 1),
                                      groups=1)),
    ((2, 4, 11, 9), (6, 2, 3, 2), dict(stride=(2, 1), pads=(0, 2, 1, 0), dilation=(1, 2),
                                       groups=2)),
    ((3, 6, 10, 10), (6, 1, 3, 3), dict(stride=(2, 2), pads=(1, 1, 1, 1), dilation=(2, 2),
                                        groups=6)),
    ((2, 8, 12, 12), (16, 8, 1, 1), dict(stride=(1, 1), pads=(0, 0, 0, 0), dilation=(1, 1),
                                         groups=1)),  # 1x1 fast path
    ((2, 8, 9, 9), (16, 8, 1, 1), dict(stride=(2, 2), pads=(0, 0, 0, 0), dilation=(1, 1),
                                       groups=1)),
    ((4, 64, 8, 8), (64, 64, 3, 3), dict(stride=(1, 1), pads=(1, 1, 1, 1), dilation=(1, 1),
                                         groups=1)),
    ((2, 36, 6, 6), (72, 1, 3, 3), dict(stride=(1, 1), pads=(1, 1, 1, 1), dilation=(1, 1),
                                        groups=36)),  # depthwise, many groups
]


@pytest.mark.parametrize("path", ["cudnn", "im2col"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("case", CONV, ids=lambda c: f"{c[0]}x{c[1]}")
def test_conv2d_forward_and_backward(cp, K, XP, case, dtype, path, monkeypatch):
    from volta_cupy import cudnn_ops

    if path == "im2col":  # the CuPy kernels, as without cuDNN
        monkeypatch.setitem(cudnn_ops.FLAGS, "enabled", False)
    xs, ws, kw = case
    x, w, b = rnd(*xs, seed=1, dtype=dtype), rnd(*ws, seed=2, dtype=dtype), rnd(ws[0], seed=3,
                                                                                dtype=dtype)
    k = ws[1] * ws[2] * ws[3]
    y = K["conv2d"](XP, cp.asarray(x), cp.asarray(w), cp.asarray(b), **kw)
    ref = gnn.conv2d(NP, x.astype("f8"), w.astype("f8"), b.astype("f8"), **kw)
    close(y, ref, dtype, scale=np.sqrt(k))
    assert y.dtype == np.dtype(dtype)
    g = rnd(*ref.shape, seed=4, dtype=dtype)
    gx, gw = K["conv2d_backward"](XP, cp.asarray(g), cp.asarray(x), cp.asarray(w),
                                  x_shape=xs, **kw)
    rx, rw = gnn.conv2d_backward(NP, g.astype("f8"), x.astype("f8"), w.astype("f8"),
                                 x_shape=xs, **kw)
    close(gx, rx, dtype, scale=np.sqrt(k))
    close(gw, rw, dtype, scale=np.sqrt(g.size / ws[0]))
    only_x, none = K["conv2d_backward"](XP, cp.asarray(g), None, cp.asarray(w), x_shape=xs,
                                        w_shape=ws, needs=(True, False), **kw)
    assert none is None
    close(only_x, rx, dtype, scale=np.sqrt(k))


def test_conv2d_in_batch_chunks_matches_one_pass(cp, K, XP, monkeypatch):
    from volta_cupy import conv, cudnn_ops

    monkeypatch.setitem(cudnn_ops.FLAGS, "enabled", False)  # the im2col path chunks

    xs, ws, kw = CONV[1]
    x, w, g = rnd(*xs, seed=5), rnd(*ws, seed=6), None
    y_one = K["conv2d"](XP, cp.asarray(x), cp.asarray(w), None, **kw)
    g = cp.asarray(rnd(*y_one.shape, seed=7))
    gx_one, gw_one = K["conv2d_backward"](XP, g, cp.asarray(x), cp.asarray(w), x_shape=xs,
                                          **kw)
    monkeypatch.setattr(conv, "COLS_BYTES", 1)  # one sample per chunk
    close(K["conv2d"](XP, cp.asarray(x), cp.asarray(w), None, **kw), cp.asnumpy(y_one),
          "float64")
    gx, gw = K["conv2d_backward"](XP, g, cp.asarray(x), cp.asarray(w), x_shape=xs, **kw)
    close(gx, cp.asnumpy(gx_one), "float64")
    close(gw, cp.asnumpy(gw_one), "float64")


# -- pooling ------------------------------------------------------------------------------

POOL = [
    ((2, 3, 8, 8), dict(kernel=(2, 2), stride=(2, 2))),
    ((2, 3, 9, 7), dict(kernel=(3, 3), stride=(2, 2), padding=(1, 1))),
    ((1, 2, 10, 9), dict(kernel=(3, 2), stride=(2, 3), padding=(1, 1), ceil_mode=True)),
    ((1, 2, 11, 11), dict(kernel=(3, 3), stride=(1, 2), padding=(1, 0), dilation=(2, 1))),
    ((4, 16, 32, 32), dict(kernel=(3, 3), stride=(1, 1), padding=(1, 1))),
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("case", POOL, ids=lambda c: str(c[1]))
def test_max_pool2d(cp, K, XP, case, dtype):
    xs, kw = case
    x = rnd(*xs, seed=8, dtype=dtype)
    y, idx = K["max_pool2d"](XP, cp.asarray(x), **kw)
    ry, ridx = gnn.max_pool2d(NP, x, **kw)  # same dtype: values and ties are exact
    np.testing.assert_array_equal(cp.asnumpy(y), ry)
    np.testing.assert_array_equal(cp.asnumpy(idx), ridx)
    assert idx.dtype == np.int32
    g = rnd(*ry.shape, seed=9, dtype=dtype)
    gx = K["max_pool2d_backward"](XP, cp.asarray(g), idx, x_shape=xs, **kw)
    close(gx, gnn.max_pool2d_backward(NP, g.astype("f8"), ridx, x_shape=xs, **kw), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("opts", [dict(), dict(count_include_pad=False),
                                  dict(divisor_override=5)], ids=str)
@pytest.mark.parametrize("case", POOL, ids=lambda c: str(c[1]))
def test_avg_pool2d(cp, K, XP, case, opts, dtype):
    xs, kw = case
    kw = {k: v for k, v in kw.items() if k != "dilation"}
    x = rnd(*xs, seed=10, dtype=dtype)
    y = K["avg_pool2d"](XP, cp.asarray(x), **kw, **opts)
    ref = gnn.avg_pool2d(NP, x.astype("f8"), **kw, **opts)
    close(y, ref, dtype)
    g = rnd(*ref.shape, seed=11, dtype=dtype)
    gx = K["avg_pool2d_backward"](XP, cp.asarray(g), x_shape=xs, **kw, **opts)
    close(gx, gnn.avg_pool2d_backward(NP, g.astype("f8"), x_shape=xs, **kw, **opts), dtype)


# -- scatters -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_scatter_add_and_index_add(cp, K, XP, dim, dtype):
    rng = np.random.default_rng(dim)
    t, src = rnd(4, 5, 6, seed=12, dtype=dtype), rnd(4, 5, 6, seed=13, dtype=dtype)
    idx = rng.integers(0, t.shape[dim], (3, 4, 5))
    out = K["scatter_add"](XP, cp.asarray(t), dim, cp.asarray(idx), cp.asarray(src))
    assert out.dtype == np.dtype(dtype)
    close(out, gscatter._scatter_add_kernel(NP, t.astype("f8"), dim, idx, src.astype("f8")),
          dtype)
    ii = rng.integers(0, t.shape[dim], (9,))
    s2 = rnd(*[9 if d == dim else t.shape[d] for d in range(3)], seed=14, dtype=dtype)
    out = K["index_add"](XP, cp.asarray(t), dim, cp.asarray(ii), cp.asarray(s2))
    close(out, gscatter._index_add_kernel(NP, t.astype("f8"), dim, ii, s2.astype("f8")), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("padding_idx", [None, 3])
def test_embedding_backward(cp, K, XP, padding_idx, dtype):
    g = rnd(500, 16, seed=15, dtype=dtype)
    ind = np.random.default_rng(1).integers(0, 20, (500,))
    out = K["embedding_backward"](XP, cp.asarray(g), cp.asarray(ind), num_weights=20,
                                  padding_idx=padding_idx)
    ref = gnn.embedding_backward(NP, g.astype("f8"), ind, num_weights=20,
                                 padding_idx=padding_idx)
    close(out, ref, dtype, scale=5.0)


# -- row kernels --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("shape,dim", [((7, 10), -1), ((4, 5, 300), -1), ((3, 5000), 1),
                                       ((2, 5, 6), 1), ((3, 4, 2, 2), 0)])
def test_softmax_and_log_softmax(cp, K, XP, shape, dim, dtype):
    x = rnd(*shape, seed=16, dtype=dtype, scale=4.0)
    x.reshape(-1)[0] = -np.inf
    close(K["softmax"](XP, cp.asarray(x), dim),
          gsoftmax.softmax_kernel(NP, x.astype("f8"), dim), dtype)
    close(K["log_softmax"](XP, cp.asarray(x), dim),
          gsoftmax.log_softmax_kernel(NP, x.astype("f8"), dim), dtype, scale=10.0)


def test_softmax_is_stable_for_large_inputs(cp, K, XP):
    x = np.array([[1000.0, 1001.0, 999.0], [-1e4, -1e4 + 1, -1e4 + 2]], dtype="float32")
    y = K["softmax"](XP, cp.asarray(x), -1)
    close(y, gsoftmax.softmax_kernel(NP, x.astype("f8"), -1), "float32")


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("n,c", [(64, 10), (33, 1000)])
def test_cross_entropy(cp, K, XP, n, c, smoothing, weighted, dtype):
    x = rnd(n, c, seed=17, dtype=dtype, scale=3.0)
    t = np.random.default_rng(2).integers(0, c, (n,))
    t[::7] = -100
    w = np.abs(rnd(c, seed=18, dtype=dtype)) if weighted else None
    got = K["cross_entropy"](XP, cp.asarray(x), cp.asarray(t),
                             None if w is None else cp.asarray(w), label_smoothing=smoothing)
    ref = gnn.cross_entropy(NP, x.astype("f8"), t, None if w is None else w.astype("f8"),
                            label_smoothing=smoothing)
    for a, b in zip(got, ref):
        assert a.dtype == np.dtype(dtype)
        close(a, b, dtype, scale=10.0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 7), (256, 512), (4096, 300), (70000, 33)])
def test_sum_leading(cp, K, XP, shape, dtype):
    x = rnd(*shape, seed=31, dtype=dtype)
    got = K["sum_leading"](XP, cp.asarray(x))
    assert got.dtype == np.dtype(dtype) and got.shape == shape[1:]
    close(got, x.astype("f8").sum(0), dtype, scale=float(np.sqrt(shape[0])))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 7, 64, 5000, 300000])
def test_weighted_mean(cp, K, XP, n, dtype):
    v, w = rnd(n, seed=34, dtype=dtype), np.abs(rnd(n, seed=35, dtype=dtype))
    w[::3] = 0
    mean, total = K["weighted_mean"](XP, cp.asarray(v), cp.asarray(w))
    assert mean.shape == total.shape == () and mean.dtype == np.dtype(dtype)
    close(total, w.astype("f8").sum(), dtype, scale=float(np.sqrt(n)))
    close(mean, v.astype("f8").sum() / w.astype("f8").sum(), dtype, scale=float(np.sqrt(n)))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16"])
@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (64, 6, 28, 28), (128, 64, 32, 32), (5, 3),
                                   (2, 513, 7), (3000, 2, 400)])
def test_channel_sum(cp, K, XP, shape, dtype):
    from volta_cupy._util import BFLOAT16

    if dtype == "bfloat16" and BFLOAT16 is None:
        pytest.skip("bfloat16 on CUDA needs CuPy >= 14 and ml_dtypes")
    x = rnd(*shape, seed=33, dtype="float32")
    a = cp.asarray(x).astype(BFLOAT16 if dtype == "bfloat16" else dtype)
    got = K["channel_sum"](XP, a)
    axes = (0, *range(2, len(shape)))
    assert got.dtype == a.dtype and got.shape == shape[1:2]
    def f64(v):  # (CuPy casts bfloat16 to float32 only)
        return cp.asnumpy(v.astype(cp.float32) if dtype == "bfloat16" else v).astype("f8")

    ref = f64(a).sum(axis=axes)
    tol = {"float16": 3e-3, "bfloat16": 1e-2, "float32": 1e-5, "float64": 1e-9}[dtype]
    np.testing.assert_allclose(f64(got), ref, rtol=tol,
                               atol=tol * np.sqrt(x.size / shape[1]))
    again = K["channel_sum"](XP, a)  # a fixed order: the same bits every time
    assert bool((again == got).all())


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", ["tanh_backward", "sigmoid_backward"])
def test_activation_backward(cp, K, XP, name, dtype):
    from volta_core.ops import elementwise as gel

    g, x = rnd(7, 33, seed=29, dtype=dtype), rnd(7, 33, seed=30, dtype=dtype)
    y = np.tanh(x) if name == "tanh_backward" else 1 / (1 + np.exp(-x.astype("f8")))
    y = y.astype(dtype)
    got = K[name](XP, cp.asarray(g), cp.asarray(y))
    ref = getattr(gel, name + "_kernel")(NP, g.astype("f8"), y.astype("f8"))
    assert got.dtype == np.dtype(dtype)
    close(got, ref, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n,c", [(1, 3), (33, 10), (64, 1000)])
def test_cross_entropy_backward(cp, K, XP, n, c, dtype):
    x = rnd(n, c, seed=27, dtype=dtype, scale=3.0)
    t = np.random.default_rng(3).integers(0, c, (n,))
    t[::5] = -100
    _, lse, row_w = gnn.cross_entropy(NP, x, t)
    g = rnd(n, seed=28, dtype=dtype)
    got = K["cross_entropy_backward"](XP, cp.asarray(g), cp.asarray(x), cp.asarray(lse),
                                      cp.asarray(t), cp.asarray(row_w))
    ref = gnn.cross_entropy_backward(NP, g.astype("f8"), x.astype("f8"), lse.astype("f8"), t,
                                     row_w.astype("f8"))
    assert got.dtype == np.dtype(dtype)
    close(got, ref, dtype, scale=10.0)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("shape,ndim", [((8, 512), 1), ((2, 7, 33), 1), ((3, 4, 5, 6), 2),
                                        ((2, 9000), 1)])
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm(cp, K, XP, shape, ndim, affine, dtype):
    x = rnd(*shape, seed=19, dtype=dtype, scale=2.0) + 1.0
    ns = shape[len(shape) - ndim:]
    w = rnd(*ns, seed=20, dtype=dtype) if affine else None
    b = rnd(*ns, seed=21, dtype=dtype) if affine else None
    got = K["layer_norm"](XP, cp.asarray(x), None if w is None else cp.asarray(w),
                          None if b is None else cp.asarray(b), ndim=ndim, eps=1e-5)
    ref = gnn.layer_norm(NP, x.astype("f8"), None if w is None else w.astype("f8"),
                         None if b is None else b.astype("f8"), ndim=ndim, eps=1e-5)
    for a, r in zip(got, ref):
        close(a, r, dtype, scale=4.0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("which", ["both", "mean", "var"])
def test_batch_norm_running(cp, K, XP, which, dtype):
    rm, rv, mean, var = (rnd(37, seed=s, dtype=dtype) for s in (23, 24, 25, 26))
    rv, var = abs(rv), abs(var)
    keep = {"both": (rm, rv), "mean": (rm, None), "var": (None, rv)}[which]
    got = K["batch_norm_running"](XP, *(None if a is None else cp.asarray(a) for a in keep),
                                  cp.asarray(mean), cp.asarray(var), momentum=0.1, n=300)
    want = gnn.batch_norm_running(NP, *keep, mean, var, momentum=0.1, n=300)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if w is not None:  # the fused update keeps the unfused update's bits
            np.testing.assert_array_equal(cp.asnumpy(g), w)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "float64"])
@pytest.mark.parametrize("shape", [(2, 3), (8, 5, 7), (32, 16, 9, 9), (3, 700, 2, 2)])
def test_batch_norm_train_one_launch(cp, K, XP, monkeypatch, shape, dtype):
    """The statistics, the running update and the gradient sums summed by the channel's
    last block (one launch) keep the bits of the separate launches, call after call and
    on another stream (the block counters reset themselves)."""
    from volta_cupy import batch_norm as bn
    from volta_cupy._util import BFLOAT16

    np_dt = BFLOAT16 if dtype == "bfloat16" else np.dtype(dtype)
    sd = "float64" if dtype == "float64" else "float32"
    c = shape[1]
    x = cp.asarray((rnd(*shape, seed=31, scale=2.0) + 1).astype(np.float32).astype(np_dt))
    g = cp.asarray(rnd(*shape, seed=32).astype(np.float32).astype(np_dt))
    w, b = (cp.asarray(rnd(c, seed=s).astype(sd)) for s in (33, 34))
    rm, rv = cp.asarray(rnd(c, seed=35).astype(sd)), cp.asarray(abs(rnd(c, seed=36)) + 1)
    rv = rv.astype(sd)

    def run():
        out = K["batch_norm_train"](XP, x, w, b, rm, rv, eps=1e-5, momentum=0.1)
        grads = K["batch_norm_backward"](XP, g, x, w, out[1], out[3])
        return [cp.asnumpy(a).astype(np.float64) for a in (*out, *grads)]

    fused = [run(), run()]
    with cp.cuda.Stream():
        fused.append(run())
    monkeypatch.setattr(bn, "_counter", lambda: None)
    apart = run()
    y, mean, var, rstd = (cp.asnumpy(a).astype(np.float64)
                          for a in K["batch_norm"](XP, x, w, b, eps=1e-5))
    for got in fused:
        for a, want in zip(got, apart):
            np.testing.assert_array_equal(a, want)
    np.testing.assert_array_equal(apart[0], y)
    want = gnn.batch_norm_train(NP, *(cp.asnumpy(a).astype(np.float64) for a in (x, w, b)),
                                cp.asnumpy(rm), cp.asnumpy(rv), eps=1e-5, momentum=0.1)
    tol = {"float64": 1e-12, "float32": 1e-5}.get(dtype, 2e-2)
    for a, r in zip(apart[1:6], want[1:6]):  # the statistics and the running update
        np.testing.assert_allclose(a, r, rtol=tol, atol=tol)


# -- elementwise --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("p", [0.0, 0.1, 0.5])
def test_dropout_mask(cp, K, XP, p, dtype):
    u = np.random.default_rng(3).random((1000,)).astype(dtype)
    got = K["dropout_mask"](XP, cp.asarray(u), p=p)
    np.testing.assert_array_equal(cp.asnumpy(got), gnn.dropout_mask(NP, u, p=p))


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "bfloat16"])
@pytest.mark.parametrize("p", [0.0, 0.1, 0.5])
def test_dropout_forward_and_backward(cp, K, XP, p, dtype):
    if dtype == "bfloat16":
        dtype = pytest.importorskip("ml_dtypes").bfloat16
    x = rnd(999, seed=4, dtype=dtype)
    u = np.random.default_rng(5).random((999,)).astype(
        np.float64 if dtype == "float64" else np.float32)
    y, keep = K["dropout_forward"](XP, cp.asarray(x), cp.asarray(u), p=p)
    y0, keep0 = gnn.dropout_forward(NP, x, u, p=p)
    np.testing.assert_array_equal(cp.asnumpy(keep), keep0)
    np.testing.assert_array_equal(cp.asnumpy(y), y0)
    g = K["dropout_backward"](XP, cp.asarray(x), keep, p=p)
    np.testing.assert_array_equal(cp.asnumpy(g), gnn.dropout_backward(NP, x, keep0, p=p))


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_erf(cp, K, XP, dtype):
    x = rnd(2000, seed=22, dtype=dtype, scale=2.0)
    close(K["erf"](XP, cp.asarray(x)), gmath.erf_kernel(NP, x.astype("f8")), dtype)


# -- optimizer steps ----------------------------------------------------------------------

def _run_steps(cp, fn, ref_fn, state, kw, dtype, steps=3, with_step=False):
    """Run ``steps`` updates on the GPU (in place) and with the fallback; compare all."""
    gpu = [None if a is None else cp.asarray(a.astype(dtype)) for a in state]
    ref = [None if a is None else a.astype("f8") for a in state]
    for s in range(1, steps + 1):
        g = rnd(*state[0].shape, seed=100 + s, dtype=dtype)
        extra = {"step": s} if with_step else {}
        param = gpu[0]
        gpu = list(fn(vt.device("cuda").xp, gpu[0], cp.asarray(g), *gpu[1:], **kw, **extra))
        assert gpu[0] is param  # updated in place, same array handed back
        ref = list(ref_fn(NP, ref[0], g.astype("f8"), *ref[1:], **kw, **extra))
    for a, b in zip(gpu, ref):
        assert (a is None) == (b is None)
        if a is not None:
            close(a, b, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("kw", [
    dict(momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False),
    dict(momentum=0.9, dampening=0.1, weight_decay=1e-2, nesterov=False, maximize=True),
    dict(momentum=0.9, dampening=0.0, weight_decay=1e-2, nesterov=True, maximize=False)],
    ids=str)
def test_sgd_step(cp, K, kw, dtype):
    p = rnd(33, 17, seed=30)
    _run_steps(cp, K["sgd_step"], goptim.sgd_step, [p, None], dict(lr=0.1, **kw), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("decoupled", [False, True])
def test_adam_step(cp, K, amsgrad, decoupled, dtype):
    p, z = rnd(33, 17, seed=31), np.zeros((33, 17))
    kw = dict(lr=1e-2, beta1=0.9, beta2=0.99, eps=1e-8, weight_decay=0.1, amsgrad=amsgrad,
              maximize=False, decoupled=decoupled)
    _run_steps(cp, K["adam_step"], goptim.adam_step, [p, z, z, z if amsgrad else None], kw,
               dtype, with_step=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("momentum", [0.0, 0.8])
def test_rmsprop_step(cp, K, centered, momentum, dtype):
    p, z = rnd(33, 17, seed=32), np.zeros((33, 17))
    kw = dict(lr=1e-2, alpha=0.9, eps=1e-8, weight_decay=0.1, momentum=momentum,
              centered=centered, maximize=True)
    _run_steps(cp, K["rmsprop_step"], goptim.rmsprop_step,
               [p, z, z if centered else None, z if momentum else None], kw, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adagrad_step(cp, K, dtype):
    p, z = rnd(33, 17, seed=33), np.zeros((33, 17))
    kw = dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, eps=1e-10, maximize=False)
    _run_steps(cp, K["adagrad_step"], goptim.adagrad_step, [p, z], kw, dtype, with_step=True)


# -- no host syncs, end to end ------------------------------------------------------------

_SPIN = r"""
__device__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
extern "C" __global__ void spin(unsigned long long ns) {
    const unsigned long long t0 = now_ns();
    while (now_ns() - t0 < ns) { }
}
"""


def test_kernels_queue_without_waiting_for_the_gpu(cp, K, XP):
    """Queue every fused kernel behind a ~0.5 s busy kernel: the host must not wait."""
    x, w = cp.asarray(rnd(8, 16, 16, 16, dtype="float32")), cp.asarray(
        rnd(32, 16, 3, 3, dtype="float32"))
    t = cp.asarray(np.arange(8) % 10)
    p, g = cp.asarray(rnd(64, 64, dtype="float32")), cp.asarray(rnd(64, 64, dtype="float32"))
    m, v = cp.zeros_like(p), cp.zeros_like(p)

    def work():
        y = K["conv2d"](XP, x, w, None, pads=(1, 1, 1, 1))
        gx, gw = K["conv2d_backward"](XP, y, x, w, x_shape=x.shape, pads=(1, 1, 1, 1))
        pooled, idx = K["max_pool2d"](XP, y, kernel=(2, 2), stride=(2, 2))
        K["max_pool2d_backward"](XP, pooled, idx, x_shape=y.shape, kernel=(2, 2),
                                 stride=(2, 2))
        logits = pooled.reshape(8, -1)[:, :10]
        K["cross_entropy"](XP, cp.ascontiguousarray(logits), t)
        K["softmax"](XP, logits, -1)
        K["layer_norm"](XP, logits, None, None)
        K["embedding_backward"](XP, logits, t, num_weights=10)
        K["adam_step"](XP, p, g, m, v, None, step=1, lr=1e-3, beta1=0.9, beta2=0.999,
                       eps=1e-8, weight_decay=0.0, amsgrad=False, maximize=False,
                       decoupled=False)
        K["dropout_mask"](XP, p, p=0.1)

    work()  # compile everything first
    cp.cuda.Device().synchronize()
    cp.RawKernel(_SPIN, "spin")((1,), (1,), (np.uint64(500_000_000),))  # 0.5 s
    t0 = time.perf_counter()
    work()
    queued = time.perf_counter() - t0
    cp.cuda.Device().synchronize()
    waited = time.perf_counter() - t0
    assert waited > 0.3, "the spin kernel did not run long enough to tell"
    assert queued < 0.25, f"queuing took {queued:.3f}s: something waited for the GPU"


def test_small_cnn_training_matches_cpu():
    """Two Adam steps of a conv/BN/pool/CE model give the same weights on CUDA and CPU."""
    nn = vt.nn

    def run(device):
        vt.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                              nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, stride=2, groups=2),
                              nn.Flatten(), nn.Linear(8 * 3 * 3, 10)).double().to(device)
        opt = vt.optim.Adam(model.parameters(), lr=1e-2)
        x = vt.tensor(rnd(4, 3, 16, 16, seed=40), device=device)
        y = vt.tensor(np.arange(4) % 10, device=device)
        for _ in range(2):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y, label_smoothing=0.1)
            loss.backward()
            opt.step()
        return [np.asarray(p.detach().cpu().numpy()) for p in model.parameters()]

    for a, b in zip(run("cuda"), run("cpu")):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
