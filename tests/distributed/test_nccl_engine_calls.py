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


class FakeStream:
    def __init__(self, name, ptr):
        self.name, self.ptr = name, ptr

    def synchronize(self):
        pass

    def wait_event(self, event):
        FakeComm.calls.append(("wait", self.name, event.stream))


class FakeEvent:
    def __init__(self, block=False, disable_timing=False, interprocess=False):
        assert disable_timing and not block and not interprocess
        self.stream, self.done = None, False

    def record(self, stream):
        self.stream = stream.name
        FakeComm.calls.append(("record", stream.name))


COMPUTE = FakeStream("compute", 1234)  # CuPy's current stream
COMM_PTR = 5678  # the group's communication stream


@pytest.fixture
def fake_cupy(monkeypatch):
    nccl = types.SimpleNamespace(NcclCommunicator=FakeComm, get_unique_id=lambda: "uid-1",
                                 NCCL_FLOAT32=7, NCCL_SUM=0, NCCL_AVG=4, available=True)

    def make_stream(non_blocking=False):
        assert non_blocking  # no implicit sync with the null stream: events order it
        return FakeStream("comm", COMM_PTR)

    cuda = types.SimpleNamespace(nccl=nccl, get_current_stream=lambda: COMPUTE,
                                 Device=lambda i: contextlib.nullcontext(),
                                 Stream=make_stream, Event=FakeEvent)
    cupy = types.ModuleType("cupy")
    cupy.ndarray, cupy.cuda = FakeArray, cuda
    cupy_cuda = types.ModuleType("cupy.cuda")
    cupy_cuda.nccl = nccl
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "cupy.cuda", cupy_cuda)
    FakeComm.calls = []
    from volta_cupy import nccl as engine

    monkeypatch.setattr(engine, "_COMM_STREAMS", {})
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
    sends = [c for c in fake_cupy if c[0] in ("send", "recv")]
    assert sends == [("send", a.data.ptr, 5, 7, 1, COMM_PTR),
                     ("recv", a.data.ptr, 5, 7, 1, COMM_PTR)]
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


def test_collectives_run_on_the_comm_stream_ordered_by_events(fake_cupy):
    """Each collective waits for the compute stream's work so far (an event), runs on the
    group's stream, and the compute stream waits for it: at once for the plain calls, at
    ``wait()`` for the started ones (so backward kernels queued meanwhile overlap it)."""
    from volta_cupy import nccl as engine

    from volta_core.distributed import ReduceOp

    pg = engine.NcclProcessGroup(FakeComm(2, "u", 0), 0, 2, 0)
    a = FakeArray(np.ones(4, np.float32))
    fake_cupy.clear()
    pg.all_reduce(a, ReduceOp.SUM)
    assert fake_cupy == [("record", "compute"), ("wait", "comm", "compute"),
                         ("allReduce", a.data.ptr, a.data.ptr, 4, 7, 0, COMM_PTR),
                         ("record", "comm"), ("wait", "compute", "comm")]
    fake_cupy.clear()
    out = FakeArray(np.zeros(2, np.float32))
    work = pg.start_reduce_scatter(out, a, ReduceOp.AVG)
    assert fake_cupy == [("record", "compute"), ("wait", "comm", "compute"),
                         ("reduceScatter", a.data.ptr, out.data.ptr, 2, 7, 4, COMM_PTR),
                         ("record", "comm")]
    assert work.keep and not work.is_completed()  # holds its arrays until wait()
    work.wait()
    assert fake_cupy[-1] == ("wait", "compute", "comm") and work.keep is None
    work.wait()  # a second wait does nothing
    assert fake_cupy[-1] == ("wait", "compute", "comm") and len(fake_cupy) == 5
    fake_cupy.clear()
    work = pg.start_all_gather(FakeArray(np.zeros(8, np.float32)), a)
    pg.broadcast(a, 1)
    names = [c[0] for c in fake_cupy]
    assert names == ["record", "wait", "allGather", "record",
                     "record", "wait", "broadcast", "record", "wait"]
    assert all(c[-1] == COMM_PTR for c in fake_cupy if c[0] in ("allGather", "broadcast"))
    sub = engine.NcclProcessGroup(FakeComm(2, "v", 0), 0, 2, 0)
    assert sub._comm_stream() is pg._comm_stream()  # one stream per GPU: one order
