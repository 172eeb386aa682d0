"""bfloat16 against PyTorch CPU: index kernels and the backward passes built on them,
result dtypes of fused ops and gradients, NaN order in sorts; NaN/inf confined to their
own rows in the scatter kernels; dtype checks PyTorch makes (matmul, scatter, index_add).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import volta_core as vt
import volta_core.nn.functional as F

NAN, INF = float("nan"), float("inf")
DATA = [[1.0, 2.0, 3.0, -1.5], [4.0, -5.0, 6.0, 0.25], [0.5, 7.0, -2.0, 3.0]]


def close(got: vt.Tensor, want: torch.Tensor, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    assert got.dtype.name == str(want.dtype).removeprefix("torch."), (got.dtype, want.dtype)
    np.testing.assert_allclose(got.detach().float().numpy(), want.detach().float().numpy(),
                               rtol=rtol, atol=atol, equal_nan=True)


def pair(data=DATA, dtype="bfloat16"):
    a = np.asarray(data, dtype=np.float64)
    return (vt.tensor(a).to(dtype).requires_grad_(),
            torch.tensor(a).to(getattr(torch, dtype)).requires_grad_())


def lib(m):
    return (F if m is vt else TF), m


CASES = {
    "index": lambda m, x: x[m.tensor([0, 0, 2])],
    "index2": lambda m, x: x[m.tensor([0, 2]), m.tensor([1, 1])],
    "gather": lambda m, x: x.gather(1, m.tensor([[0, 0], [1, 3], [2, 2]])),
    "sort": lambda m, x: x.sort(1).values,
    "sort_desc": lambda m, x: x.sort(0, descending=True).values,
    "topk": lambda m, x: x.topk(2).values,
    "mask": lambda m, x: x[x > 2],
    "masked_fill": lambda m, x: x.masked_fill(x < 0, 0.0),
    "diagonal": lambda m, x: x.diagonal(),
    "reflect": lambda m, x: lib(m)[0].pad(x.unsqueeze(0), (2, 1), mode="reflect"),
    "index_select": lambda m, x: x.index_select(1, m.tensor([3, 0, 3])),
    "layer_norm": lambda m, x: lib(m)[0].layer_norm(x, (4,)),
    "linear": lambda m, x: lib(m)[0].linear(x, x[:2] * 0.5, x[0, :2]),
    "cross_entropy": lambda m, x: lib(m)[0].cross_entropy(x, m.tensor([0, 3, 1])),
    "sdpa": lambda m, x: lib(m)[0].scaled_dot_product_attention(x[None], x[None] * 0.5,
                                                                x[None]),
    "maximum": lambda m, x: m.maximum(x, m.ones(4, dtype=m.bfloat16) * 2),
    "minimum": lambda m, x: m.minimum(x, x.flip(0)),
    "max_dim": lambda m, x: x.max(1).values,
    "matmul": lambda m, x: x @ x.mT,
    "conv2d": lambda m, x: lib(m)[0].conv2d(x.reshape(1, 1, 3, 4), x[:2, :2].reshape(
        2, 1, 2, 1), x[0, :2], padding=1),
    "conv1d": lambda m, x: lib(m)[0].conv1d(x[None], x[:, :2].reshape(2, 3, 1)),
    "conv_transpose2d": lambda m, x: lib(m)[0].conv_transpose2d(
        x.reshape(1, 1, 3, 4), x[:2, :2].reshape(1, 2, 2, 1), stride=2),
    "batch_norm_train": lambda m, x: lib(m)[0].batch_norm(
        x.reshape(1, 3, 4), None, None, m.ones(3, dtype=m.bfloat16), None, training=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bfloat16_forward_and_backward_match_torch(name):
    v, t = pair()
    rv, rt = CASES[name](vt, v), CASES[name](torch, t)
    close(rv, rt, rtol=2e-2, atol=2e-2)
    g = np.random.default_rng(0).standard_normal(tuple(rt.shape))
    rv.backward(vt.tensor(g).to("bfloat16"))
    rt.backward(torch.tensor(g).to(torch.bfloat16))
    close(v.grad, t.grad, rtol=3e-2, atol=3e-2)


@pytest.mark.parametrize("name", ["index_add", "scatter_add", "scatter"])
def test_bfloat16_scatter_forward(name):
    fn = {
        "index_add": lambda m, x: x.index_add(0, m.tensor([0, 0, 2]),
                                              m.ones(3, 4, dtype=m.bfloat16)),
        "scatter_add": lambda m, x: x.scatter_add(1, m.tensor([[0, 0], [1, 1], [3, 3]]),
                                                  m.ones(3, 2, dtype=m.bfloat16)),
        "scatter": lambda m, x: x.scatter(1, m.tensor([[0, 2], [1, 1], [3, 0]]),
                                          m.full((3, 2), 9.0, dtype=m.bfloat16)),
    }[name]
    v, t = pair()
    close(fn(vt, v.detach()), fn(torch, t.detach()))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32", "float64"])
@pytest.mark.parametrize("descending", [False, True])
def test_nan_order_in_sorts(dtype, descending):
    data = [3.0, NAN, 1.0, -INF, 3.0, NAN, INF, 0.0, -0.5]
    v = vt.tensor(data).to(dtype)
    t = torch.tensor(data).to(getattr(torch, dtype))
    rv, rt = v.sort(descending=descending, stable=True), t.sort(descending=descending,
                                                                stable=True)
    close(rv.values, rt.values)
    np.testing.assert_array_equal(rv.indices.numpy(), rt.indices.numpy())
    kv, kt = v.topk(3, largest=descending), t.topk(3, largest=descending)
    close(kv.values, kt.values)


def test_topk_zero():
    close(vt.tensor([1.0, 2.0]).topk(0).values, torch.tensor([1.0, 2.0]).topk(0).values)


# -- NaN and inf stay in their own rows ------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_index_add_nan_and_inf_do_not_spread(dtype):
    idx = [0, 1, 2, 2, 3, 3, 4, 5]
    src = [NAN, 1.0, -INF, INF, -INF, 5.0, 1e30, 2.0]
    got = vt.zeros(6, dtype=dtype).index_add(0, vt.tensor(idx), vt.tensor(src).to(dtype))
    want = torch.zeros(6, dtype=getattr(torch, dtype)).index_add(
        0, torch.tensor(idx), torch.tensor(src).to(getattr(torch, dtype)))
    close(got, want)
    got = vt.zeros(6, dtype=dtype).scatter_add(0, vt.tensor(idx), vt.tensor(src).to(dtype))
    want = torch.zeros(6, dtype=getattr(torch, dtype)).scatter_add(
        0, torch.tensor(idx), torch.tensor(src).to(getattr(torch, dtype)))
    close(got, want)


def test_index_add_issue_example():
    close(vt.zeros(3).index_add(0, vt.tensor([0, 1, 2]), vt.tensor([NAN, 1.0, 2.0])),
          torch.zeros(3).index_add(0, torch.tensor([0, 1, 2]), torch.tensor([NAN, 1.0, 2.0])))


@pytest.mark.parametrize("fn", [
    lambda m, x: x[m.tensor([0, 1, 2, 1])],
    lambda m, x: x.gather(0, m.tensor([0, 1, 2, 1])),
    lambda m, x: x.sort().values,
])
def test_backward_of_index_ops_keeps_nan_in_place(fn):
    v = vt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    rv, rt = fn(vt, v), fn(torch, t)
    g = [NAN, 1.0, INF, 2.0][: rt.shape[0]]
    rv.backward(vt.tensor(g))
    rt.backward(torch.tensor(g))
    close(v.grad, t.grad)


# -- dtype checks PyTorch makes ----------------------------------------------------------

@pytest.mark.parametrize("fn", [
    lambda m: m.ones(2, 2) @ m.ones(2, 2, dtype=m.float64),
    lambda m: m.ones(2, 2) @ m.ones(2, 2, dtype=m.int64),
    lambda m: m.matmul(m.ones(2, dtype=m.int64), m.ones(2, dtype=m.int32)),
    lambda m: m.zeros(3).scatter(0, m.tensor([0]), m.ones(1, dtype=m.float64)),
    lambda m: m.zeros(3).scatter_add(0, m.tensor([0]), m.ones(1, dtype=m.float64)),
    lambda m: m.zeros(3).index_add(0, m.tensor([0]), m.ones(1, dtype=m.float64)),
])
def test_mixed_dtypes_raise_like_torch(fn):
    with pytest.raises(RuntimeError):
        fn(torch)
    with pytest.raises(vt.DTypeError):
        fn(vt)
