"""The NumPy backend's faster kernels (in-place Adam, relu on the bits, ...) give the generic
kernels' values exactly, except where they sum rows with einsum (softmax, cross entropy,
layer norm: within the dtype's rounding, the same bits on any thread count and in any
batch) and ``erf`` (its own formula, checked against the exact erf)."""

from __future__ import annotations

import numpy as np
import pytest

array_api_numpy = pytest.importorskip("array_api_compat.numpy")


def _same_arrays(got, want) -> None:
    """The kernel's outputs are the generic one's: None where it is, else the same dtype,
    shape and bits."""
    assert len(got) == len(want)
    for a, e in zip(got, want):
        if e is None:
            assert a is None
        else:
            assert a.dtype == e.dtype and a.shape == e.shape
            np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("shape", [(0,), (7,), (3, 70001), ()])
def test_erf_within_three_ulp_of_exact(dtype, shape):
    """The NumPy ``erf`` (one expm1 of a polynomial) is within 3 ulp of the exact erf in
    float32 (the generic two-branch kernel: 3.3), correctly rounded in float16 (computed
    in float32), the generic kernel itself in float64; -0.0, +-inf and NaN as erf's."""
    import math

    from volta_numpy.kernels import erf

    from volta_core.ops.math import erf_kernel

    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 2).astype(dtype)
    if x.size >= 6:
        x.reshape(-1)[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30]
    got = erf(array_api_numpy, x)
    assert got.dtype == x.dtype and got.shape == x.shape
    exact = np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64))
    ulp = np.spacing(np.abs(exact.astype(dtype))).astype(np.float64)
    bound = {np.float32: 3.0, np.float16: 0.5}.get(dtype)
    if bound is None:
        np.testing.assert_array_equal(got, erf_kernel(array_api_numpy, x))
    else:
        finite = np.isfinite(x)
        assert np.all(np.abs(got[finite] - exact[finite]) <= bound * ulp[finite])
        np.testing.assert_array_equal(got[~finite], exact[~finite].astype(dtype))
    assert np.array_equal(np.signbit(got), np.signbit(exact))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("opts", [
    {"weight_decay": 0.0, "decoupled": False, "maximize": False},
    {"weight_decay": 0.1, "decoupled": True, "maximize": False},
    {"weight_decay": 0.1, "decoupled": False, "maximize": True},
    {"weight_decay": 0.0, "decoupled": False, "maximize": False, "amsgrad": True}])
def test_inplace_adam_equals_generic_and_leaves_inputs(dtype, opts):
    from volta_numpy.kernels import adam_step

    from volta_core.optim.kernels import adam_step as generic

    rng = np.random.default_rng(0)
    p, g, m, v, vmax = (rng.standard_normal((30, 40)).astype(dtype) for _ in range(5))
    v, vmax = np.abs(v), np.abs(vmax)
    before = [a.copy() for a in (p, g, m, v)]
    kw = {"amsgrad": False, **opts, "step": 3, "lr": 1e-3, "beta1": 0.9, "beta2": 0.999,
          "eps": 1e-8}
    got = adam_step(array_api_numpy, p, g, m, v, vmax, **kw)
    want = generic(array_api_numpy, p, g, m, v, vmax, **kw)
    _same_arrays(got, want)
    for a, b in zip((p, g, m, v), before):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32])
