"""How much of a CPU training step the NumPy backend's threads can share (Amdahl's law).

Runs each ``train_step.py`` model on one thread and measures, per step, the CPU time spent
inside the backend's parallel loops (``volta_numpy.parallel.parallel_for``: convolution,
pooling, large matrix products, the multi-tensor optimizer steps, the row-wise and
elementwise kernels) and outside them (Python, autograd, the kernels that run on one
thread). With ``n`` threads a step can take no less than ``serial + parallel / n``. The
CPU time of the one thread is measured (``time.thread_time``), so the split is stable on
a busy machine, where the wall time of a two-thread run is not.

Usage::

    python benchmarks/cpu_parallel_share.py [--models mlp,lenet,lstm_lm,gpt] [--steps 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import train_step  # noqa: E402

import volta_core as vt  # noqa: E402


def _instrument(threads: int) -> list:
    """Time every parallel loop; matrix products take the path they take on ``threads``
    threads (blocks, run one after the other here). Returns ``[seconds, loops]``."""
    from volta_numpy import conv, kernels, namespace, normalization, optim, parallel, pooling

    inside = [0.0, 0]
    run = parallel.parallel_for

    def timed(fn, pieces):
        t0 = time.thread_time()
        run(fn, pieces)
        inside[0] += time.thread_time() - t0
        inside[1] += 1

    for module in (conv, kernels, namespace, normalization, optim, pooling):
        if hasattr(module, "parallel_for"):
            module.parallel_for = timed
    # products, elementwise kernels and optimizer steps cut as on `threads` threads
    namespace.get_num_threads = optim.get_num_threads = lambda: threads
    cut = parallel.split

    def split(n, min_size, max_size=1 << 20):
        saved, parallel._threads = parallel._threads, threads
        try:
            return cut(n, min_size, max_size)
        finally:
            parallel._threads = saved

    kernels.split = split
    return inside


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(train_step.MODELS))
    parser.add_argument("--steps", type=int, default=20, help="measured steps per model")
    parser.add_argument("--threads", type=int, default=2,
                        help="thread count of the estimate (default 2)")
    args = parser.parse_args(argv)
    vt.set_num_threads(1)
    inside = _instrument(args.threads)
    print(f"per step, one thread; bound for {args.threads} threads = serial + "
          f"parallel / {args.threads}")
    for name in args.models.split(","):
        step = train_step.volta_step(train_step.MODELS[name], "cpu")
        for _ in range(3):
            step()
        total, par, loops = [], [], []
        for _ in range(args.steps):
            inside[:] = [0.0, 0]
            t0 = time.thread_time()
            step()
            total.append(time.thread_time() - t0)
            par.append(inside[0])
            loops.append(inside[1])
        t, p = statistics.median(total) * 1e3, statistics.median(par) * 1e3
        print(f"{name:>8}: {t:7.2f} ms CPU | parallel loops {p:7.2f} ms "
              f"({statistics.median(loops):.0f} loops) | serial {t - p:7.2f} ms | "
              f"bound {t - p + p / args.threads:7.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
