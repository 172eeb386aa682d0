"""Load PyTorch weights into an equivalent Volta model through safetensors + StateDictMapper.

Part 1 uses the committed fixture ``tests/io/fixtures/torch_model.safetensors`` (a tiny
CNN saved by PyTorch as ``nn.Sequential``, so its keys are ``0.weight``, ``3.weight``, ...;
see ``tests/io/fixtures/make_torch_fixture.py``). The Volta model names its layers and
keeps its last layer's weight the other way round (``(in, out)``, as Keras/JAX do), so a
``vt.io.StateDictMapper`` renames the keys and transposes that weight. Its output on the
fixture's input must match PyTorch's recorded output.
Part 2 runs only when ``torch`` is importable: it builds a PyTorch model with batch norm,
wraps its keys like ``nn.DataParallel`` does (``module.`` prefix), saves it with
``safetensors.torch.save_file``, loads it into Volta and compares outputs on fresh input.
Criterion: every output within 1e-5 of PyTorch's.

Usage: python examples/load_pytorch_weights.py [--device cpu|cuda|wgpu|auto] [--smoke]
"""

from __future__ import annotations

from pathlib import Path

import _common

import volta_core as vt
from volta_core import nn

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "io" / "fixtures"
TOL = 1e-5


class Dense(nn.Module):
    """A linear layer that stores its weight as ``(in, out)`` and computes ``x @ W + b``."""

    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(vt.randn(in_features, out_features) * in_features ** -0.5)
        self.bias = nn.Parameter(vt.zeros(out_features))

    def forward(self, x: vt.Tensor) -> vt.Tensor:
        return x @ self.weight + self.bias


class TinyCNN(nn.Module):
    """The fixture's network, with named layers."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3, padding=1)
        self.hidden = nn.Linear(32, 8)
        self.head = Dense(8, 3)

    def forward(self, x: vt.Tensor) -> vt.Tensor:
        h = self.conv(x).relu().flatten(1)
        return self.head(self.hidden(h).relu())


def show(sd: dict[str, vt.Tensor], title: str) -> None:
    print(title)
    for key, value in sd.items():
        print(f"  {key:28s} {tuple(value.shape)}")


def max_diff(a: vt.Tensor, b: vt.Tensor) -> float:
    return (a - b).abs().max().item()


def from_fixture(device: vt.Device) -> float:
    """Part 1: the committed PyTorch fixture into ``TinyCNN``; returns the max output error."""
    print("== part 1: the committed PyTorch fixture")
    torch_sd = vt.io.load_state_dict(FIXTURES / "torch_model.safetensors", device=device)
    show(dict(sorted(torch_sd.items())), "keys saved by PyTorch:")
    mapper = (vt.io.StateDictMapper()
              .rename_regex(r"^0\.", "conv.")
              .rename_regex(r"^3\.", "hidden.")
              .rename_regex(r"^5\.", "head.")
              .transpose("head.weight"))
    print(repr(mapper))
    model = TinyCNN().to(device)
    print(f"load_state_dict: {model.load_state_dict(mapper(torch_sd))}")
    # this file also holds a bfloat16 tensor, which not every device supports: load it on
    # the CPU and move only what we need
    io = vt.io.load_state_dict(FIXTURES / "torch_io.safetensors")
    with vt.no_grad():
        diff = max_diff(model(io["input"].to(device)), io["output"].to(device))
    print(f"max |volta - torch| on the fixture's input: {diff:.2e}")
    return diff


def volta_twin() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(8 * 4 * 4, 32), nn.GELU(), nn.LayerNorm(32),
        nn.Linear(32, 10))


def from_live_torch(device: vt.Device, out: Path) -> float | None:
    """Part 2: a model made by PyTorch right now; returns the max error (None: no torch)."""
    print("\n== part 2: weights made by PyTorch in this run")
    try:
        import torch
        from safetensors.torch import save_file
    except ImportError:
        print("torch (or safetensors.torch) is not importable; skipped")
        return None
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(8 * 4 * 4, 32),
        torch.nn.GELU(), torch.nn.LayerNorm(32), torch.nn.Linear(32, 10))
    with torch.no_grad():                       # give batch norm non-trivial statistics
        tnet.train()
        for _ in range(5):
            tnet(torch.rand(64, 1, 8, 8))
    tnet.eval()
    x = torch.rand(16, 1, 8, 8)
    with torch.no_grad():
        expected = tnet(x)
    path = out / "torch_dataparallel.safetensors"
    save_file({f"module.{k}": v.contiguous() for k, v in tnet.state_dict().items()}, str(path))
    print(f"PyTorch {torch.__version__} saved {len(tnet.state_dict())} tensors to {path}")

    model = volta_twin().to(device).eval()
    mapper = vt.io.StateDictMapper().strip_prefix("module.")
    result = model.load_state_dict(mapper(vt.io.load_state_dict(path, device=device)))
    print(f"load_state_dict: {result}")
    with vt.no_grad():
        got = model(vt.tensor(x.numpy(), device=device))
    diff = max_diff(got, vt.tensor(expected.numpy(), device=device))
    print(f"max |volta - torch| on fresh input: {diff:.2e}")
    return diff


def main(argv: list[str] | None = None) -> None:
    parser = _common.make_parser(__doc__, "runs/load_pytorch_weights")
    args = parser.parse_args(argv)
    device, out = _common.setup(args)
    diffs = [from_fixture(device)]
    live = from_live_torch(device, out)
    if live is not None:
        diffs.append(live)
    print()
    worst = max(diffs)
    _common.check(worst < TOL, f"{len(diffs)} model(s) match PyTorch: max error "
                  f"{worst:.1e} < {TOL:.0e}")


if __name__ == "__main__":
    main()
