"""``ctc_loss`` / ``CTCLoss`` against PyTorch CPU on every device: padded and concatenated
targets, repeated labels, any blank, empty inputs and targets, targets too long for their
inputs (an infinite loss: a NaN gradient for that element's steps, or zeros with
``zero_infinity``), every reduction; the loss and the gradient through ``log_softmax``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vt_helpers import available_devices

import volta_core as vt

torch = pytest.importorskip("torch")

DEVICES = available_devices()


def _run(m, device, x0, targets, in_len, tg_len, **kw):
    x = (vt.tensor(x0, device=device) if m is vt else torch.tensor(x0)).requires_grad_(True)
    as_t = (lambda a: vt.tensor(a, device=device)) if m is vt else torch.tensor
    loss = m.nn.functional.ctc_loss(x.log_softmax(-1), as_t(targets), as_t(in_len),
                                    as_t(tg_len), **kw)
    (loss.sum() if loss.ndim else loss).backward()
    host = (lambda t: t.detach().cpu().numpy()) if m is vt else (lambda t: t.detach().numpy())
    return host(loss), host(x.grad)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=60, deadline=None)
@given(steps=st.integers(1, 9), n=st.integers(1, 3), classes=st.integers(2, 5),
       width=st.integers(0, 5), seed=st.integers(0, 999), flat=st.booleans(),
       reduction=st.sampled_from(["mean", "sum", "none"]), zero_infinity=st.booleans())
def test_ctc_loss_as_pytorch(device, steps, n, classes, width, seed, flat, reduction,
                             zero_infinity):
    rng = np.random.default_rng(seed)
    blank = int(rng.integers(0, classes))
    labels = rng.choice([c for c in range(classes) if c != blank], (n, max(width, 1)))
    if rng.random() < 0.3:  # repeated labels need a blank between them
        labels[:, 1:] = labels[:, :-1]
    tg_len = [int(rng.integers(0, width + 1)) for _ in range(n)]
    in_len = [int(rng.integers(0, steps + 1)) for _ in range(n)]
    targets = (np.concatenate([labels[i, :k] for i, k in enumerate(tg_len)]) if flat
               else labels).astype(np.int64)
    dt = np.float64 if device == "cpu" else np.float32
    x0 = rng.standard_normal((steps, n, classes)).astype(dt)
    kw = dict(blank=blank, reduction=reduction, zero_infinity=zero_infinity)
    want = _run(torch, "cpu", x0, targets, in_len, tg_len, **kw)
    got = _run(vt, device, x0, targets, in_len, tg_len, **kw)
    tol = 1e-8 if dt == np.float64 else 1e-4
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_unbatched_and_the_module():
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((6, 4))
    want = torch.nn.CTCLoss(blank=3)(torch.tensor(x0).log_softmax(-1), torch.tensor([0, 1, 1]),
                                     torch.tensor(6), torch.tensor(3))
    got = vt.nn.CTCLoss(blank=3)(vt.tensor(x0).log_softmax(-1), vt.tensor([0, 1, 1]),
                                 vt.tensor(6), vt.tensor(3))
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-10)


def test_ctc_loss_refusals():
    lp = vt.zeros(4, 2, 3)
    with pytest.raises(vt.ShapeError, match="input lengths"):
        vt.nn.functional.ctc_loss(lp, vt.tensor([[1], [1]]), [5, 4], [1, 1])
    with pytest.raises(vt.ShapeError, match="one per batch"):
        vt.nn.functional.ctc_loss(lp, vt.tensor([[1], [1]]), [4], [1, 1])
    with pytest.raises(vt.ShapeError, match="targets"):
        vt.nn.functional.ctc_loss(lp, vt.tensor([[1], [1]]), [4, 4], [2, 1])
    with pytest.raises(ValueError, match="blank"):
        vt.nn.functional.ctc_loss(lp, vt.tensor([[1], [1]]), [4, 4], [1, 1], blank=3)
    with pytest.raises(vt.DTypeError):
        vt.nn.functional.ctc_loss(lp, vt.tensor([[1.0], [1.0]]), [4, 4], [1, 1])
