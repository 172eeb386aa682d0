"""Training-step benchmark: Volta vs PyTorch, same models, same batch, same run.

Models (sizes in ``MODELS``, so other devices can add bigger ones):

- ``mlp``: 784-512-512-10 with ReLU, batch 256, Adam, cross entropy.
- ``lenet``: LeNet-5 on 1x28x28, batch 64, SGD with momentum, cross entropy.
- ``lstm_lm``: LSTM language model: embedding 128, one LSTM layer of 256, linear head,
  vocab 1000, batch 20, 35 steps (PyTorch's word_language_model shape), Adam.
- ``gpt``: small GPT: token + position embeddings, 2 pre-norm causal transformer layers
  (d=128, 4 heads, ff 512, GELU, no dropout), linear head, vocab 512, batch 16, seq 64,
  AdamW.

Usage::

    python benchmarks/train_step.py [--device cpu] [--steps 50] [--models mlp,lenet]
        [--threads N] [--json] [--cuda-graphs] [--compile]

``--cuda-graphs`` (``--device cuda``) adds Volta's whole step captured in a CUDA graph
(``vt.cuda.graph``, Adam with ``capturable=True``) and PyTorch's, next to both eager
steps; ratios are against PyTorch eager.

``--compile`` runs Volta's whole step (zero_grad, forward, loss, backward, optimizer step)
through ``vt.compile(step, mode="reduce-overhead")``. With ``--device wgpu`` it times
three Volta steps side by side: eager (every op its own kernel), lazy (the default:
elementwise chains fused) and compiled (the step's GPU work recorded once and replayed
with no Python op code, ``volta_wgpu.replay``), with dispatches per step, and checks
that the three models, trained for the same number of steps, still give the same loss
(models without dropout). ``--models`` there also takes ``cnn`` and ``encoder``
(``amp_step.py``'s CNN and pre-norm transformer encoder, fp32; ``--smoke`` shrinks them)::

    python benchmarks/train_step.py --device wgpu --compile --models mlp,lenet,cnn,encoder

Prints the median step time of each framework and the ratio Volta / PyTorch (PyTorch runs
on the same GPU for ``--device cuda`` and ``--device wgpu`` when PyTorch has CUDA, else on
its CPU; and only when it is importable). Both frameworks run their CPU ops on the same
number of threads: ``--threads``, by default Volta's (``vt.get_num_threads()``, the cores
this process may use); the count is printed.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from amp_step import MODELS as AMP_MODELS  # noqa: E402
from amp_step import SMOKE as AMP_SMOKE  # noqa: E402
from amp_step import build as amp_build  # noqa: E402
from amp_step import data as amp_data  # noqa: E402

# the optimizer, the step and the alternating timer are shared with the CUDA models
from train_step_models import (  # noqa: E402
    graphed_step,
    optimizer,
    peer_device,
    set_tf32,
    time_steps,
    training_step,
)

import volta_core as vt  # noqa: E402
from volta_core import nn  # noqa: E402

# name -> settings; a device-specific run may add entries (e.g. bigger models for CUDA)
MODELS: dict[str, dict[str, Any]] = {
    "mlp": {"kind": "mlp", "sizes": (784, 512, 512, 10), "batch": 256, "optim": "adam",
            "lr": 1e-3},
    "lenet": {"kind": "lenet", "channels": (1, 6, 16), "hw": 28, "batch": 64, "classes": 10,
              "optim": "sgd", "lr": 0.01, "momentum": 0.9},
    "lstm_lm": {"kind": "lstm_lm", "vocab": 1000, "embed": 128, "hidden": 256, "layers": 1,
                "batch": 20, "seq": 35, "optim": "adam", "lr": 1e-3},
    "gpt": {"kind": "gpt", "vocab": 512, "d_model": 128, "heads": 4, "ff": 512, "layers": 2,
            "batch": 16, "seq": 64, "optim": "adamw", "lr": 3e-4, "weight_decay": 0.01},
}

# extra models per device type (the CUDA issue adds its big ones here); wgpu: the CNN and
# the pre-norm transformer encoder of ``amp_step.py`` (``--smoke``: their tiny sizes)
DEVICE_MODELS: dict[str, dict[str, dict[str, Any]]] = {
    "cpu": {}, "cuda": {}, "wgpu": {"cnn": AMP_MODELS["cnn"], "encoder": AMP_MODELS["encoder"]}}


def _lstm_lm(lib: Any, cfg: dict[str, Any]) -> Any:
    class LSTMLM(lib.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = lib.Embedding(cfg["vocab"], cfg["embed"])
            self.rnn = lib.LSTM(cfg["embed"], cfg["hidden"], cfg["layers"], batch_first=True)
            self.head = lib.Linear(cfg["hidden"], cfg["vocab"])

        def forward(self, tokens: Any) -> Any:
            out, _ = self.rnn(self.embed(tokens))
            return self.head(out).reshape(-1, cfg["vocab"])

    return LSTMLM()


def _gpt(lib: Any, cfg: dict[str, Any]) -> Any:
    root = sys.modules[lib.__name__.split(".")[0]]  # volta_core or torch
    d, seq = cfg["d_model"], cfg["seq"]

    class GPT(lib.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok = lib.Embedding(cfg["vocab"], d)
            self.pos = lib.Parameter(root.randn(seq, d) * 0.02)
            self.blocks = lib.ModuleList(
                lib.TransformerEncoderLayer(d, cfg["heads"], cfg["ff"], dropout=0.0,
                                            activation="gelu", batch_first=True,
                                            norm_first=True)
                for _ in range(cfg["layers"]))
            self.norm = lib.LayerNorm(d)
            self.head = lib.Linear(d, cfg["vocab"])
            self.register_buffer("causal", root.triu(root.full((seq, seq), -math.inf), 1))

        def forward(self, tokens: Any) -> Any:
            x = self.tok(tokens) + self.pos
            for block in self.blocks:
                x = block(x, src_mask=self.causal)
            return self.head(self.norm(x)).reshape(-1, cfg["vocab"])

    return GPT()


def build(lib: Any, cfg: dict[str, Any]) -> Any:
    """Build the model of ``cfg`` with ``lib`` (``volta_core.nn`` or ``torch.nn``)."""
    if cfg["kind"] == "lstm_lm":
        return _lstm_lm(lib, cfg)
    if cfg["kind"] == "gpt":
        return _gpt(lib, cfg)
    if cfg["kind"] in ("cnn", "transformer"):  # amp_step.py's CNN and encoder
        return amp_build(lib, cfg)
    if cfg["kind"] == "mlp":
        sizes = cfg["sizes"]
        layers: list[Any] = []
        for i in range(len(sizes) - 1):
            layers.append(lib.Linear(sizes[i], sizes[i + 1]))
            if i < len(sizes) - 2:
                layers.append(lib.ReLU())
        return lib.Sequential(*layers)
    c0, c1, c2 = cfg["channels"]
    side = ((cfg["hw"] // 2) - 4) // 2
    return lib.Sequential(
        lib.Conv2d(c0, c1, 5, padding=2), lib.ReLU(), lib.MaxPool2d(2),
        lib.Conv2d(c1, c2, 5), lib.ReLU(), lib.MaxPool2d(2), lib.Flatten(),
        lib.Linear(c2 * side * side, 120), lib.ReLU(), lib.Linear(120, 84), lib.ReLU(),
        lib.Linear(84, cfg["classes"]))


def data(cfg: dict[str, Any], seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A fixed random batch (float32 inputs, int64 labels)."""
    if cfg["kind"] in ("cnn", "transformer"):
        return amp_data(cfg, seed)
    rng = np.random.default_rng(seed)
    if cfg["kind"] in ("lstm_lm", "gpt"):
        x = rng.integers(0, cfg["vocab"], (cfg["batch"], cfg["seq"]))
        y = rng.integers(0, cfg["vocab"], cfg["batch"] * cfg["seq"])
        return x.astype(np.int64), y.astype(np.int64)
    if cfg["kind"] == "mlp":
        x = rng.standard_normal((cfg["batch"], cfg["sizes"][0]), dtype=np.float32)
        y = rng.integers(0, cfg["sizes"][-1], cfg["batch"])
    else:
        x = rng.standard_normal((cfg["batch"], cfg["channels"][0], cfg["hw"], cfg["hw"]),
                                dtype=np.float32)
        y = rng.integers(0, cfg["classes"], cfg["batch"])
    return x, y.astype(np.int64)


