"""Checkpoints under careless use and faults: file objects, map_location, refused values,
permissions, symlinks, stale temp files, crafted structures, kills mid-save (issue 19)."""

from __future__ import annotations

import io
import json
import os
import random
import signal
import socket
import time
import warnings

import numpy as np
import pytest
import torch
from safetensors.numpy import save as st_save
from vt_helpers import to_np

import volta_core as vt
from volta_core import nn
from volta_core.errors import CheckpointError
from volta_core.io import checkpoint, load, safetensors_io, save
from volta_core.io.checkpoint import CheckpointValueError


def _write_raw(path, tree, arrays=None):
    """A checkpoint with a valid checksum holding an arbitrary (crafted) object tree."""
    meta = {checkpoint.FORMAT_KEY: checkpoint.FORMAT, checkpoint.OBJECT_KEY:
            tree if isinstance(tree, str) else json.dumps(tree)}
    safetensors_io.atomic_write(path, safetensors_io.encode(arrays or {}, meta))


def _cuda_usable() -> bool:
    try:
        vt.device("cuda")
        return True
    except Exception:
        return False


# -- file objects, weights_only, map_location ----------------------------------------------

def test_binary_file_objects(tmp_path):
    buf = io.BytesIO()
    save({"w": vt.arange(3.0), "epoch": 2}, buf)
    buf.seek(0)
    back = load(buf, weights_only=True)
    assert back["epoch"] == 2 and to_np(back["w"]).tolist() == [0.0, 1.0, 2.0]
    with open(tmp_path / "c.pt", "wb") as f:
        vt.save({"x": vt.ones(2)}, f)
    with open(tmp_path / "c.pt", "rb") as f:
        assert vt.load(f, map_location="cpu", weights_only=False)["x"].shape == (2,)


def test_corrupt_file_object_names_it(tmp_path):
    with open(tmp_path / "bad.pt", "wb") as f:
        f.write(b"\x00" * 40)
    with open(tmp_path / "bad.pt", "rb") as f, pytest.raises(CheckpointError, match="bad.pt"):
        load(f)


def test_map_location_forms(tmp_path):
    path = tmp_path / "c.vt"
    save({"t": vt.ones(2), "dev": vt.device("cpu")}, path)
    forms = ("cpu", vt.device("cpu"), {"cpu": "cpu"}, {vt.device("cpu"): vt.device("cpu")},
             lambda saved: "cpu", lambda storage, loc: storage, lambda storage, loc: None,
             lambda storage, loc: "cpu")
    for loc in forms:
        back = load(path, map_location=loc)
        assert back["t"].device is vt.device("cpu") and back["dev"] is vt.device("cpu")
    with pytest.raises(TypeError, match="map_location"):
        load(path, map_location=3)


@pytest.mark.skipif(_cuda_usable(), reason="checks loading a CUDA checkpoint without CUDA")
def test_cuda_checkpoint_on_a_cpu_machine(tmp_path):
    path = tmp_path / "gpu.vt"
    tree = {"w": {"$tensor": "w", "device": "cuda:0", "requires_grad": True},
            "device": {"$device": "cuda:0"}, "opt": {"$dict": [[0, {"$device": "cuda:1"}]]}}
    _write_raw(path, tree, {"w": np.ones(3, np.float32)})
    with pytest.raises(CheckpointError, match=r"gpu\.vt: entry 'w' was saved on cuda:0.*"
                                              r"map_location='cpu'"):
        load(path)
    for loc in ("cpu", {"cuda:0": "cpu", "cuda:1": "cpu"}, {"cuda": "cpu"},
                lambda storage, loc: storage):
        back = load(path, map_location=loc)
        assert back["w"].device is vt.device("cpu") and back["w"].requires_grad
        assert back["device"] is vt.device("cpu") and back["opt"][0] is vt.device("cpu")


# -- values that could not be loaded back are refused at save time ----------------------------

@pytest.mark.parametrize("value, match", [
    (np.ones(2, np.complex64), "dtype complex64"),
    (np.array(["a", "b"]), "dtype <U1"),
    (np.array([{}, 1], dtype=object), "dtype object"),
    (1 + 2j, "complex"),
    (nn.Linear(2, 2), r"a Linear object; save its state_dict\(\) instead"),
])
def test_unloadable_values_refused_at_save(tmp_path, value, match):
    path = tmp_path / "c.vt"
    save({"epoch": 1}, path)
    with pytest.raises(CheckpointValueError, match=match):
        save({"model": {"w": vt.ones(2)}, "x": value}, path)
    assert load(path) == {"epoch": 1}  # the previous file is intact


