"""CPU estimate of FSDP's peak memory per rank, and what is alive at that peak.

The same measurement as ``fsdp_scaling.py``'s FSDP memory figure (training steps on one
8-token sequence per rank, so the step's memory is model state), on the CPU: NumPy reports
its arrays to ``tracemalloc``, and a profile function checks the traced total at every
call and return of rank 0 and keeps a snapshot at the highest. Run it under mpirun::

    mpirun -n 4 python benchmarks/fsdp_memory_cpu.py [--layers 4] [--d-model 512] [--top 8]

(with ``VOLTA_COMM_PLUGINS=volta_mpi.plugin`` where Volta is not pip-installed). It
prints rank 0's peak of array memory against the bound "unsharded state / N + the largest
unit's parameters and gradients + 10 %" (state = 16 bytes a parameter: parameters,
gradients and AdamW's two moments, all float32), then the arrays alive at the peak beyond
those alive between steps, largest first, with where they were allocated. Slow (every
Python call is profiled): about two minutes for the default model on 4 ranks.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tracemalloc
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

NUMPY_DOMAIN = 389047  # numpy's tracemalloc domain for array data


def _arrays(snapshot: tracemalloc.Snapshot) -> tracemalloc.Snapshot:
    return snapshot.filter_traces([tracemalloc.DomainFilter(True, NUMPY_DOMAIN)])


def main() -> None:
    from train_step_models import CUDA_MODELS, build, data, optimizer, training_step

    import volta_core as vt
    import volta_core.distributed as dist
    from volta_core.distributed.fsdp import FullyShardedDataParallel, ModuleWrapPolicy

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--layers", type=int, default=0)
    p.add_argument("--d-model", type=int, default=0)
    p.add_argument("--top", type=int, default=8, help="allocation sites to list")
    args = p.parse_args()
    cfg = dict(CUDA_MODELS["transformer"], batch=1, seq=8)
    if args.layers:
        cfg["layers"] = args.layers
    if args.d_model:
        cfg["d_model"], cfg["ff"] = args.d_model, 4 * args.d_model
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    tracemalloc.start(25)
    vt.manual_seed(0)
    model = build(vt.nn, cfg)
    numel = sum(q.numel() for q in model.parameters())
    unit = max(max(sum(q.numel() for q in layer.parameters()) for layer in model.encoder.layers),
               numel - sum(q.numel() for q in model.encoder.parameters()))
    model = FullyShardedDataParallel(
        model, auto_wrap_policy=ModuleWrapPolicy({type(model.encoder.layers[0])}))
    xs, ys = data(cfg, seed=rank)
    opt = optimizer(vt.optim, model.parameters(), cfg)
    step = training_step(model, vt.tensor(xs), vt.tensor(ys), opt, vt.nn.CrossEntropyLoss())
    for _ in range(2):  # AdamW state exists after the first step
        step()
    gc.collect()
    between = _arrays(tracemalloc.take_snapshot())
    best: list[Any] = [0, None]

    def watch(frame: Any, event: str, arg: Any) -> None:
        now = tracemalloc.get_traced_memory()[0]
        if now > best[0] + 32768:
            best[0], best[1] = now, tracemalloc.take_snapshot()

    if rank == 0:
        sys.setprofile(watch)
    step()
    sys.setprofile(None)
    dist.barrier()
    if rank != 0:
        return
    peak = _arrays(best[1])
    kept = sum(t.size for t in between.traces)
    top = sum(t.size for t in peak.traces)
    mib = 1 / 2**20
    bound = (16 * numel / world + 8 * unit) * 1.1
    print(f"{numel / 1e6:.1f} M parameters on {world} ranks; arrays between steps "
          f"{kept * mib:.2f} MiB, peak {top * mib:.2f} MiB vs bound state/{world} + largest "
          f"unit + 10% = {bound * mib:.2f} MiB {'ok' if top <= bound else 'ABOVE'}")
    print("alive at the peak beyond the arrays kept between steps (MiB, count, allocated at):")
    stats = [s for s in peak.compare_to(between, "traceback") if s.size_diff > 0]
    for s in stats[:args.top]:
        frames = [f for f in s.traceback if "volta_core" in f.filename
                  or "train_step_models" in f.filename]
        where = " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in frames[::-1][:4])
        print(f"  {s.size_diff * mib:8.2f} x{s.count_diff}  {where}")
    freed = -sum(s.size_diff for s in peak.compare_to(between, "traceback") if s.size_diff < 0)
    print(f"  (and {freed * mib:.2f} MiB kept between steps were freed by then: the previous "
          "step's gradients)")


if __name__ == "__main__":
    main()
