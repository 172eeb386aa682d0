"""Where a wgpu training step spends its GPU time, kernel by kernel, next to PyTorch CUDA.

For each model (``train_step.py``'s, with the wgpu CNN and encoder), one step after the
warm-up runs under :func:`volta_wgpu.profiler.profile` (timestamps the GPU writes around
each dispatch) and the kernels are listed by GPU time. Where PyTorch has CUDA, the same
step of its model runs under ``torch.profiler`` and its total kernel time is printed
beside Volta's, with the ratio; ``--torch-rows`` lists its kernels too.

Usage::

    python benchmarks/wgpu_profile.py [--models cnn,encoder] [--compile] [--rows 25]
        [--torch-rows 0] [--smoke]

``--compile`` profiles the step replayed by ``vt.compile(mode="reduce-overhead")`` (the
kernels of the lazy step, without its host work); ``--smoke`` shrinks the CNN and the
encoder (a software adapter).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import train_step as ts  # noqa: E402

import volta_core as vt  # noqa: E402


def _torch_kernels(cfg: dict[str, Any], rows: int) -> tuple[float, str] | None:
    """PyTorch CUDA's kernel time of one step (seconds) and its top kernels."""
    try:
        import torch
        from torch.profiler import ProfilerActivity
        from torch.profiler import profile as torch_profile
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    ts.set_tf32(False)
    step = ts.torch_step(cfg, "wgpu")
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    events = [e for e in prof.key_averages() if e.device_type.name == "CUDA"]
    total = sum(e.self_device_time_total for e in events) * 1e-6
    table = "\n".join(f"{e.self_device_time_total:10.1f} {e.count:6d}  {e.key[:90]}"
                      for e in sorted(events, key=lambda e: -e.self_device_time_total)[:rows])
    return total, table


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="cnn,encoder")
    p.add_argument("--compile", action="store_true", help="profile the compiled step")
    p.add_argument("--rows", type=int, default=25, help="Volta kernels listed")
    p.add_argument("--torch-rows", type=int, default=0, help="PyTorch kernels listed")
    p.add_argument("--smoke", action="store_true", help="tiny CNN and encoder")
    args = p.parse_args(argv)
    from volta_wgpu.profiler import profile

    models = {**ts.MODELS, **ts.DEVICE_MODELS["wgpu"]}
    mode = "compiled" if args.compile else "lazy"
    for name in args.models.split(","):
        cfg = models[name]
        if args.smoke:
            cfg = {**cfg, **ts.AMP_SMOKE.get(name, {})}
        step = ts.wgpu_step(cfg, "wgpu", mode)
        for _ in range(4):  # a compiled step replays from its 4th call
            step()
        vt.wgpu.synchronize()
        with profile() as prof:
            step()
        print(f"== {name} on {vt.wgpu.get_device_name()} ({mode} step): "
              f"GPU {prof.total() * 1e3:.3f} ms in {len(prof.times)} dispatches")
        print(prof.table(args.rows))
        peer = _torch_kernels(cfg, args.torch_rows)
        if peer is not None:
            total, table = peer
            print(f"   PyTorch CUDA kernels: {total * 1e3:.3f} ms per step; Volta's GPU time "
                  f"is {prof.total() / total:.2f}x")
            if args.torch_rows:
                print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
