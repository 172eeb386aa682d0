"""CUDA acceptance benchmarks: big models, Volta vs PyTorch, same run, same GPU.

Models (identical in both frameworks, built from ``volta_core.nn`` or ``torch.nn``):

- ``mlp_big``: MLP 784-4096-4096-10, ReLU, batch 1024, Adam, cross entropy.
- ``resnet18``: ResNet-18-style CNN for 3x32x32 (BasicBlocks [2, 2, 2, 2], 64-128-256-512
  channels, BatchNorm), batch 256, SGD with momentum 0.9, cross entropy.
- ``transformer``: token embedding + 4-layer ``TransformerEncoder`` (d=512, 8 heads, ff
  2048, batch_first) + linear head, seq 256, batch 32, vocab 1000, AdamW; the head's
  output is flattened to ``(batch * seq, vocab)`` so the loss is a plain cross entropy.

Usage::

    python benchmarks/train_step_models.py [--models mlp_big,resnet18,transformer]
        [--steps 30] [--warmup 5] [--tf32] [--memory-steps 2000] [--json]

Prints the median step time of each framework and the throughput ratio Volta/PyTorch
(> 1 means Volta is faster). ``--memory-steps N`` also runs N Volta steps per model and
checks that ``vt.cuda.max_memory_allocated()`` stays flat after warm-up.
``benchmarks/train_step.py`` can reuse ``CUDA_MODELS``, ``build``, ``data`` and
``optimizer`` (see its ``DEVICE_MODELS``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import volta_core as vt  # noqa: E402

CUDA_MODELS: dict[str, dict[str, Any]] = {
    "mlp_big": {"kind": "mlp", "sizes": (784, 4096, 4096, 10), "batch": 1024, "optim": "adam",
                "lr": 1e-3},
    "resnet18": {"kind": "resnet", "blocks": (2, 2, 2, 2), "widths": (64, 128, 256, 512),
                 "hw": 32, "batch": 256, "classes": 10, "optim": "sgd", "lr": 0.1,
                 "momentum": 0.9},
    "transformer": {"kind": "transformer", "d_model": 512, "heads": 8, "ff": 2048,
                    "layers": 4, "seq": 256, "batch": 32, "vocab": 1000, "dropout": 0.1,
                    "optim": "adamw", "lr": 3e-4, "weight_decay": 0.01},
}
KINDS = {"mlp", "resnet", "transformer"}


# -- models -------------------------------------------------------------------------------

def _mlp(lib: Any, cfg: dict) -> Any:
    sizes = cfg["sizes"]
    layers: list[Any] = []
    for i in range(len(sizes) - 1):
        layers.append(lib.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(lib.ReLU())
    return lib.Sequential(*layers)


def _resnet(lib: Any, cfg: dict) -> Any:
    class BasicBlock(lib.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.conv1 = lib.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
            self.bn1 = lib.BatchNorm2d(cout)
            self.conv2 = lib.Conv2d(cout, cout, 3, stride=1, padding=1, bias=False)
            self.bn2 = lib.BatchNorm2d(cout)
            self.relu = lib.ReLU()
            self.short = lib.Sequential()
            if stride != 1 or cin != cout:
                self.short = lib.Sequential(lib.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                            lib.BatchNorm2d(cout))

        def forward(self, x: Any) -> Any:
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + self.short(x))

    widths = cfg["widths"]
    layers: list[Any] = [lib.Conv2d(3, widths[0], 3, padding=1, bias=False),
                         lib.BatchNorm2d(widths[0]), lib.ReLU()]
    cin = widths[0]
    for stage, (n, w) in enumerate(zip(cfg["blocks"], widths)):
        for b in range(n):
            layers.append(BasicBlock(cin, w, 2 if stage > 0 and b == 0 else 1))
            cin = w
    layers += [lib.AdaptiveAvgPool2d(1), lib.Flatten(), lib.Linear(cin, cfg["classes"])]
    return lib.Sequential(*layers)


def _transformer(lib: Any, cfg: dict) -> Any:
    class TokenModel(lib.Module):
        def __init__(self) -> None:
            super().__init__()
            d, v = cfg["d_model"], cfg["vocab"]
            self.embed = lib.Embedding(v, d)
            layer = lib.TransformerEncoderLayer(d, cfg["heads"], cfg["ff"],
                                                dropout=cfg["dropout"], batch_first=True,
                                                norm_first=cfg.get("norm_first", False))
            self.encoder = lib.TransformerEncoder(layer, cfg["layers"])
            self.head = lib.Linear(d, v)

        def forward(self, tokens: Any) -> Any:
            logits = self.head(self.encoder(self.embed(tokens)))
            return logits.reshape(-1, cfg["vocab"])

    return TokenModel()


def build(lib: Any, cfg: dict[str, Any]) -> Any:
    """Build the model of ``cfg`` with ``lib`` (``volta_core.nn`` or ``torch.nn``)."""
    return {"mlp": _mlp, "resnet": _resnet, "transformer": _transformer}[cfg["kind"]](lib, cfg)


def data(cfg: dict[str, Any], seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A fixed random batch: inputs (float32 or int64 tokens) and int64 labels."""
    rng = np.random.default_rng(seed)
    b = cfg["batch"]
    if cfg["kind"] == "mlp":
        x = rng.standard_normal((b, cfg["sizes"][0]), dtype=np.float32)
        y = rng.integers(0, cfg["sizes"][-1], b)
    elif cfg["kind"] == "resnet":
        x = rng.standard_normal((b, 3, cfg["hw"], cfg["hw"]), dtype=np.float32)
        y = rng.integers(0, cfg["classes"], b)
    else:
        x = rng.integers(0, cfg["vocab"], (b, cfg["seq"]))
        y = rng.integers(0, cfg["vocab"], b * cfg["seq"])
    return x, y.astype(np.int64)


