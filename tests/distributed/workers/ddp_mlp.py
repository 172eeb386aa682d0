"""Worker: DDP on 2+ ranks must train exactly like one process on the whole batch.

Each rank trains a small MLP on its shard of every batch for 20 steps, then 3 steps of
gradient accumulation under ``no_sync``; a reference model trained in the same process
on the concatenated batch must end with the same parameters (float32 tolerance).
``deferred`` as a second argument makes the started all-reduces land only at ``wait()``.
"""

from __future__ import annotations

import sys

import numpy as np

import volta_core as vt
import volta_core.distributed as dist
from volta_core import nn
from volta_core.data.distributed import DistributedSampler
from volta_core.nn.parallel import DistributedDataParallel

B, D_IN, D_OUT = 8, 6, 3


def mlp() -> nn.Module:
    net = nn.Sequential(nn.Linear(D_IN, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(),
                        nn.Linear(32, D_OUT))
    net.register_buffer("scale", vt.ones(1))
    return net


def batch(step: int, world: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1000 + step)
    return (rng.standard_normal((world * B, D_IN)).astype(np.float32),
            rng.standard_normal((world * B, D_OUT)).astype(np.float32))


def main() -> None:
    dist.init_process_group(sys.argv[1] if len(sys.argv) > 1 else "mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    if "deferred" in sys.argv[2:]:  # all-reduces land only when waited for (NaN before)
        from fsdp_train import defer_collectives

        defer_collectives()
    vt.manual_seed(rank)  # different initial weights per rank: DDP must broadcast rank 0's
    model = mlp()
    model.scale.array[...] = rank + 1
    ddp = DistributedDataParallel(model, bucket_cap_mb=0.002)
    assert len(ddp._buckets) > 1, "the test wants several buckets"
    assert float(model.scale.item()) == 1.0, "buffers are broadcast from rank 0"
    assert all(k.startswith("module.") for k in ddp.state_dict()), list(ddp.state_dict())

    ref = mlp()
    ref.load_state_dict({k: v.clone() for k, v in model.state_dict().items()})
    opt = vt.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    ref_opt = vt.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.MSELoss()
    mine = slice(rank * B, (rank + 1) * B)

    for step in range(20):
        x, y = batch(step, world)
        opt.zero_grad()
        loss_fn(ddp(vt.tensor(x[mine])), vt.tensor(y[mine])).backward()
        opt.step()
        ref_opt.zero_grad()
        loss_fn(ref(vt.tensor(x)), vt.tensor(y)).backward()
        ref_opt.step()

    half = B // 2
    for step in range(20, 23):  # accumulate two micro-batches, reduce once
        x, y = batch(step, world)
        xs, ys = x[mine], y[mine]
        opt.zero_grad()
        with ddp.no_sync():
            (loss_fn(ddp(vt.tensor(xs[:half])), vt.tensor(ys[:half])) * 0.5).backward()
        (loss_fn(ddp(vt.tensor(xs[half:])), vt.tensor(ys[half:])) * 0.5).backward()
        opt.step()
        ref_opt.zero_grad()
        loss_fn(ref(vt.tensor(x)), vt.tensor(y)).backward()
        ref_opt.step()

    worst = 0.0
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        a, b = p.detach().numpy(), q.detach().numpy()
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6, err_msg=name)
        worst = max(worst, float(np.abs(a - b).max()))

    sampler = DistributedSampler(list(range(11)), shuffle=True, seed=3)
    shard = vt.tensor(list(sampler), dtype=vt.int64)
    shards = [vt.zeros(len(sampler), dtype=vt.int64) for _ in range(world)]
    dist.all_gather(shards, shard)
    seen = sorted(int(i) for s in shards for i in s.tolist())
    assert set(seen) == set(range(11)) and len(seen) == len(sampler) * world, seen

    dist.destroy_process_group()
    print(f"rank {rank}: DDP matches single process (max |diff| {worst:.2e})", flush=True)


if __name__ == "__main__":
    main()
