"""Helpers shared by the tests: compare with NumPy, run gradcheck on NumPy inputs."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

import volta_core as vt


def to_np(t: vt.Tensor) -> np.ndarray:
    """A NumPy copy of a tensor's values (from any device)."""
    return np.asarray(t.detach().cpu().numpy())


def assert_close(actual: vt.Tensor, expected, rtol: float = 1e-6, atol: float = 1e-6,
                 dtype: str | None = None) -> None:
    """Assert a tensor matches a NumPy array (or list) in shape, dtype and values."""
    assert isinstance(actual, vt.Tensor), f"expected a Tensor, got {type(actual).__name__}"
    exp = np.asarray(expected)
    got = to_np(actual)
    assert got.shape == exp.shape, f"shape {got.shape} != expected {exp.shape}"
    if dtype is not None:
        assert actual.dtype.name == dtype, f"dtype {actual.dtype.name} != expected {dtype}"
    if exp.dtype == bool or np.issubdtype(exp.dtype, np.integer):
        np.testing.assert_array_equal(got, exp)
    else:
        np.testing.assert_allclose(got, exp, rtol=rtol, atol=atol, equal_nan=True)


def leaves(*arrays, device: str = "cpu") -> list[vt.Tensor]:
    """float64 tensors requiring grad, made from NumPy arrays."""
    return [vt.tensor(np.asarray(a, dtype=np.float64), device=device, requires_grad=True)
            for a in arrays]


def check_grad(fn: Callable, *arrays, atol: float = 1e-5, rtol: float = 1e-3) -> None:
    """float64 finite-difference gradcheck of ``fn`` on NumPy inputs."""
    assert vt.autograd.gradcheck(fn, leaves(*arrays), atol=atol, rtol=rtol)


def rand(*shape: int, seed: int = 0, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    """Reproducible float64 test data."""
    return np.random.default_rng(seed).uniform(low, high, size=shape)


# NumPy references for special functions (no SciPy dependency)
_erf = np.vectorize(math.erf, otypes=[np.float64])


def erf(x) -> np.ndarray:
    """Elementwise erf in float64, from the standard library."""
    return _erf(np.asarray(x, dtype=np.float64))


def expit(x) -> np.ndarray:
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


def logsumexp(x, axis=None, keepdims: bool = False) -> np.ndarray:
    """log(sum(exp(x))) along ``axis``, computed stably."""
    x = np.asarray(x, dtype=np.float64)
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)
