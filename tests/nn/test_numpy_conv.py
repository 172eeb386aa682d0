"""The NumPy backend's convolution kernels (``volta_numpy/conv.py``) and its intra-op
threads (``volta_numpy/parallel.py``): every path against the generic fallback and
PyTorch, the same bits on 1, 2 and 3 threads, gradchecks."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from vt_helpers import check_grad, rand, run_threads

import volta_core as vt
import volta_core.nn.functional as F

conv = pytest.importorskip("volta_numpy.conv")
parallel = pytest.importorskip("volta_numpy.parallel")
xp = pytest.importorskip("array_api_compat.numpy")


# (N, C, H, W), (O, C/g, kh, kw), stride, pads (t, b, l, r), dilation, groups
GEOMETRIES = [
    ((5, 1, 12, 12), (6, 1, 5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 1),  # LeNet conv1: split, wide gx
    ((7, 6, 9, 9), (16, 6, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),  # 16 channels: gT path
    ((3, 4, 8, 7), (32, 2, 3, 2), (1, 1), (1, 0, 2, 1), (2, 1), 2),  # groups, dilation
    ((13, 3, 7, 6), (4, 3, 3, 3), (2, 1), (1, 1, 0, 0), (1, 1), 1),  # strided rows: plain columns
    ((4, 2, 6, 6), (3, 2, 5, 5), (1, 1), (0, 0, 0, 0), (1, 1), 1),  # wp > 2 wo: exact gx
    ((6, 8, 5, 5), (4, 8, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),  # 1x1: x is the columns
    ((3, 4, 5, 6), (4, 1, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 4),  # depthwise
    ((1, 2, 4, 9), (3, 2, 2, 4), (1, 2), (0, 1, 3, 0), (1, 2), 1),  # 1 sample, odd pads, sw 2
    ((4, 32, 4, 4), (8, 32, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),  # merged kept columns
]


def _inputs(geom, dtype=np.float64, seed=0):
    x_shape, w_shape, stride, pads, dil, groups = geom
    x = rand(*x_shape, seed=seed).astype(dtype)
    w = rand(*w_shape, seed=seed + 1).astype(dtype)
    b = rand(w_shape[0], seed=seed + 2).astype(dtype)
    kw = dict(stride=stride, pads=pads, dilation=dil, groups=groups)
    return x, w, b, kw


@pytest.mark.parametrize("geom", GEOMETRIES)
def test_forward_and_backward_match_the_generic_fallback(geom, chunking, threads):
    from volta_core.ops import nn as generic

    threads(2)
    x, w, b, kw = _inputs(geom)
    want = generic.conv2d(xp, x, w, b, **kw)
    keep: list = []
    got = conv.conv2d(xp, x, w, b, keep=keep, **kw)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    g = rand(*want.shape, seed=9)
    want_x, want_w = generic.conv2d_backward(xp, g, x, w, x_shape=x.shape, **kw)
    for cols in ([None] + keep[:1]):  # columns recomputed, or the forward's kept ones
        gx, gw = conv.conv2d_backward(xp, g, x, w, x_shape=x.shape, cols=cols, **kw)
        np.testing.assert_allclose(gx, want_x, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(gw, want_w, rtol=1e-12, atol=1e-12)
    gx, none = conv.conv2d_backward(xp, g, None, w, x_shape=x.shape, needs=(True, False),
                                    **kw)
    assert none is None
    np.testing.assert_allclose(gx, want_x, rtol=1e-12, atol=1e-12)
    none, gw = conv.conv2d_backward(xp, g, x, None, x_shape=x.shape, w_shape=w.shape,
                                    needs=(False, True), **kw)
    assert none is None
    np.testing.assert_allclose(gw, want_w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("geom", GEOMETRIES[:4])
def test_same_bits_on_any_thread_count(geom, threads, chunking):
    x, w, b, kw = _inputs(geom, np.float32)
    g = rand(*conv.conv2d(xp, x, w, b, **kw).shape, seed=9).astype(np.float32)
    results = []
    for n in (1, 2, 3):
        threads(n)
        keep: list = []
        y = conv.conv2d(xp, x, w, b, keep=keep, **kw)
        gx, gw = conv.conv2d_backward(xp, g, x, w, x_shape=x.shape,
                                      cols=keep[0] if keep else None, **kw)
        results.append((y, gx, gw))
    for other in results[1:]:
        for a, c in zip(results[0], other):
            np.testing.assert_array_equal(a, c)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("bad", ["x", "w"])
def test_non_finite_values_take_the_exact_columns(bad, chunking):
    """The input gradient's wide columns multiply the dropped columns by an exact zero:
    inf * 0 would spread NaN, so a non-finite input or weight must give the generic
    kernel's values."""
    from volta_core.ops import nn as generic

    x, w, b, kw = _inputs(GEOMETRIES[0])
    if bad == "x":
        x[1, 0, 3, 4], x[2, 0, 0, 11] = np.inf, np.nan
    else:
        w[2, 0, 1, 1] = -np.inf
    keep: list = []
    y = conv.conv2d(xp, x, w, b, keep=keep, **kw)
    np.testing.assert_allclose(y, generic.conv2d(xp, x, w, b, **kw), equal_nan=True)
    g = rand(*y.shape, seed=3)
    want = generic.conv2d_backward(xp, g, x, w, x_shape=x.shape, **kw)
    got = conv.conv2d_backward(xp, g, x, w, x_shape=x.shape, cols=keep[0], **kw)
    for a, c in zip(got, want):
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-12, equal_nan=True)