@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("shape", [(4, 33), (300, 700), (0, 3), ()])
def test_relu_equals_generic_with_signed_zeros_and_nan(dtype, special, shape):
    from volta_numpy.kernels import relu

    from volta_core.ops.elementwise import relu_kernel

    x = (np.random.default_rng(0).standard_normal(shape) * 5).astype(dtype)
    if special and x.ndim == 2 and x.shape[0] and x.dtype.kind == "f":
        x[0, :5] = [-0.0, 0.0, np.nan, -np.inf, -np.nan]
        x.reshape(-1)[7::31] = -0.0  # inside the SIMD body too
        x.reshape(-1)[11::37] = -np.nan
    got, want = relu(array_api_numpy, x), relu_kernel(array_api_numpy, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    if x.dtype.kind == "f":  # the same bits: -0.0 and the sign of NaN kept
        bits = np.dtype(f"u{x.dtype.itemsize}")
        np.testing.assert_array_equal(got.view(bits), want.view(bits))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape", [(5, 3, 7, 6), (2, 4, 9), (3, 2), (0, 3, 2, 2)])
def test_channel_sum_equals_generic(dtype, shape):
    from volta_numpy.kernels import channel_sum

    from volta_core.ops.nn import channel_sum as generic

    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    # another summation order: rounding within a few ulp of the sum of magnitudes
    tol = dict(rtol=0, atol=8 * np.finfo(dtype).eps * float(np.abs(x).sum()))
    got, want = channel_sum(array_api_numpy, x), generic(array_api_numpy, x)
    assert got.dtype == want.dtype and got.shape == want.shape == (shape[1],)
    np.testing.assert_allclose(got, want, **tol)
    strided = np.swapaxes(x, 2, 3) if x.ndim == 4 else x[:, ::-1]
    np.testing.assert_allclose(channel_sum(array_api_numpy, strided),
                               generic(array_api_numpy, strided), **tol)


@pytest.mark.parametrize("special", [None, "nan", "negzero", "ties"])
@pytest.mark.parametrize("geometry", [((2, 2), (2, 2), (0, 0)), ((3, 3), (3, 3), (1, 1)),
                                      ((2, 3), (2, 3), (0, 1))])
def test_max_pool_unmasked_path_equals_masked(special, geometry):
    """The non-overlapping max-pool path gives the same values, signs and winning taps
    whichever way it runs (plain maximum, or masked writes where NaN or -0.0 occur)."""
    from volta_numpy import kernels

    kernel, stride, padding = geometry
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 9, 10)).astype(np.float32)
    if special == "nan":
        x[0, 0, :3, :3] = np.nan
        x[1, 2, 4, 5] = np.nan
    elif special == "negzero":
        x[0, 0, :2, :2] = [[-0.0, 0.0], [0.0, -0.0]]
    elif special == "ties":
        x = np.round(x).clip(0, None)  # many equal values, +0.0 only
    y, idx = kernels.max_pool2d(array_api_numpy, x, kernel=kernel, stride=stride,
                                padding=padding)
    # reference: PyTorch's scan with masked writes, tap by tap (a NaN replaces too)
    xpad = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2),
                  constant_values=-np.inf)
    ho, wo = y.shape[2:]
    best = ref_idx = None
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            v = xpad[:, :, i:i + stride[0] * (ho - 1) + 1:stride[0],
                     j:j + stride[1] * (wo - 1) + 1:stride[1]]
            if best is None:
                best, ref_idx = v.copy(), np.zeros(v.shape, np.int32)
                continue
            better = (v > best) | np.isnan(v)
            best[better] = v[better]
            ref_idx[better] = i * kernel[1] + j
    np.testing.assert_array_equal(y, best)
    assert np.array_equal(np.signbit(y), np.signbit(best))
    np.testing.assert_array_equal(idx, ref_idx)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("special", [None, "y_nan", "grad_inf", "grad_negzero", "y_negzero",
                                     "grad_transposed", "0-d", "empty"])
def test_relu_backward_equals_generic(special, dtype):
    from volta_numpy.kernels import relu_backward

    from volta_core.ops.elementwise import relu_backward_kernel

    rng = np.random.default_rng(0)
    shape = {"0-d": (), "empty": (0, 3)}.get(special, (5, 40))
    y = np.maximum(rng.standard_normal(shape).astype(dtype), 0)
    g = rng.standard_normal(shape).astype(dtype)
    if special == "grad_transposed":
        g = np.ascontiguousarray(g.T).T
    if special == "y_nan":
        y[0, :3] = np.nan
    elif special == "grad_inf":
        g[y == 0] = np.inf
    elif special == "grad_negzero":
        g[0, :] = -0.0
    elif special == "y_negzero":
        y[1, :4] = -0.0
    got, want = relu_backward(array_api_numpy, g, y), relu_backward_kernel(array_api_numpy, g, y)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("rows,width,table,padding_idx", [
    (700, 16, 1000, None), (300, 3, 7, 2), (5000, 2, 3, None), (10, 4, 5, None)])
def test_embedding_backward_in_rounds_equals_add_at(rows, width, table, padding_idx):
    """Sorted rounds (few repeats), np.add.at (many repeats, few rows): np.add.at's bits."""
    from volta_numpy.kernels import embedding_backward

    rng = np.random.default_rng(0)
    grad = rng.standard_normal((rows, width)).astype(np.float32)
    grad[:3] = -0.0
    idx = rng.integers(0, table, rows)
    want = np.zeros((table, width), np.float32)
    np.add.at(want, idx, grad)
    if padding_idx is not None:
        want[padding_idx] = 0
    got = embedding_backward(array_api_numpy, grad, idx, num_weights=table,
                             padding_idx=padding_idx)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))


