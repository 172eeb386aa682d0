"""Helpers shared by the examples: the common command line, the success check, plotting.

Not an example itself. Every example accepts ``--device`` and ``--smoke`` (a fast mode
that still checks a looser success criterion), prints what it learned, and ends with
one line starting ``PASS:`` when its criterion holds; otherwise it exits non-zero with a
line starting ``FAIL:``. ``tests/examples/test_examples.py`` relies on both.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import volta_core as vt

# These models are tiny: OpenBLAS's thread pool costs more than it gains on them, and on
# a busy 2-core machine its spinning threads made small GEMMs ~100x slower. One BLAS
# thread unless the user says otherwise (set OPENBLAS_NUM_THREADS to override). Volta
# imports NumPy only on first device use, so this still takes effect here.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def make_parser(doc: str, out: str) -> argparse.ArgumentParser:
    """An argument parser with ``--device``, ``--smoke``, ``--seed`` and ``--out``."""
    parser = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    parser.add_argument("--device", default=None,
                        help="cpu, cuda, wgpu or auto (default: $VOLTA_DEVICE or cpu)")
    parser.add_argument("--smoke", action="store_true",
                        help="a fast run (a few seconds) with a looser success criterion")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=out, help="folder for plots and checkpoints")
    return parser


def setup(args: argparse.Namespace) -> tuple[vt.Device, Path]:
    """Seed Volta, pick the device, create the output folder; print the device."""
    vt.manual_seed(args.seed)
    device = vt.device(args.device)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    mode = " (smoke mode)" if args.smoke else ""
    print(f"device: {device} ({device.name}){mode}")
    return device, out


def check(ok: bool, criterion: str) -> None:
    """Print ``PASS: criterion`` or exit with status 1 and ``FAIL: criterion``."""
    if not ok:
        raise SystemExit(f"FAIL: {criterion}")
    print(f"PASS: {criterion}")


def pyplot() -> Any:
    """``matplotlib.pyplot`` with the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Path) -> None:
    """Save a matplotlib figure as PNG, close it and print where it went."""
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    pyplot().close(fig)
    print(f"plot: {path}")


def image_grid(images: Any, path: Path, title: str, nrow: int = 8) -> None:
    """Save ``images`` (a host array ``(n, h, w)`` or ``(n, 1, h, w)``) as a grid PNG,
    ``nrow`` images per row."""
    plt = pyplot()
    n = images.shape[0]
    rows = (n + nrow - 1) // nrow
    fig, axes = plt.subplots(rows, nrow, figsize=(nrow * 0.8, rows * 0.8 + 0.4))
    for i, ax in enumerate(axes.flat):
        ax.axis("off")
        if i < n:
            ax.imshow(images[i].reshape(images.shape[-2:]), cmap="gray_r", vmin=0, vmax=1)
    fig.suptitle(title)
    save_figure(fig, path)


class Timer:
    """``with Timer() as t: ...`` then ``t.seconds``."""

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        self.seconds = 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start