def test_kept_columns_are_merged_where_a_sample_has_more_taps_than_positions():
    """The main job's 32->64 3x3 conv on 8x8 keeps ``(C*kh*kw, N*L)`` columns (one weight
    gradient GEMM per chunk); LeNet's first conv (25 taps, 784 positions) per-sample ones."""
    for geom, merged in ((GEOMETRIES[-1], True), (GEOMETRIES[0], False)):
        x, w, b, kw = _inputs(geom)
        keep: list = []
        conv.conv2d(xp, x, w, b, keep=keep, **kw)
        n, c = x.shape[:2]
        taps = c * w.shape[2] * w.shape[3]
        assert keep[0].shape == ((taps, n * 16) if merged else (n, taps, 12 * 12))


def test_float32_stays_float32():
    x, w, b, kw = _inputs(GEOMETRIES[1], np.float32)
    y = conv.conv2d(xp, x, w, b, **kw)
    gx, gw = conv.conv2d_backward(xp, np.ones_like(y), x, w, x_shape=x.shape, **kw)
    assert y.dtype == gx.dtype == gw.dtype == np.float32


@pytest.mark.parametrize("geom", [GEOMETRIES[1], GEOMETRIES[2], GEOMETRIES[3]])
def test_gradcheck_float64(geom):
    x_shape, w_shape, stride, pads, dil, groups = geom
    # small spatial sizes keep the finite differences quick; the channels and batch stay
    x = rand(min(x_shape[0], 3), x_shape[1], 5, 5)
    w = rand(*w_shape[:2], 2, 2, seed=1)
    b = rand(w_shape[0], seed=2)
    padding = (pads[0], pads[2]) if pads[0] == pads[1] and pads[2] == pads[3] else 0
    check_grad(lambda x, w, b: F.conv2d(x, w, b, stride=stride, padding=padding,
                                        dilation=dil, groups=groups), x, w, b)


