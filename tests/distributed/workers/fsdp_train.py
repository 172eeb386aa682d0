"""Worker: FSDP / ZeRO on N ranks train a small transformer exactly like one process.

    mpirun -n 4 python fsdp_train.py fsdp|zero|mixed
    mpirun -n 4 python fsdp_train.py save DIR      # train, then write a sharded checkpoint
    mpirun -n 2 python fsdp_train.py resume DIR    # load it at another world size, check

Each rank trains on its shard of every batch; a reference model trained in the same
process on the concatenated batch (same initial weights, same optimizer) must end with
the same parameters (float32 tolerance). ``resume`` loads the checkpoint, checks the
parameters are bit-exactly the saved ones, trains on, and compares with the reference.
"""

from __future__ import annotations

import functools
import json
import sys

import numpy as np

import volta_core as vt
import volta_core.distributed as dist
from volta_core import nn
from volta_core.distributed.fsdp import FullyShardedDataParallel, transformer_auto_wrap_policy

B, SEQ, VOCAB, D = 2, 6, 17, 16
# The attention's key bias has a gradient of exactly zero in exact arithmetic (softmax
# ignores a shift shared by all keys); Adam with a tiny eps would turn the rounding noise
# of that zero (which depends on the summation order, i.e. on the world size) into
# full-size steps. A larger eps keeps the comparison about FSDP, not about noise.
ADAM = {"lr": 1e-2, "eps": 1e-5}


class TinyLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        layer = nn.TransformerEncoderLayer(D, 2, 32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(D, VOCAB)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens))).reshape(-1, VOCAB)


def batch(step: int, world: int):
    rng = np.random.default_rng(100 + step)
    x = rng.integers(0, VOCAB, (4 * B, SEQ))  # the global batch: 4 ranks' worth
    y = rng.integers(0, VOCAB, (4 * B * SEQ,))
    per = 4 * B // world
    return x, y, per


def make_model() -> nn.Module:
    vt.manual_seed(0)
    return TinyLM()


def train(model, opt, steps, start, rank, world):
    loss_fn = nn.CrossEntropyLoss()
    for step in range(start, start + steps):
        x, y, per = batch(step, world)
        xs = x[rank * per:(rank + 1) * per]
        ys = y[rank * per * SEQ:(rank + 1) * per * SEQ]
        opt.zero_grad()
        loss_fn(model(vt.tensor(xs)), vt.tensor(ys)).backward()
        opt.step()


def reference(steps: int, with_optimizer: bool = False):
    model = make_model()
    opt = vt.optim.Adam(model.parameters(), **ADAM)
    train(model, opt, steps, 0, 0, 1)
    params = {k: v.numpy() for k, v in model.state_dict().items()}
    return (params, model, opt) if with_optimizer else params


def compare(got: dict, want: dict, what: str, exact: bool = False) -> float:
    assert set(got) == set(want), (sorted(got), sorted(want))
    worst = 0.0
    for k in want:
        a = got[k].numpy() if hasattr(got[k], "numpy") else got[k]
        if exact:
            assert np.array_equal(a, want[k]), f"{what}: {k} differs"
        else:
            np.testing.assert_allclose(a, want[k], rtol=2e-5, atol=2e-6, err_msg=f"{what}: {k}")
        worst = max(worst, float(np.abs(a - want[k]).max()))
    return worst


def wrap(model, **kwargs):
    policy = functools.partial(transformer_auto_wrap_policy,
                               transformer_layer_cls={nn.TransformerEncoderLayer})
    return FullyShardedDataParallel(model, auto_wrap_policy=policy, **kwargs)


class _Late(dist.PendingWork):
    """A collective still in flight: its output holds NaN until ``wait()``."""

    def __init__(self, out, result):
        self.out, self.result = out, result
        out[...] = np.nan

    def wait(self):
        if self.result is not None:
            self.out[...] = self.result
            self.result = None

    def is_completed(self):
        return self.result is None


def defer_collectives() -> None:
    """Make the default group's started collectives land only at ``wait()``, as NCCL's do
    on their own stream: DDP and FSDP must wait before anything reads the results."""
    from volta_core.distributed.process_group import _group

    pg = _group()

    def start_all_reduce(array, op):
        result = array.copy()
        pg.all_reduce(result, op)
        return _Late(array, result)

    def start_all_gather(out, array):
        result = np.empty_like(out)
        pg.all_gather(result, array)
        return _Late(out, result)

    def start_reduce_scatter(out, array, op):
        result = np.empty_like(out)
        pg.reduce_scatter(result, array, op)
        return _Late(out, result)

    pg.start_all_reduce = start_all_reduce
    pg.start_all_gather = start_all_gather
    pg.start_reduce_scatter = start_reduce_scatter


