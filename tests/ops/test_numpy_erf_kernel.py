"""The NumPy backend's blocked ``erf`` kernel gives the generic kernel's values exactly."""

from __future__ import annotations

import numpy as np
import pytest

array_api_numpy = pytest.importorskip("array_api_compat.numpy")


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
@pytest.mark.parametrize("shape", [(0,), (7,), (3, 70001)])
def test_blocked_erf_equals_generic(dtype, shape):
    from volta_numpy.kernels import erf

    from volta_core.ops.math import erf_kernel

    x = (np.random.default_rng(0).standard_normal(shape) * 3).astype(dtype)
    if x.size >= 5:
        x.reshape(-1)[:5] = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    got, want = erf(array_api_numpy, x), erf_kernel(array_api_numpy, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
