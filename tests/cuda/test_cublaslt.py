"""``linear`` on CUDA as one cuBLASLt call with the bias in its epilogue
(``volta_cupy.cublaslt``): values against PyTorch CUDA's ``F.linear`` (which takes the
same epilogue) and float64 math, every served dtype, with and without bias, TF32 on and
off, the fallbacks (views, misaligned starts, float64), gradients through ``vt.nn``, and a
capture in a CUDA graph."""

from __future__ import annotations

import numpy as np
import pytest

import volta_core as vt

SHAPES = [(1, 1, 1), (3, 5, 7), (64, 120, 84), (256, 784, 512), (300, 33, 65)]


@pytest.fixture(scope="module")
def lt():
    vt.device("cuda")
    from volta_cupy import cublaslt

    if not cublaslt.available():
        pytest.skip("cuBLASLt did not load")
    return cublaslt


def _operands(m, k, n, dtype, seed=0):
    import cupy

    rng = np.random.default_rng(seed)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (n, k), (n,)))
    return [cupy.asarray(a).astype(dtype) for a in (x, w, b)]


def _dtypes():
    out = ["float32", "float16"]
    try:
        import ml_dtypes

        out.append(np.dtype(ml_dtypes.bfloat16))
    except ImportError:
        pass
    return out


@pytest.mark.parametrize("dtype", _dtypes(), ids=str)
@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_float64_and_torch(lt, dtype, m, k, n, bias):
    import cupy

    x, w, b = _operands(m, k, n, dtype)
    if not bias:
        b = None
    y = lt.linear(cupy, x, w, b)
    assert y.dtype == x.dtype and y.shape == (m, n)
    ref = x.astype(np.float64) @ w.astype(np.float64).T
    if b is not None:
        ref += b.astype(np.float64)
    tol = 2e-5 if np.dtype(dtype) == np.float32 else 1e-2
    np.testing.assert_allclose(cupy.asnumpy(y.astype(np.float64)), cupy.asnumpy(ref),
                               rtol=tol, atol=tol * np.sqrt(k))
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        return
    tt = [torch.from_dlpack(a) if a is not None else None for a in (x, w, b)]
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        want = torch.nn.functional.linear(*tt)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old
    got = torch.from_dlpack(y)
    assert got.dtype == want.dtype
    torch.testing.assert_close(got.float(), want.float(), rtol=tol, atol=tol * np.sqrt(k))


def test_bias_added_in_the_epilogue_rounds_once(lt):
    """bfloat16: the product and the bias are added in float32 and rounded once. With
    x = w = 1 + 2**-6 the product 1 + 2**-5 + 2**-12 is not a bfloat16; rounded first (a
    separate add) the bias -1 leaves 2**-5, added in the epilogue 2**-5 + 2**-12."""
    import cupy

    try:
        import ml_dtypes
    except ImportError:
        pytest.skip("no bfloat16")
    bf = np.dtype(ml_dtypes.bfloat16)
    x = cupy.full((4, 1), 1 + 2.0 ** -6, bf)
    w = cupy.full((3, 1), 1 + 2.0 ** -6, bf)
    b = cupy.full((3,), -1.0, bf)
    y = cupy.asnumpy(lt.linear(cupy, x, w, b).astype(np.float32))
    assert (y == 2.0 ** -5 + 2.0 ** -12).all()


def test_tf32_flag_is_honoured(lt):
    import cupy

    x, w, b = _operands(64, 1024, 64, "float32", seed=3)
    exact = cupy.asnumpy(x.astype(np.float64) @ w.astype(np.float64).T + b)
    was = vt.backends.cuda.matmul.allow_tf32
    try:
        vt.backends.cuda.matmul.allow_tf32 = False
        err32 = np.abs(cupy.asnumpy(lt.linear(cupy, x, w, b)) - exact).max()
        vt.backends.cuda.matmul.allow_tf32 = True
        err_tf32 = np.abs(cupy.asnumpy(lt.linear(cupy, x, w, b)) - exact).max()
    finally:
        vt.backends.cuda.matmul.allow_tf32 = was
    assert err32 < 1e-3 < err_tf32  # TF32 keeps 10 mantissa bits