def main() -> None:
    mode = sys.argv[1]
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    steps = 3
    deferred = mode.endswith("-deferred")  # collectives finish late, prefetch on
    if deferred:
        defer_collectives()
        mode = mode.removesuffix("-deferred")
    if mode == "fsdp":
        from volta_core.distributed.fsdp import BackwardPrefetch

        prefetch = BackwardPrefetch.BACKWARD_PRE if deferred else None
        fsdp = wrap(make_model(), backward_prefetch=prefetch)
        units = [m for m in fsdp.modules() if isinstance(m, FullyShardedDataParallel)]
        assert len(units) == 3, len(units)  # root + 2 encoder layers
        opt = vt.optim.Adam(fsdp.parameters(), **ADAM)
        train(fsdp, opt, steps, 0, rank, world)
        want, ref_model, ref_opt = reference(steps, with_optimizer=True)
        worst = compare(fsdp.state_dict(), want, "fsdp")
        from volta_core.distributed import checkpoint

        full = checkpoint.full_optim_state_dict(fsdp, opt)  # a collective
        if rank == 0:
            plain = ref_opt.state_dict()["state"]
            for i, s in plain.items():
                np.testing.assert_allclose(full["state"][i]["exp_avg"].numpy(),
                                           s["exp_avg"].numpy(), rtol=1e-4, atol=1e-7)
        else:
            assert full == {}
        n_local = sum(p.numel() for p in fsdp.parameters())
        n_full = sum(v.size for v in reference(0).values())
        assert n_local <= -(-n_full // world) + 3 * world, (n_local, n_full)
        msg = f"FSDP matches single process (max |diff| {worst:.1e}, {n_local}/{n_full})"
    elif mode == "zero":
        from volta_core.distributed.optim import ZeroRedundancyOptimizer
        from volta_core.nn.parallel import DistributedDataParallel

        ddp = DistributedDataParallel(make_model())
        opt = ZeroRedundancyOptimizer(ddp.parameters(), vt.optim.Adam, **ADAM)
        owned = sum(p.numel() for g in opt.optim.param_groups for p in g["params"])
        train(ddp, opt, steps, 0, rank, world)
        want, ref_model, ref_opt = reference(steps, with_optimizer=True)
        worst = compare(ddp.module.state_dict(), want, "zero")
        opt.consolidate_state_dict(to=0)
        if rank == 0:  # the consolidated state is a plain Adam state: load it into one
            sd = opt.state_dict()
            assert len(sd["state"]) == len(list(ddp.parameters())), len(sd["state"])
            plain = vt.optim.Adam(ref_model.parameters(), **ADAM)
            plain.load_state_dict(sd)
            for p in ref_model.parameters():
                a, b = plain.state[p], ref_opt.state[p]
                assert a["step"] == b["step"] == steps
                np.testing.assert_allclose(a["exp_avg"].numpy(), b["exp_avg"].numpy(),
                                           rtol=1e-4, atol=1e-7)
        msg = f"ZeRO matches single process (max |diff| {worst:.1e}, owns {owned})"
    elif mode == "save":
        from volta_core.distributed import checkpoint

        fsdp = wrap(make_model())
        opt = vt.optim.Adam(fsdp.parameters(), **ADAM)
        train(fsdp, opt, steps, 0, rank, world)
        checkpoint.save(sys.argv[2], fsdp, opt)
        full = fsdp.state_dict()
        if rank == 0:
            np.savez(f"{sys.argv[2]}/expected.npz", **{k: v.numpy() for k, v in full.items()})
        msg = "saved"
    elif mode == "resume":
        from volta_core.distributed import checkpoint

        fsdp = wrap(make_model())
        opt = vt.optim.Adam(fsdp.parameters(), **ADAM)
        checkpoint.load(sys.argv[2], fsdp, opt)
        saved = dict(np.load(f"{sys.argv[2]}/expected.npz"))
        compare(fsdp.state_dict(), saved, "resume", exact=True)
        with open(f"{sys.argv[2]}/index.json") as f:
            assert json.load(f)["world_size"] == 4
        train(fsdp, opt, 2, steps, rank, world)
        worst = compare(fsdp.state_dict(), reference(steps + 2), "resume+train")
        msg = f"resumed bit-exactly and trains on (max |diff| {worst:.1e})"
    else:
        raise SystemExit(f"unknown mode {mode}")
    dist.destroy_process_group()
    print(f"rank {rank}: {msg}", flush=True)


if __name__ == "__main__":
    main()
