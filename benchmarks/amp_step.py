"""Mixed-precision training-step benchmark: Volta vs PyTorch at fp32, TF32 and bf16 autocast.

Models (identical in both frameworks, built from ``volta_core.nn`` or ``torch.nn``):

- ``mlp``: 784-512-512-10, ReLU, batch 256, Adam.
- ``lenet``: LeNet-5 on 1x28x28, batch 64, SGD.
- ``cnn``: 4 blocks of conv3x3 + BatchNorm + ReLU (32-64-128-256 channels, a 2x2 max-pool
  after blocks 2 and 4) on 3x32x32, batch 128, SGD with momentum.
- ``encoder``: token embedding + 4-layer pre-norm ``TransformerEncoder`` (d 512, 8 heads,
  ff 2048) + linear head, seq 256, batch 32, AdamW.
- ``resnet18`` and ``transformer``: ``benchmarks/train_step_models.py``'s models.

Each model runs at each precision: ``fp32`` (TF32 off everywhere), ``tf32``
(``allow_tf32`` on for matmuls and cuDNN) and ``bf16`` (``autocast(dtype=bfloat16)``,
TF32 on for what stays float32), PyTorch and Volta alternating in blocks of steps in the
same process; the table prints median ms per step and the throughput ratio Volta/PyTorch.
``--cuda-graphs`` adds both steps captured whole in a CUDA graph (``vt.cuda.graph``,
``capturable`` Adam/AdamW, autocast's cast cache off) with their throughput against
PyTorch eager.

``--curve`` instead runs N (default 500) bf16-autocast steps of the transformer in both
frameworks from the same initial weights and batches (dropout off) and checks that
Volta's loss curve follows PyTorch's within run-to-run noise (the batch-to-batch spread
of PyTorch's own losses over each window).

Usage::

    python benchmarks/amp_step.py [--device cuda] [--models mlp,cnn] [--precisions fp32,bf16]
        [--steps 30] [--warmup 5] [--json] [--cuda-graphs]
    python benchmarks/amp_step.py --curve [--curve-steps 500]
    python benchmarks/amp_step.py --memory-steps 2000 --models transformer,cnn
    python benchmarks/amp_step.py --device cpu --smoke      # tiny sizes, a few steps
    python benchmarks/amp_step.py --device wgpu --models cnn,encoder --precisions fp32,bf16 \
        [--compile]   # vs PyTorch CUDA on the same GPU; wgpu's "bf16" autocasts to float16
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from train_step_models import (  # noqa: E402
    CUDA_MODELS,
    graphed_step,
    optimizer,
    peer_device,
    time_steps,
)
from train_step_models import build as build_big  # noqa: E402
from train_step_models import data as data_big  # noqa: E402

import volta_core as vt  # noqa: E402

MODELS: dict[str, dict[str, Any]] = {
    "mlp": {"kind": "mlp", "sizes": (784, 512, 512, 10), "batch": 256, "optim": "adam",
            "lr": 1e-3},
    "lenet": {"kind": "lenet", "hw": 28, "batch": 64, "classes": 10, "optim": "sgd",
              "lr": 0.01},
    "cnn": {"kind": "cnn", "widths": (32, 64, 128, 256), "hw": 32, "batch": 128,
            "classes": 10, "optim": "sgd", "lr": 0.05, "momentum": 0.9},
    "encoder": {"kind": "transformer", "d_model": 512, "heads": 8, "ff": 2048, "layers": 4,
                "seq": 256, "batch": 32, "vocab": 1000, "dropout": 0.1, "norm_first": True,
                "optim": "adamw", "lr": 3e-4, "weight_decay": 0.01},
    "resnet18": CUDA_MODELS["resnet18"],
    "transformer": CUDA_MODELS["transformer"],
}
SMOKE: dict[str, dict[str, Any]] = {
    "mlp": {"sizes": (784, 64, 64, 10), "batch": 16},
    "lenet": {"batch": 8},
    "cnn": {"widths": (8, 8, 16, 16), "hw": 16, "batch": 4},
    "encoder": {"d_model": 32, "heads": 4, "ff": 64, "layers": 2, "seq": 16, "batch": 4,
                "vocab": 50},
    "resnet18": {"widths": (8, 8, 16, 16), "hw": 16, "batch": 4},
    "transformer": {"d_model": 32, "heads": 4, "ff": 64, "layers": 2, "seq": 16, "batch": 4,
                    "vocab": 50},
}
PRECISIONS = ("fp32", "tf32", "bf16")


# -- models -------------------------------------------------------------------------------

def _lenet(lib: Any, cfg: dict) -> Any:
    side = ((cfg["hw"] // 2) - 4) // 2
    return lib.Sequential(
        lib.Conv2d(1, 6, 5, padding=2), lib.ReLU(), lib.MaxPool2d(2),
        lib.Conv2d(6, 16, 5), lib.ReLU(), lib.MaxPool2d(2), lib.Flatten(),
        lib.Linear(16 * side * side, 120), lib.ReLU(), lib.Linear(120, 84), lib.ReLU(),
        lib.Linear(84, cfg["classes"]))


def _cnn(lib: Any, cfg: dict) -> Any:
    layers: list[Any] = []
    cin = 3
    for i, w in enumerate(cfg["widths"]):
        layers += [lib.Conv2d(cin, w, 3, padding=1, bias=False), lib.BatchNorm2d(w),
                   lib.ReLU()]
        if i % 2 == 1:
            layers.append(lib.MaxPool2d(2))
        cin = w
    layers += [lib.AdaptiveAvgPool2d(1), lib.Flatten(), lib.Linear(cin, cfg["classes"])]
    return lib.Sequential(*layers)


def build(lib: Any, cfg: dict) -> Any:
    """The model of ``cfg`` from ``lib`` (``volta_core.nn`` or ``torch.nn``)."""
    if cfg["kind"] == "lenet":
        return _lenet(lib, cfg)
    if cfg["kind"] == "cnn":
        return _cnn(lib, cfg)
    return build_big(lib, cfg)  # the transformers (pre-norm through cfg["norm_first"])


def data(cfg: dict, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A fixed random batch for ``cfg``."""
    rng = np.random.default_rng(seed)
    if cfg["kind"] == "lenet":
        x = rng.standard_normal((cfg["batch"], 1, cfg["hw"], cfg["hw"]), dtype=np.float32)
        return x, rng.integers(0, cfg["classes"], cfg["batch"]).astype(np.int64)
    if cfg["kind"] == "cnn":
        return data_big({**cfg, "kind": "resnet"}, seed)
    return data_big(cfg, seed)


