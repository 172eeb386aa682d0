"""wgpu arrays, tensors and models survive ``pickle`` and ``copy.deepcopy`` (via the host)."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import volta_wgpu

import volta_core as vt
from volta_core import nn

from .conftest import has


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint32", "bool", "float16", "float64",
                                   "int64"])
def test_array_round_trip(dtype):
    if not has(dtype):
        pytest.skip(f"adapter lacks {dtype}")
    host = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    a = volta_wgpu.asarray(host)
    b = pickle.loads(pickle.dumps(a))
    assert isinstance(b, volta_wgpu.Array)
    assert b.dtype is a.dtype and b.shape == a.shape and b.device == a.device
    np.testing.assert_array_equal(volta_wgpu.to_numpy(b), host)
    c = copy.deepcopy(a[:, 1::2])  # a strided view comes back as its own array
    np.testing.assert_array_equal(volta_wgpu.to_numpy(c), host[:, 1::2])


def test_tensor_pickle_and_deepcopy():
    t = vt.ones(3, device="wgpu")
    u = pickle.loads(pickle.dumps(t))
    assert str(u.device) == "wgpu:0"
    np.testing.assert_array_equal(u.cpu().numpy(), [1, 1, 1])
    w = vt.ones(2, device="wgpu", requires_grad=True)
    w2 = copy.deepcopy(w)
    assert w2.requires_grad and w2.is_leaf
    with vt.no_grad():
        w2.add_(1)  # the copy owns its memory
    np.testing.assert_array_equal(w.detach().cpu().numpy(), [1, 1])


def test_model_deepcopy_and_pickle_keep_tied_weights():
    m = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2)).to("wgpu")
    m[1].weight = m[0].weight
    x = vt.ones(1, 2, device="wgpu")
    want = m(x).detach().cpu().numpy()
    for c in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert c[0].weight is c[1].weight
        assert str(c[0].weight.device) == "wgpu:0"
        np.testing.assert_array_equal(c(x).detach().cpu().numpy(), want)
    with vt.no_grad():
        c[0].weight.add_(1)
    np.testing.assert_array_equal(m(x).detach().cpu().numpy(), want)
