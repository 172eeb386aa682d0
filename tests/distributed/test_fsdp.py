"""FullyShardedDataParallel, ZeroRedundancyOptimizer and sharded checkpoints.

The multi-rank tests run small jobs under mpirun (MPI engine, CPU): 4 ranks must train a
small transformer like one process on the concatenated batch, and a checkpoint saved at
world size 4 must resume at world size 2 with bit-identical parameters. The in-process
tests use a one-rank engine to check the bookkeeping (views freed after forward,
gradients of unused parameters, state dicts, errors) without starting processes.
"""

from __future__ import annotations

import numpy as np
import pytest
from dist_helpers import mpi_skip_reason, run_mpi

import volta_core as vt
import volta_core.distributed as dist
from volta_core import nn
from volta_core.distributed import CommEngine, ProcessGroup
from volta_core.distributed.fsdp import (
    FSDP,
    BackwardPrefetch,
    FullyShardedDataParallel,
    ModuleWrapPolicy,
    size_based_auto_wrap_policy,
)

needs_mpi = pytest.mark.skipif(mpi_skip_reason() is not None, reason=mpi_skip_reason() or "")


# -- multi-rank jobs (mpirun) ---------------------------------------------------------------

@needs_mpi
@pytest.mark.parametrize("mode", ["fsdp", "zero", "fsdp-deferred", "zero-deferred"])
def test_four_ranks_train_like_one_process(mode):
    """``-deferred``: started collectives land only when waited for (NaN before), as on
    NCCL's own stream, so DDP (under ZeRO) and FSDP (with backward prefetch) must wait
    before reading gradients or gathered parameters."""
    out = run_mpi("fsdp_train.py", mode, n=4, timeout=90)
    assert out.returncode == 0, out.stdout + out.stderr
    want = "FSDP matches" if mode.startswith("fsdp") else "ZeRO matches"
    for rank in range(4):
        assert f"rank {rank}: {want} single process" in out.stdout, out.stdout + out.stderr


@needs_mpi
def test_checkpoint_saved_at_four_ranks_resumes_at_two(tmp_path):
    out = run_mpi("fsdp_train.py", "save", str(tmp_path), n=4, timeout=90)
    assert out.returncode == 0, out.stdout + out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "buffers.safetensors", "expected.npz", "index.json",
        *[f"rank-{r:05d}-of-00004.safetensors" for r in range(4)]]
    out = run_mpi("fsdp_train.py", "resume", str(tmp_path), n=2, timeout=90)
    assert out.returncode == 0, out.stdout + out.stderr
    for rank in range(2):
        assert f"rank {rank}: resumed bit-exactly" in out.stdout, out.stdout + out.stderr


@needs_mpi
def test_subgroups_point_to_point_and_object_collectives():
    out = run_mpi("p2p_groups.py", n=4, timeout=90)
    assert out.returncode == 0, out.stdout + out.stderr
    for rank in range(4):
        assert f"rank {rank}: p2p and groups OK" in out.stdout, out.stdout + out.stderr


# -- one process --------------------------------------------------------------------------

class SoloGroup(ProcessGroup):
    """A one-rank group: every collective is the identity."""

    def all_reduce(self, array, op):
        pass

    def broadcast(self, array, src):
        pass

    def all_gather(self, out, array):
        out[...] = array

    def reduce_scatter(self, out, array, op):
        out[...] = array

    def barrier(self):
        pass


class SoloEngine(CommEngine):
    name, device_types, needs_store = "solo", ("cpu",), False

    def new_group(self, rank, world_size, store, device_index, timeout):
        return SoloGroup(rank, world_size, self.name)


class SoloPlugin:
    @dist.hookimpl
    def volta_comm_engines(self):
        return [SoloEngine()]


@pytest.fixture
def solo():
    dist.register_engine_plugin(SoloPlugin(), name="solo-test")
    dist.init_process_group("solo", rank=0, world_size=1)
    yield
    dist.destroy_process_group()
    dist.unregister_engine_plugin("solo-test")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        return self.norm(x + self.fc(x).tanh())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(3, 4)
        self.blocks = nn.Sequential(Block(), Block())
        self.unused = nn.Linear(4, 4)
        self.out = nn.Linear(4, 2)
        self.register_buffer("scale", vt.ones(1))

    def forward(self, x):
        return self.out(self.blocks(self.inp(x))) * self.scale


def _net():
    vt.manual_seed(0)
    return Net()