def optimizer(optim_mod: Any, params: Any, cfg: dict[str, Any],
              capturable: bool = False) -> Any:
    """The optimizer of ``cfg`` from ``vt.optim`` or ``torch.optim`` (``capturable``: Adam
    and AdamW keep their step counts on the GPU, for CUDA graphs)."""
    extra = {"capturable": True} if capturable else {}
    if cfg["optim"] == "adam":
        return optim_mod.Adam(params, lr=cfg["lr"], **extra)
    if cfg["optim"] == "adamw":
        return optim_mod.AdamW(params, lr=cfg["lr"], weight_decay=cfg["weight_decay"],
                               **extra)
    return optim_mod.SGD(params, lr=cfg["lr"], momentum=cfg.get("momentum", 0.0))


# -- steps --------------------------------------------------------------------------------

def training_step(model: Any, x: Any, y: Any, opt: Any, lossf: Any) -> Callable[[], Any]:
    """A function running one step (zero_grad, forward, loss, backward, optimizer step)
    of ``model`` on the batch ``(x, y)``; it returns the loss tensor."""

    def step() -> Any:
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step


def graphed_step(lib: Any, model: Any, x: Any, y: Any, opt: Any, lossf: Any,
                 warmup: int = 3, autocast: Callable[[], Any] | None = None
                 ) -> Callable[[], Any]:
    """One training step as a CUDA graph replay (``lib`` is ``volta_core`` or ``torch``):
    warm-up steps on a side stream, then the whole step (forward, backward, optimizer)
    captured once; each call copies the batch into the static inputs and replays.
    ``autocast``: a function returning the context the forward and loss run in."""
    static_x, static_y = x.clone(), y.clone()
    region = autocast or contextlib.nullcontext

    def forward() -> Any:
        with region():
            return lossf(model(static_x), static_y)

    def step() -> Any:
        opt.zero_grad(set_to_none=True)
        loss = forward()
        loss.backward()
        opt.step()
        return loss

    side = lib.cuda.Stream()
    side.wait_stream(lib.cuda.current_stream())
    with lib.cuda.stream(side):
        for _ in range(warmup):
            step()
    lib.cuda.current_stream().wait_stream(side)
    graph = lib.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with lib.cuda.graph(graph):
        static_loss = forward()
        static_loss.backward()
        opt.step()

    def replay() -> Any:
        static_x.copy_(x)
        static_y.copy_(y)
        graph.replay()
        return static_loss

    return replay


def volta_step(cfg: dict[str, Any], device: str = "cuda") -> Callable[[], Any]:
    """One Volta training step of ``cfg``'s model on ``device`` (returns the loss tensor)."""
    vt.manual_seed(0)
    model = build(vt.nn, cfg).to(device)
    model.train()
    xs, ys = data(cfg)
    x, y = vt.tensor(xs, device=device), vt.tensor(ys, device=device)
    opt = optimizer(vt.optim, model.parameters(), cfg)
    return training_step(model, x, y, opt, vt.nn.CrossEntropyLoss())