def volta_step(cfg: dict[str, Any], device: str, compiled: bool = False,
               graphed: bool = False) -> Callable[[], float]:
    """Return a function running one Volta training step (returns the loss); with
    ``compiled`` the whole step goes through ``vt.compile(mode="reduce-overhead")`` (and
    returns the loss detached, which a replay can return), on CUDA the model does (its
    forward and backward replay as CUDA graphs); ``graphed``: the step is a CUDA graph
    replay."""
    vt.manual_seed(0)
    model = build(nn, cfg).to(device)
    xs, ys = data(cfg)
    x, y = vt.tensor(xs, device=device), vt.tensor(ys, device=device)
    opt = optimizer(vt.optim, model.parameters(), cfg, capturable=graphed)
    if graphed:
        return graphed_step(vt, model, x, y, opt, nn.CrossEntropyLoss())
    if compiled and vt.device(device).type == "cuda":
        # as PyTorch programs compile: the model (its forward and backward become CUDA
        # graph replays), the loss and optimizer eager
        model = vt.compile(model, mode="reduce-overhead")
        compiled = False
    step = training_step(model, x, y, opt, nn.CrossEntropyLoss())
    if compiled:
        return vt.compile(lambda: step().detach(), mode="reduce-overhead")
    return step


def wgpu_step(cfg: dict[str, Any], device: str, mode: str) -> Callable[[], Any]:
    """A Volta step on wgpu in ``mode``: "eager" (lazy fusion off around the step),
    "lazy" (on) or "compiled" (on, the step replayed by ``vt.compile``)."""
    step = volta_step(cfg, device, compiled=mode == "compiled")
    lazy = mode != "eager"

    def run() -> Any:
        was = vt.wgpu.is_lazy()
        vt.wgpu.set_lazy(lazy)
        try:
            return step()
        finally:
            vt.wgpu.set_lazy(was)

    return run


