"""The NCCL engine's new calls (send/recv, subgroups), checked against a stand-in for CuPy.

No GPU here: a fake ``cupy`` module records what the process group asks NCCL to do, so a
wrong argument order or a misspelt binding fails on the CPU instead of on the GPU machine.
"""

from __future__ import annotations

import contextlib
import sys
import types

import numpy as np
import pytest


class FakeArray:
    def __init__(self, values, device=0):
        self.values = np.ascontiguousarray(values)
        self.device = types.SimpleNamespace(id=device)
        self.flags = types.SimpleNamespace(c_contiguous=True)
        self.data = types.SimpleNamespace(ptr=id(self))
        self.size, self.dtype = self.values.size, self.values.dtype


class FakeComm:
    calls: list = []

    def __init__(self, n, uid, rank):
        FakeComm.calls.append(("init", n, uid, rank))

    def __getattr__(self, name):
        return lambda *args: FakeComm.calls.append((name, *args))


@pytest.fixture
def fake_cupy(monkeypatch):
    nccl = types.SimpleNamespace(NcclCommunicator=FakeComm, get_unique_id=lambda: "uid-1",
                                 NCCL_FLOAT32=7, NCCL_SUM=0, NCCL_AVG=4, available=True)
    stream = types.SimpleNamespace(ptr=1234, synchronize=lambda: None)
    cuda = types.SimpleNamespace(nccl=nccl, get_current_stream=lambda: stream,
                                 Device=lambda i: contextlib.nullcontext())
    cupy = types.ModuleType("cupy")
    cupy.ndarray, cupy.cuda = FakeArray, cuda
    cupy_cuda = types.ModuleType("cupy.cuda")
    cupy_cuda.nccl = nccl
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "cupy.cuda", cupy_cuda)
    FakeComm.calls = []
    return FakeComm.calls


class DictStore:
    def __init__(self):
        self.data = {}

    def set(self, key, value):
        self.data[key] = value

    def get(self, key):
        return self.data[key]


def test_send_recv_and_subgroups_call_nccl_with_the_right_arguments(fake_cupy):
    from volta_cupy import nccl as engine

    pg = engine.NcclProcessGroup(FakeComm(2, "u", 0), 0, 2, 0)
    a = FakeArray(np.zeros(5, np.float32))
    pg.send(a, 1)
    pg.recv(a, 1)
    assert fake_cupy[-2:] == [("send", a.data.ptr, 5, 7, 1, 1234),
                              ("recv", a.data.ptr, 5, 7, 1, 1234)]
    with pytest.raises(engine.DistributedError, match="cuda:0"):
        pg.send(FakeArray(np.zeros(2, np.float32), device=1), 1)
    store = DictStore()
    sub = pg.new_subgroup([0, 1], store, 3, None)
    assert (sub.rank, sub.world_size) == (0, 2)
    assert fake_cupy[-1] == ("init", 2, "uid-1", 0)
    assert "nccl/subgroup/3/unique_id" in store.data
    other = engine.NcclProcessGroup(FakeComm(2, "u", 1), 1, 2, 0)
    assert other.new_subgroup([0], store, 4, None) is None  # not a member
    sub1 = other.new_subgroup([0, 1], store, 3, None)  # reads rank 0's unique id
    assert (sub1.rank, fake_cupy[-1]) == (1, ("init", 2, "uid-1", 1))