def test_module_and_optimizer_objects_say_what_to_save(tmp_path):
    model = nn.Linear(2, 2)
    opt = vt.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(CheckpointError, match=r"<root>: a Linear object; save its state_dict"):
        save(model, tmp_path / "m.vt")
    with pytest.raises(TypeError, match=r"opt: a SGD object; save its state_dict"):
        save({"opt": opt}, tmp_path / "m.vt")


def test_self_referencing_containers_refused(tmp_path):
    loop: list = [1]
    loop.append(loop)
    d: dict = {}
    d["me"] = d
    with pytest.raises(CheckpointError, match=r"a/1: this list contains itself.*b/me: this "
                                              "dict contains itself"):
        save({"a": loop, "b": d}, tmp_path / "c.vt")
    shared = [vt.ones(1)]
    save({"x": shared, "y": shared}, tmp_path / "ok.vt")  # shared, not cyclic: fine


# -- files: permissions, symlinks, missing folders, stale temps -------------------------------

def _outcome(fn):
    try:
        fn()
        return None
    except Exception as e:
        return type(e)


def test_read_only_file_like_torch_save(tmp_path):
    for name in ("v", "t"):
        p = tmp_path / name
        p.write_bytes(b"old")
        p.chmod(0o444)
    got = _outcome(lambda: save({"a": 2}, tmp_path / "v"))
    want = _outcome(lambda: torch.save({"a": 2}, tmp_path / "t"))
    assert got is want  # PermissionError, or None when running as root
    if got is PermissionError:
        assert (tmp_path / "v").read_bytes() == b"old"


def test_symlink_is_written_through(tmp_path):
    (tmp_path / "run3").mkdir()
    target = tmp_path / "run3" / "ckpt"
    save({"epoch": 1}, target)
    link = tmp_path / "latest"
    link.symlink_to(target)
    save({"epoch": 2}, link)
    assert link.is_symlink() and load(target) == {"epoch": 2} and load(link) == {"epoch": 2}
    assert not [f for f in os.listdir(tmp_path) + os.listdir(target.parent)
                if f.endswith(".tmp")]


def test_missing_folder_names_the_target(tmp_path):
    path = tmp_path / "nope" / "c.vt"
    with pytest.raises(FileNotFoundError) as info:
        save({"a": 1}, path)
    assert info.value.filename == str(path) and ".tmp" not in str(info.value)


def test_stale_temp_files_of_crashed_saves_are_removed(tmp_path):
    host = socket.gethostname().replace(".", "_")
    dead = 2 ** 22 + 12345  # above the default pid_max: no such process
    stale = tmp_path / f".c.vt.{host}-{dead}.0a1b.tmp"
    old = tmp_path / ".c.vt.x9y8z7.tmp"  # an older Volta's name, a day old
    live = tmp_path / f".c.vt.{host}-{os.getppid()}.2c3d.tmp"  # a save under way elsewhere
    other = tmp_path / f".d.vt.{host}-{dead}.4e5f.tmp"  # another file's temp
    for p in (stale, old, live, other):
        p.write_bytes(b"partial")
    os.utime(old, (time.time() - 2 * 86400,) * 2)
    save({"a": 1}, tmp_path / "c.vt")
    assert not stale.exists() and not old.exists()
    assert live.exists() and other.exists()


# -- crafted checkpoints: always CheckpointError naming file and entry -------------------------

def _deep(n):
    return "[" * n + "]" * n


