"""Per-op overhead: forward + backward of a chain of small elementwise ops.

A chain of 100 elementwise ops on a 16-element tensor, forward then backward,
timed per op in microseconds, side by side with PyTorch when it is installed (on the same
GPU for cuda and wgpu when PyTorch has CUDA, else on the CPU, single-threaded).

Usage: python benchmarks/op_overhead.py [--ops 100] [--repeat 50] [--json out.json]
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


def time_lib(lib, make_leaf, n_ops: int, repeat: int, sync=lambda: None) -> float:
    """Median microseconds per op over ``repeat`` runs of forward + backward.

    ``sync`` waits for the device, so a GPU's queued work is inside the timing.
    """
    samples = []
    for _ in range(repeat + 5):
        x = make_leaf()
        sync()
        t0 = time.perf_counter()
        loss = chain(lib, x, n_ops)
        loss.backward()
        sync()
        samples.append((time.perf_counter() - t0) / n_ops * 1e6)
    return statistics.median(samples[5:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    import volta_core as vt

    results = {"machine": platform.processor() or platform.machine(), "device": args.device}
    volta_us = time_lib(vt, lambda: vt.randn(16, device=args.device, requires_grad=True),
                        args.ops, args.repeat, vt.device(args.device).synchronize)
    results["volta_us_per_op"] = volta_us
    print(f"volta  ({args.device}): {volta_us:8.2f} us/op (forward + backward, median)")
    try:
        import torch
    except ImportError:
        print("torch not installed: no peer measured (pip install torch==2.13.0)")
    else:
        from train_step_models import peer_device

        torch.set_num_threads(1)
        tdev = peer_device(args.device)
        torch_us = time_lib(torch, lambda: torch.randn(16, device=tdev, requires_grad=True),
                            args.ops, args.repeat,
                            torch.cuda.synchronize if tdev == "cuda" else (lambda: None))
        results["torch_us_per_op"] = torch_us
        results["ratio"] = volta_us / torch_us
        print(f"torch  ({tdev}): {torch_us:8.2f} us/op")
        print(f"ratio volta/torch: {volta_us / torch_us:.2f}x (target <= 3x)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