# -- precision settings -------------------------------------------------------------------

def set_precision(precision: str) -> None:
    """TF32 flags of both frameworks for ``precision`` (bf16 keeps TF32 on, as users do)."""
    tf32 = precision != "fp32"
    vt.backends.cuda.matmul.allow_tf32 = tf32
    vt.backends.cudnn.allow_tf32 = tf32
    with contextlib.suppress(ImportError):
        import torch

        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32


def _step(lib: Any, model: Any, x: Any, y: Any, opt: Any, device_type: str,
          precision: str) -> Callable[[], Any]:
    lossf = lib.nn.CrossEntropyLoss()
    # wgpu has no bfloat16: its "bf16" row autocasts to float16 (the comparison)
    low = lib.float16 if device_type == "wgpu" else lib.bfloat16
    enabled = precision == "bf16"

    def step() -> Any:
        opt.zero_grad()
        with lib.autocast(device_type, dtype=low, enabled=enabled):
            loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def _graphed(lib: Any, model: Any, x: Any, y: Any, opt: Any, device_type: str,
             precision: str) -> Callable[[], Any]:
    """The step captured once in a CUDA graph and replayed (autocast's cast cache off, as
    PyTorch requires while capturing)."""
    enabled = precision == "bf16"
    return graphed_step(lib, model, x, y, opt, lib.nn.CrossEntropyLoss(), autocast=lambda:
                        lib.autocast(device_type, dtype=lib.bfloat16, enabled=enabled,
                                     cache_enabled=False))


