"""Train on the best available accelerator and report throughput.

``vt.device("auto")`` picks CUDA if present, else a wgpu GPU, else the CPU; the script
prints ``vt.backends()`` (every discovered backend, with the reason when one is
unavailable), trains an MLP classifier on the digits there with every batch already
on the device, and reports images per second (timed between ``vt.synchronize`` calls,
excluding a warm-up epoch). With ``--compare-cpu`` it also times the same training on
the CPU. Criterion: test accuracy >= 93% (smoke: >= 60%) and a positive throughput.

Usage: python examples/gpu_training.py [--device auto|cpu|cuda|wgpu] [--smoke] [--compare-cpu]
"""

from __future__ import annotations

import time

import _common

import volta_core as vt
from volta_core import nn, optim
from volta_core.data import DataLoader, TensorDataset
from volta_core.data.datasets import load_digits


def make_model(width: int) -> nn.Module:
    return nn.Sequential(nn.Flatten(), nn.Linear(64, width), nn.ReLU(),
                         nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 10))


def train(device: vt.Device, epochs: int, width: int, batch: int) -> tuple[float, float, int]:
    """Train on ``device``; return (test accuracy, images/s after warm-up, parameters)."""
    vt.manual_seed(0)
    train_set, test_set = load_digits()
    data = TensorDataset(train_set.data.to(device), train_set.targets.to(device))
    loader = DataLoader(data, batch_size=batch, shuffle=True, drop_last=True)
    model = make_model(width).to(device)
    optimizer = optim.AdamW(model.parameters(), lr=2e-3)
    loss_fn = nn.CrossEntropyLoss()
    seen, start = 0, 0.0
    for epoch in range(epochs + 1):            # epoch 0 is a warm-up (kernels, caches)
        if epoch == 1:
            vt.synchronize(device)
            start = time.perf_counter()
        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
            seen += x.shape[0] if epoch else 0
    vt.synchronize(device)
    rate = seen / (time.perf_counter() - start)
    model.eval()
    with vt.no_grad():
        pred = model(test_set.data.to(device)).argmax(dim=1)
    acc = (pred == test_set.targets.to(device)).float().mean().item()
    return acc, rate, sum(p.numel() for p in model.parameters())


def main(argv: list[str] | None = None) -> None:
    parser = _common.make_parser(__doc__, "runs/gpu_training")
    parser.set_defaults(device="auto")
    parser.add_argument("--compare-cpu", action="store_true",
                        help="also time the same training on the CPU")
    parser.add_argument("--width", type=int, default=256, help="hidden units per layer")
    parser.add_argument("--batch-size", type=int, default=128)
    args = parser.parse_args(argv)
    print("backends:")
    for info in vt.backends():
        state = "available" if info.available else f"unavailable ({info.reason})"
        print(f"  {info.name:8s} {info.device_type:8s} {state} {list(info.devices)}")
    device, _ = _common.setup(args)
    wgpu_ok = any(i.device_type == "wgpu" and i.available for i in vt.backends())
    if args.device == "auto" and device.type == "cpu" and wgpu_ok:
        print("note: 'auto' skipped wgpu because its adapter is a software (CPU) one; "
              "--device wgpu uses it anyway")
    epochs = 3 if args.smoke else 20

    acc, rate, n_params = train(device, epochs, args.width, args.batch_size)
    print(f"{device}: MLP with {n_params:,} parameters, {epochs} epochs of batch "
          f"{args.batch_size}: {rate:,.0f} images/s, test accuracy {acc:.2%}")
    if args.compare_cpu and device.type != "cpu":
        cpu_acc, cpu_rate, _ = train(vt.device("cpu"), epochs, args.width, args.batch_size)
        print(f"cpu: {cpu_rate:,.0f} images/s, test accuracy {cpu_acc:.2%}; "
              f"{device} is {rate / cpu_rate:.2f}x the CPU")
    bound = 0.6 if args.smoke else 0.93
    _common.check(acc >= bound and rate > 0,
                  f"test accuracy {acc:.2%} >= {bound:.0%} at {rate:,.0f} images/s on {device}")


if __name__ == "__main__":
    main()
