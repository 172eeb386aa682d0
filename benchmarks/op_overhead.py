"""Per-op overhead: forward + backward of a chain of small elementwise ops.

A chain of 100 elementwise ops on a 16-element tensor, forward then backward,
timed per op in microseconds, side by side with PyTorch when it is installed (on the same
GPU for cuda and wgpu when PyTorch has CUDA, else on the CPU). Both frameworks run their CPU
ops on ``--threads`` threads (default 1: 16-element ops never use more); the count is
printed. The two are timed alternately, run by run, in one process, so load on a shared
machine falls on both alike.

Usage: python benchmarks/op_overhead.py [--ops 100] [--repeat 50] [--threads 1]
    [--json out.json] [--device wgpu [--lazy on|off] [--compile [MODE]]]

On wgpu, ``--lazy`` sets the backend's lazy fusion, ``--compile`` runs the chain's forward
and backward through ``vt.compile`` (``mode="reduce-overhead"`` unless MODE is given:
``default`` only turns lazy fusion on; ``reduce-overhead`` replays the recorded GPU work),
and the dispatches per chain are printed.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time


def chain(lib, x, n_ops: int):
    """The benchmarked chain: a rotation of cheap differentiable elementwise ops."""
    y = x
    for i in range(n_ops):
        k = i % 4
        if k == 0:
            y = y * 1.001
        elif k == 1:
            y = y + x
        elif k == 2:
            y = lib.tanh(y)
        else:
            y = y - 0.5
    return y.sum()


def _run(lib, run: list, x, n_ops: int) -> None:
    """The timed work: ``run[0](x)`` when given, else the chain's forward and backward."""
    if run:
        run[0](x)
    else:
        chain(lib, x, n_ops).backward()


def time_lib(lib, make_leaf, n_ops: int, repeat: int, sync=lambda: None) -> float:
    """Median microseconds per op over ``repeat`` runs of forward + backward.

    ``sync`` waits for the device, so a GPU's queued work is inside the timing.
    """
    return time_libs({"lib": (lib, make_leaf, sync)}, n_ops, repeat)["lib"]


def time_libs(libs: dict, n_ops: int, repeat: int) -> dict[str, float]:
    """``time_lib`` for several ``name: (lib, make_leaf, sync[, run])``, alternating run by
    run; ``run(x)``, when given, replaces the chain's forward and backward."""
    samples: dict[str, list[float]] = {name: [] for name in libs}
    for _ in range(repeat + 5):
        for name, (lib, make_leaf, sync, *run) in libs.items():
            x = make_leaf()
            sync()
            t0 = time.perf_counter()
            _run(lib, run, x, n_ops)
            sync()
            samples[name].append((time.perf_counter() - t0) / n_ops * 1e6)
    return {name: statistics.median(s[5:]) for name, s in samples.items()}


def wgpu_phases(eng, lib_entry: tuple, n_ops: int, repeat: int) -> dict[str, float]:
    """Median microseconds per op of a wgpu chain's phases: ``host`` (Python: recording or
    replaying the ops, and the kernels run on the way), ``flush`` (running the graphs still
    pending and submitting), ``wait`` (the device executing the rest: on lavapipe the
    shaders run on this CPU)."""
    lib, make_leaf, sync, *run = lib_entry
    samples: dict[str, list[float]] = {"host": [], "flush": [], "wait": []}
    for _ in range(max(repeat, 3) + 2):
        x = make_leaf()
        sync()
        t0 = time.perf_counter()
        _run(lib, run, x, n_ops)
        t1 = time.perf_counter()
        eng.flush()
        t2 = time.perf_counter()
        sync()
        t3 = time.perf_counter()
        for k, v in zip(samples, (t1 - t0, t2 - t1, t3 - t2)):
            samples[k].append(v / n_ops * 1e6)
    return {k: statistics.median(v[2:]) for k, v in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1,
                        help="CPU threads of both frameworks")
    parser.add_argument("--json", default=None)
    parser.add_argument("--lazy", choices=("on", "off"), default=None,
                        help="wgpu: lazy fusion on or off (default: the backend's default)")
    parser.add_argument("--compile", nargs="?", const="reduce-overhead", default=None,
                        metavar="MODE", help="run Volta's chain through vt.compile(mode=MODE)"
                        " (default reduce-overhead)")
    args = parser.parse_args()

    import volta_core as vt

    if args.lazy is not None and args.device.startswith("wgpu"):
        vt.wgpu.set_lazy(args.lazy == "on")

    vt.set_num_threads(args.threads)
    results = {"machine": platform.processor() or platform.machine(), "device": args.device,
               "threads": args.threads}
    libs = {"volta": (vt, lambda: vt.randn(16, device=args.device, requires_grad=True),
                      vt.device(args.device).synchronize)}
    if args.compile:  # forward and backward inside one compiled function
        libs["volta"] += (vt.compile(lambda x: chain(vt, x, args.ops).backward(),
                                     mode=args.compile),)
    try:
        import torch
    except ImportError:
        torch = None
        print("torch not installed: no peer measured (pip install torch==2.13.0)")
    else:
        from train_step_models import peer_device

        torch.set_num_threads(args.threads)
        tdev = peer_device(args.device)
        libs["torch"] = (torch, lambda: torch.randn(16, device=tdev, requires_grad=True),
                         torch.cuda.synchronize if tdev == "cuda" else (lambda: None))
    us = time_libs(libs, args.ops, args.repeat)
    volta_us = results["volta_us_per_op"] = us["volta"]
    mode = ""
    if args.device.startswith("wgpu"):
        from volta_wgpu.engine import get_engine

        eng = get_engine()
        d0 = eng.dispatch_count
        time_libs({"volta": libs["volta"]}, args.ops, 1)
        results["lazy"] = vt.wgpu.is_lazy() or bool(args.compile)
        results["dispatches_per_run"] = (eng.dispatch_count - d0) // 6
        mode = (f", lazy {'on' if results['lazy'] else 'off'}"
                f"{f' (compile, {args.compile})' if args.compile else ''}, "
                f"{results['dispatches_per_run']} dispatches per chain")
        results["phases_us_per_op"] = phases = wgpu_phases(eng, libs["volta"], args.ops,
                                                           args.repeat)
    print(f"volta  ({args.device}, {args.threads} threads{mode}): {volta_us:8.2f} us/op "
          "(forward + backward, median)")
    if args.device.startswith("wgpu"):
        print("       of which: " + ", ".join(f"{k} {v:.2f}" for k, v in phases.items())
              + " us/op")
    if torch is not None:
        torch_us = us["torch"]
        results["torch_us_per_op"] = torch_us
        results["ratio"] = volta_us / torch_us
        print(f"torch  ({tdev}, {torch.get_num_threads()} threads): {torch_us:8.2f} us/op")
        print(f"ratio volta/torch: {volta_us / torch_us:.2f}x (target <= 1.2x)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
