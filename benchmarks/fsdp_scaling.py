"""Multi-GPU benchmark: DDP scaling, FSDP memory per GPU, FSDP vs PyTorch FSDP.

One command on a machine with N GPUs (NCCL), all figures printed at the end::

    python benchmarks/fsdp_scaling.py [--gpus N] [--steps 20] [--warmup 5] [--json FILE]
        [--models resnet18,transformer] [--fsdp-layers 4] [--fsdp-d-model 512]

It starts, one after the other (each a separate job, so nothing leaks between them):

1. Volta on 1 GPU (``volta-run --nproc 1``): plain training step of each model, and the
   unsharded transformer's model state (parameters + gradients + AdamW state: the memory
   a training step keeps between steps).
2. Volta on N GPUs (``volta-run --nproc N``): DDP step of each model (batch per GPU as on
   1 GPU), the same step under ``no_sync`` (DDP without communication) and the time of
   one all-reduce of the model's gradients (diagnostics for the efficiency), then the
   transformer under ``FullyShardedDataParallel`` (one unit per encoder layer): its step
   time, and its peak memory per GPU.
3. PyTorch on N GPUs (``torchrun``): ``torch.distributed.fsdp.FullyShardedDataParallel``
   on the same transformer, same wrapping, batch and optimizer (skipped without torch).

Figures (targets of the issue in brackets):

- DDP scaling efficiency = throughput on N GPUs / (N x throughput on 1 GPU)  [>= 0.9]
- FSDP peak memory per GPU against unsharded state / N + the largest gathered unit
  (its parameters + their gradients) + 10 %. The bound is about model state, so the peak
  is measured on training steps whose activations are negligible (one sequence of 8
  tokens per GPU, same model, same optimizer): everything else a step allocates (the
  sharded parameters, gradients and AdamW state, gathered units, unsharded gradient
  buffers, temporaries) counts. Memory that was allocated before the model was built is
  not counted. PyTorch FSDP's peak on the same steps is printed beside it, and both
  frameworks' peaks at the full batch too (for information).
- FSDP throughput / PyTorch FSDP throughput                                 [>= 0.85]

``--device cpu --smoke`` runs the same logic on the CPU with tiny models: the Volta jobs
under ``mpirun`` (MPI engine), PyTorch with gloo (memory figures are n/a there). It is how
the script is checked without GPUs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

SMOKE = {
    "resnet18": {"kind": "resnet", "blocks": (1, 1, 1, 1), "widths": (4, 8, 8, 16), "hw": 8,
                 "batch": 4, "classes": 10, "optim": "sgd", "lr": 0.1, "momentum": 0.9},
    "transformer": {"kind": "transformer", "d_model": 16, "heads": 2, "ff": 32, "layers": 2,
                    "seq": 8, "batch": 2, "vocab": 32, "dropout": 0.1, "optim": "adamw",
                    "lr": 3e-4, "weight_decay": 0.01},
}


def configs(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Model settings: train_step_models' CUDA models, or tiny ones with --smoke."""
    if args.smoke:
        cfgs = {k: dict(v) for k, v in SMOKE.items()}
    else:
        from train_step_models import CUDA_MODELS

        cfgs = {k: dict(v) for k, v in CUDA_MODELS.items() if k in ("resnet18", "transformer")}
    fsdp = dict(cfgs["transformer"])
    if args.fsdp_layers:
        fsdp["layers"] = args.fsdp_layers
    if args.fsdp_d_model:
        fsdp["d_model"], fsdp["ff"] = args.fsdp_d_model, 4 * args.fsdp_d_model
    cfgs["fsdp_transformer"] = fsdp
    return cfgs


# -- workers (one per rank) -------------------------------------------------------------------

def _median_step(step: Any, sync: Any, steps: int, warmup: int) -> float:
    from train_step_models import time_steps

    return time_steps({"x": step}, {"x": sync}, steps, warmup)["x"]


