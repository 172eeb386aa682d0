"""Reductions checked against PyTorch CPU: std's gradient at 0, float16/bfloat16
accumulation, the gradient of max/min over a dim, 0-d and empty arguments."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import volta_core as vt
import volta_core.nn.functional as F


def close(got: vt.Tensor, want: torch.Tensor, rtol: float = 1e-6, atol: float = 1e-7) -> None:
    assert tuple(got.shape) == tuple(want.shape)
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    np.testing.assert_allclose(got.detach().float().numpy(), want.detach().float().numpy(),
                               rtol=rtol, atol=atol, equal_nan=True)


def pair(a, dtype="float32", grad=True):
    a = np.asarray(a, dtype=np.float64)
    return (vt.tensor(a).to(dtype).requires_grad_(grad),
            torch.tensor(a).to(getattr(torch, dtype)).requires_grad_(grad))


@pytest.mark.parametrize("fn", [
    lambda m, x: m.std(x, 1).sum(),
    lambda m, x: m.std(x, 1, keepdim=True).sum(),
    lambda m, x: ((x - x.mean(1, keepdim=True)) / (x.std(1, keepdim=True) + 1e-5)).sum(),
    lambda m, x: m.std_mean(x, 1)[0].sum(),
    lambda m, x: x.std(),
])
def test_std_gradient_where_std_is_zero(fn):
    v, t = pair([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]], "float64")
    fn(vt, v).backward()
    fn(torch, t).backward()
    close(v.grad, t.grad, rtol=1e-12)
    assert np.isfinite(v.grad.numpy()).all()


def test_std_gradcheck_away_from_zero():
    x = vt.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert vt.autograd.gradcheck(lambda a: a.std(1), [x])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["mean", "var", "std", "norm", "layer_norm", "sum_mean"])
def test_half_precision_accumulates_in_float32(dtype, name):
    x = np.random.default_rng(0).standard_normal((4, 3000)) * 100 + 500
    fns = {
        "mean": lambda m, a: a.mean(1),
        "var": lambda m, a: a.var(1),
        "std": lambda m, a: a.std(1),
        "norm": lambda m, a: a.norm(dim=1),
        "layer_norm": lambda m, a: (F if m is vt else TF).layer_norm(a, (3000,)),
        "sum_mean": lambda m, a: a.mean(),
    }
    v, t = pair(x, dtype)
    got, want = fns[name](vt, v), fns[name](torch, t)
    assert np.isfinite(want.float().detach().numpy()).all()
    close(got, want, rtol=1e-2 if dtype == "bfloat16" else 1e-3, atol=1e-2)
    gv = np.random.default_rng(1).standard_normal(tuple(want.shape))
    got.backward(vt.tensor(gv).to(dtype))
    want.backward(torch.tensor(gv).to(getattr(torch, dtype)))
    assert v.grad.dtype.name == dtype
    close(v.grad, t.grad, rtol=5e-2, atol=5e-2)


def test_issue_examples_half():
    close(vt.full((3000,), 30.0, dtype=vt.float16).mean(),
          torch.full((3000,), 30.0, dtype=torch.float16).mean())
    close(vt.tensor([300.0, 400.0], dtype=vt.float16).norm(),
          torch.tensor([300.0, 400.0], dtype=torch.float16).norm())


@pytest.mark.parametrize("fn", [
    lambda x: x.max(1).values, lambda x: x.min(1).values, lambda x: x.max(0).values,
    lambda x: x.max(1, keepdim=True).values, lambda x: x.max(), lambda x: x.min(),
    lambda x: x.amax(1), lambda x: x.amin(0), lambda x: x.amax(),
])
def test_max_min_gradients_with_ties(fn):
    data = [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [-1.0, 0.0, -1.0]]
    v, t = pair(data)
    rv, rt = fn(v), fn(t)
    close(rv, rt)
    rv.sum().backward()
    rt.sum().backward()
    close(v.grad, t.grad)


def test_max_over_dim_with_nan():
    v, t = pair([[1.0, float("nan"), 3.0], [4.0, 5.0, float("nan")]])
    rv, rt = v.max(1), t.max(1)
    close(rv.values, rt.values)
    np.testing.assert_array_equal(rv.indices.numpy(), rt.indices.numpy())
    rv.values.sum().backward()
    rt.values.sum().backward()
    close(v.grad, t.grad)


def test_max_indices_and_integer_input():
    a = np.array([[1, 5, 5, 2], [7, 0, 7, 1]])
    for dim in (0, 1, -1):
        rv, rt = vt.tensor(a).max(dim), torch.tensor(a).max(dim)
        close(rv.values, rt.values)
        close(rv.indices, rt.indices)


def test_zero_d_argmax_and_max():
    v, t = pair(5.0)
    for dim in (0, -1):
        close(vt.argmax(v, dim), torch.argmax(t, dim))
        close(vt.argmin(v, dim), torch.argmin(t, dim))
        rv, rt = v.max(dim), t.max(dim)
        close(rv.values, rt.values)
        close(rv.indices, rt.indices)
    close(v.argmax(), t.argmax())
    with pytest.raises(IndexError):
        v.argmax(1)


def test_argmax_keepdim_without_dim():
    a = np.array([[1.0, 5.0, 2.0]])
    close(vt.tensor(a).argmax(keepdim=True), torch.tensor(a).argmax(keepdim=True))


def test_argmax_of_empty_raises_clearly():
    close(vt.empty(0, 3).argmax(1), torch.empty(0, 3).argmax(1))
    for f in (lambda m: m.empty(0).argmax(), lambda m: m.empty(0, 3).argmax(0),
              lambda m: m.empty(0, 3).max(0)):
        with pytest.raises(IndexError):
            f(torch)
        with pytest.raises(IndexError, match="empty"):
            f(vt)
    with pytest.raises(vt.VoltaError, match="empty"):
        vt.empty(0).max()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["sum", "cumsum", "softmax", "log_softmax", "logsumexp",
                                  "sum_partial_overflow"])
def test_half_precision_sums_and_softmax_accumulate_in_float32(dtype, name):
    x = np.random.default_rng(0).uniform(0, 1, (2, 5000))
    fns = {
        "sum": lambda a: a.sum(1), "cumsum": lambda a: a.cumsum(1)[:, -3:],
        "softmax": lambda a: a.softmax(1)[:, :4] * 1000,
        "log_softmax": lambda a: a.log_softmax(1)[:, :4],
        "logsumexp": lambda a: a.logsumexp(1),
        "sum_partial_overflow": lambda a: (a[:, :3] * 0 + a.new_tensor(
            [60000.0, 60000.0, -60000.0])).sum(1),
    }
    v, t = pair(x, dtype)
    got, want = fns[name](v), fns[name](t)
    close(got, want, rtol=2e-2 if dtype == "bfloat16" else 2e-3, atol=1e-2)
    if name != "sum_partial_overflow":
        gv = np.random.default_rng(1).standard_normal(tuple(want.shape))
        got.backward(vt.tensor(gv).to(dtype))
        want.backward(torch.tensor(gv).to(getattr(torch, dtype)))
        close(v.grad, t.grad, rtol=5e-2, atol=5e-2)