@pytest.mark.parametrize("prefetch", [None, BackwardPrefetch.BACKWARD_PRE])
def test_fsdp_one_rank_trains_like_the_plain_model(solo, prefetch):
    ref = _net()
    model = FSDP(_net(), auto_wrap_policy=ModuleWrapPolicy({Block}), backward_prefetch=prefetch)
    units = [m for m in model.modules() if isinstance(m, FullyShardedDataParallel)]
    assert len(units) == 3
    assert all(isinstance(model.blocks[i], FullyShardedDataParallel) for i in range(2))
    assert len(list(model.parameters())) == 3  # one flat shard per unit
    opt = vt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    ref_opt = vt.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(0)
    for _ in range(4):
        x = vt.tensor(rng.standard_normal((5, 3)).astype(np.float32))
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()
        ref_opt.zero_grad()
        ref(x).square().mean().backward()
        ref_opt.step()
    got, want = model.state_dict(), ref.state_dict()
    assert list(got) == list(want) or set(got) == set(want)
    for k in want:
        np.testing.assert_allclose(got[k].numpy(), want[k].numpy(), rtol=1e-6, atol=1e-7,
                                   err_msg=k)


def test_gathered_parameters_are_freed_and_unused_ones_get_zero_grads(solo):
    model = FSDP(_net(), auto_wrap_policy=ModuleWrapPolicy({Block}))
    out = model(vt.ones(2, 3))
    block = model.blocks[0]
    assert block._full is None and block.module.fc.weight.numel() == 0  # freed after forward
    assert model._full is not None  # the root keeps its parameters for backward
    out.sum().backward()
    assert all(u._full is None for u in model._units)  # everything freed after backward
    assert all(p.grad is not None for p in model.parameters())
    # the root unit's 'unused' layer got no gradient: its share of the flat grad is zero
    e = next(e for e in model._entries if e.fqn == "unused.weight")
    np.testing.assert_array_equal(model.flat_param.grad.numpy()[e.offset:e.offset + e.numel], 0)


def test_a_root_without_parameters_of_its_own(solo):
    vt.manual_seed(0)
    ref = nn.Sequential(Block(), Block())
    vt.manual_seed(0)
    model = FSDP(nn.Sequential(Block(), Block()), auto_wrap_policy=ModuleWrapPolicy({Block}))
    assert model.flat_param is None
    x = vt.ones(2, 4)
    model(x).square().sum().backward()
    ref(x).square().sum().backward()
    g = model.module[1].flat_param.grad.numpy()
    e = next(e for e in model.module[1]._entries if e.fqn == "fc.weight")
    np.testing.assert_allclose(g[e.offset:e.offset + e.numel].reshape(e.shape),
                               ref[1].fc.weight.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_full_state_dict_round_trip_and_errors(solo):
    model = FSDP(_net(), auto_wrap_policy=size_based_auto_wrap_policy)
    sd = model.state_dict()
    assert "blocks.0.fc.weight" in sd and "scale" in sd
    plain = _net()
    plain.load_state_dict(sd)
    changed = {k: v + 1 for k, v in sd.items()}
    model.load_state_dict(changed)
    for k, v in model.state_dict().items():
        np.testing.assert_allclose(v.numpy(), changed[k].numpy())
    with pytest.raises(RuntimeError, match="missing keys"):
        model.load_state_dict({k: v for k, v in sd.items() if k != "out.bias"})
    with pytest.raises(TypeError, match="dtypes"):
        FSDP(nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2).double()))
    frozen = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    frozen[0].weight.requires_grad_(False)
    with pytest.raises(RuntimeError, match="frozen"):
        FSDP(frozen)


def test_queue_callback_needs_a_running_backward():
    from volta_core.autograd.engine import queue_callback

    with pytest.raises(RuntimeError, match="no backward"):
        queue_callback(lambda: None)
    ran = []
    x = vt.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: queue_callback(lambda: ran.append(x.grad is not None)))
    y.sum().backward()
    assert ran == [True]  # ran once, after the leaf's gradient was accumulated


