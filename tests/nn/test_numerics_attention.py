"""scaled_dot_product_attention against PyTorch CPU: fully masked rows give 0."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import volta_core as vt
import volta_core.nn.functional as F


def close(got, want, rtol=1e-5, atol=1e-6):
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol,
                               atol=atol, equal_nan=True)


@pytest.mark.parametrize("kind", ["bool", "float", "bool_broadcast_batch"])
def test_fully_masked_row_gives_zero_and_zero_gradients(kind):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s) for s in ((2, 3, 4), (2, 5, 4), (2, 5, 4)))
    mask = np.ones((3, 5), dtype=bool)
    mask[1] = False
    mask[2, :3] = False
    if kind == "float":
        m_np = np.where(mask, 0.0, -np.inf)
    else:
        m_np = mask
    if kind == "bool_broadcast_batch":  # batch dims differ: the unfused path
        k, v = k[:1], v[:1]
    tv = [vt.tensor(a, requires_grad=True) for a in (q, k, v)]
    tt = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
    ov = F.scaled_dot_product_attention(*tv, attn_mask=vt.tensor(m_np))
    ot = TF.scaled_dot_product_attention(*tt, attn_mask=torch.tensor(m_np))
    close(ov, ot)
    assert not np.isnan(ov.detach().numpy()).any()
    ov.sum().backward()
    ot.sum().backward()
    for a, b in zip(tv, tt):
        close(a.grad, b.grad)


def test_fully_masked_row_gradcheck_and_create_graph():
    rng = np.random.default_rng(1)
    mask = vt.tensor(np.array([[True, False], [False, False]]))
    q, k, v = (vt.tensor(rng.standard_normal((2, 2)), requires_grad=True) for _ in range(3))
    assert vt.autograd.gradcheck(
        lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=mask), [q, k, v])
