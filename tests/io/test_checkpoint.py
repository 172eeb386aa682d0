"""``vt.io.save`` / ``vt.io.load``: nested checkpoints without pickle."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import load_file
from vt_helpers import to_np

import volta_core as vt
from volta_core.errors import CheckpointError
from volta_core.io import checkpoint, load, safetensors_io, save
from volta_core.optim import Adam
from volta_core.optim.lr_scheduler import StepLR


def test_nested_round_trip_keeps_types(tmp_path):
    w = vt.tensor(np.arange(6.0).reshape(2, 3), dtype="float32")
    obj = {
        "model": {"fc.weight": w, "fc.bias": vt.zeros(2)},
        "shared": [w, w],
        "epoch": 7, "lr": 1e-3, "best": float("inf"), "name": "run-1", "done": False,
        "none": None, "betas": (0.9, 0.999), "by_index": {0: {"step": 3}, 1: {"step": 4}},
        "mixed_keys": {"$weird": 1, "fine": [1, 2.5, "x"]},
        "huge_int": 2 ** 127 + 5, "dtype": vt.float16, "device": vt.device("cpu"),
        "grad_leaf": vt.ones(2, requires_grad=True), "np": np.arange(3),
        "big_endian": np.arange(4, dtype=">f4"), "np_scalar": np.int64(4),
    }
    path = tmp_path / "ckpt.vt"
    save(obj, path)
    back = load(path)
    assert back["epoch"] == 7 and back["lr"] == 1e-3 and back["best"] == float("inf")
    assert back["name"] == "run-1" and back["done"] is False and back["none"] is None
    assert back["betas"] == (0.9, 0.999) and isinstance(back["betas"], tuple)
    assert back["by_index"] == {0: {"step": 3}, 1: {"step": 4}}
    assert back["mixed_keys"] == {"$weird": 1, "fine": [1, 2.5, "x"]}
    assert back["huge_int"] == 2 ** 127 + 5
    assert back["dtype"] is vt.float16 and back["device"] is vt.device("cpu")
    assert back["np_scalar"] == 4
    np.testing.assert_array_equal(back["np"], np.arange(3))
    np.testing.assert_array_equal(back["big_endian"], np.arange(4))
    got = back["model"]["fc.weight"]
    assert got.dtype.name == "float32" and got.shape == (2, 3)
    np.testing.assert_array_equal(to_np(got), to_np(w))
    assert back["shared"][0] is back["shared"][1] is got  # identity kept, stored once
    assert back["grad_leaf"].requires_grad and not got.requires_grad
    assert len(load_file(str(path))) == 5  # w, bias, grad_leaf, np, big_endian


def test_unsupported_values_are_all_listed(tmp_path):
    with pytest.raises(TypeError, match=r"never pickled.*a/fn: function; b/1: set"):
        save({"a": {"fn": lambda: 0}, "b": [1, {2}]}, tmp_path / "x.vt")
    assert not (tmp_path / "x.vt").exists()


def test_map_location(tmp_path):
    path = tmp_path / "c.vt"
    save({"t": vt.ones(2)}, path)
    for loc in (None, "cpu", vt.device("cpu"), {"cpu": "cpu"}, lambda saved: saved):
        assert load(path, map_location=loc)["t"].device is vt.device("cpu")


def test_loading_never_runs_code(tmp_path):
    """The object is JSON; a crafted payload is data, not something to call."""
    path = tmp_path / "c.vt"
    save({"x": 1}, path)
    arrays, meta = safetensors_io.read_file(path)
    meta = {k: v for k, v in meta.items() if k != safetensors_io.SHA_KEY}
    meta[checkpoint.OBJECT_KEY] = json.dumps({"__reduce__": "os.system", "args": ["false"]})
    safetensors_io.atomic_write(path, safetensors_io.encode(arrays, meta))
    assert load(path) == {"__reduce__": "os.system", "args": ["false"]}


def test_plain_safetensors_loads_as_dict(tmp_path):
    path = tmp_path / "m.safetensors"
    vt.io.save_state_dict({"w": vt.ones(3)}, path)
    back = load(path)
    assert list(back) == ["w"] and back["w"].shape == (3,)


def test_corrupt_checkpoint_refused(tmp_path):
    path = tmp_path / "c.vt"
    save({"t": vt.ones(8), "epoch": 3}, path)
    data = bytearray(path.read_bytes())
    data[-3] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"c\.vt: checksum mismatch"):
        load(path)


def test_unknown_format_refused(tmp_path):
    path = tmp_path / "c.vt"
    meta = {checkpoint.FORMAT_KEY: "volta-checkpoint-99", checkpoint.OBJECT_KEY: "{}"}
    safetensors_io.atomic_write(path, safetensors_io.encode({}, meta))
    with pytest.raises(CheckpointError, match="unknown checkpoint format"):
        load(path)


def test_optimizer_and_scheduler_state_survive(tmp_path):
    p = vt.tensor([1.0, 2.0], requires_grad=True)
    opt = Adam([p], lr=0.1, amsgrad=True)
    sched = StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(3):
        opt.zero_grad()
        (p * p).sum().backward()
        opt.step()
        sched.step()
    save({"opt": opt.state_dict(), "sched": sched.state_dict()}, tmp_path / "c.vt")
    back = load(tmp_path / "c.vt")
    q = vt.tensor(to_np(p), requires_grad=True)
    opt2 = Adam([q], lr=0.1, amsgrad=True)
    sched2 = StepLR(opt2, step_size=2, gamma=0.5)
    opt2.load_state_dict(back["opt"])
    sched2.load_state_dict(back["sched"])
    assert opt2.param_groups[0]["betas"] == (0.9, 0.999)
    assert opt2.state[q]["step"] == 3 and sched2.get_last_lr() == sched.get_last_lr()
    for k in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
        np.testing.assert_array_equal(to_np(opt2.state[q][k]), to_np(opt.state[p][k]))
