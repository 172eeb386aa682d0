"""Files written by ``torch.save`` load in Volta (weights-only rules: nothing is run)."""

from __future__ import annotations

import io

import numpy as np
import pytest

import volta_core as vt
from volta_core.errors import CheckpointError

torch = pytest.importorskip("torch")


def _values(t):
    return t.detach().float().numpy() if t.dtype is vt.bfloat16 else t.detach().numpy()


def test_state_dicts_and_tensors_of_every_dtype(tmp_path):
    tm = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    opt = torch.optim.Adam(tm.parameters())
    tm(torch.randn(4, 3)).sum().backward()
    opt.step()
    base = torch.arange(24.0).reshape(4, 6)
    obj = {"model": tm.state_dict(), "opt": opt.state_dict(), "epoch": 7, "best": 0.5,
           "names": ["a", "b"], "size": torch.Size([2, 3]), "dtype": torch.float16,
           "view": base[1:3, ::2], "t": base.t(), "scalar": torch.tensor(3.5),
           "empty": torch.zeros(0, 4), "np": np.float64(0.25), "arr": np.arange(3),
           "param": torch.nn.Parameter(torch.ones(2))}
    for dt in (torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.int32,
               torch.int64, torch.uint8, torch.bool):
        obj[str(dt)] = (torch.arange(6) % 3).to(dt).reshape(2, 3)
    path = tmp_path / "ckpt.pt"
    torch.save(obj, path)
    got = vt.load(path)
    vm = vt.nn.Sequential(vt.nn.Linear(3, 2), vt.nn.BatchNorm1d(2))
    assert vm.load_state_dict(got["model"]) == ([], [])
    for (k, a), b in zip(vm.state_dict().items(), tm.state_dict().values()):
        np.testing.assert_array_equal(_values(a), b.numpy(), err_msg=k)
    vopt = vt.optim.Adam(vm.parameters())
    vopt.load_state_dict(got["opt"])
    assert got["opt"]["state"][0]["step"].item() == 1.0
    assert (got["epoch"], got["best"], got["names"], got["size"]) == (7, 0.5, ["a", "b"],
                                                                      (2, 3))
    assert got["dtype"] is vt.float16 and got["np"] == 0.25 and got["arr"].tolist() == [0, 1, 2]
    for k in ("view", "t", "scalar", "empty"):
        assert got[k].shape == tuple(obj[k].shape)
        np.testing.assert_array_equal(got[k].numpy(), obj[k].numpy())
    assert got["param"].requires_grad and isinstance(got["param"], vt.nn.Parameter)
    for dt in (torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.int32,
               torch.int64, torch.uint8, torch.bool):
        t = got[str(dt)]
        assert t.dtype.name == str(dt).replace("torch.", "")
        np.testing.assert_array_equal(_values(t), obj[str(dt)].float().numpy()
                                      if dt is torch.bfloat16 else obj[str(dt)].numpy())


def test_file_objects_map_location_and_refusals(tmp_path):
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buf)
    buf.seek(0)
    assert vt.load(buf, map_location="cpu")["w"].tolist() == [1.0, 1.0]
    buf.seek(0)
    seen = []
    vt.load(buf, map_location=lambda storage, loc: seen.append(loc))
    assert seen == ["cpu"]
    torch.save(torch.nn.Linear(2, 2), tmp_path / "model.pt")
    with pytest.raises(CheckpointError, match="torch.nn.modules.linear.Linear"):
        vt.load(tmp_path / "model.pt")  # a pickled module would need its code run
    torch.save({"w": torch.ones(2)}, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(CheckpointError, match="before PyTorch 1.6"):
        vt.load(tmp_path / "old.pt")
