"""Weights and optimizer trajectories produced by PyTorch (see fixtures/make_torch_fixture.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from vt_helpers import to_np

import volta_core as vt
from volta_core import optim
from volta_core.io import StateDictMapper, load_metadata, load_state_dict

FIXTURES = Path(__file__).parent / "fixtures"


def test_torch_weights_give_identical_outputs():
    nn = vt.nn
    model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.Flatten(),
                          nn.Linear(32, 8), nn.ReLU(), nn.Linear(8, 3))
    weights = load_state_dict(FIXTURES / "torch_model.safetensors")
    assert load_metadata(FIXTURES / "torch_model.safetensors") == {"format": "pt"}
    result = model.load_state_dict(weights)
    assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
    io = load_state_dict(FIXTURES / "torch_io.safetensors")
    with vt.no_grad():
        out = model(io["input"])
    np.testing.assert_allclose(to_np(out), to_np(io["output"]), rtol=1e-5, atol=1e-6)


def test_torch_weights_through_a_mapper_into_renamed_model():
    """The same weights under other names: map PyTorch's keys onto a named model."""
    nn = vt.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3, padding=1)
            self.hidden = nn.Linear(32, 8)
            self.head = nn.Linear(8, 3)

        def forward(self, x):
            h = self.conv(x).relu().reshape(x.shape[0], -1)
            return self.head(self.hidden(h).relu())

    mapper = (StateDictMapper().rename_regex(r"^0\.", "conv.")
              .rename_regex(r"^3\.", "hidden.").rename_regex(r"^5\.", "head."))
    model = Net()
    model.load_state_dict(mapper(load_state_dict(FIXTURES / "torch_model.safetensors")))
    io = load_state_dict(FIXTURES / "torch_io.safetensors")
    with vt.no_grad():
        np.testing.assert_allclose(to_np(model(io["input"])), to_np(io["output"]),
                                   rtol=1e-5, atol=1e-6)


def test_torch_bfloat16_reads_bit_exact():
    pytest.importorskip("ml_dtypes")
    io = load_state_dict(FIXTURES / "torch_io.safetensors")
    assert io["bf16"].dtype.name == "bfloat16"
    np.testing.assert_array_equal(to_np(io["bf16"]).astype(np.float32), to_np(io["bf16_as_f32"]))


def _configs():
    meta = load_metadata(FIXTURES / "torch_optim.safetensors")
    return json.loads(meta["configs"]), int(meta["steps"])


@pytest.mark.parametrize("name", sorted(_configs()[0]))
def test_optimizers_match_pytorch(name):
    configs, steps = _configs()
    cls, kwargs = configs[name]
    ref = load_state_dict(FIXTURES / "torch_optim.safetensors")
    p = vt.tensor(to_np(ref["p0"]), requires_grad=True)
    opt = getattr(optim, cls)([p], **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        d = p - ref["target"]
        (ref["c"] * d * d).sum().backward()
        opt.step()
    # PyTorch's Muon orthogonalises in bfloat16; everything else is float64 throughout
    tol = dict(rtol=2e-2, atol=2e-3) if cls == "Muon" else dict(rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(to_np(p), to_np(ref[f"{name}.final"]), **tol)
