"""Launches through the driver (``volta_cupy.launch``) and the kernels built on them: every
argument type, several threads at once, CUDA graph capture; the pointwise kernels of
``volta_cupy.fused`` and the namespace's float32 functions give the bits of the CuPy
loops they replace (and of PyTorch CUDA where its kernel is the same)."""

from __future__ import annotations

import numpy as np
import pytest
from vt_helpers import run_threads

import volta_core as vt


def _values(n: int, seed: int, dtype=np.float32) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32) * 3
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 30.0],
                        np.float32)
    x[: min(n, len(specials))] = specials[: min(n, len(specials))]
    return x.astype(dtype)


def _same(a, b) -> None:
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)  # NaNs at the same places count as equal


_ARGS = r"""
extern "C" __global__ void volta_test_args(double* out, const float f, const long long q,
                                           const int k, const bool b, const double d,
                                           const float* x) {
  out[0] = f; out[1] = (double)q; out[2] = k; out[3] = b ? 1.0 : 0.0; out[4] = d;
  out[5] = x[1];
}
"""


def test_every_argument_type_reaches_the_kernel(cp):
    from volta_cupy.launch import launch

    kern = cp.RawKernel(_ARGS, "volta_test_args")
    out = cp.zeros(6, cp.float64)
    x = cp.asarray([0.0, 7.25], cp.float32)
    for b in (True, False, np.bool_(True)):
        launch(kern, 1, 1, (out, np.float32(1.5), np.int64(-(2**40)), np.int32(-3), b,
                            np.float64(0.1), x))
        np.testing.assert_array_equal(cp.asnumpy(out),
                                      [1.5, -(2.0**40), -3.0, float(b), 0.1, 7.25])
    with pytest.raises(TypeError, match="unsupported kernel argument"):
        launch(kern, 1, 1, (out, 1.5))


_GRID = r"""
extern "C" __global__ void volta_test_grid(unsigned int* out, const unsigned int u) {
  out[blockIdx.y * gridDim.x + blockIdx.x] = u + blockIdx.y;
}
"""


def test_two_dimensional_grid_and_uint32(cp):
    """``blocks_y`` launches a (blocks, blocks_y) grid; a numpy.uint32 above 2**31 arrives
    with all its bits (batch norm's 32-bit index arguments)."""
    from volta_cupy.launch import launch

    kern = cp.RawKernel(_GRID, "volta_test_grid")
    out = cp.zeros(6, cp.uint32)
    launch(kern, 2, 1, (out, np.uint32(2**31 + 5)), 3)
    np.testing.assert_array_equal(cp.asnumpy(out), 2**31 + 5 + np.repeat([0, 1, 2], 2))


def test_threads_launch_at_once(cp):
    """Each thread has its own argument slots: no launch sees another's arguments."""
    from volta_cupy.raw_arith import binary_f32

    def work(seed: int) -> None:
        cp.cuda.Device(0).use()
        a = cp.asarray(_values(4099, seed))
        for k in range(200):
            got = binary_f32("add", a, float(k))
            _same(cp.asnumpy(got), cp.asnumpy(a) + np.float32(k))

    run_threads(work, [(s,) for s in range(4)])


def test_launches_are_captured_in_cuda_graphs(cp):
    x = vt.randn(1000, device="cuda")
    static = x.clone()
    g = vt.cuda.CUDAGraph()
    s = vt.cuda.Stream()
    with vt.cuda.stream(s):  # warm-up (kernels compiled) outside the capture
        (static * 2.0 + 1.0).tanh()
    vt.cuda.synchronize()
    with vt.cuda.graph(g):
        out = (static * 2.0 + 1.0).tanh()
    static.copy_((x + 1.0).detach())
    g.replay()
    vt.cuda.synchronize()
    want = ((x + 1.0) * 2.0 + 1.0).tanh()
    np.testing.assert_array_equal(out.cpu().numpy(), want.cpu().numpy())