def wgpu_work(step: Callable[[], float]) -> dict[str, int]:
    """GPU dispatches and queue submissions of one more ``step`` on wgpu (the submission
    of the synchronize after it included)."""
    from volta_wgpu.engine import get_engine

    eng = get_engine()
    vt.wgpu.synchronize()
    d, s = eng.dispatch_count, eng.submit_count
    step()
    vt.wgpu.synchronize()
    return {"dispatches": eng.dispatch_count - d, "submits": eng.submit_count - s}


def torch_step(cfg: dict[str, Any], device: str, graphed: bool = False
               ) -> Callable[[], float] | None:
    """Return a function running one PyTorch step, or None if torch is not importable."""
    try:
        import torch
    except ImportError:
        return None
    torch.manual_seed(0)
    dev = peer_device(device)
    model = build(torch.nn, cfg).to(dev)
    xs, ys = data(cfg)
    x, y = torch.from_numpy(xs).to(dev), torch.from_numpy(ys).to(dev)
    opt = optimizer(torch.optim, model.parameters(), cfg, capturable=graphed)
    if graphed:
        return graphed_step(torch, model, x, y, opt, torch.nn.CrossEntropyLoss())
    return training_step(model, x, y, opt, torch.nn.CrossEntropyLoss())


def set_threads(n: int | None) -> int:
    """Put both frameworks' CPU ops on ``n`` threads (Volta's default count when None)."""
    if n is None:
        n = vt.get_num_threads()
    vt.set_num_threads(n)
    try:
        import torch
    except ImportError:
        return n
    torch.set_num_threads(n)
    return n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="Volta device: cpu, cuda, wgpu")
    parser.add_argument("--steps", type=int, default=50, help="timed steps per model")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    parser.add_argument("--models", default=None,
                        help="comma-separated subset of: " + ", ".join(MODELS))
    parser.add_argument("--threads", type=int, default=None,
                        help="CPU threads of both frameworks (default: Volta's default)")
    parser.add_argument("--json", action="store_true", help="print results as JSON")
    parser.add_argument("--lazy", choices=("on", "off"), default=None,
                        help="wgpu: lazy fusion on or off (default: the backend's default)")
    parser.add_argument("--compile", action="store_true",
                        help="run Volta's whole step through vt.compile(mode='reduce-overhead') "
                             "(cuda: the model; wgpu: time eager, lazy and compiled steps "
                             "side by side)")
    parser.add_argument("--smoke", action="store_true",
                        help="wgpu --compile: the cnn and encoder models at tiny sizes")
    parser.add_argument("--cuda-graphs", action="store_true",
                        help="also time each step captured in a CUDA graph (cuda only)")
    args, rest = parser.parse_known_args(argv)
    threads = set_threads(args.threads)
    if args.lazy is not None and args.device.startswith("wgpu"):
        vt.wgpu.set_lazy(args.lazy == "on")
    if args.cuda_graphs:
        if not args.device.startswith("cuda"):
            parser.error("--cuda-graphs needs --device cuda")
        return graphs_main(args)
    if args.device.startswith("cuda") and not args.models:
        # the CUDA acceptance models (MLP 4096, ResNet-18, transformer) live next door
        from train_step_models import main as cuda_main

        extra = ["--json"] if args.json else []
        return cuda_main(["--steps", str(args.steps), "--warmup", str(args.warmup),
                          *extra, *rest])
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    if args.compile and args.device.startswith("wgpu"):
        return wgpu_compile_main(args)
    models = {**MODELS, **DEVICE_MODELS.get(args.device.split(":")[0], {})}
    names = args.models.split(",") if args.models else list(models)
    dev = vt.device(args.device)
    results = []
    for name in names:
        cfg = models[name]
        steps = {"volta": volta_step(cfg, args.device, args.compile)}
        syncs: dict[str, Callable[[], None]] = {"volta": dev.synchronize}
        ts = torch_step(cfg, args.device)
        if ts is not None:
            import torch

            steps["torch"] = ts
            syncs["torch"] = (torch.cuda.synchronize if peer_device(args.device) == "cuda"
                              else (lambda: None))
        med = time_steps(steps, syncs, args.steps, args.warmup)
        row: dict[str, Any] = {"model": name, "device": args.device,
                               "torch_device": peer_device(args.device),
                               "volta_ms": med["volta"] * 1e3}
        if "torch" in med:
            row.update(torch_ms=med["torch"] * 1e3, ratio=med["volta"] / med["torch"],
                       torch_threads=torch.get_num_threads())
        row["volta_threads"] = threads
        if args.device.startswith("wgpu"):
            row.update(wgpu_work(steps["volta"]), lazy=vt.wgpu.is_lazy(), compile=args.compile)
        results.append(row)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            line = (f"{r['model']:>8} on {r['device']}: volta ({r['volta_threads']} threads) "
                    f"{r['volta_ms']:8.3f} ms")
            if "torch_ms" in r:
                line += (f" | torch ({r['torch_device']}, {r['torch_threads']} threads) "
                         f"{r['torch_ms']:8.3f} ms | ratio {r['ratio']:.2f}x")
            if "dispatches" in r:
                mode = "on" if r["lazy"] else "off"
                mode += " (model through vt.compile)" if r["compile"] else ""
                line += (f" | lazy {mode}: {r['dispatches']} dispatches, {r['submits']} "
                         "submits per step")
            print(line)
    return 0


