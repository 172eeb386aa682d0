"""``Embedding``'s ``max_norm``/``norm_type``/``scale_grad_by_freq`` (and
``embedding_bag``'s), and ``gumbel_softmax``, compared with PyTorch CPU."""

from __future__ import annotations

import numpy as np
import pytest
from torch_ref import torch

import volta_core as vt

W = np.random.default_rng(0).normal(size=(5, 3)) * 2
IDX = [[0, 2, 2], [4, 2, 0]]
SCALE = [1.0, 2.0, 3.0]


@pytest.mark.parametrize("kw", [
    {}, {"max_norm": 1.0}, {"max_norm": 1.5, "norm_type": 1.0}, {"max_norm": 100.0},
    {"scale_grad_by_freq": True}, {"padding_idx": 2, "scale_grad_by_freq": True},
    {"max_norm": 0.5, "scale_grad_by_freq": True},
])
def test_embedding_options_like_torch(kw):
    got = []
    for lib in (torch, vt):
        m = lib.nn.Embedding.from_pretrained(lib.tensor(W), freeze=False, **kw)
        out = m(lib.tensor(IDX))
        (out * lib.tensor(SCALE, dtype=lib.float64)).sum().backward()
        got.append([np.asarray(t.tolist()) for t in (out, m.weight.detach(), m.weight.grad)])
    for v, t in zip(*got[::-1]):
        np.testing.assert_allclose(v, t, rtol=1e-12, atol=1e-12)


def test_functional_embedding_renormalises_in_place_like_torch():
    for lib in (torch, vt):
        w = lib.tensor(W)
        lib.nn.functional.embedding(lib.tensor([1, 3, 1]), w, max_norm=1.0)
        norms = np.linalg.norm(np.asarray(w.tolist()), axis=1)
        assert np.all(norms[[1, 3]] <= 1.0 + 1e-6)
        np.testing.assert_array_equal(np.asarray(w.tolist())[[0, 2, 4]], W[[0, 2, 4]])
    m = vt.nn.Embedding(4, 2, max_norm=2.0, scale_grad_by_freq=True, sparse=True)
    assert "max_norm=2.0" in repr(m) and "scale_grad_by_freq=True" in repr(m)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_max_norm_and_frequency_scaling_like_torch(mode):
    got = []
    for lib in (torch, vt):
        w = lib.tensor(W, requires_grad=True)
        table = w * 1.0  # a non-leaf table: max_norm writes into it
        with lib.no_grad():
            table.mul_(1.0)
        out = lib.nn.functional.embedding_bag(
            lib.tensor([0, 2, 2, 4, 2, 0]), table.detach().requires_grad_(),
            lib.tensor([0, 2]), max_norm=1.5, mode=mode,
            scale_grad_by_freq=mode != "max")
        got.append(np.asarray(out.tolist()))
    np.testing.assert_allclose(got[1], got[0], rtol=1e-12)


def test_gumbel_softmax_samples_the_categorical_and_passes_soft_gradients():
    vt.manual_seed(0)
    logits = vt.tensor([[0.0, 1.0, 2.0]]).expand(20000, 3)
    hard = vt.nn.functional.gumbel_softmax(logits, tau=0.7, hard=True)
    assert set(hard.sum(1).tolist()) == {1.0} and set(np.unique(hard.numpy())) <= {0.0, 1.0}
    freq = hard.mean(0).numpy()
    np.testing.assert_allclose(freq, torch.tensor([0.0, 1.0, 2.0]).softmax(0).numpy(),
                               atol=0.02)
    x = vt.tensor([[1.0, 2.0, 0.5]], dtype=vt.float64, requires_grad=True)
    soft = vt.nn.functional.gumbel_softmax(x, tau=0.5)
    assert soft.dtype is vt.float64 and abs(float(soft.sum()) - 1.0) < 1e-12
    vt.manual_seed(1)
    y = vt.nn.functional.gumbel_softmax(x, hard=True)
    (y * vt.tensor([1.0, 2.0, 3.0], dtype=vt.float64)).sum().backward()
    assert x.grad is not None and float(x.grad.abs().sum()) > 0  # straight-through


_DEVICES = ["cpu"] + (["wgpu"] if any(b.name == "wgpu" and b.available
                                     for b in vt.backends()) else [])


@pytest.mark.parametrize("device", _DEVICES)
@pytest.mark.parametrize("case", ["sum", "mean", "mean_last", "sum_weights", "mean_padding"])
def test_embedding_bag_1d_against_pytorch(device, case):
    """1-D indices with offsets (an empty bag among them) add each row into its bag
    (index_add): values and gradients as PyTorch's, and 200000 indices in 200 bags in
    O(n) memory (a (bags, n) membership times the rows ran out of memory on wgpu)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((50, 4)).astype(np.float32)
    idx = rng.integers(0, 50, 30)
    mode = case.split("_")[0]
    last = case == "mean_last"
    offs = np.array([0, 3, 3, 10, 30 if last else 29])
    psw = rng.standard_normal(30).astype(np.float32) if case == "sum_weights" else None
    pad = int(idx[6]) if case == "mean_padding" else None
    out, grads = [], []
    for lib, dev in ((torch, "cpu"), (vt, device)):
        wt = lib.tensor(w, device=dev).requires_grad_(True)
        pw = None if psw is None else lib.tensor(psw, device=dev).requires_grad_(True)
        y = lib.nn.functional.embedding_bag(
            lib.tensor(idx, device=dev), wt, lib.tensor(offs, device=dev), mode=mode,
            per_sample_weights=pw, include_last_offset=last, padding_idx=pad)
        y.backward(lib.tensor(np.linspace(-1, 1, y.numel(), dtype=np.float32).reshape(
            tuple(y.shape)), device=dev))
        out.append(y.detach().cpu().numpy())
        grads.append([t.grad.cpu().numpy() for t in (wt, pw) if t is not None])
    np.testing.assert_allclose(out[1], out[0], rtol=1e-5, atol=1e-6)
    for a, b in zip(grads[1], grads[0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    big = rng.integers(0, 1000, 200_000)
    table = rng.standard_normal((1000, 8)).astype(np.float32)
    y = vt.nn.functional.embedding_bag(vt.tensor(big, device=device),
                                       vt.tensor(table, device=device),
                                       vt.tensor(np.arange(0, 200_000, 1000), device=device),
                                       mode="sum")
    want = table[big].reshape(200, 1000, 8).sum(1)
    np.testing.assert_allclose(y.cpu().numpy(), want, rtol=1e-4, atol=1e-3)


def test_embedding_bag_offsets_edge_cases_as_pytorch():
    """With include_last_offset the last bag runs to the end of the indices whatever the
    last offset says (PyTorch's kernels), and a first offset other than 0 is refused."""
    torch = pytest.importorskip("torch")
    w = np.arange(24.0).reshape(8, 3)
    idx = np.arange(1, 8)
    for offs in ([0, 2, 2, 5], [0, 2, 2, 7], [0, 3]):
        for last in (True, False):
            for mode in ("sum", "mean", "max"):
                got, want = (lib.nn.functional.embedding_bag(
                    lib.tensor(idx), lib.tensor(w), lib.tensor(offs), mode=mode,
                    include_last_offset=last).numpy() for lib in (vt, torch))
                np.testing.assert_array_equal(got, want)
    for lib in (vt, torch):
        with pytest.raises((ValueError, RuntimeError), match="offsets\\[0\\] has to be 0"):
            lib.nn.functional.embedding_bag(lib.tensor(idx), lib.tensor(w), lib.tensor([1, 3]))
