"""Edge cases where CuPy's own answer departs from PyTorch's, checked on a real GPU against
PyTorch CPU (skipped, with the reason, where CUDA is unavailable). Each case came from the
reference campaign on an H100 (``python -m reference.campaign --device cuda``)."""

import math

import numpy as np
import pytest
import torch

import volta_core as vt

inf, nan = math.inf, math.nan
FLOATS = ["float16", "bfloat16", "float32", "float64"]


def _same(v: vt.Tensor, t: torch.Tensor) -> None:
    assert str(v.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    want = t.float().numpy() if t.dtype in (torch.bfloat16, torch.float16) else t.numpy()
    got = v.cpu().float().numpy() if v.dtype.is_floating_point else v.cpu().numpy()
    np.testing.assert_array_equal(got.astype(want.dtype), want)


def _pair(values, dtype):
    return (vt.tensor(values, dtype=getattr(vt, dtype), device="cuda"),
            torch.tensor(values, dtype=getattr(torch, dtype)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["floor_divide", "remainder"])
def test_rounded_division_with_infinite_and_nan_operands(op, dtype):
    a = [1.0, nan, -inf, inf, 2.5, 1.0, -1.0, 5.0, -5.0, 0.0, -7.0, 7.0]
    b = [2.0, 2.0, 2.0, 2.5, inf, -inf, inf, 0.0, 0.0, -3.0, 2.0, -2.0]
    (va, ta), (vb, tb) = _pair(a, dtype), _pair(b, dtype)
    _same(getattr(vt, op)(va, vb), getattr(torch, op)(ta, tb))
    _same(getattr(vt, op)(va, 3), getattr(torch, op)(ta, 3))
    if op == "floor_divide":  # a Python number on the left
        _same(inf // vb, inf // tb)
        _same(2 // vb, 2 // tb)
    else:
        _same(2 % vb, 2 % tb)


def test_floor_divide_of_integers_by_an_infinite_number_promotes():
    v, t = _pair([1, -1, 0], "int64")
    _same(v.floor_divide(-inf), t.floor_divide(-inf))


def test_signbit_of_negative_zero():
    for shape in [(), (3,)]:
        v = vt.full(shape, -0.0, device="cuda")
        assert bool(vt.signbit(v).all())
    assert vt.signbit(vt.tensor(-0.0, device="cuda")).item() is True
    assert vt.signbit(vt.tensor(-0.0, dtype=vt.float64, device="cuda")).item() is True


def test_var_and_std_without_degrees_of_freedom():
    rows = [[1.0, 1.0], [1.0, 2.0], [-inf, -3.0]]
    v, t = _pair(rows, "float32")
    for fn in ("var", "std"):
        _same(getattr(v, fn)(dim=-1, keepdim=True, correction=2),
              getattr(t, fn)(dim=-1, keepdim=True, correction=2))


@pytest.mark.parametrize("dtype", FLOATS)
def test_argmin_argmax_take_the_first_nan(dtype):
    v, t = _pair([1.0, 3.0, nan, -4.0, nan, 7.0], dtype)
    assert vt.argmin(v).item() == torch.argmin(t).item() == 2
    assert vt.argmax(v).item() == torch.argmax(t).item() == 2


@pytest.mark.parametrize("dtype", FLOATS)
def test_argmin_argmax_along_a_dim_take_the_first_nan(dtype):
    rows = [[0.0, 1.0, 0.0], [0.0, 2.0, 0.0], [nan, 3.0, 1.0], [nan, nan, 1.0],
            [nan, nan, nan]]
    v, t = _pair(rows, dtype)
    for dim in (0, 1):
        _same(vt.argmin(v, dim), torch.argmin(t, dim))
        _same(vt.argmax(v, dim), torch.argmax(t, dim))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fmod_by_an_infinite_divisor_keeps_the_dividend(dtype):
    v, t = _pair([1.0, -2.5, 0.0, inf], dtype)
    for other in (inf, -inf):
        _same(vt.fmod(v, other), torch.fmod(t, other))


@pytest.mark.parametrize("fn", ["triu", "tril"])
def test_triangles_keep_bfloat16(fn):
    v, t = _pair([[1.0, 2.0], [3.0, 4.0]], "bfloat16")
    _same(getattr(vt, fn)(v), getattr(torch, fn)(t))


@pytest.mark.parametrize("op", ["multiply", "add", "subtract", "divide"])
def test_bfloat16_with_a_python_number_stays_bfloat16(op):
    from volta_cupy.namespace import xp

    v, t = _pair([1.0, -2.5, 3.0e3, 0.1, -0.0], "bfloat16")
    fn = getattr(torch, op)
    for got, want in ((getattr(xp, op)(v.array, 0.3), fn(t, 0.3)),
                      (getattr(xp, op)(0.3, v.array), fn(torch.tensor(0.3, dtype=torch.bfloat16)
                                                          .float(), t.float()).bfloat16())):
        assert str(got.dtype) == "bfloat16"
        np.testing.assert_allclose(got.astype(np.float32).get(), want.float().numpy(),
                                   rtol=1e-2)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("transpose", [False, True])
def test_batched_matmul_of_every_float_dtype(dtype, transpose):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    b = rng.standard_normal((2, 3, 6, 5) if transpose else (2, 3, 5, 6)).astype(np.float32)
    (va, ta), (vb, tb) = _pair(a, dtype), _pair(b, dtype)
    if transpose:
        vb, tb = vb.transpose(-2, -1), tb.transpose(-2, -1)
    got, want = va @ vb, ta @ tb
    assert got.dtype.name == dtype
    tol = 3e-2 if dtype in ("float16", "bfloat16") else 1e-5
    np.testing.assert_allclose(got.float().cpu().numpy(), want.float().numpy(), rtol=tol,
                               atol=tol)
    # layouts cuBLAS cannot stride through (a non-contiguous batch, broadcast batch dims)
    for x, y, tx, ty in ((va[:, ::2], vb[:, ::2], ta[:, ::2], tb[:, ::2]),
                         (va[:1], vb, ta[:1], tb)):
        np.testing.assert_allclose((x @ y).float().cpu().numpy(), (tx @ ty).float().numpy(),
                                   rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_softmax_and_its_backward_in_bfloat16_rows(dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 37)).astype(np.float32) * 4
    x[1, 3] = -np.inf
    g = rng.standard_normal((6, 37)).astype(np.float32)
    (vx, tx), (vg, tg) = _pair(x, dtype), _pair(g, dtype)
    vx.requires_grad_()
    tx.requires_grad_()
    vy, ty = vt.softmax(vx, -1), torch.softmax(tx, -1)
    assert vy.dtype.name == dtype
    tol = 1e-2 if dtype == "bfloat16" else 1e-6
    np.testing.assert_allclose(vy.detach().float().cpu().numpy(),
                               ty.detach().float().numpy(), rtol=tol, atol=tol)
    vy.backward(vg)
    ty.backward(tg)
    assert vx.grad.dtype.name == dtype
    np.testing.assert_allclose(vx.grad.float().cpu().numpy(), tx.grad.float().numpy(),
                               rtol=3 * tol, atol=3 * tol)


@pytest.mark.parametrize("rows", [3, 5000])
def test_bias_gradient_column_sums_of_bfloat16(rows):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((rows, 70)).astype(np.float32)
    w = rng.standard_normal((5, 70)).astype(np.float32)
    b = np.zeros(5, np.float32)
    vx = vt.tensor(x, device="cuda", dtype=vt.bfloat16)
    vw = vt.tensor(w, device="cuda", dtype=vt.bfloat16, requires_grad=True)
    vb = vt.tensor(b, device="cuda", dtype=vt.bfloat16, requires_grad=True)
    tw = torch.tensor(w, dtype=torch.bfloat16, requires_grad=True)
    tb = torch.tensor(b, dtype=torch.bfloat16, requires_grad=True)
    vt.nn.functional.linear(vx, vw, vb).sum().backward()
    torch.nn.functional.linear(torch.tensor(x, dtype=torch.bfloat16), tw, tb).sum().backward()
    assert vb.grad.dtype is vt.bfloat16
    np.testing.assert_allclose(vb.grad.float().cpu().numpy(), tb.grad.float().numpy(),
                               rtol=1e-2)