def test_lenet_layers_match_pytorch(threads):
    """LeNet-5's two convolutions, forward and both gradients, against PyTorch (float32),
    on 2 threads with an odd batch (uneven chunks). The weight gradient sums ~10^4
    float32 products of size ~1: an absolute tolerance of 2e-3 covers their rounding."""
    from torch_ref import compare

    threads(2)
    compare(lambda m, x, w, b: F.conv2d(x, w, b, padding=2) if m is vt
            else m.nn.functional.conv2d(x, w, b, padding=2),
            rand(37, 1, 28, 28), rand(6, 1, 5, 5, seed=1), rand(6, seed=2),
            dtype="float32", tol=(1e-5, 1e-5), grad_tol=(1e-4, 2e-3))
    compare(lambda m, x, w, b: F.conv2d(x, w, b) if m is vt
            else m.nn.functional.conv2d(x, w, b),
            rand(37, 6, 14, 14), rand(16, 6, 5, 5, seed=1), rand(16, seed=2),
            dtype="float32", tol=(1e-5, 1e-5), grad_tol=(1e-4, 2e-3))


# -- the thread pool -------------------------------------------------------------------

def test_parallel_for_runs_every_piece_once(threads):
    threads(2)
    seen = []
    lock = threading.Lock()

    def body(lo, hi):
        with lock:
            seen.append((lo, hi))

    pieces = parallel.chunks(23, 4)
    assert pieces[-1] == (20, 23)
    parallel.parallel_for(body, pieces)
    assert sorted(seen) == pieces


def test_parallel_for_raises_a_piece_error_and_restores_blas(threads):
    from volta_numpy.threads import blas_num_threads

    threads(2)
    before = blas_num_threads()

    def body(lo, hi):
        if lo == 8:
            raise ValueError("piece 8 failed")

    with pytest.raises(ValueError, match="piece 8"):
        parallel.parallel_for(body, parallel.chunks(16, 4))
    assert blas_num_threads() == before


def test_nested_parallel_for_does_not_deadlock(threads):
    threads(2)
    out = np.zeros(16)

    def inner(lo, hi):
        out[lo:hi] += 1

    def outer(lo, hi):
        parallel.parallel_for(inner, parallel.chunks(16, 2))

    parallel.parallel_for(outer, parallel.chunks(4, 1))
    np.testing.assert_array_equal(out, 4)


@pytest.mark.parametrize("n", [1, 2])
def test_trailing_runs_each_piece_once_after_it_is_ready(threads, n):
    """A trailing job's piece starts only once the caller marked it ready; every piece
    runs once, a loop inside a piece runs inline, and BLAS gets its count back."""
    from volta_numpy.threads import blas_num_threads

    threads(n)
    before = blas_num_threads()
    pieces = parallel.chunks(10, 2)
    made = set()
    ran = []

    def body(lo, hi):
        assert lo in made  # never before the caller's ready()
        parallel.parallel_for(lambda a, b: None, parallel.chunks(8, 2))  # inline here
        ran.append(lo)

    with parallel.trailing(body, pieces) as trail:
        for k, (lo, _) in enumerate(pieces):
            made.add(lo)
            trail.ready(k)
    assert sorted(ran) == [lo for lo, _ in pieces]
    assert blas_num_threads() == before


def test_trailing_raises_a_piece_error_and_a_caller_error_skips_the_rest(threads):
    from volta_numpy.threads import blas_num_threads

    threads(2)
    before = blas_num_threads()

    def body(lo, hi):
        if lo == 4:
            raise ValueError("piece 4 failed")

    with pytest.raises(ValueError, match="piece 4"):
        with parallel.trailing(body, parallel.chunks(8, 2)) as trail:
            for k in range(4):
                trail.ready(k)
    ran = []
    with pytest.raises(KeyError):
        with parallel.trailing(lambda lo, hi: ran.append(lo), parallel.chunks(8, 2)):
            raise KeyError("the caller's loop failed")
    assert ran == []
    assert blas_num_threads() == before