def test_mixed_precision_bf16_parameters_float32_shards(solo):
    pytest.importorskip("ml_dtypes")
    from volta_core.distributed.fsdp import MixedPrecision

    mp = MixedPrecision(param_dtype=vt.bfloat16, reduce_dtype=vt.float32,
                        buffer_dtype=vt.bfloat16)
    ref, model = _net(), FSDP(_net(), auto_wrap_policy=ModuleWrapPolicy({Block}),
                              mixed_precision=mp)
    seen = []
    model.blocks[0].module.fc.register_forward_hook(lambda m, a, o: seen.append(o.dtype))
    out = model(vt.ones(4, 3))
    assert seen == [vt.bfloat16] and out.dtype == vt.bfloat16
    out.float().square().mean().backward()
    ref(vt.ones(4, 3)).square().mean().backward()
    assert all(p.dtype == vt.float32 and p.grad.dtype == vt.float32
               for p in model.parameters())
    e = next(e for e in model._entries if e.fqn == "out.weight")
    got = model.flat_param.grad.numpy()[e.offset:e.offset + e.numel].reshape(e.shape)
    np.testing.assert_allclose(got, ref.out.weight.grad.numpy(), rtol=0.05, atol=0.02)


@pytest.mark.parametrize("layer", ["block", "transformer"])
def test_autograd_graph_does_not_keep_gathered_parameters_alive(solo, layer):
    """After forward, a unit's gathered parameters are freed although backward needs them:
    the graph saves the parameter tensors, whose values are swapped out and back in."""
    import gc
    import weakref

    vt.manual_seed(0)
    if layer == "block":
        net, cls = nn.Sequential(nn.Linear(3, 4), Block(), Block()), Block
    else:
        enc = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        net, cls = nn.Sequential(nn.Linear(3, 8), enc, nn.TransformerEncoderLayer(
            8, 2, 16, dropout=0.0, batch_first=True)), nn.TransformerEncoderLayer
    model = FSDP(net, auto_wrap_policy=ModuleWrapPolicy({cls}))
    refs = []
    for unit in (model.module[1], model.module[2]):
        unit.module.register_forward_hook(lambda m, a, o, u=unit: refs.append(weakref.ref(u._full)))
    x = vt.ones(2, 5, 3) if layer == "transformer" else vt.ones(2, 3)
    out = model(x)
    gc.collect()
    assert len(refs) == 2 and all(r() is None for r in refs)  # freed, graph still alive
    out.square().sum().backward()
    assert all(p.grad is not None and bool((p.grad != 0).any()) for p in model.parameters())


