"""DDP and the collectives front-end in one process, over a 'mirror' engine.

The mirror engine pretends to be ``world_size`` ranks that all hold the same values
(SUM multiplies by the world size, AVG is the identity), so DDP on it must train
exactly like plain single-process training, while exercising buckets, AVG scaling,
``no_sync`` and ``find_unused_parameters`` without starting processes.
"""

from __future__ import annotations

import numpy as np
import pytest

import volta_core as vt
import volta_core.distributed as dist
from volta_core import nn
from volta_core.distributed import CommEngine, ProcessGroup, ReduceOp
from volta_core.nn.parallel import DistributedDataParallel


class MirrorGroup(ProcessGroup):
    def all_reduce(self, array, op):
        if op is ReduceOp.SUM:
            array *= self.world_size
        elif op is ReduceOp.PRODUCT:
            array **= self.world_size

    def broadcast(self, array, src):
        pass

    def all_gather(self, out, array):
        n = array.shape[0]
        for r in range(self.world_size):
            out[r * n:(r + 1) * n] = array

    def reduce_scatter(self, out, array, op):
        n = out.shape[0]
        out[...] = array[self.rank * n:(self.rank + 1) * n] * self.world_size

    def barrier(self):
        pass


class MirrorEngine(CommEngine):
    name = "mirror"
    device_types = ("cpu",)
    needs_store = False

    def new_group(self, rank, world_size, store, device_index, timeout):
        return MirrorGroup(rank, world_size, self.name)


class MirrorPlugin:
    @dist.hookimpl
    def volta_comm_engines(self):
        return [MirrorEngine()]


@pytest.fixture
def group():
    dist.register_engine_plugin(MirrorPlugin(), name="mirror-test")
    dist.init_process_group("mirror", rank=0, world_size=2)
    yield
    dist.destroy_process_group()
    dist.unregister_engine_plugin("mirror-test")


def _mlp(seed=0):
    vt.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 2))


def _params(m):
    return [p.detach().numpy().copy() for p in m.parameters()]


def test_front_end_values_and_errors(group):
    assert dist.get_rank() == 0 and dist.get_world_size() == 2
    assert dist.get_backend() == "mirror" and dist.get_local_rank() == 0
    t = vt.ones(3)
    dist.all_reduce(t, op=ReduceOp.AVG)
    np.testing.assert_allclose(t.numpy(), 1.0)
    dist.all_reduce(t)
    np.testing.assert_allclose(t.numpy(), 2.0)
    outs = [vt.zeros(2), vt.zeros(2)]
    dist.all_gather(outs, vt.tensor([1.0, 2.0]))
    assert [o.tolist() for o in outs] == [[1.0, 2.0], [1.0, 2.0]]
    with pytest.raises(ValueError, match="expected world_size=2"):
        dist.all_gather([vt.zeros(2)], vt.zeros(2))
    with pytest.raises(TypeError, match="AVG needs a floating-point"):
        dist.all_reduce(vt.ones(2, dtype=vt.int64), op="avg")
    with pytest.raises(ValueError, match="unknown reduce op"):
        dist.all_reduce(t, op="median")
    with pytest.raises(dist.DistributedError, match="called twice"):
        dist.init_process_group("mirror", rank=0, world_size=2)


def test_uninitialized_and_unknown_engine_errors():
    with pytest.raises(dist.DistributedError, match="init_process_group"):
        dist.get_rank()
    with pytest.raises(RuntimeError, match="no communication engine named 'gloo'"):
        dist.init_process_group("gloo", rank=0, world_size=1)


def test_ddp_trains_like_one_process_with_buckets_and_no_sync(group):
    model, ref = _mlp(), _mlp()
    ddp = DistributedDataParallel(model, bucket_cap_mb=0.0005)
    assert len(ddp._buckets) > 2
    assert list(ddp.state_dict()) == ["module." + k for k in ref.state_dict()]
    opt = vt.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    ref_opt = vt.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(0)
    for step in range(6):
        x = vt.tensor(rng.standard_normal((8, 4)).astype(np.float32))
        y = vt.tensor(rng.standard_normal((8, 2)).astype(np.float32))
        opt.zero_grad()
        if step % 2:
            with ddp.no_sync():
                ((ddp(x[:4]) - y[:4]) ** 2).mean().backward()
            ((ddp(x[4:]) - y[4:]) ** 2).mean().backward()
        else:
            (((ddp(x) - y) ** 2).mean() * 2).backward()
        opt.step()
        ref_opt.zero_grad()
        (((ref(x) - y) ** 2).mean() * 2).backward()
        ref_opt.step()
    for a, b in zip(_params(model), _params(ref)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 3)
        self.used = nn.Linear(3, 1)
        self.unused = nn.Linear(3, 1)

    def forward(self, x):
        return self.used(self.body(x))


