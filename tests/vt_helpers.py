"""Helpers shared by the tests: compare with NumPy, run gradcheck on NumPy inputs."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Iterator

import numpy as np
import pytest

import volta_core as vt


def run_threads(target: Callable, args: Iterable[tuple]) -> None:
    """Run ``target(*a)`` for every ``a`` of ``args``, each on its own thread, all at once;
    then raise the first exception a thread raised (alone, a thread's exception is only
    printed and the test would go on)."""
    errors: list[BaseException] = []

    def guarded(*a) -> None:
        try:
            target(*a)
        except BaseException as exc:  # re-raised by the calling thread
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=a) for a in args]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def available_devices() -> list[str]:
    """``cpu`` and every GPU device whose backend is available here (``wgpu``, ``cuda``):
    the devices a test compares with PyTorch on."""
    rows = {b.name: b for b in vt.backends()}
    return ["cpu"] + [d for d, b in (("wgpu", "wgpu"), ("cuda", "cupy"))
                      if b in rows and rows[b].available]


def device_has(device: str, dtype: str) -> bool:
    """Whether ``device`` has ``dtype`` (wgpu has no 8/16-bit integers, and an OpenGL
    adapter no float16/float64)."""
    try:
        vt.zeros(1, dtype=dtype, device=device)
    except vt.VoltaError:
        return False
    return True


def assert_matches_torch(want, got: vt.Tensor, rtol: float = 0.0, atol: float = 0.0) -> None:
    """``got`` has the PyTorch tensor ``want``'s shape, dtype and values: bit for bit (NaN
    matching NaN) when both tolerances are 0, else within them."""
    w, g = want.detach().numpy(), got.detach().cpu().numpy()
    assert g.shape == w.shape, (g.shape, w.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (got.dtype,
                                                                            want.dtype)
    if rtol or atol:
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(g, w)


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


def t64(a) -> vt.Tensor:
    """A float64 tensor made from a NumPy array or nested list."""
    return vt.tensor(np.asarray(a, dtype=np.float64))


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


def quadratic_problem(rng: np.random.Generator) -> tuple[list, list, list]:
    """Start values ``P0`` of a (3, 4) and a (4,) parameter and the coefficients ``C``,
    ``B`` of the optimizer tests' loss ``sum(c p^2 / 2 + b p)``, drawn from ``rng``."""
    p0 = [rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4,))]
    c = [rng.uniform(0.5, 2, (3, 4)), rng.uniform(0.5, 2, (4,))]
    b = [rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4,))]
    return p0, c, b


def run_quadratic(make_opt: Callable, p0: list, c: list, b: list, steps: int,
                  dtype: str = "float64") -> tuple[list, object]:
    """Minimise ``sum(c p^2 / 2 + b p)`` from ``p0`` for ``steps`` steps of
    ``make_opt(params)``; returns ``(params, optimizer)``."""
    params = [vt.tensor(p, dtype=dtype, requires_grad=True) for p in p0]
    opt = make_opt(params)
    for _ in range(steps):
        opt.zero_grad()
        loss = sum(((vt.tensor(c[i], dtype=dtype) * p * p) * 0.5
                    + vt.tensor(b[i], dtype=dtype) * p).sum() for i, p in enumerate(params))
        loss.backward()
        opt.step()
    return params, opt


def strict_backend(backend_name: str, device: str) -> Iterator[str]:
    """Register a throwaway backend ``backend_name`` whose namespace is array-api-strict (no NumPy
    extras); yields its device type, then unregisters it. Use with ``yield from`` in a
    fixture; skips the test when array-api-strict is not installed."""
    xp = pytest.importorskip("array_api_strict")
    from volta_core.backend import Backend, hookimpl
    from volta_core.backend.registry import register_plugin, unregister_plugin

    names = ("bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64")
    by_native = {getattr(xp, n): n for n in names}

    class StrictBackend(Backend):
        name = backend_name
        device_type = device

        def namespace(self, index):
            return xp

        def dtype_names(self, index):
            return names

        def dtype_name(self, native_dtype):
            return by_native[native_dtype]

        def from_host(self, data, index, dtype=None, copy=None):
            return xp.asarray(np.asarray(data), dtype=dtype, copy=True)

        def to_host(self, array):
            return np.from_dlpack(array)

    class Plugin:
        @hookimpl
        def volta_backends(self):
            return [StrictBackend()]

    register_plugin(Plugin(), name=backend_name)
    yield device
    unregister_plugin(backend_name)


def wgpu_float16_missing() -> str | None:
    """Why wgpu float16 tests cannot run here (no usable adapter, no ``shader-f16``), or
    None when they can."""
    try:
        rows = {b.name: b for b in vt.backends()}
        if "wgpu" not in rows or not rows["wgpu"].available:
            return "wgpu backend unavailable"
        if "float16" not in vt.device("wgpu").backend.dtype_names(0):
            return "the WebGPU adapter lacks shader-f16 (float16)"
    except Exception as exc:  # no adapter, no Vulkan loader
        return f"wgpu unusable: {exc}"
    return None