@needs_mpi
def test_fsdp_scaling_benchmark_runs_on_the_cpu():
    """benchmarks/fsdp_scaling.py --device cpu --smoke: the GPU script's logic, end to end."""
    import subprocess
    import sys

    from dist_helpers import ROOT, job_env

    cmd = [sys.executable, str(ROOT / "benchmarks" / "fsdp_scaling.py"), "--device", "cpu",
           "--smoke", "--gpus", "2", "--steps", "1", "--warmup", "1", "--no-torch",
           "--timeout", "100"]
    out = subprocess.run(cmd, env=job_env(), capture_output=True, text=True, timeout=150,
                         cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "engine check (collectives, subgroups, send/recv, FSDP == 1 process, " \
           "checkpoint): ok" in out.stdout, out.stdout + out.stderr
    assert "DDP transformer : 1 GPU" in out.stdout and "FSDP step" in out.stdout
    assert "DDP under no_sync (no communication)" in out.stdout, out.stdout


def test_no_sync_accumulates_then_reduces_the_sum(solo):
    ref, model = _net(), FSDP(_net(), auto_wrap_policy=ModuleWrapPolicy({Block}))
    x = vt.tensor(np.random.default_rng(1).standard_normal((6, 3)).astype(np.float32))
    with model.no_sync():
        model(x[:3]).square().sum().backward()
    assert all(p.grad is None for p in model.parameters())  # nothing reduced yet
    model(x[3:]).square().sum().backward()
    ref(x).square().sum().backward()
    want = {n: np.zeros(p.shape, np.float32) if p.grad is None else p.grad.numpy()
            for n, p in ref.named_parameters()}  # 'unused' gets no gradient
    for unit in model._units:
        prefix = next(clean for clean, u in model._unit_prefixes() if u is unit)
        g = unit.flat_param.grad.numpy()
        for e in unit._entries:
            name = f"{prefix}.{e.fqn}" if prefix else e.fqn
            np.testing.assert_allclose(g[e.offset:e.offset + e.numel].reshape(e.shape),
                                       want[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_manual_wrapping_and_a_frozen_unit_in_the_middle(solo):
    """A frozen unit is gathered again for backward (its inputs' gradients need it)."""
    vt.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), Block(), nn.Linear(4, 2))
    vt.manual_seed(0)
    ref = nn.Sequential(nn.Linear(3, 4), Block(), nn.Linear(4, 2))
    net[1].requires_grad_(False)
    ref[1].requires_grad_(False)
    net[1] = FSDP(net[1])  # wrapped by hand before the parent
    model = FSDP(net)
    units = [m for m in model.modules() if isinstance(m, FullyShardedDataParallel)]
    assert [u.flat_param.requires_grad for u in units] == [True, False]
    x = vt.ones(2, 3)
    model(x).square().sum().backward()
    ref(x).square().sum().backward()
    g = model.flat_param.grad.numpy()
    e = next(e for e in model._entries if e.fqn == "0.weight")
    np.testing.assert_allclose(g[e.offset:e.offset + e.numel].reshape(e.shape),
                               ref[0].weight.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert net[1].flat_param.grad is None


def test_sharded_checkpoint_errors(solo, tmp_path):
    from volta_core.distributed import checkpoint
    from volta_core.errors import CheckpointError

    model = FSDP(_net(), auto_wrap_policy=ModuleWrapPolicy({Block}))
    opt = vt.optim.Adam(model.parameters(), lr=0.1)
    model(vt.ones(2, 3)).sum().backward()
    opt.step()
    checkpoint.save(tmp_path / "ok", model, opt)
    index = (tmp_path / "ok" / "index.json").read_text()
    assert '"world_size": 1' in index and '"blocks.1.norm.weight"' in index
    fresh = FSDP(_net(), auto_wrap_policy=ModuleWrapPolicy({Block}))
    fresh_opt = vt.optim.Adam(fresh.parameters(), lr=0.5)
    checkpoint.load(tmp_path / "ok", fresh, fresh_opt)
    assert fresh_opt.param_groups[0]["lr"] == 0.1
    for p, q in zip(fresh.parameters(), model.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
        np.testing.assert_array_equal(fresh_opt.state[p]["exp_avg"].numpy(),
                                      opt.state[q]["exp_avg"].numpy())
    (tmp_path / "ok" / "index.json").unlink()  # as if the save had been interrupted
    with pytest.raises(CheckpointError, match="no index.json"):
        checkpoint.load(tmp_path / "ok", fresh)
    other = FSDP(nn.Sequential(nn.Linear(3, 4)))
    checkpoint.save(tmp_path / "other", other)
    with pytest.raises(CheckpointError, match="does not match the model"):
        checkpoint.load(tmp_path / "other", fresh)
    with pytest.raises(TypeError, match="FullyShardedDataParallel"):
        checkpoint.save(tmp_path / "plain", _net())
    full = checkpoint.full_state_dict(model)
    assert set(full) == set(_net().state_dict())


def test_full_optimizer_state_dict_matches_a_plain_optimizer(solo):
    from volta_core.distributed import checkpoint

    ref, model = _net(), FSDP(_net(), auto_wrap_policy=ModuleWrapPolicy({Block}))
    opt = vt.optim.Adam(model.parameters(), lr=0.1)
    ref_opt = vt.optim.Adam(ref.parameters(), lr=0.1)
    for m, o in ((model, opt), (ref, ref_opt)):
        m(vt.ones(2, 3)).square().sum().backward()
        o.step()
    full = checkpoint.full_optim_state_dict(model, opt)
    plain = ref_opt.state_dict()
    # FSDP steps the flat parameter as a whole: 'unused' (no gradient) has state too
    assert set(plain["state"]) < set(full["state"])
    for i, s in plain["state"].items():
        assert full["state"][i]["step"] == s["step"]
        np.testing.assert_allclose(full["state"][i]["exp_avg"].numpy(), s["exp_avg"].numpy(),
                                   rtol=1e-6, atol=1e-8)
    fresh = FSDP(_net(), auto_wrap_policy=ModuleWrapPolicy({Block}))
    fresh_opt = vt.optim.Adam(fresh.parameters(), lr=0.3)
    checkpoint.load_full_optim_state_dict(fresh, fresh_opt, plain)  # a plain model's state
    assert fresh_opt.param_groups[0]["lr"] == 0.1
    for p, q in zip(fresh.parameters(), model.parameters()):
        np.testing.assert_allclose(fresh_opt.state[p]["exp_avg_sq"].numpy(),
                                   opt.state[q]["exp_avg_sq"].numpy(), rtol=1e-6, atol=1e-10)