def host_time(step: Callable[[], Any], sync: Callable[[], None], n: int) -> float:
    """Median seconds the host spends issuing one ``step`` (Python, encoding, submission;
    the GPU's work is waited for after the clock stops)."""
    times = []
    for _ in range(n):
        sync()
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    sync()
    return statistics.median(times)


def wgpu_compile_main(args: argparse.Namespace) -> int:
    """``--compile --device wgpu``: eager, lazy and compiled (replayed) Volta steps and
    PyTorch's: ms per step, the host's part of it, dispatches per step, ratios to
    PyTorch."""
    names = args.models.split(",") if args.models else ["mlp", "lenet"]
    dev = vt.device(args.device)
    modes = ("eager", "lazy", "compiled")
    models = {**MODELS, **DEVICE_MODELS["wgpu"]}
    set_tf32(False)  # PyTorch in true float32 (cuDNN's convolutions default to TF32)
    results = []
    for name in names:
        cfg = models[name]
        if args.smoke:
            cfg = {**cfg, **AMP_SMOKE.get(name, {})}
        steps: dict[str, Callable[[], Any]] = {m: wgpu_step(cfg, args.device, m)
                                               for m in modes}
        syncs: dict[str, Callable[[], None]] = dict.fromkeys(modes, dev.synchronize)
        ts = torch_step(cfg, args.device)
        if ts is not None:
            import torch

            steps["torch"] = ts
            syncs["torch"] = (torch.cuda.synchronize if peer_device(args.device) == "cuda"
                              else (lambda: None))
        # the compiled step makes its optimizer state, then records twice: replays from
        # the 4th call on, so at least 3 untimed steps
        med = time_steps(steps, syncs, args.steps, max(args.warmup, 3))
        row: dict[str, Any] = {"model": name, "device": args.device,
                               "adapter": vt.wgpu.get_device_name()}
        for m in modes:
            row[f"{m}_ms"] = med[m] * 1e3
            row[f"{m}_host_ms"] = host_time(steps[m], dev.synchronize, args.steps) * 1e3
            row[f"{m}_dispatches"] = wgpu_work(steps[m])["dispatches"]
        # every step ran as often: the models must still agree (replays equal eager)
        losses = {m: float(steps[m]().item()) for m in modes}
        # (with dropout the three models draw different masks from the one generator)
        row["same_loss"] = (len(set(losses.values())) == 1 if not cfg.get("dropout")
                            else None)
        row["losses"] = losses
        if "torch" in med:
            row.update(torch_device=peer_device(args.device), torch_ms=med["torch"] * 1e3,
                       **{f"{m}_ratio": med[m] / med["torch"] for m in modes},
                       **{f"{m}_throughput": med["torch"] / med[m] for m in modes})
        results.append(row)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for r in results:
        line = f"{r['model']:>6} on {r['device']}: " + ", ".join(
            f"{m} {r[f'{m}_ms']:.3f} ms (host {r[f'{m}_host_ms']:.3f} ms, "
            f"{r[f'{m}_dispatches']} dispatches)" for m in modes)
        if "torch_ms" in r:
            line += (f" | torch ({r['torch_device']}) {r['torch_ms']:.3f} ms | time ratio "
                     + ", ".join(f"{m} {r[f'{m}_ratio']:.2f}x" for m in modes)
                     + " | throughput vs torch "
                     + ", ".join(f"{m} {r[f'{m}_throughput']:.2f}x" for m in modes))
        line += " | same loss: " + ("n/a (dropout)" if r["same_loss"] is None else
                                    "yes" if r["same_loss"] else f"NO {r['losses']}")
        print(line)
    return 0


