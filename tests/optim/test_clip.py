"""Gradient clipping and parameter vectors (``volta_core.nn.utils``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from vt_helpers import assert_close, to_np

import volta_core as vt
import volta_core.nn.utils as nn_utils
from volta_core.nn.utils import (
    NonFiniteNormError,
    clip_grad_norm_,
    clip_grad_value_,
    parameters_to_vector,
    vector_to_parameters,
)

rng = np.random.default_rng(3)
GRADS = [rng.normal(size=(3, 4)), rng.normal(size=(5,)), rng.normal(size=(2, 2))]


def with_grads(grads=GRADS, dtype="float64"):
    params = []
    for g in grads:
        p = vt.zeros(*g.shape, dtype=dtype, requires_grad=True)
        p.grad = vt.tensor(g, dtype=dtype)
        params.append(p)
    return params


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf, 0.5])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm(norm_type, max_norm):
    params = with_grads()
    flat = np.concatenate([g.ravel() for g in GRADS])
    total = (np.abs(flat).max() if norm_type == math.inf
             else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type))
    grads_before = [p.grad for p in params]
    out = clip_grad_norm_(params, max_norm, norm_type=norm_type)
    assert isinstance(out, vt.Tensor) and out.shape == ()
    assert_close(out, total, rtol=1e-12)
    coef = min(1.0, max_norm / (total + 1e-6))
    for p, g, before in zip(params, GRADS, grads_before):
        assert p.grad is before  # clipped in place
        assert_close(p.grad, g * coef, rtol=1e-12)


def test_clip_grad_norm_single_tensor_float32_and_none_grads():
    p = with_grads([np.array([3.0, 4.0])], dtype="float32")[0]
    q = vt.zeros(2, requires_grad=True)  # no grad: ignored
    total = clip_grad_norm_([p, q], 1.0)
    assert total.dtype.name == "float32"
    assert_close(total, 5.0)
    assert_close(p.grad, [0.6, 0.8], rtol=1e-5)
    assert q.grad is None
    assert float(clip_grad_norm_(q, 1.0).item()) == 0.0
    assert_close(clip_grad_norm_(p, 10.0), 1.0, rtol=1e-5)


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_clip_grad_norm_nonfinite():
    p = with_grads([np.array([1.0, np.inf])])[0]
    with pytest.raises(NonFiniteNormError, match="non-finite|inf.*error_if_nonfinite=False"):
        clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert isinstance(NonFiniteNormError("x"), RuntimeError)
    out = clip_grad_norm_(p, 1.0)  # scales by the non-finite norm, as PyTorch does
    assert math.isinf(float(out.item()))


def test_clip_grad_value():
    params = with_grads()
    clip_grad_value_(params, 0.5)
    for p, g in zip(params, GRADS):
        assert_close(p.grad, np.clip(g, -0.5, 0.5))
    with pytest.raises(ValueError, match="clip_value must be >= 0"):
        clip_grad_value_(params, -1)


def test_parameters_vector_round_trip():
    a = vt.tensor(rng.normal(size=(2, 3)), requires_grad=True)
    b = vt.tensor(rng.normal(size=(4,)), requires_grad=True)
    v = parameters_to_vector([a, b])
    assert v.shape == (10,)
    assert_close(v, np.concatenate([to_np(a).ravel(), to_np(b)]))
    (v * vt.arange(10, dtype="float64")).sum().backward()  # differentiable
    assert_close(a.grad, np.arange(6.0).reshape(2, 3))
    assert_close(b.grad, np.arange(6.0, 10.0))
    new = vt.arange(10, dtype="float64") * 0.5
    v_a, v_b = a._version[0], b._version[0]
    vector_to_parameters(new, [a, b])
    assert_close(a, np.arange(6.0).reshape(2, 3) * 0.5)
    assert_close(b, np.arange(6.0, 10.0) * 0.5)
    assert a._version[0] == v_a + 1 and b._version[0] == v_b + 1


def test_vector_to_parameters_errors():
    a = vt.zeros(2, 3, requires_grad=True)
    with pytest.raises(TypeError, match="expected vec to be a Tensor"):
        vector_to_parameters(np.zeros(6), [a])
    with pytest.raises(ValueError, match="vec has 5 elements but the 1 parameters hold 6"):
        vector_to_parameters(vt.zeros(5), [a])
    with pytest.raises(TypeError, match=r"item\(s\) \[1\] is a str"):
        parameters_to_vector([a, "b"])


def test_get_total_norm_and_clip_grads_with_norm_match_torch() -> None:
    import torch

    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal((3, 4)), rng.standard_normal(5)]
    for norm_type in (2.0, 1.0, float("inf")):
        vps = [vt.tensor(a, requires_grad=True) for a in arrays]
        tps = [torch.tensor(a, requires_grad=True) for a in arrays]
        for p, a in zip(vps + tps, arrays + arrays):
            p.grad = (vt.tensor(a * 3) if isinstance(p, vt.Tensor) else torch.tensor(a * 3))
        vn = nn_utils.get_total_norm([p.grad for p in vps], norm_type)
        tn = torch.nn.utils.get_total_norm([p.grad for p in tps], norm_type)
        np.testing.assert_allclose(vn.item(), tn.item(), rtol=1e-12)
        nn_utils.clip_grads_with_norm_(vps, 1.0, vn)
        torch.nn.utils.clip_grads_with_norm_(tps, 1.0, tn)
        for v, t in zip(vps, tps):
            np.testing.assert_allclose(v.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    with pytest.warns(FutureWarning):
        nn_utils.clip_grad_norm(vps, 1.0)