def check_engine(vt: Any, dist: Any, dev: str, rank: int, world: int) -> str:
    """Correctness on this engine before timing: the collectives FSDP uses, subgroups,
    send/recv, objects, FSDP vs one process, a sharded checkpoint round trip.

    Returns "ok" or what failed; every rank returns the same verdict.
    """
    import numpy as np
    from train_step_models import build, data

    from volta_core.distributed import checkpoint
    from volta_core.distributed.fsdp import FullyShardedDataParallel, ModuleWrapPolicy

    problems = []

    def expect(ok: bool, what: str) -> None:
        if not ok:
            problems.append(what)

    out = vt.zeros(4, device=dev)
    dist.reduce_scatter_tensor(out, vt.arange(4 * world, dtype=vt.float32, device=dev))
    expect(np.allclose(out.cpu().numpy(), np.arange(4 * rank, 4 * rank + 4) * world),
           "reduce_scatter_tensor")
    big = vt.zeros(3 * world, device=dev)
    dist.all_gather_into_tensor(big, vt.full((3,), float(rank), device=dev))
    expect(np.allclose(big.cpu().numpy(), np.repeat(np.arange(world), 3)),
           "all_gather_into_tensor")
    got = vt.zeros(5, device=dev)
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    if rank % 2 == 0:
        dist.send(vt.full((5,), float(rank), device=dev), nxt)
        dist.recv(got, prv)
    else:
        dist.recv(got, prv)
        dist.send(vt.full((5,), float(rank), device=dev), nxt)
    expect(np.allclose(got.cpu().numpy(), prv), "send/recv ring")
    evens = dist.new_group(list(range(0, world, 2)))
    if rank % 2 == 0:
        t = vt.ones(2, device=dev)
        dist.all_reduce(t, group=evens)
        expect(np.allclose(t.cpu().numpy(), len(range(0, world, 2))), "new_group all_reduce")
    objs: list[Any] = [None] * world
    dist.all_gather_object(objs, {"rank": rank})
    expect(objs == [{"rank": r} for r in range(world)], "all_gather_object")

    cfg = dict(SMOKE["transformer"], dropout=0.0, batch=2 * world)
    vt.manual_seed(0)
    model = build(vt.nn, cfg).to(dev)
    vt.manual_seed(0)
    ref = build(vt.nn, cfg).to(dev)
    fsdp = FullyShardedDataParallel(
        model, auto_wrap_policy=ModuleWrapPolicy({type(model.encoder.layers[0])}))
    opt = vt.optim.SGD(fsdp.parameters(), lr=0.1, momentum=0.9)
    ref_opt = vt.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    loss_fn = vt.nn.CrossEntropyLoss()
    seq = cfg["seq"]
    for step in range(3):
        xs, ys = data(cfg, seed=100 + step)
        x, y = vt.tensor(xs, device=dev), vt.tensor(ys, device=dev)
        opt.zero_grad()
        loss_fn(fsdp(x[2 * rank:2 * rank + 2]), y[2 * rank * seq:(2 * rank + 2) * seq]).backward()
        opt.step()
        ref_opt.zero_grad()
        loss_fn(ref(x), y).backward()
        ref_opt.step()
    full = fsdp.state_dict()
    worst = max(float(np.abs(full[k].cpu().numpy() - v.cpu().numpy()).max())
                for k, v in ref.state_dict().items())
    expect(worst < 1e-4, f"FSDP differs from one process by {worst:.2e}")
    objs = [tempfile.mkdtemp(prefix="fsdp-check-") if rank == 0 else None]
    dist.broadcast_object_list(objs, src=0)
    checkpoint.save(objs[0], fsdp, opt)
    before = {k: v.cpu().numpy() for k, v in full.items()}
    for p in fsdp.parameters():
        p.array = p.array * 0
        p._version[0] += 1
    checkpoint.load(objs[0], fsdp, opt)
    after = fsdp.state_dict()
    expect(all(np.array_equal(after[k].cpu().numpy(), v) for k, v in before.items()),
           "sharded checkpoint round trip")
    dist.barrier()
    if rank == 0:
        shutil.rmtree(objs[0], ignore_errors=True)
    flag = vt.tensor([0.0 if problems else 1.0], device=dev)
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    if problems:
        return "; ".join(problems)
    return "ok" if float(flag.item()) == 1.0 else "failed on another rank"