def graphs_main(args: argparse.Namespace) -> int:
    """``--cuda-graphs``: Volta and PyTorch, eager and graphed, ratios to PyTorch eager."""
    import torch

    names = args.models.split(",") if args.models else ["mlp", "lenet"]
    dev = vt.device(args.device)
    results = []
    for name in names:
        cfg = MODELS[name]
        steps = {"volta": volta_step(cfg, args.device),
                 "volta_graph": volta_step(cfg, args.device, graphed=True),
                 "torch": torch_step(cfg, args.device),
                 "torch_graph": torch_step(cfg, args.device, graphed=True)}
        syncs = {"volta": dev.synchronize, "volta_graph": dev.synchronize,
                 "torch": torch.cuda.synchronize, "torch_graph": torch.cuda.synchronize}
        med = time_steps(steps, syncs, args.steps, args.warmup)
        row = {"model": name, "device": vt.cuda.get_device_name(),
               **{f"{k}_ms": v * 1e3 for k, v in med.items()},
               "volta_eager_throughput_vs_torch_eager": med["torch"] / med["volta"],
               "volta_graph_throughput_vs_torch_eager": med["torch"] / med["volta_graph"],
               "torch_graph_throughput_vs_torch_eager": med["torch"] / med["torch_graph"]}
        results.append(row)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            print(f"{r['model']:>6} on {r['device']}: volta eager {r['volta_ms']:.3f} ms, "
                  f"volta graph {r['volta_graph_ms']:.3f} ms, torch eager {r['torch_ms']:.3f} "
                  f"ms, torch graph {r['torch_graph_ms']:.3f} ms | throughput vs torch eager: "
                  f"volta eager {r['volta_eager_throughput_vs_torch_eager']:.2f}x, volta graph "
                  f"{r['volta_graph_throughput_vs_torch_eager']:.2f}x, torch graph "
                  f"{r['torch_graph_throughput_vs_torch_eager']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