def volta_step(cfg: dict, device: str, precision: str, graphed: bool = False,
               compiled: bool = False) -> Callable[[], Any]:
    """One Volta training step of ``cfg``'s model (returns the loss tensor); ``graphed``:
    as a CUDA graph replay; ``compiled``: the model through
    ``vt.compile(mode="reduce-overhead")``."""
    vt.manual_seed(0)
    model = build(vt.nn, cfg).to(device)
    if compiled:
        model = vt.compile(model, mode="reduce-overhead")
    xs, ys = data(cfg)
    x, y = vt.tensor(xs, device=device), vt.tensor(ys, device=device)
    opt = optimizer(vt.optim, model.parameters(), cfg, capturable=graphed)
    make = _graphed if graphed else _step
    return make(vt, model, x, y, opt, vt.device(device).type, precision)


def torch_step(cfg: dict, device: str, precision: str,
               graphed: bool = False) -> Callable[[], Any] | None:
    """The same step in PyTorch, or None where torch (with the device) is missing."""
    try:
        import torch
    except ImportError:
        return None
    if device.startswith("cuda") and not torch.cuda.is_available():
        return None
    torch.manual_seed(0)
    dev = peer_device(device)  # wgpu on an NVIDIA GPU: PyTorch CUDA on the same GPU
    model = build(torch.nn, cfg).to(dev)
    xs, ys = data(cfg)
    x, y = torch.from_numpy(xs).to(dev), torch.from_numpy(ys).to(dev)
    opt = optimizer(torch.optim, model.parameters(), cfg, capturable=graphed)
    return (_graphed if graphed else _step)(torch, model, x, y, opt, dev, precision)


def _syncs(device: str) -> dict[str, Callable[[], None]]:
    out: dict[str, Callable[[], None]] = {"volta": lambda: vt.synchronize(device)}
    with contextlib.suppress(ImportError):
        import torch

        out["torch"] = (torch.cuda.synchronize if peer_device(device) == "cuda"
                        else (lambda: None))
    return out


def compare(names: list[str], precisions: list[str], device: str, n: int, warmup: int,
            configs: dict[str, dict], compiled: bool = False,
            graphs: bool = False) -> list[dict[str, Any]]:
    """Median ms per step of every model at every precision, and the throughput ratio
    (``graphs``: also both steps as CUDA graph replays, against PyTorch eager)."""
    rows = []
    for name in names:
        for precision in precisions:
            set_precision(precision)
            cfg = configs[name]
            steps: dict[str, Callable[[], Any]] = {"volta": volta_step(cfg, device, precision)}
            if graphs:
                steps["volta_graph"] = volta_step(cfg, device, precision, graphed=True)
            if compiled and vt.device(device).type == "cuda":
                # as PyTorch programs compile: the model (its forward and backward replay
                # as CUDA graphs from its second call), the loss and optimizer eager
                steps["volta"] = volta_step(cfg, device, precision, compiled=True)
            elif compiled:  # the whole step recorded and replayed (returns the loss detached)
                step = steps["volta"]
                steps["volta"] = vt.compile(lambda step=step: step().detach(),
                                            mode="reduce-overhead")
                # state made, two equal recordings, then the first replays (on an H100 the
                # first few took 4x the steady time)
                warmup = max(warmup, 10)
            ts = torch_step(cfg, device, precision)
            if ts is not None:
                steps["torch"] = ts
                if graphs:
                    steps["torch_graph"] = torch_step(cfg, device, precision, graphed=True)
            syncs = _syncs(device)
            syncs.update({f"{k}_graph": f for k, f in syncs.items()})
            med = time_steps(steps, syncs, n, warmup)
            row: dict[str, Any] = {"model": name, "precision": precision}
            row.update({f"{k}_ms": v * 1e3 for k, v in med.items()})
            if "torch" in med:
                row.update(throughput_ratio=med["torch"] / med["volta"])
                if graphs:
                    row.update(graph_ratio=med["torch"] / med["volta_graph"],
                               torch_graph_ratio=med["torch"] / med["torch_graph"])
            rows.append(row)
            del steps
            if device.startswith("cuda"):
                with contextlib.suppress(Exception):
                    vt.cuda.empty_cache()
    set_precision("fp32")
    return rows


