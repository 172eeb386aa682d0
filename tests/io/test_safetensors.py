"""safetensors state dicts: round trips, dtypes, checksums, corruption, atomic writes."""

from __future__ import annotations

import os

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file
from vt_helpers import to_np

import volta_core as vt
from volta_core.errors import CheckpointError
from volta_core.io import load_metadata, load_state_dict, safetensors_io, save_state_dict

rng = np.random.default_rng(5)


def sample():
    return {"fc.weight": vt.tensor(rng.normal(size=(3, 4)), dtype="float32"),
            "fc.bias": vt.tensor(rng.normal(size=(3,)), dtype="float64"),
            "steps": vt.tensor([1, 2, 3]),
            "mask": vt.tensor([True, False]),
            "half": vt.tensor([1.5, -2.0], dtype="float16"),
            "scalar": vt.tensor(3.25)}


def test_round_trip_keeps_values_dtypes_shapes(tmp_path):
    sd = sample()
    path = tmp_path / "m.safetensors"
    save_state_dict(sd, path, metadata={"author": "test"})
    back = load_state_dict(path)
    assert list(sorted(back)) == sorted(sd)
    for k, t in sd.items():
        assert back[k].dtype == t.dtype and back[k].shape == t.shape, k
        assert back[k].device == "cpu"
        np.testing.assert_array_equal(to_np(back[k]), to_np(t))
    assert load_metadata(path) == {"author": "test"}
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    if os.name == "posix":  # not the 0600 of a temp file
        umask = os.umask(0)
        os.umask(umask)
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_file_is_plain_safetensors_for_other_tools(tmp_path):
    path = tmp_path / "m.safetensors"
    save_state_dict(sample(), path)
    arrays = load_file(str(path))
    np.testing.assert_array_equal(arrays["steps"], [1, 2, 3])
    # and a file written by another tool (no checksum) loads
    other = tmp_path / "other.safetensors"
    save_file({"w": np.arange(6, dtype=np.float32).reshape(2, 3)}, str(other))
    w = load_state_dict(other)["w"]
    assert w.dtype.name == "float32"
    np.testing.assert_array_equal(to_np(w), np.arange(6).reshape(2, 3))


def test_bfloat16_round_trip(tmp_path):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    t = vt.tensor([1.0, -2.5, 3.0e10], dtype="bfloat16")
    path = tmp_path / "bf.safetensors"
    save_state_dict({"x": t}, path)
    back = load_state_dict(path)["x"]
    assert back.dtype.name == "bfloat16"
    np.testing.assert_array_equal(to_np(back).view(np.uint16), to_np(t).view(np.uint16))
    assert to_np(back).dtype == ml_dtypes.bfloat16


def test_bfloat16_fallback_as_uint16(tmp_path, monkeypatch):
    pytest.importorskip("ml_dtypes")
    monkeypatch.setattr(safetensors_io, "_bf16_ok", False)  # an old safetensors
    t = vt.tensor([1.0, -2.5], dtype="bfloat16")
    path = tmp_path / "bf.safetensors"
    save_state_dict({"x": t, "y": vt.ones(2)}, path)
    assert load_file(str(path))["x"].dtype == np.uint16
    back = load_state_dict(path)
    assert back["x"].dtype.name == "bfloat16"
    np.testing.assert_array_equal(to_np(back["x"]).astype(np.float32), [1.0, -2.5])


def test_truncated_file_is_refused_naming_it(tmp_path):
    path = tmp_path / "m.safetensors"
    save_state_dict(sample(), path)
    data = path.read_bytes()
    for cut in (len(data) - 1, len(data) // 2, 20, 3, 0):
        path.write_bytes(data[:cut])
        with pytest.raises(CheckpointError, match="m.safetensors"):
            load_state_dict(path)


def test_every_flipped_byte_is_refused(tmp_path):
    path = tmp_path / "m.safetensors"
    save_state_dict({"w": vt.tensor(rng.normal(size=(4,)), dtype="float32"),
                     "b": vt.tensor([1, 2])}, path, metadata={"k": "v"})
    data = path.read_bytes()
    n = int.from_bytes(data[:8], "little")
    header = data[8:8 + n]
    for i in range(len(data)):
        if 8 <= i < 8 + n and header[i - 8:i - 7] == b" ":
            continue  # header padding: changing a space changes nothing that is read
        bad = bytearray(data)
        bad[i] ^= 0x5A
        path.write_bytes(bytes(bad))
        with pytest.raises(CheckpointError, match="m.safetensors"):
            load_state_dict(path)


def test_missing_file(tmp_path):
    with pytest.raises(CheckpointError, match="nope.safetensors: no such file"):
        load_state_dict(tmp_path / "nope.safetensors")
    assert issubclass(CheckpointError, RuntimeError)


def test_bad_inputs(tmp_path):
    with pytest.raises(TypeError, match=r"'w' \(ndarray\).*vt.save"):
        save_state_dict({"w": np.zeros(2)}, tmp_path / "x.safetensors")
    with pytest.raises(ValueError, match="'volta.sha256'"):
        save_state_dict({}, tmp_path / "x.safetensors", metadata={"volta.sha256": "0"})
    with pytest.raises(ValueError, match="metadata must map str to str"):
        save_state_dict({}, tmp_path / "x.safetensors", metadata={"n": 1})
    assert not (tmp_path / "x.safetensors").exists()


def test_crash_mid_write_keeps_previous_file(tmp_path, monkeypatch):
    path = tmp_path / "m.safetensors"
    save_state_dict({"w": vt.ones(4)}, path)
    before = path.read_bytes()

    def crash(f, data):
        f.write(data[: len(data) // 2])
        raise OSError("disk full")

    monkeypatch.setattr(safetensors_io, "_write_chunks", crash)
    with pytest.raises(OSError, match="disk full"):
        save_state_dict({"w": vt.zeros(100)}, path)
    assert path.read_bytes() == before
    np.testing.assert_array_equal(to_np(load_state_dict(path)["w"]), np.ones(4))
    assert os.listdir(tmp_path) == ["m.safetensors"]  # the temp file was removed