def volta_worker(args: argparse.Namespace) -> dict[str, Any]:
    from train_step_models import build, data, optimizer, training_step

    import volta_core as vt
    import volta_core.distributed as dist
    from volta_core.distributed.fsdp import FullyShardedDataParallel, ModuleWrapPolicy
    from volta_core.nn.parallel import DistributedDataParallel

    cuda = args.device == "cuda"
    dist.init_process_group("nccl" if cuda else "mpi")
    rank, world, local = dist.get_rank(), dist.get_world_size(), dist.get_local_rank()
    dev = f"cuda:{local}" if cuda else "cpu"
    vt.set_default_device(dev)
    if cuda:
        from train_step_models import set_tf32

        set_tf32(args.tf32)
    sync = (lambda: vt.cuda.synchronize(dev)) if cuda else (lambda: None)
    mem = _VoltaMemory(vt, dev) if cuda else None
    cfgs = configs(args)
    out: dict[str, Any] = {"world": world}
    if world > 1:
        out["check"] = check_engine(vt, dist, dev, rank, world)

    def batch(cfg: dict) -> tuple[Any, Any]:
        xs, ys = data(cfg, seed=rank)
        return vt.tensor(xs, device=dev), vt.tensor(ys, device=dev)

    for name in args.models.split(","):
        cfg = cfgs[name]
        vt.manual_seed(0)
        model = build(vt.nn, cfg).to(dev)
        numel = sum(p.numel() for p in model.parameters())
        if world > 1:
            model = DistributedDataParallel(model, device_ids=[local] if cuda else None)
        x, y = batch(cfg)
        opt = optimizer(vt.optim, model.parameters(), cfg)
        step = training_step(model, x, y, opt, vt.nn.CrossEntropyLoss())
        t = _median_step(step, sync, args.steps, args.warmup)
        out[f"step/{name}"] = t
        out[f"throughput/{name}"] = world * cfg["batch"] / t
        if world > 1:  # where the time goes: DDP without communication, and the reduction
            def local_step(step: Any = step, model: Any = model) -> None:
                with model.no_sync():
                    step()

            out[f"step_no_sync/{name}"] = _median_step(local_step, sync, args.steps, 2)
            grads = vt.ones(numel, device=dev)
            out[f"all_reduce/{name}"] = _median_step(lambda g=grads: dist.all_reduce(g),
                                                     sync, args.steps, 2)
            out[f"grad_bytes/{name}"] = numel * 4
            del grads
        del model, opt, step
        if mem:
            mem.clear()

    cfg = cfgs["fsdp_transformer"]
    vt.manual_seed(0)
    model = build(vt.nn, cfg).to(dev)
    numel = sum(p.numel() for p in model.parameters())
    out["fsdp/numel"] = numel
    layer_cls = type(model.encoder.layers[0])
    out["fsdp/largest_unit_numel"] = max(
        max(sum(p.numel() for p in layer.parameters()) for layer in model.encoder.layers),
        numel - sum(p.numel() for p in model.encoder.parameters()))
    x, y = batch(cfg)
    if world > 1:
        model = FullyShardedDataParallel(model, auto_wrap_policy=ModuleWrapPolicy({layer_cls}))
        key = "fsdp"
    else:
        key = "plain"
    opt = optimizer(vt.optim, model.parameters(), cfg)
    step = training_step(model, x, y, opt, vt.nn.CrossEntropyLoss())
    for _ in range(max(1, args.warmup)):  # optimizer state exists after the first step
        step()
    sync()
    if mem:
        mem.reset_peak()
    t = _median_step(step, sync, args.steps, 0)
    out[f"{key}/step"] = t
    out[f"{key}/throughput"] = world * cfg["batch"] / t
    if mem:
        out[f"{key}/peak_bytes"] = mem.peak()
        out[f"{key}/persistent_bytes"] = mem.allocated()
    del model, opt, step, x, y
    out.update(_state_memory(vt, dev, mem, sync, cfg, world, key, rank, args))
    dist.destroy_process_group()
    return out