def torch_step(cfg: dict[str, Any]) -> Callable[[], Any] | None:
    """The same step in PyTorch on ``cuda``, or None where torch (with CUDA) is missing."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.manual_seed(0)
    model = build(torch.nn, cfg).to("cuda")
    model.train()
    xs, ys = data(cfg)
    x, y = torch.from_numpy(xs).to("cuda"), torch.from_numpy(ys).to("cuda")
    opt = optimizer(torch.optim, model.parameters(), cfg)
    return training_step(model, x, y, opt, torch.nn.CrossEntropyLoss())


def set_tf32(allow: bool) -> None:
    """Same float32 matmul/conv precision in both frameworks (TF32 off by default)."""
    vt.backends.cuda.matmul.allow_tf32 = allow
    vt.backends.cudnn.allow_tf32 = allow  # on by default, as PyTorch's
    try:
        import torch
    except ImportError:
        return
    torch.backends.cuda.matmul.allow_tf32 = allow
    torch.backends.cudnn.allow_tf32 = allow


def peer_device(device: str) -> str:
    """PyTorch's device to compare a Volta device with: the same GPU where there is one.

    A wgpu run on an NVIDIA GPU is compared with PyTorch CUDA on that GPU, not with
    PyTorch on the CPU; everything else is compared on the CPU.
    """
    kind = device.split(":")[0]
    if kind in ("cuda", "wgpu"):
        try:
            import torch
        except ImportError:
            return "cpu"
        if torch.cuda.is_available():
            return "cuda"
    return "cpu"


def time_steps(steps: dict[str, Callable[[], Any]], syncs: dict[str, Callable[[], None]],
               n: int, warmup: int, block: int = 10) -> dict[str, float]:
    """Median seconds per step of each framework, alternating frameworks in blocks of
    ``block`` steps: step by step, one framework's idle CPU threads (OpenMP, OpenBLAS)
    still spin while the other's step runs and take its cores.

    Each framework first runs ``warmup`` untimed steps (kernel compilation, cuBLAS and
    allocator warm-up); every timed step ends with that framework's synchronize.
    """
    for name, step in steps.items():
        for _ in range(warmup):
            step()
        syncs[name]()
    times: dict[str, list[float]] = {name: [] for name in steps}
    for start in range(0, n, block):
        for name, step in steps.items():
            syncs[name]()
            for _ in range(min(block, n - start)):
                t0 = time.perf_counter()
                step()
                syncs[name]()
                times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def compare(names: list[str], n: int, warmup: int) -> list[dict[str, Any]]:
    """Time every model in both frameworks; rows with ms per step and the speed ratio."""
    import contextlib

    rows = []
    for name in names:
        cfg = CUDA_MODELS[name]
        steps: dict[str, Callable[[], Any]] = {"volta": volta_step(cfg)}
        syncs: dict[str, Callable[[], None]] = {"volta": vt.cuda.synchronize}
        ts = torch_step(cfg)
        if ts is not None:
            import torch

            steps["torch"], syncs["torch"] = ts, torch.cuda.synchronize
        med = time_steps(steps, syncs, n, warmup)
        row: dict[str, Any] = {"model": name, "volta_ms": med["volta"] * 1e3}
        if "torch" in med:
            # throughput ratio Volta / PyTorch = PyTorch time / Volta time
            row.update(torch_ms=med["torch"] * 1e3, throughput_ratio=med["torch"] / med["volta"])
        rows.append(row)
        del steps
        with contextlib.suppress(Exception):
            vt.cuda.empty_cache()
    return rows


def memory_check(name: str, steps: int = 2000, warmup: int = 20,
                 every: int = 100) -> dict[str, Any]:
    """Run ``steps`` Volta steps of ``name``; peak memory must not grow after warm-up.

    Returns the peak (MiB) after warm-up, at each ``every``-step checkpoint and at the
    end, and ``flat``: whether the final peak is within 1 % (or 1 MiB) of the first.
    """
    step = volta_step(CUDA_MODELS[name])
    for _ in range(warmup):
        step()
    vt.cuda.synchronize()
    vt.cuda.reset_peak_memory_stats()
    for _ in range(3):  # one more round so the peak covers a whole step
        step()
    vt.cuda.synchronize()
    base = vt.cuda.max_memory_allocated()
    marks = []
    for i in range(1, steps + 1):
        step()
        if i % every == 0:
            vt.cuda.synchronize()
            marks.append(vt.cuda.max_memory_allocated() / 2**20)
    vt.cuda.synchronize()
    end = vt.cuda.max_memory_allocated()
    flat = end <= base + max(base // 100, 2**20)
    return {"model": name, "steps": steps, "base_mib": base / 2**20, "end_mib": end / 2**20,
            "checkpoints_mib": marks, "flat": flat}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(CUDA_MODELS),
                        help="comma-separated subset of: " + ", ".join(CUDA_MODELS))
    parser.add_argument("--steps", type=int, default=30, help="timed steps per model")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    parser.add_argument("--tf32", action="store_true", help="allow TF32 in both frameworks")
    parser.add_argument("--memory-steps", type=int, default=0,
                        help="also run N Volta steps per model checking flat peak memory")
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    args = parser.parse_args(argv)
    if not vt.cuda.is_available():
        print("CUDA is not available:", [str(b) for b in vt.backends()], file=sys.stderr)
        return 1
    set_tf32(args.tf32)
    names = args.models.split(",")
    result: dict[str, Any] = {"device": vt.cuda.get_device_name(), "tf32": args.tf32,
                              "timing": compare(names, args.steps, args.warmup)}
    if args.memory_steps:
        result["memory"] = [memory_check(n, args.memory_steps) for n in names]
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['device']} (tf32={'on' if args.tf32 else 'off'})")
    for r in result["timing"]:
        line = f"{r['model']:>12}: volta {r['volta_ms']:9.2f} ms/step"
        if "torch_ms" in r:
            line += (f" | torch {r['torch_ms']:9.2f} ms/step"
                     f" | throughput volta/torch {r['throughput_ratio']:.2f}")
        print(line)
    for m in result.get("memory", []):
        print(f"{m['model']:>12}: peak {m['base_mib']:.1f} MiB after warm-up, "
              f"{m['end_mib']:.1f} MiB after {m['steps']} steps -> "
              f"{'flat' if m['flat'] else 'GROWING'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