def test_unused_parameters_need_find_unused_parameters(group):
    ddp = DistributedDataParallel(TwoHeads(), bucket_cap_mb=1e-5)
    ddp(vt.ones(2, 3)).sum().backward()
    with pytest.raises(dist.DistributedError, match=r"find_unused_parameters=True.*|unused"):
        ddp(vt.ones(2, 3))

    net = TwoHeads()
    ddp = DistributedDataParallel(net, bucket_cap_mb=1e-5, find_unused_parameters=True)
    for _ in range(2):
        ddp(vt.ones(2, 3)).sum().backward()
    assert net.used.weight.grad is not None
    np.testing.assert_allclose(net.unused.weight.grad.numpy(), 0.0)


class InFlight(dist.PendingWork):
    """A collective still running: its array holds garbage (NaN) until ``wait()``."""

    def __init__(self, log, array, result):
        self.log, self.array, self.result, self.finished = log, array, result, False
        array[...] = np.nan

    def wait(self):
        if not self.finished:
            self.log.append(("wait", self.array.size))
            self.array[...] = self.result
            self.finished = True

    def is_completed(self):
        return self.finished


class DeferredGroup(MirrorGroup):
    """A mirror group whose started all-reduces finish only when waited for, like NCCL's
    on its own stream: whoever reads the result before ``wait()`` reads NaN."""

    log: list = []

    def start_all_reduce(self, array, op):
        self.log.append(("start", array.size))
        result = array * self.world_size if op is ReduceOp.SUM else array.copy()
        return InFlight(self.log, array, result)


class DeferredEngine(MirrorEngine):
    name = "deferred"

    def new_group(self, rank, world_size, store, device_index, timeout):
        return DeferredGroup(rank, world_size, self.name)


class DeferredPlugin:
    @dist.hookimpl
    def volta_comm_engines(self):
        return [DeferredEngine()]


@pytest.fixture
def deferred():
    dist.register_engine_plugin(DeferredPlugin(), name="deferred-test")
    dist.init_process_group("deferred", rank=0, world_size=2)
    DeferredGroup.log = []
    yield DeferredGroup.log
    dist.destroy_process_group()
    dist.unregister_engine_plugin("deferred-test")


def test_ddp_overlaps_bucket_all_reduces_with_backward_and_waits_before_step(deferred):
    """All buckets are started during backward, in reverse parameter order, and waited
    for only when backward ends; the gradients the optimizer reads are the reduced ones."""
    model, ref = _mlp(), _mlp()
    ddp = DistributedDataParallel(model, bucket_cap_mb=0.0005)
    sizes = [b.numel for b in ddp._buckets]
    assert len(sizes) > 2 and ddp._buckets[0].params[0] == len(ddp._params) - 1
    opt = vt.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    ref_opt = vt.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(3)
    # the gradient of the first layer's output comes before the first layer's own
    # parameter gradients: the later layers' buckets must be on their way by then
    def mark(module, args, out):
        out.register_hook(lambda g: deferred.append(("first layer", 0)))

    model[0].register_forward_hook(mark)
    for step in range(4):
        x = vt.tensor(rng.standard_normal((8, 4)).astype(np.float32))
        y = vt.tensor(rng.standard_normal((8, 2)).astype(np.float32))
        deferred.clear()
        opt.zero_grad()
        if step == 3:
            with ddp.no_sync():
                ((ddp(x[:4]) - y[:4]) ** 2).mean().backward()
            deferred.clear()
            ((ddp(x[4:]) - y[4:]) ** 2).mean().backward()
        else:
            (((ddp(x) - y) ** 2).mean() * 2).backward()
        kinds = [k for k, _ in deferred]
        assert kinds.index("first layer") > 0, deferred  # overlap: started before
        kinds.remove("first layer")
        assert kinds == ["start"] * len(sizes) + ["wait"] * len(sizes), deferred
        assert [n for k, n in deferred if k == "start"] == sizes
        assert all(np.isfinite(p.grad.numpy()).all() for p in model.parameters())
        opt.step()
        ref_opt.zero_grad()
        (((ref(x) - y) ** 2).mean() * 2).backward()
        ref_opt.step()
    for a, b in zip(_params(model), _params(ref)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_ddp_first_bucket_is_small_as_in_pytorch(group):
    big = nn.Sequential(nn.Linear(512, 512), nn.Linear(512, 512), nn.Linear(512, 512),
                        nn.Linear(512, 10))
    ddp = DistributedDataParallel(big, bucket_cap_mb=25)
    nbytes = [b.numel * 4 for b in ddp._buckets]
    assert nbytes[0] <= 1024 * 1024 and len(nbytes) == 2, nbytes


def test_async_all_reduce_writes_its_result_at_wait(deferred):
    t = vt.ones(3)
    work = dist.all_reduce(t, op=ReduceOp.AVG, async_op=True)
    assert deferred == [("start", 3)] and not work.is_completed()
    work.wait()
    np.testing.assert_allclose(t.numpy(), 1.0)
    work = dist.all_reduce(t, async_op=True)
    assert work.wait() and work.is_completed()
    np.testing.assert_allclose(t.numpy(), 2.0)


def test_ddp_checks_devices(group):
    with pytest.raises(RuntimeError, match="device_ids"):
        DistributedDataParallel(_mlp(), device_ids=[1])