@pytest.mark.parametrize("tree, entry", [
    ({"w": {"$tensor": 5}}, "'w'"),
    ({"w": {"$tensor": "missing"}}, "'w'"),
    ({"w": {"$tensor": "t", "device": 3}}, "'w'"),
    ({"w": {"$tensor": "t", "requires_grad": "yes"}}, "'w'"),
    ({"w": {"$tensor": "i", "requires_grad": True}}, "'w'"),  # int tensors have no grad
    ({"w": {"$tensor": "t", "device": "bogus:x"}}, "'w'"),
    ({"w": {"$tensor": "t", "device": "nosuchdevice:0"}}, "'w'"),
    ({"s": {"$dict": [[1]]}}, "'s'"),
    ({"s": {"$dict": "x"}}, "'s'"),
    ({"s": {"$dict": [[{"a": 1}, 2]]}}, "'s'"),
    ({"s": {"$tuple": 3}}, "'s'"),
    ({"a": {"b": {"$dtype": "float128"}}}, "'a/b'"),
    ({"a": [{"$ndarray": "zz"}]}, "'a/0'"),
    ({"d": {"$device": "bogus:x"}}, "'d'"),
    ({"d": {"$weird": 1}}, "'d'"),
    (_deep(150), "nested more than"),
    (_deep(100_000), "object description is corrupt"),
])
def test_malformed_structure_is_a_checkpoint_error(tmp_path, tree, entry):
    path = tmp_path / "crafted.vt"
    _write_raw(path, tree, {"t": np.ones(2, np.float32), "i": np.ones(2, np.int64)})
    with pytest.raises(CheckpointError, match="crafted.vt") as info:
        load(path)
    assert entry in str(info.value)


# -- RNG states and safetensors dtypes -----------------------------------------------------

def test_rng_state_of_an_absent_backend_is_skipped_with_a_warning():
    from volta_core.creation import generator_states, set_generator_states

    vt.manual_seed(3)
    states = generator_states()
    want = to_np(vt.rand(3))
    states["nosuchdevice:0"] = {"state": 1}
    with pytest.warns(UserWarning, match="skipped the generator state of nosuchdevice:0"):
        set_generator_states(states)
    np.testing.assert_array_equal(to_np(vt.rand(3)), want)


def test_every_safetensors_integer_dtype_loads(tmp_path):
    import ml_dtypes

    path = tmp_path / "ints.safetensors"
    arrays = {"u16": np.array([0, 65535], np.uint16), "u32": np.array([0, 2**32 - 1], np.uint32),
              "u64": np.array([0, 2**40], np.uint64), "u8": np.array([255], np.uint8),
              "f8": np.array([1.5, -2.0], ml_dtypes.float8_e4m3fn)}
    path.write_bytes(st_save(arrays))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        back = vt.io.load_state_dict(path)
        back2 = load(path)
    messages = " ".join(str(w.message) for w in caught)
    assert "tensor 'u16' is uint16" in messages and "tensor 'u64' is uint64" in messages
    assert back["u16"].dtype is vt.int32 and to_np(back["u16"]).tolist() == [0, 65535]
    assert back["u32"].dtype.name == "uint32" and to_np(back2["u64"]).tolist() == [0, 2**40]
    assert back["f8"].dtype is vt.float32 and to_np(back["f8"]).tolist() == [1.5, -2.0]


@pytest.mark.parametrize("array, match", [
    (np.array([2**63], np.uint64), r"tensor 'x' is uint64 with values of 2\*\*63"),
    (np.ones(2, np.complex64), "tensor 'x' is complex64"),
])
def test_unreadable_safetensors_dtype_names_file_and_tensor(tmp_path, array, match):
    path = tmp_path / "odd.safetensors"
    path.write_bytes(st_save({"x": array}))
    with pytest.raises(CheckpointError, match=match) as info:
        vt.io.load_state_dict(path)
    assert "odd.safetensors" in str(info.value)


# -- kill during save ------------------------------------------------------------------------

def test_kill_during_save_never_loses_the_previous_checkpoint(tmp_path):
    """100 saves killed (SIGKILL) at random times: the file always loads, and holds one
    whole version; the next save leaves no temp file behind."""
    path = tmp_path / "ckpt.vt"
    n = 1 << 19  # 2 MB of float32: long enough to be killed mid-write often
    save({"step": 0, "w": vt.zeros(n)}, path)
    rnd = random.Random(19)
    torn = 0
    for trial in range(100):
        pid = os.fork()
        if pid == 0:  # the child saves versions until it is killed
            try:
                for step in range(1, 1000):
                    save({"step": step, "w": vt.full((n,), float(step))}, path)
            finally:
                os._exit(0)
        time.sleep(rnd.uniform(0.0, 0.03))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        back = load(path)
        w = to_np(back["w"])
        assert w[0] == w[-1] == back["step"], f"trial {trial}: a mixed or torn checkpoint"
        torn += any(f.endswith(".tmp") for f in os.listdir(tmp_path))
        save(back, path)  # the next save cleans up the killed one's temp file
        assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")], f"trial {trial}"
    assert torn >= 10, f"only {torn} of 100 kills hit a save mid-write"
