"""``mode`` and ``masked_scatter`` (both new) against PyTorch CPU on every device: values,
indices (the smallest most frequent value, its last occurrence), gradients, broadcast
masks, a short source refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vt_helpers import available_devices

import volta_core as vt

torch = pytest.importorskip("torch")

DEVICES = available_devices()
shapes = st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=60, deadline=None)
@given(shape=shapes, seed=st.integers(0, 999), keepdim=st.booleans(),
       integer=st.booleans())
def test_mode_as_pytorch(device, shape, seed, keepdim, integer):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, shape).astype(np.int64 if integer else np.float32)
    dim = int(rng.integers(-len(shape), len(shape))) if shape else 0
    want = torch.mode(torch.tensor(x), dim, keepdim)
    got = vt.mode(vt.tensor(x, device=device), dim, keepdim)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_array_equal(g.cpu().numpy(), w.numpy())


def test_mode_gradient_reaches_the_returned_index():
    for m in (torch, vt):
        x = m.tensor([3.0, 1.0, 3.0, 1.0], requires_grad=True)
        m.mode(x).values.backward()
        assert x.grad.tolist() == [0.0, 0.0, 0.0, 1.0]


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=60, deadline=None)
@given(shape=shapes.filter(lambda s: len(s) > 0), seed=st.integers(0, 999),
       row_mask=st.booleans(), extra=st.integers(-2, 3))
def test_masked_scatter_as_pytorch(device, shape, seed, row_mask, extra):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    mask = rng.random(shape[-1:] if row_mask else shape) < 0.5
    count = int(np.broadcast_to(mask, shape).sum())
    source = rng.standard_normal(max(count + extra, 0)).astype(np.float32)
    out = []
    for m, dev in ((torch, "cpu"), (vt, device)):
        t = (vt.tensor(x, device=dev) if m is vt else torch.tensor(x)).requires_grad_(True)
        s = (vt.tensor(source, device=dev) if m is vt else torch.tensor(source))
        s.requires_grad_(True)
        try:
            y = t.masked_scatter((vt.tensor(mask, device=dev) if m is vt
                                  else torch.tensor(mask)), s)
        except (RuntimeError, vt.VoltaError):
            out.append(None)
            continue
        g = np.arange(y.numel(), dtype=np.float32).reshape(tuple(y.shape))
        y.backward(vt.tensor(g, device=dev) if m is vt else torch.tensor(g))
        host = (lambda a: a.detach().cpu().numpy()) if m is vt else (lambda a: a.detach().numpy())
        out.append([host(y)] + [np.zeros(tuple(a.shape)) if a.grad is None else host(a.grad)
                                for a in (t, s)])  # an unused empty source: no gradient
    assert (out[0] is None) == (out[1] is None), "both refuse a source that is too short"
    if out[0] is not None:
        for a, b in zip(*out):
            np.testing.assert_allclose(b, a, rtol=1e-6)
