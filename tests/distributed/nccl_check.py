"""GPU check of the NCCL engine and DDP; run on a machine with 2 GPUs:

    volta-run --nproc 2 tests/distributed/nccl_check.py [--steps 20] [--batch 256]

1. collectives on CUDA tensors (all_reduce, broadcast, all_gather, reduce_scatter);
2. DDP on 2 GPUs trains an MLP exactly like one process on the concatenated batch;
3. throughput of a ResNet-18-style CNN (3x32x32 images, batch 256 per GPU, SGD with
   momentum): rank 0 alone on 1 GPU, then both ranks with DDP; prints images/s and the
   speed-up (target >= 1.8x).

Ends with one line ``NCCL CHECK: PASS ...`` or ``NCCL CHECK: FAIL ...`` on rank 0.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import timedelta

import numpy as np

import volta_core as vt
import volta_core.distributed as dist
from volta_core import nn
from volta_core.nn.parallel import DistributedDataParallel


def check_collectives(dev: str, rank: int, world: int) -> None:
    t = vt.full((1000,), float(rank + 1), device=dev)
    dist.all_reduce(t)
    assert np.allclose(t.cpu().numpy(), world * (world + 1) / 2), "all_reduce sum"
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert np.allclose(t.cpu().numpy(), world * (world + 1) / 2), "all_reduce avg"
    t = vt.full((7,), float(rank), device=dev)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    assert np.allclose(t.cpu().numpy(), world - 1), "all_reduce max"
    t = vt.full((5,), float(rank), device=dev)
    dist.broadcast(t, src=1)
    assert np.allclose(t.cpu().numpy(), 1.0), "broadcast"
    outs = [vt.zeros(3, device=dev) for _ in range(world)]
    dist.all_gather(outs, vt.full((3,), float(rank), device=dev))
    assert all(np.allclose(o.cpu().numpy(), r) for r, o in enumerate(outs)), "all_gather"
    out = vt.zeros(4, device=dev)
    dist.reduce_scatter_tensor(out, vt.arange(4 * world, dtype=vt.float32, device=dev))
    want = np.arange(4 * rank, 4 * rank + 4) * world
    assert np.allclose(out.cpu().numpy(), want), "reduce_scatter_tensor"
    dist.barrier()


def check_ddp_equality(dev: str, rank: int, world: int) -> float:
    """DDP vs one process on the whole batch; returns the largest parameter difference."""
    B, steps = 16, 20
    vt.manual_seed(rank)
    make = lambda: nn.Sequential(nn.Linear(6, 64), nn.Tanh(), nn.Linear(64, 64), nn.ReLU(),  # noqa: E731
                                 nn.Linear(64, 3)).to(dev)
    model = make()
    ids = [vt.device(dev).index] if dev != "cpu" else None
    ddp = DistributedDataParallel(model, device_ids=ids, bucket_cap_mb=0.01)
    ref = make()
    ref.load_state_dict({k: v.clone() for k, v in model.state_dict().items()})
    opt = vt.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    ref_opt = vt.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.MSELoss()
    mine = slice(rank * B, (rank + 1) * B)
    for step in range(steps):
        g = np.random.default_rng(step)
        x = vt.tensor(g.standard_normal((world * B, 6)).astype(np.float32), device=dev)
        y = vt.tensor(g.standard_normal((world * B, 3)).astype(np.float32), device=dev)
        opt.zero_grad()
        loss_fn(ddp(x[mine]), y[mine]).backward()
        opt.step()
        ref_opt.zero_grad()
        loss_fn(ref(x), y).backward()
        ref_opt.step()
    worst = 0.0
    for p, q in zip(model.parameters(), ref.parameters()):
        a, b = p.detach().cpu().numpy(), q.detach().cpu().numpy()
        if not np.allclose(a, b, rtol=1e-4, atol=1e-5):
            raise AssertionError(f"DDP parameters differ from the reference by "
                                 f"{np.abs(a - b).max():.3e}")
        worst = max(worst, float(np.abs(a - b).max()))
    return worst


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.shortcut = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                       nn.BatchNorm2d(cout))
                         if stride != 1 or cin != cout else None)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + (x if self.shortcut is None else self.shortcut(x)))


class ResNet18(nn.Module):
    """ResNet-18 for 32x32 images (CIFAR-style 3x3 stem, no max-pool)."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(64), nn.ReLU())
        layers, cin = [], 64
        for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        return self.fc(self.pool(self.layers(self.stem(x))).reshape(x.shape[0], -1))


def throughput(model: nn.Module, dev: str, batch: int, steps: int, warmup: int = 3) -> float:
    """Images per second of SGD-momentum training steps on synthetic data."""
    opt = vt.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = vt.randn(batch, 3, 32, 32, device=dev)
    y = vt.randint(0, 10, (batch,), device=dev)
    for i in range(warmup + steps):
        if i == warmup:
            vt.synchronize(dev)
            start = time.perf_counter()
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    vt.synchronize(dev)
    return batch * steps / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--backend", default="nccl", help="mpi + --cpu: a dry run without GPUs")
    ap.add_argument("--cpu", action="store_true")
    args = ap.parse_args()
    dist.init_process_group(args.backend, timeout=timedelta(minutes=10))
    rank, world, local = dist.get_rank(), dist.get_world_size(), dist.get_local_rank()
    dev = "cpu" if args.cpu else f"cuda:{local}"
    vt.set_default_device(dev)
    problems = []
    try:
        check_collectives(dev, rank, world)
    except AssertionError as exc:
        problems.append(f"collectives: {exc}")
    try:
        diff = check_ddp_equality(dev, rank, world)
        if rank == 0:
            print(f"DDP equality: max |param diff| vs single process = {diff:.2e}", flush=True)
    except AssertionError as exc:
        problems.append(f"equality: {exc}")

    single = vt.zeros(1, device=dev)
    if rank == 0:  # 1 GPU, no DDP, while the other ranks wait in the barrier
        vt.manual_seed(0)
        single += throughput(ResNet18().to(dev), dev, args.batch, args.steps)
        print(f"ResNet-18 1 GPU : {float(single.item()):9.1f} images/s", flush=True)
    dist.barrier()
    dist.broadcast(single, src=0)
    single = float(single.item())
    vt.manual_seed(0)
    ddp = DistributedDataParallel(ResNet18().to(dev), device_ids=None if args.cpu else [local])
    per_rank = throughput(ddp, dev, args.batch, args.steps)
    rates = [vt.tensor([per_rank], device=dev) for _ in range(world)]
    dist.all_gather(rates, vt.tensor([per_rank], device=dev))
    total = world * min(float(r.item()) for r in rates)  # the job goes at the slowest rank
    speedup = total / single
    if rank == 0:
        print(f"ResNet-18 {world} GPUs: {total:9.1f} images/s (DDP, batch {args.batch}/GPU)")
        print(f"speed-up {speedup:.2f}x on {world} GPUs (target >= {0.9 * world:.1f}x)")
        if speedup < 0.9 * world:
            problems.append(f"speed-up {speedup:.2f}x below {0.9 * world:.1f}x")
        verdict = "PASS" if not problems else "FAIL"
        detail = "; ".join(problems) or f"equality ok, speed-up {speedup:.2f}x"
        print(f"NCCL CHECK: {verdict} ({detail})", flush=True)
    failed = vt.tensor([float(bool(problems))], device=dev)
    dist.all_reduce(failed, op=dist.ReduceOp.MAX)
    dist.destroy_process_group()
    sys.exit(1 if float(failed.item()) else 0)


if __name__ == "__main__":
    main()