@pytest.mark.parametrize("name", ["negative", "exp", "expm1", "log", "log1p", "sqrt", "tanh",
                                  "sin", "cos", "reciprocal"])
def test_namespace_float32_functions_match_cupy(cp, name):
    xp = vt.device("cuda").xp
    a = cp.asarray(_values(10_001, 20))
    _same(cp.asnumpy(getattr(xp, name)(a)), cp.asnumpy(getattr(cp, name)(a)))
    _same(cp.asnumpy(getattr(xp, name)(a[::3])), cp.asnumpy(getattr(cp, name)(a[::3])))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "bfloat16"])
def test_pointwise_kernels_match_the_elementwise_ones(cp, dtype):
    """relu, relu's, tanh's and sigmoid's backward, dropout and its backward and erf: the
    raw launch (contiguous arrays) and CuPy's ElementwiseKernel (a strided view) agree."""
    from volta_cupy import fused

    if dtype == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        dt = np.dtype(ml_dtypes.bfloat16)
    else:
        dt = np.dtype(dtype)
    g, y = (cp.asarray(_values(2 * 5001, s, dt)) for s in (21, 22))
    keep = cp.asarray(np.random.default_rng(23).random(2 * 5001) > 0.3)
    cases = [
        lambda g, y, k: fused.relu(cp, y),
        lambda g, y, k: fused.relu_backward(cp, g, y),
        lambda g, y, k: fused.tanh_backward(cp, g, y),
        lambda g, y, k: fused.sigmoid_backward(cp, g, y),
        lambda g, y, k: fused.dropout_backward(cp, g, k, p=0.3),
        lambda g, y, k: fused.erf(cp, y),
    ]
    for fn in cases:
        whole = fn(g, y, keep)[::2]  # the raw launch, then every second value
        strided = fn(g[::2], y[::2], keep[::2])  # CuPy's ElementwiseKernel
        _same(cp.asnumpy(whole).view(np.uint8), cp.asnumpy(strided).view(np.uint8))
    u = cp.asarray(np.random.default_rng(24).random(2 * 5001).astype(
        dt if dt.itemsize > 2 else np.float32))
    whole = fused.dropout_forward(cp, g, u, p=0.3)
    strided = fused.dropout_forward(cp, g[::2], u[::2], p=0.3)
    for a, b in zip(whole, strided):
        _same(cp.asnumpy(a[::2]).view(np.uint8), cp.asnumpy(b).view(np.uint8))


def test_gelu_kernels_match_the_core_steps_and_torch(cp, monkeypatch):
    """float32 GELU forward and backward in one launch each: the values of the core's
    steps (the fallback), and PyTorch's within its own ulps."""
    import torch

    from volta_core.backend import kernels as registry
    from volta_core.ops import activation

    x0 = _values(30_001, 30)
    x0[:8] = np.arange(8, dtype=np.float32) - 4.0  # no NaN/inf: compared with allclose
    g0 = _values(30_001, 31)
    g0[:8] = 1.0

    def run():
        x = vt.tensor(x0, device="cuda", requires_grad=True)
        y = vt.nn.functional.gelu(x)
        y.backward(vt.tensor(g0, device="cuda"))
        return y.detach().cpu().numpy(), x.grad.cpu().numpy()

    fused_y, fused_g = run()
    for name in ("gelu_erf", "gelu_erf_backward"):
        monkeypatch.setitem(registry._cache, ("cupy", name), getattr(activation, name))
    steps_y, steps_g = run()
    _same(fused_y, steps_y)
    _same(fused_g, steps_g)
    tx = torch.tensor(x0, device="cuda", requires_grad=True)
    ty = torch.nn.functional.gelu(tx)
    ty.backward(torch.tensor(g0, device="cuda"))
    np.testing.assert_allclose(fused_y, ty.detach().cpu().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fused_g, tx.grad.cpu().numpy(), rtol=1e-5, atol=1e-5)
