"""The NumPy backend's max pooling runs over chunks of the batch on its threads: the same
values, signs and winning taps as the generic kernel, whatever the thread count and
wherever NaN, -0.0 or ties fall (some chunks take the masked path, others not); relu's
-0.0 check is one integer compare: the same values and signs as the generic kernel."""

from __future__ import annotations

import numpy as np
import pytest

xp = pytest.importorskip("array_api_compat.numpy")
pooling = pytest.importorskip("volta_numpy.pooling")
kernels = pytest.importorskip("volta_numpy.kernels")


def _same(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_array_equal(a, b)
    assert np.array_equal(np.signbit(a), np.signbit(b))


def _batch(special: str | None, shape=(37, 3, 12, 11)) -> np.ndarray:
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    if special == "nan":
        x[5, 1, :3, :3] = np.nan
        x[30, 0, 4, 5] = np.nan
    elif special == "negzero":
        x[2, 0, :2, :2] = [[-0.0, 0.0], [0.0, -0.0]]
        x[33, 2, 6:8, 6:8] = -0.0
    elif special == "ties":
        x = np.round(x).clip(0, None)
    return x


GEOMETRIES = [  # kernel, stride, padding, ceil_mode
    ((2, 2), (2, 2), (0, 0), False),
    ((3, 3), (3, 3), (1, 1), False),
    ((2, 3), (2, 3), (0, 1), True),
    ((2, 2), (3, 3), (1, 0), False),  # stride > kernel: cells no tap reaches
]


@pytest.mark.parametrize("special", [None, "nan", "negzero", "ties"])
@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_max_pool_matches_generic_on_any_thread_count(special, geometry, threads,
                                                       chunking):
    from volta_core.ops import nn as generic

    kernel, stride, padding, ceil = geometry
    kw = dict(kernel=kernel, stride=stride, padding=padding, ceil_mode=ceil)
    x = _batch(special)
    want_y, want_i = generic.max_pool2d(xp, x, **kw)
    g = np.random.default_rng(1).standard_normal(want_y.shape).astype(np.float32)
    g[0, 0, 0, :2] = [-0.0, np.inf]
    want_gx = generic.max_pool2d_backward(xp, g, want_i, x_shape=x.shape, **kw)
    for n in (1, 2):
        threads(n)
        y, idx = pooling.max_pool2d(xp, x, **kw)
        _same(y, want_y)
        np.testing.assert_array_equal(idx, want_i)
        assert idx.dtype == np.int32
        _same(pooling.max_pool2d_backward(xp, g, idx, x_shape=x.shape, **kw), want_gx)


@pytest.mark.parametrize("special", [None, "nan", "negzero", "inf"])
def test_relu_and_backward_match_generic(special):
    from volta_core.ops.elementwise import relu_backward_kernel, relu_kernel

    rng = np.random.default_rng(0)
    x = rng.standard_normal((40, 80, 90)).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    if special == "nan":
        x[3, :2, :2] = np.nan
    elif special == "negzero":
        x[17, 0, :5] = -0.0
        g[35, 1, :5] = -0.0
    elif special == "inf":
        g[22, :, 0] = np.inf
    y_view = x[:, :, ::2]  # a strided input keeps working
    _same(kernels.relu(xp, x), relu_kernel(xp, x))
    _same(kernels.relu(xp, y_view), relu_kernel(xp, y_view))
    y = relu_kernel(xp, x)
    _same(kernels.relu_backward(xp, g, y), relu_backward_kernel(xp, g, y))