TINY = {"batch": 1, "seq": 8}  # activations of a few KiB: the step's memory is model state


def _state_memory(vt: Any, dev: str, mem: Any, sync: Any, cfg: dict, world: int, key: str,
                  rank: int, args: argparse.Namespace) -> dict[str, Any]:
    """Peak and persistent memory of training steps on one 8-token sequence per GPU.

    Counted from the memory allocated before the model is built (what earlier parts of
    the job left is not this model's). Steps run also without memory statistics (cpu),
    so the code path is checked there.
    """
    from train_step_models import build, data, optimizer, training_step

    from volta_core.distributed.fsdp import FullyShardedDataParallel, ModuleWrapPolicy

    tiny = dict(cfg, **TINY)
    if mem:
        mem.clear()
    before = mem.allocated() if mem else 0
    vt.manual_seed(0)
    model = build(vt.nn, tiny).to(dev)
    if world > 1:
        policy = ModuleWrapPolicy({type(model.encoder.layers[0])})
        model = FullyShardedDataParallel(model, auto_wrap_policy=policy)
    xs, ys = data(tiny, seed=rank)
    x, y = vt.tensor(xs, device=dev), vt.tensor(ys, device=dev)
    opt = optimizer(vt.optim, model.parameters(), tiny)
    step = training_step(model, x, y, opt, vt.nn.CrossEntropyLoss())
    for _ in range(2):  # AdamW state exists after the first step
        step()
    sync()
    if not mem:
        return {}
    mem.reset_peak()
    for _ in range(max(3, args.steps // 4)):
        step()
    sync()
    return {f"{key}/state_peak_bytes": mem.peak() - before,
            f"{key}/state_persistent_bytes": mem.allocated() - before}


class _VoltaMemory:
    def __init__(self, vt: Any, dev: str) -> None:
        self.vt, self.dev = vt, dev

    def clear(self) -> None:
        import gc

        gc.collect()  # modules with hooks form reference cycles
        self.vt.cuda.synchronize(self.dev)
        self.vt.cuda.empty_cache(self.dev)

    def reset_peak(self) -> None:
        self.vt.cuda.reset_peak_memory_stats(self.dev)

    def peak(self) -> int:
        return int(self.vt.cuda.max_memory_allocated(self.dev))

    def allocated(self) -> int:
        self.vt.cuda.synchronize(self.dev)
        return int(self.vt.cuda.memory_allocated(self.dev))


def torch_worker(args: argparse.Namespace) -> dict[str, Any]:
    import torch
    import torch.distributed as tdist
    from torch.distributed.fsdp import FullyShardedDataParallel
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy
    from train_step_models import build, data, optimizer, training_step

    cuda = args.device == "cuda"
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        torch.cuda.set_device(local)
        torch.backends.cuda.matmul.allow_tf32 = args.tf32
        torch.backends.cudnn.allow_tf32 = args.tf32
    tdist.init_process_group("nccl" if cuda else "gloo")
    rank, world = tdist.get_rank(), tdist.get_world_size()
    dev = torch.device(f"cuda:{local}" if cuda else "cpu")
    cfg = configs(args)["fsdp_transformer"]
    torch.manual_seed(0)
    model = build(torch.nn, cfg).to(dev)
    layer_cls = type(model.encoder.layers[0])
    model = FullyShardedDataParallel(model, auto_wrap_policy=ModuleWrapPolicy({layer_cls}),
                                     device_id=dev)
    xs, ys = data(cfg, seed=rank)
    x, y = torch.from_numpy(xs).to(dev), torch.from_numpy(ys).to(dev)
    opt = optimizer(torch.optim, model.parameters(), cfg)
    step = training_step(model, x, y, opt, torch.nn.CrossEntropyLoss())
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    for _ in range(max(1, args.warmup)):
        step()
    sync()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    t = _median_step(step, sync, args.steps, 0)
    out = {"world": world, "torch_fsdp/step": t,
           "torch_fsdp/throughput": world * cfg["batch"] / t}
    if cuda:
        out["torch_fsdp/peak_bytes"] = int(torch.cuda.max_memory_allocated())
        out["torch_fsdp/persistent_bytes"] = int(torch.cuda.memory_allocated())
    del model, opt, step, x, y
    # the same model-state measurement as Volta's (_state_memory)
    tiny = dict(cfg, **TINY)
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    before = int(torch.cuda.memory_allocated()) if cuda else 0
    torch.manual_seed(0)
    model = build(torch.nn, tiny).to(dev)
    model = FullyShardedDataParallel(model, auto_wrap_policy=ModuleWrapPolicy({layer_cls}),
                                     device_id=dev)
    xs, ys = data(tiny, seed=rank)
    x, y = torch.from_numpy(xs).to(dev), torch.from_numpy(ys).to(dev)
    opt = optimizer(torch.optim, model.parameters(), tiny)
    step = training_step(model, x, y, opt, torch.nn.CrossEntropyLoss())
    for _ in range(2):
        step()
    sync()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
        for _ in range(max(3, args.steps // 4)):
            step()
        sync()
        out["torch_fsdp/state_peak_bytes"] = int(torch.cuda.max_memory_allocated()) - before
    tdist.destroy_process_group()
    return out


# -- the driver ---------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _mpirun() -> str | None:
    here = Path(sys.executable).parent
    for name in ("mpirun", "mpiexec"):
        if (here / name).exists():
            return str(here / name)
    return shutil.which("mpirun") or shutil.which("mpiexec")


def _job(args: argparse.Namespace, worker: str, n: int, result: Path) -> list[str]:
    me = [str(Path(__file__).resolve()), "--worker", worker, "--result", str(result),
          *_forwarded(args)]
    if worker == "torch":
        return [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(n),
                "--master_port", str(_free_port()), *me]
    if args.device == "cuda":
        return [sys.executable, "-m", "volta_core.distributed.launch", "--nproc", str(n),
                "--timeout", str(args.timeout), *me]
    mpirun = _mpirun()
    if mpirun is None:
        raise RuntimeError("--device cpu needs mpirun (pip install 'volta[mpi]')")
    return [mpirun, "-n", str(n), "--oversubscribe", sys.executable, *me]


def _forwarded(args: argparse.Namespace) -> list[str]:
    out = ["--device", args.device, "--steps", str(args.steps), "--warmup", str(args.warmup),
           "--models", args.models]
    if args.smoke:
        out.append("--smoke")
    if args.tf32:
        out.append("--tf32")
    if args.fsdp_layers:
        out += ["--fsdp-layers", str(args.fsdp_layers)]
    if args.fsdp_d_model:
        out += ["--fsdp-d-model", str(args.fsdp_d_model)]
    return out


def run_job(args: argparse.Namespace, worker: str, n: int) -> tuple[dict | None, str]:
    """Run one job; its rank 0's results, or None and why it failed."""
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "result.json"
        cmd = _job(args, worker, n, result)
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), str(ROOT / "backends"),
                                                          env.get("PYTHONPATH")]))
        # the engines load by module name also where Volta is not pip-installed
        env.setdefault("VOLTA_COMM_PLUGINS",
                       "volta_cupy.nccl" if args.device == "cuda" else "volta_mpi.plugin")
        if args.device == "cpu":
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        start = time.monotonic()
        print(f"--- {worker} on {n} {'GPU' if args.device == 'cuda' else 'rank'}(s): "
              f"{' '.join(cmd[:6])} ...", flush=True)
        try:
            proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True,
                                  timeout=args.timeout + 60)
        except subprocess.TimeoutExpired as exc:
            return None, f"timed out after {args.timeout + 60} s: {str(exc.stderr)[-2000:]}"
        print(f"    done in {time.monotonic() - start:.0f} s (exit {proc.returncode})",
              flush=True)
        if proc.returncode != 0 or not result.exists():
            return None, f"exit {proc.returncode}: {(proc.stdout + proc.stderr)[-3000:]}"
        return json.loads(result.read_text()), ""