@pytest.fixture
def threads():
    import volta_core as vt

    before = vt.get_num_threads()
    yield vt.set_num_threads
    vt.set_num_threads(before)


def _close_rounding(got, want, dtype) -> None:
    """Same dtype and shape, values within the dtype's rounding of sums taken in another
    order (relative to each array's largest magnitude), NaN where the other has NaN."""
    rtol = 1e-5 if np.dtype(dtype) == np.float32 else 1e-12
    assert got.dtype == want.dtype and got.shape == want.shape
    finite = np.isfinite(want)
    scale = np.abs(want[finite]).max() if finite.any() else 1.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("shape,dim", [((16, 4, 64, 64), -1), ((1024, 512), 1), ((5, 7), 1),
                                       ((300, 600), 0), ((40, 9000), -1), ((2, 3), 0)])
def test_softmax_by_fast_row_sums_matches_generic(shape, dim, n_threads, threads):
    """Softmax and its backward with fast row sums: the generic kernels' values within
    rounding (NaN and infinities in the same places), the same bits on 1 and 2 threads."""
    from volta_numpy.kernels import softmax, softmax_backward

    from volta_core.ops.softmax import softmax_backward_kernel, softmax_kernel

    threads(n_threads)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    g = rng.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[:3] = [-np.inf, np.inf, np.nan][:x.size]
    y = softmax(array_api_numpy, x, dim)
    _close_rounding(y, softmax_kernel(array_api_numpy, x, dim), np.float32)
    gx = softmax_backward(array_api_numpy, g, y, dim)
    _close_rounding(gx, softmax_backward_kernel(array_api_numpy, g, y, dim), np.float32)
    threads(3 - n_threads)
    _same_arrays((softmax(array_api_numpy, x, dim), softmax_backward(array_api_numpy, g, y, dim)),
                 (y, gx))


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("n,c", [(700, 1000), (9, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("special", [True, False])
def test_cross_entropy_in_row_blocks_matches_generic(n, c, dtype, special, n_threads,
                                                     threads):
    """With and without an ignored target and a row of -inf (the kernels' shortcuts when
    every row counts and every row max is finite)."""
    from volta_numpy.kernels import cross_entropy, cross_entropy_backward

    from volta_core.ops import nn as generic

    threads(n_threads)
    rng = np.random.default_rng(0)
    logits = (rng.standard_normal((n, c)) * 5).astype(dtype)
    target = rng.integers(0, c, n)
    if special:
        logits[1] = -np.inf
        target[2] = -100
    got = cross_entropy(array_api_numpy, logits, target)
    want = generic.cross_entropy(array_api_numpy, logits, target)
    for a, b in zip(got, want):
        if dtype == np.float16:  # no fast row sums: the generic kernel's steps exactly
            np.testing.assert_array_equal(a, b)
        else:
            _close_rounding(a, b, dtype)
    g = rng.standard_normal(n).astype(dtype)
    lse, row_w = got[1], got[2]
    back = cross_entropy_backward(array_api_numpy, g, logits, lse, target, row_w)
    np.testing.assert_array_equal(
        back, generic.cross_entropy_backward(array_api_numpy, g, logits, lse, target, row_w))
    threads(3 - n_threads)
    _same_arrays(cross_entropy(array_api_numpy, logits, target), got)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("shape", [(16, 64, 128), (1024, 600), (3, 7), (2, 1)])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_by_fast_row_sums_matches_generic(shape, affine, dtype, n_threads,
                                                      threads):
    """Fast row sums add in another order than NumPy's pairwise sums: the generic
    kernel's values within a few units of the dtype's rounding, same dtypes and shapes,
    and the same bits on one thread and on two."""
    from volta_numpy.normalization import layer_norm, layer_norm_backward

    from volta_core.ops import nn as generic

    threads(n_threads)
    rng = np.random.default_rng(0)
    x, g = ((rng.standard_normal(shape) * 3 + 1).astype(dtype) for _ in range(2))
    w, b = ((rng.standard_normal(shape[-1]).astype(dtype) if affine else None)
            for _ in range(2))

    def close(got, want) -> None:
        """None where the generic kernel gives None, else within the rounding of each
        array's largest magnitude (the weight and bias gradients are sums over all rows,
        some of which cancel)."""
        assert len(got) == len(want)
        for a, e in zip(got, want):
            if e is None:
                assert a is None
            else:
                _close_rounding(a, e, dtype)

    got = layer_norm(array_api_numpy, x, w, b, eps=1e-5)
    close(got, generic.layer_norm(array_api_numpy, x, w, b, eps=1e-5))
    threads(3 - n_threads)
    _same_arrays(layer_norm(array_api_numpy, x, w, b, eps=1e-5), got)
    _, mean, rstd = got
    for needs in [(True, True, True), (True, False, False), (False, True, False)]:
        got = layer_norm_backward(array_api_numpy, g, x, w, mean, rstd, needs=needs)
        close(got, generic.layer_norm_backward(array_api_numpy, g, x, w, mean, rstd,
                                               needs=needs))
        threads(n_threads)
        _same_arrays(layer_norm_backward(array_api_numpy, g, x, w, mean, rstd, needs=needs),
                     got)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("shape", [(1024, 512), (3, 5)])
def test_fused_gelu_equals_the_core_steps(shape, dtype, n_threads, threads, monkeypatch):
    """The NumPy ``gelu_erf`` kernels give Gelu's own steps (kernels off) to a float32
    rounding of ``erf``: the kernel's ``erf`` is ``exp - 1``, the steps' ``expm1``."""
    import volta_core as vt
    from volta_core.backend import kernels as registry

    threads(n_threads)
    rng = np.random.default_rng(0)
    x0 = (rng.standard_normal(shape) * 3).astype(dtype)
    x0.reshape(-1)[:4] = [np.nan, np.inf, -np.inf, -0.0]
    g0 = rng.standard_normal(shape).astype(dtype)

    def run():
        x = vt.tensor(x0, requires_grad=True)
        y = vt.nn.functional.gelu(x)
        y.backward(vt.tensor(g0))
        return y.detach().numpy(), x.grad.numpy()

    got = run()
    for name in ("gelu_erf", "gelu_erf_backward"):
        monkeypatch.setitem(registry._cache, ("numpy", name), lambda *a, **k: None)
    want = run()
    tol = 1e-6 if dtype == "float32" else 1e-3
    for a, b in zip(got, want):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("m,k,n", [(3, 5, 4), (1024, 128, 512), (64, 300, 2000), (0, 4, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_adds_the_bias_inside_the_product(m, k, n, bias, n_threads, threads):
    """The NumPy ``linear`` kernel (the bias added in each block of a threaded product) is
    the product then the bias, bit for bit, in row blocks (m >= n) and column blocks."""
    from volta_numpy.kernels import linear
    from volta_numpy.namespace import matmul

    threads(n_threads)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32) if bias else None
    want = matmul(x, w.T)
    if bias:
        want = want + b
    got = linear(array_api_numpy, x, w, b)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_row_kernels_give_a_row_the_same_bits_in_any_batch(n_threads, threads):
    """Softmax, its backward, cross entropy and layer norm compute each row alone: a row's
    result has the same bits in a batch of 1024, of 7 and alone (a BLAS product with ones
    would round a row by its place among the rows)."""
    from volta_numpy.kernels import cross_entropy, softmax, softmax_backward
    from volta_numpy.normalization import layer_norm, layer_norm_backward

    threads(n_threads)
    rng = np.random.default_rng(0)
    x, g = (rng.standard_normal((1024, 128)).astype(np.float32) for _ in range(2))
    w, b = (rng.standard_normal(128).astype(np.float32) for _ in range(2))
    target = rng.integers(0, 128, 1024)

    def rows(sl: slice) -> list:
        y = softmax(array_api_numpy, x[sl], -1)
        ln, mean, rstd = layer_norm(array_api_numpy, x[sl], w, b)
        return [y, softmax_backward(array_api_numpy, g[sl], y, -1),
                cross_entropy(array_api_numpy, x[sl], target[sl])[0], ln,
                layer_norm_backward(array_api_numpy, g[sl], x[sl], w, mean, rstd)[0]]

    whole = rows(slice(None))
    for sl in (slice(3, 10), slice(1021, 1022), slice(500, 1024)):
        for a, e in zip(rows(sl), whole):
            np.testing.assert_array_equal(a, e[sl])