# -- loss curve ---------------------------------------------------------------------------

def loss_curve(cfg: dict, device: str, steps: int, window: int = 50) -> dict[str, Any]:
    """``steps`` bf16-autocast steps of ``cfg``'s transformer in both frameworks from the
    same weights and batches; Volta follows PyTorch when, in every window, the gap of the
    mean losses is within the larger of 3 standard errors of PyTorch's losses there and 2 %
    (bfloat16 rounding differs between the frameworks' kernels)."""
    import torch

    cfg = {**cfg, "dropout": 0.0}
    dev = "cuda" if device.startswith("cuda") else "cpu"
    torch.manual_seed(0)
    tmodel = build(torch.nn, cfg).to(dev)
    vmodel = build(vt.nn, cfg)
    vmodel.load_state_dict({k: vt.tensor(v.detach().cpu().numpy())
                            for k, v in tmodel.state_dict().items()})
    vmodel = vmodel.to(device)
    topt = optimizer(torch.optim, tmodel.parameters(), cfg)
    vopt = optimizer(vt.optim, vmodel.parameters(), cfg)
    set_precision("bf16")
    rng = np.random.default_rng(1)
    losses: dict[str, list[float]] = {"volta": [], "torch": []}
    vtype = vt.device(device).type
    for _ in range(steps):
        tokens = rng.integers(0, cfg["vocab"], (cfg["batch"], cfg["seq"]))
        target = ((tokens + 1) % cfg["vocab"]).reshape(-1)  # learnable: next token id
        for lib, model, opt, dv in ((torch, tmodel, topt, dev), (vt, vmodel, vopt, device)):
            x = lib.tensor(tokens, device=dv)
            y = lib.tensor(target, device=dv)
            opt.zero_grad()
            with lib.autocast(vtype if lib is vt else dev, dtype=lib.bfloat16):
                loss = lib.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses["volta" if lib is vt else "torch"].append(float(loss.item()))
    set_precision("fp32")
    ok = True
    windows = []
    for s in range(0, steps, window):
        t = np.array(losses["torch"][s:s + window])
        v = np.array(losses["volta"][s:s + window])
        noise = max(3 * t.std() / np.sqrt(len(t)), 0.02 * abs(t.mean()))
        gap = abs(v.mean() - t.mean())
        windows.append({"start": s, "torch": float(t.mean()), "volta": float(v.mean()),
                        "gap": float(gap), "noise": float(noise)})
        ok &= bool(gap <= noise)
    return {"steps": steps, "windows": windows, "follows_torch": ok,
            "first": {k: v[0] for k, v in losses.items()},
            "last": {k: float(np.mean(v[-window:])) for k, v in losses.items()}}