def test_fallbacks_give_the_same_values(lt):
    import cupy

    x, w, b = _operands(33, 40, 17, "float32", seed=1)
    want = x @ w.T + b
    for xv, wv, bv in ((x[:, :40], w, b),           # contiguous as is
                       (x[1:], w, b),               # starts 160 bytes in: served
                       (x.T.copy().T, w, b),        # F-order: CuPy's path
                       (x, w[:, ::-1][:, ::-1], b)):
        got = lt.linear(cupy, xv, wv, bv)
        np.testing.assert_allclose(cupy.asnumpy(got), cupy.asnumpy(xv @ wv.T + bv),
                                   rtol=1e-5, atol=1e-4)
    flat = cupy.concatenate([cupy.zeros(1, np.float32), x.ravel()])
    odd = flat[1:].reshape(x.shape)  # 4 bytes past an allocation: misaligned, CuPy's path
    np.testing.assert_allclose(cupy.asnumpy(lt.linear(cupy, odd, w, b)),
                               cupy.asnumpy(want), rtol=1e-5, atol=1e-4)
    x64, w64, b64 = (a.astype(np.float64) for a in (x, w, b))
    np.testing.assert_allclose(cupy.asnumpy(lt.linear(cupy, x64, w64, b64)),
                               cupy.asnumpy(x64 @ w64.T + b64), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_nn_linear_forward_and_gradients_match_torch(lt, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 7, 24)).astype(np.float32)
    w = rng.standard_normal((10, 24)).astype(np.float32)
    b = rng.standard_normal(10).astype(np.float32)
    vd, td = getattr(vt, dtype), getattr(torch, dtype)
    vx, vw, vb = (vt.tensor(a, device="cuda").to(vd).requires_grad_() for a in (x, w, b))
    tx, tw, tb = (torch.tensor(a).to(td).requires_grad_() for a in (x, w, b))
    vy = vt.nn.functional.linear(vx, vw, vb)
    ty = torch.nn.functional.linear(tx, tw, tb)
    g = rng.standard_normal(ty.shape).astype(np.float32)
    vy.backward(vt.tensor(g, device="cuda").to(vd))
    ty.backward(torch.tensor(g).to(td))
    tol = 1e-5 if dtype == "float32" else 3e-2
    for v, t in ((vy, ty), (vx.grad, tx.grad), (vw.grad, tw.grad), (vb.grad, tb.grad)):
        assert str(v.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(v.detach().float().cpu().numpy(), t.float().detach().numpy(),
                                   rtol=tol, atol=tol * 10)


def test_captured_in_a_cuda_graph(lt):
    lin = vt.nn.Linear(32, 16).to("cuda")
    x = vt.randn(8, 32, device="cuda")
    w, b = lin.weight.detach().cpu().numpy(), lin.bias.detach().cpu().numpy()
    with vt.no_grad():
        lin(x)  # warm up: the plan is made before the capture
        g = vt.cuda.CUDAGraph()
        with vt.cuda.graph(g):
            y = lin(x)
        x.copy_(x * 2)
        g.replay()
        vt.cuda.synchronize()
    np.testing.assert_allclose(y.cpu().numpy(), x.cpu().numpy() @ w.T + b, rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("dtype", _dtypes(), ids=str)
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_of_transposed_operands(lt, dtype, ta, tb):
    """Every C/F-contiguous combination (the backward's ``g.T @ x``, ``g @ w``) through
    ``blas.matmul``, which takes cuBLASLt first."""
    import cupy
    from volta_cupy import blas

    rng = np.random.default_rng(7)
    m, k, n = 37, 70, 21
    a = rng.standard_normal((k, m) if ta else (m, k)).astype(np.float32)
    b = rng.standard_normal((n, k) if tb else (k, n)).astype(np.float32)
    ca, cb = cupy.asarray(a).astype(dtype), cupy.asarray(b).astype(dtype)
    ca, cb = (ca.T if ta else ca), (cb.T if tb else cb)
    assert lt.matmul(ca, cb) is not None  # served, not handed back
    got = blas.matmul(ca, cb)
    want = ca.astype(np.float64) @ cb.astype(np.float64)
    tol = 2e-5 if np.dtype(dtype) == np.float32 else 1e-2
    assert got.dtype == ca.dtype and got.shape == (m, n)
    np.testing.assert_allclose(cupy.asnumpy(got.astype(np.float64)), cupy.asnumpy(want),
                               rtol=tol, atol=tol * 10)
    out = cupy.empty((m, n), ca.dtype)
    assert blas.matmul(ca, cb, out=out) is out
    np.testing.assert_array_equal(cupy.asnumpy(out.astype(np.float64)),
                                  cupy.asnumpy(got.astype(np.float64)))


def test_unaligned_bias_and_strided_operands_are_handed_back(lt):
    import cupy

    x, w, b = _operands(16, 8, 8, "float32", seed=2)
    wide = cupy.concatenate([cupy.zeros(4, np.float32), b])
    assert lt.matmul(x, w.T, wide[4:]) is None  # 16 bytes in: not on 256
    assert lt.matmul(x[:, ::2], w[:, ::2].T) is None
    got = lt.linear(cupy, x, w, wide[4:])  # the generic kernel serves
    np.testing.assert_allclose(cupy.asnumpy(got), cupy.asnumpy(x @ w.T + b), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("dtype", _dtypes(), ids=str)
@pytest.mark.parametrize("m,k,n", SHAPES)
def test_weight_and_bias_gradients_in_one_call(lt, dtype, m, k, n):
    """``(g.T @ x, g.sum(0))`` through the bias-gradient epilogue, against float64."""
    import cupy

    rng = np.random.default_rng(4)
    g, x = (cupy.asarray(rng.standard_normal(s).astype(np.float32)).astype(dtype)
            for s in ((m, n), (m, k)))
    got = lt.linear_weight_bias_grad(cupy, g, x)
    if got is None:  # the heuristic has no algorithm for this layout: the caller's path
        pytest.skip("no bias-gradient algorithm for this shape")
    gw, gb = got
    assert gw.dtype == gb.dtype == g.dtype and gw.shape == (n, k) and gb.shape == (n,)
    g64, x64 = g.astype(np.float64), x.astype(np.float64)
    tol = 2e-5 if np.dtype(dtype) == np.float32 else 1e-2
    np.testing.assert_allclose(cupy.asnumpy(gw.astype(np.float64)), cupy.asnumpy(g64.T @ x64),
                               rtol=tol, atol=tol * np.sqrt(m))
    np.testing.assert_allclose(cupy.asnumpy(gb.astype(np.float64)),
                               cupy.asnumpy(g64.sum(0)), rtol=tol, atol=tol * np.sqrt(m))
