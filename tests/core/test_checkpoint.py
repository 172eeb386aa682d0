"""``vt.utils.checkpoint``: the gradients with checkpointing equal those without (also
with dropout, whose masks the recomputation replays), parameters inside get theirs
(``use_reentrant=False`` also when no input requires grad; the reentrant form then warns
and gives none, as PyTorch's), values against PyTorch's checkpoint, and
``checkpoint_sequential``."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tcp

import volta_core as vt
from volta_core.utils.checkpoint import checkpoint, checkpoint_sequential


def _model(m, dropout=0.0):
    return m.nn.Sequential(m.nn.Linear(6, 8), m.nn.Tanh(), m.nn.Dropout(dropout),
                           m.nn.Linear(8, 4), m.nn.GELU(), m.nn.Linear(4, 3)).double()


def _grads(model):
    return [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("dropout", [0.0, 0.3])
def test_same_gradients_as_without_checkpoint(use_reentrant, dropout):
    x0 = np.random.default_rng(0).standard_normal((5, 6))
    results = []
    for ckpt in (False, True):
        vt.manual_seed(0)
        model = _model(vt, dropout)
        vt.manual_seed(1)
        x = vt.tensor(x0, requires_grad=True)
        first, rest = model[:4], model[4:]
        h = checkpoint(first, x, use_reentrant=use_reentrant) if ckpt else first(x)
        rest(h).pow(2).sum().backward()
        results.append((_grads(model), x.grad.numpy().copy()))
    (g0, x0g), (g1, x1g) = results
    np.testing.assert_allclose(x1g, x0g, rtol=1e-12)
    for a, b in zip(g0, g1):
        np.testing.assert_allclose(b, a, rtol=1e-12)


def test_non_reentrant_trains_a_first_layer_whose_input_needs_no_grad():
    model = _model(vt)
    x = vt.tensor(np.ones((2, 6)))
    checkpoint(model, x, use_reentrant=False).sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_reentrant_without_grad_inputs_warns_like_torch():
    model = _model(vt)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(model, vt.tensor(np.ones((2, 6))), use_reentrant=True)
    assert not y.requires_grad
    with pytest.warns(UserWarning, match="use_reentrant"):
        checkpoint(model, vt.tensor(np.ones((2, 6)), requires_grad=True))


def test_values_and_gradients_match_torch():
    torch.manual_seed(0)
    tm = _model(torch)
    vm = _model(vt)
    for p, q in zip(tm.parameters(), vm.parameters()):
        q.data.copy_(vt.tensor(p.detach().numpy()))
    x0 = np.random.default_rng(2).standard_normal((4, 6))
    tx = torch.tensor(x0, requires_grad=True)
    vx = vt.tensor(x0, requires_grad=True)
    ty = tcp.checkpoint(tm, tx, use_reentrant=False)
    vy = checkpoint(vm, vx, use_reentrant=False)
    ty.sum().backward()
    vy.sum().backward()
    np.testing.assert_allclose(vy.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(vx.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    for p, q in zip(tm.parameters(), vm.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-12)


def test_keyword_arguments_and_several_outputs():
    def f(a, b, *, scale):
        return a * scale, (a * b).sum()

    a = vt.tensor([1.0, 2.0], requires_grad=True)
    b = vt.tensor([3.0, 4.0], requires_grad=True)
    y, s = checkpoint(f, a, b, use_reentrant=False, scale=2.0)
    (y.sum() + s).backward()
    assert a.grad.tolist() == [5.0, 6.0] and b.grad.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="Unexpected keyword"):
        checkpoint(f, a, b, use_reentrant=True, scale=2.0)


def test_checkpoint_sequential_matches_plain_run():
    x0 = np.random.default_rng(3).standard_normal((3, 6))
    grads = []
    for segments in (None, 2):
        vt.manual_seed(0)
        model = _model(vt)
        x = vt.tensor(x0, requires_grad=True)
        y = model(x) if segments is None else checkpoint_sequential(
            model, segments, x, use_reentrant=False)
        y.sum().backward()
        grads.append(_grads(model) + [x.grad.numpy()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-12)