def test_two_user_threads_convolve_at_once(threads):
    """Backends must allow two threads on one device: both get the right answer."""
    threads(2)
    x, w, b, kw = _inputs(GEOMETRIES[1], np.float32)
    want = conv.conv2d(xp, x, w, b, **kw)
    got = [None, None]

    def run(i):
        for _ in range(5):
            got[i] = conv.conv2d(xp, x, w, b, **kw)

    run_threads(run, [(0,), (1,)])
    for g in got:
        np.testing.assert_array_equal(g, want)


# -- matmul in blocks ---------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(256, 784, 512), (40, 300, 700), (600, 64, 9), (3, 5, 7)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_matmul_matches_numpy(shape, dtype, threads):
    from volta_numpy.namespace import matmul

    m, k, n = shape
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((n, k)).astype(dtype).T  # a transposed operand, as Linear's
    got = []
    for t in (1, 2):
        threads(t)
        if t == 1:
            want = np.matmul(a, b)  # NumPy's own product on one BLAS thread
        got.append(matmul(a, b))
        assert got[-1].dtype == dtype and got[-1].shape == (m, n)
    np.testing.assert_array_equal(got[0], want)  # one thread: one plain call
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got[1], want, rtol=tol, atol=tol * k)


@pytest.mark.parametrize("shapes", [((16, 4, 64, 32), (16, 4, 32, 64)),
                                    ((64, 64, 64), (64, 64, 64)), ((3, 5, 7), (3, 7, 2)),
                                    ((1, 64, 64, 64), (1, 64, 64, 64)),
                                    ((8, 64, 64), (1, 64, 64))])
def test_batched_matmul_same_bits_on_any_thread_count(shapes, threads):
    """A batch split along its first dimension: each product as NumPy's whole-batch call
    computes it (transposed operands too), broadcast batches left to NumPy."""
    from volta_numpy.namespace import matmul

    rng = np.random.default_rng(0)
    a = rng.standard_normal(shapes[0]).astype(np.float32)
    b = rng.standard_normal(shapes[1]).astype(np.float32)
    for right in (b, np.ascontiguousarray(b.swapaxes(-1, -2)).swapaxes(-1, -2)):
        want = np.matmul(a, right)
        for t in (1, 2):
            threads(t)
            np.testing.assert_array_equal(matmul(a, right), want)


def test_backend_namespace_is_array_api_compat_with_blocked_matmul():
    import array_api_compat.numpy as compat

    xp_ = vt.tensor([1.0]).device.xp
    assert xp_.matmul is not compat.matmul
    assert xp_.exp is compat.exp and xp_.float32 is compat.float32
    assert xp_.sum is not compat.sum  # under errstate: no NumPy warning on inf - inf
    np.testing.assert_array_equal(xp_.sum(np.arange(4.0), axis=0), 6.0)
    assert xp_.__array_api_version__ == compat.__array_api_version__
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(xp_.matmul(a, a.T), a @ a.T)  # small: plain numpy
    np.testing.assert_array_equal(xp_.matmul(np.arange(3), np.arange(3)), 5)  # 1-d, ints


def test_forked_child_runs_parallel_kernels(threads):
    """A forked child (a DataLoader worker) has no pool threads: its kernels still run."""
    import os

    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    threads(2)
    x, w, b, kw = _inputs(GEOMETRIES[1], np.float32)
    want = conv.conv2d(xp, x, w, b, **kw)  # the parent's workers are running now
    r, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: compute, report, exit without running pytest's teardown
        ok = all(np.array_equal(conv.conv2d(xp, x, w, b, **kw), want) for _ in range(3))
        os.write(wfd, b"1" if ok else b"0")
        os._exit(0)
    import select
    import signal

    os.close(wfd)
    ready, _, _ = select.select([r], [], [], 120)
    if not ready:  # a hang in the child: end it, fail here
        os.kill(pid, signal.SIGKILL)
    got = os.read(r, 1) if ready else b"timeout"
    os.waitpid(pid, 0)
    os.close(r)
    assert got == b"1"