def memory_check(cfg: dict, device: str, steps: int, warmup: int = 20) -> dict[str, Any]:
    """``steps`` bf16-autocast Volta steps: the peak allocation must not grow after warm-up
    (within 1 % or 1 MiB)."""
    set_precision("bf16")
    step = volta_step(cfg, device, "bf16")
    for _ in range(warmup):
        step()
    vt.cuda.synchronize()
    vt.cuda.reset_peak_memory_stats()
    for _ in range(3):
        step()
    vt.cuda.synchronize()
    base = vt.cuda.max_memory_allocated()
    for _ in range(steps):
        step()
    vt.cuda.synchronize()
    end = vt.cuda.max_memory_allocated()
    set_precision("fp32")
    return {"steps": steps, "base_mib": base / 2**20, "end_mib": end / 2**20,
            "flat": end <= base + max(base // 100, 2**20)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated subset of: " + ", ".join(MODELS))
    parser.add_argument("--precisions", default=",".join(PRECISIONS))
    parser.add_argument("--steps", type=int, default=30, help="timed steps per case")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    parser.add_argument("--smoke", action="store_true", help="tiny models, 3 steps each")
    parser.add_argument("--curve", action="store_true",
                        help="check the bf16 transformer loss curve against PyTorch")
    parser.add_argument("--curve-steps", type=int, default=500)
    parser.add_argument("--memory-steps", type=int, default=0,
                        help="instead run N bf16-autocast Volta steps per model (cuda), "
                             "checking that peak memory stays flat")
    parser.add_argument("--compile", action="store_true",
                        help="Volta's step through vt.compile(mode='reduce-overhead') (replayed "
                             "on wgpu)")
    parser.add_argument("--cuda-graphs", action="store_true",
                        help="also time both steps captured in a CUDA graph (cuda only)")
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    args = parser.parse_args(argv)
    if args.cuda_graphs and not args.device.startswith("cuda"):
        parser.error("--cuda-graphs needs --device cuda")
    configs = {k: {**v, **(SMOKE[k] if args.smoke else {})} for k, v in MODELS.items()}
    if args.smoke:
        args.steps, args.warmup = min(args.steps, 3), min(args.warmup, 1)
        args.curve_steps = min(args.curve_steps, 40)
    if args.device.startswith("cuda") and not vt.cuda.is_available():
        print("CUDA is not available:", vt.backends(), file=sys.stderr)
        return 1
    if args.memory_steps:
        flat = True
        for name in args.models.split(","):
            m = memory_check(configs[name], args.device, args.memory_steps)
            flat &= m["flat"]
            print(f"{name:>12}: peak {m['base_mib']:.1f} MiB after warm-up, "
                  f"{m['end_mib']:.1f} MiB after {m['steps']} bf16 steps -> "
                  f"{'flat' if m['flat'] else 'GROWING'}")
        return 0 if flat else 2
    if args.curve:
        result = loss_curve(configs["transformer"], args.device, args.curve_steps,
                            window=10 if args.smoke else 50)
        if args.json:
            print(json.dumps(result, indent=2))
        else:
            for w in result["windows"]:
                print(f"steps {w['start']:4d}+: torch {w['torch']:.4f} volta {w['volta']:.4f}"
                      f" gap {w['gap']:.4f} (noise {w['noise']:.4f})")
            print("volta follows torch" if result["follows_torch"] else "CURVES DIVERGE")
        return 0 if result["follows_torch"] else 2
    rows = compare(args.models.split(","), args.precisions.split(","), args.device,
                   args.steps, args.warmup, configs, args.compile, args.cuda_graphs)
    if args.json:
        print(json.dumps({"device": args.device, "timing": rows}, indent=2))
        return 0
    name = vt.cuda.get_device_name() if args.device.startswith("cuda") else args.device
    print(f"{name}: ms per training step (median), throughput ratio volta/torch"
          + (" (volta compiled: vt.compile(mode='reduce-overhead'))" if args.compile else ""))
    for r in rows:
        line = f"{r['model']:>12} {r['precision']:>5}: volta {r['volta_ms']:9.2f}"
        if "torch_ms" in r:
            line += f" | torch {r['torch_ms']:9.2f} | ratio {r['throughput_ratio']:.2f}"
        if "graph_ratio" in r:
            line += (f" || graphs: volta {r['volta_graph_ms']:8.2f} | torch "
                     f"{r['torch_graph_ms']:8.2f} | vs torch eager: volta "
                     f"{r['graph_ratio']:.2f}, torch {r['torch_graph_ratio']:.2f}")
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
