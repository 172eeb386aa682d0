"""Batches per second of Volta's DataLoader against PyTorch's, on the same data.

The data is an in-memory float32 matrix (60,000 x 784 by default, MNIST-sized) with
int64 labels, read in shuffled batches of 256 with 0 and 2 worker processes. Two kinds
of dataset are timed in both frameworks:

* ``tensor``: each framework's ``TensorDataset`` (Volta gathers a batch with one ``take``
  per tensor; PyTorch indexes and stacks sample by sample);
* ``per-sample``: a plain ``Dataset`` returning ``(NumPy row, int label)``, collated by
  each framework's default collate function (the same Python work on both sides).

A run is one full epoch, worker start-up included; the table shows the median over
``--repeats`` runs and the ratio Volta / PyTorch (> 1: Volta is faster).

Usage::

    python benchmarks/dataloader.py [--n 60000] [--batch-size 256] [--workers 0 2]
                                    [--repeats 5] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import volta_core as vt
from volta_core import data as vdata


class RowDataset:
    """Sample i: (row i of ``x`` as a NumPy array, label i as a Python int)."""

    def __init__(self, x: np.ndarray, y: np.ndarray) -> None:
        self.x, self.y = x, y.tolist()

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int) -> tuple[np.ndarray, int]:
        return self.x[i], self.y[i]


class VoltaRows(RowDataset, vdata.Dataset):
    pass


def _epoch(make_loader: Callable[[], Any]) -> float:
    """Batches per second over one epoch (loader creation and worker start included)."""
    start = time.perf_counter()
    n = 0
    for batch in make_loader():
        n += 1
        del batch
    return n / (time.perf_counter() - start)


def _loader_epoch(loader_cls: Any, dataset: Any, generator: Any, kw: dict
                  ) -> Callable[[], float]:
    return lambda: _epoch(lambda: loader_cls(dataset, generator=generator, **kw))


def _median(fn: Callable[[], float], repeats: int) -> float:
    fn()  # warm-up: imports, first-use caches, page faults
    return statistics.median(fn() for _ in range(repeats))


def run(args: argparse.Namespace) -> list[dict]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.n, args.dim), dtype=np.float32)
    y = rng.integers(0, 10, size=args.n, dtype=np.int64)
    try:
        import torch
        from torch.utils import data as tdata
    except ImportError:
        torch = tdata = None
        print("PyTorch is not installed: timing Volta only", file=sys.stderr)

    class TorchRows(RowDataset, *(() if tdata is None else (tdata.Dataset,))):
        pass

    vds = {"tensor": vdata.TensorDataset(vt.from_numpy(x), vt.from_numpy(y)),
           "per-sample": VoltaRows(x, y)}
    tds = {} if torch is None else {
        "tensor": tdata.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
        "per-sample": TorchRows(x, y)}
    rows = []
    for kind in ("tensor", "per-sample"):
        for workers in args.workers:
            reps = args.repeats if workers == 0 else max(1, args.repeats // 2 + 1)
            kw = dict(batch_size=args.batch_size, shuffle=True, num_workers=workers)
            v = _median(_loader_epoch(vdata.DataLoader, vds[kind], 0, kw), reps)
            t = None
            if torch is not None:
                g = torch.Generator().manual_seed(0)
                t = _median(_loader_epoch(tdata.DataLoader, tds[kind], g, kw), reps)
            rows.append({"dataset": kind, "num_workers": workers, "volta_batches_s": v,
                         "torch_batches_s": t, "ratio": None if t is None else v / t,
                         "repeats": reps})
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=60_000, help="samples")
    p.add_argument("--dim", type=int, default=784, help="features per sample")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--workers", type=int, nargs="+", default=[0, 2])
    p.add_argument("--repeats", type=int, default=5, help="epochs timed per configuration")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = p.parse_args(argv)
    rows = run(args)
    print(f"DataLoader: {args.n} x {args.dim} float32, batch {args.batch_size}, shuffle; "
          "median batches/s over full epochs")
    print(f"{'dataset':<11} {'workers':>7} {'volta b/s':>10} {'torch b/s':>10} {'ratio':>7}")
    for r in rows:
        t = "-" if r["torch_batches_s"] is None else f"{r['torch_batches_s']:.1f}"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        print(f"{r['dataset']:<11} {r['num_workers']:>7} {r['volta_batches_s']:>10.1f} "
              f"{t:>10} {ratio:>7}")
    if args.json:
        try:
            import torch

            torch_version = torch.__version__
        except ImportError:
            torch_version = None
        meta = {"n": args.n, "dim": args.dim, "batch_size": args.batch_size,
                "python": platform.python_version(), "torch": torch_version,
                "machine": platform.machine(), "volta": vt.__version__}
        with open(args.json, "w") as f:
            json.dump({"benchmark": "dataloader", "config": meta, "results": rows}, f,
                      indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