def report(args: argparse.Namespace, one: dict | None, many: dict | None,
           tfsdp: dict | None, n: int) -> dict[str, Any]:
    """Compute the figures from the three jobs' results and print them."""
    fig: dict[str, Any] = {"gpus": n, "device": args.device}
    lines = [f"== fsdp_scaling: {n} x {args.device}{' (smoke)' if args.smoke else ''} =="]
    fig["check"] = many.get("check", "n/a") if many else "n/a (job failed)"
    lines.append(f"engine check (collectives, subgroups, send/recv, FSDP == 1 process, "
                 f"checkpoint): {fig['check']}")
    for name in args.models.split(","):
        if one and many and f"throughput/{name}" in one and f"throughput/{name}" in many:
            eff = many[f"throughput/{name}"] / (n * one[f"throughput/{name}"])
            fig[f"ddp_efficiency/{name}"] = eff
            lines.append(f"DDP {name:12s}: 1 GPU {one[f'throughput/{name}']:9.1f} samples/s, "
                         f"{n} GPUs {many[f'throughput/{name}']:9.1f} samples/s, "
                         f"efficiency {eff:.3f} [target >= 0.9] "
                         f"{'ok' if eff >= 0.9 else 'BELOW'}")
            if f"step_no_sync/{name}" in many:
                ar, nbytes = many[f"all_reduce/{name}"], many[f"grad_bytes/{name}"]
                busbw = 2 * (n - 1) / n * nbytes / ar / 1e9
                lines.append(
                    f"    step ms: 1 GPU {one[f'step/{name}'] * 1e3:.1f}, {n} GPUs DDP "
                    f"{many[f'step/{name}'] * 1e3:.1f}, DDP under no_sync (no communication) "
                    f"{many[f'step_no_sync/{name}'] * 1e3:.1f}; one all-reduce of all "
                    f"{nbytes / 2**20:.1f} MiB of gradients {ar * 1e3:.2f} ms "
                    f"(bus bandwidth {busbw:.1f} GB/s)")
        else:
            lines.append(f"DDP {name:12s}: n/a (a job failed)")
    mib = 1 / 2**20
    if one and many and "plain/state_persistent_bytes" in one \
            and "fsdp/state_peak_bytes" in many:
        numel = many["fsdp/numel"]
        # params + grads + AdamW state, unsharded, as measured between steps on 1 GPU
        state = one["plain/state_persistent_bytes"]
        unit = many["fsdp/largest_unit_numel"] * 4 * 2  # gathered params + their grads
        bound = (state / n + unit) * 1.1
        peak = many["fsdp/state_peak_bytes"]
        fig.update(fsdp_state_peak_bytes=peak, fsdp_bound_bytes=bound,
                   unsharded_state_bytes=state, largest_unit_bytes=unit,
                   fsdp_state_persistent_bytes=many["fsdp/state_persistent_bytes"])
        lines.append(f"FSDP memory : {numel / 1e6:.1f} M params; unsharded state "
                     f"{state * mib:.1f} MiB on 1 GPU ({numel * 16 * mib:.1f} MiB = 16 B/param), "
                     f"largest unit + its grads {unit * mib:.1f} MiB; per GPU between steps "
                     f"{many['fsdp/state_persistent_bytes'] * mib:.1f} MiB")
        torch_peak = ""
        if tfsdp and "torch_fsdp/state_peak_bytes" in tfsdp:
            torch_peak = (f" (PyTorch FSDP, same steps: "
                          f"{tfsdp['torch_fsdp/state_peak_bytes'] * mib:.1f} MiB)")
        lines.append(f"FSDP peak   : {peak * mib:.1f} MiB per GPU on 8-token steps vs bound "
                     f"state/{n} + largest unit + 10% = {bound * mib:.1f} MiB "
                     f"{'ok' if peak <= bound else 'ABOVE'}{torch_peak}")
        if "fsdp/peak_bytes" in many:
            full = (f"FSDP peak at the full batch (with activations): Volta "
                    f"{many['fsdp/peak_bytes'] * mib:.0f} MiB/GPU")
            if tfsdp and "torch_fsdp/peak_bytes" in tfsdp:
                full += f", PyTorch {tfsdp['torch_fsdp/peak_bytes'] * mib:.0f} MiB/GPU"
            lines.append(full)
    else:
        lines.append("FSDP memory : n/a" + (" (no memory statistics on cpu)"
                                            if args.device == "cpu" else " (a job failed)"))
    if many and "fsdp/throughput" in many:
        lines.append(f"FSDP step   : {many['fsdp/step'] * 1e3:.1f} ms, "
                     f"{many['fsdp/throughput']:.1f} samples/s on {n}")
    if many and tfsdp and "fsdp/throughput" in many:
        ratio = many["fsdp/throughput"] / tfsdp["torch_fsdp/throughput"]
        fig["fsdp_vs_torch"] = ratio
        extra = ""
        lines.append(f"FSDP vs PyTorch FSDP: {tfsdp['torch_fsdp/step'] * 1e3:.1f} ms PyTorch, "
                     f"throughput ratio Volta/PyTorch {ratio:.3f} [target >= 0.85] "
                     f"{'ok' if ratio >= 0.85 else 'BELOW'}{extra}")
    else:
        lines.append("FSDP vs PyTorch FSDP: n/a")
    print("\n".join(lines), flush=True)
    return fig


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gpus", type=int, default=None, help="GPUs (ranks) for the N-GPU jobs "
                   "(default: all visible GPUs; 2 with --device cpu)")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    p.add_argument("--smoke", action="store_true", help="tiny models (check the script)")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--models", default="resnet18,transformer")
    p.add_argument("--fsdp-layers", type=int, default=0, help="encoder layers of the FSDP "
                   "transformer (default: the transformer's)")
    p.add_argument("--fsdp-d-model", type=int, default=0, help="its width (ff = 4x)")
    p.add_argument("--tf32", action="store_true", help="TF32 matmuls in both frameworks")
    p.add_argument("--timeout", type=float, default=900, help="seconds per job")
    p.add_argument("--json", default=None, help="also write the figures to this file")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch FSDP job")
    p.add_argument("--worker", choices=("volta", "torch"), help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.worker:
        res = (volta_worker if args.worker == "volta" else torch_worker)(args)
        if int(os.environ.get("RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "0"))) == 0:
            Path(args.result).write_text(json.dumps(res))
        return 0

    n = args.gpus
    if n is None:
        n = 2 if args.device == "cpu" else _gpu_count()
    if n < 2:
        print(f"fsdp_scaling: needs at least 2 GPUs, found {n}. Volta's backends: "
              f"{_backends()} (the cuda backend needs `pip install -e '.[cupy]'`; on the "
              "offline GPU machine see ../shared/tools/device-prep)", file=sys.stderr)
        return 2
    one, err1 = run_job(args, "volta", 1)
    many, errn = run_job(args, "volta", n)
    tfsdp, errt = (None, "skipped (--no-torch)") if args.no_torch else (None, "")
    if not args.no_torch:
        try:
            import torch  # noqa: F401
            tfsdp, errt = run_job(args, "torch", n)
        except ImportError:
            errt = "torch is not installed"
    for what, err in (("Volta 1 GPU", err1), (f"Volta {n} GPUs", errn),
                      (f"PyTorch FSDP {n} GPUs", errt)):
        if err:
            print(f"!! {what}: {err}", file=sys.stderr, flush=True)
    fig = report(args, one, many, tfsdp, n)
    fig["raw"] = {"volta_1": one, f"volta_{n}": many, f"torch_{n}": tfsdp}
    if args.json:
        Path(args.json).write_text(json.dumps(fig, indent=1))
    return 0 if one and many else 1


def _backends() -> str:
    try:
        import volta_core as vt

        return "; ".join(str(b) for b in vt.backends())
    except Exception as exc:
        return f"volta_core failed to import: {exc!r}"


def _gpu_count() -> int:
    try:
        import volta_core as vt

        return int(vt.cuda.device_count())
    except Exception:  # no CUDA backend: let the caller report it
        return 0


if __name__ == "__main__":
    sys.exit(main())
