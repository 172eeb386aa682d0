"""Sub-pixel super-resolution: recover 8x8 digits from 4x4 thumbnails with ``PixelShuffle``.

Each 8x8 digit is shrunk to 4x4 by averaging 2x2 blocks (``nn.AvgPool2d``). A small
ESPCN-style network works at 4x4 resolution and ends in a convolution with 4 channels
that ``nn.PixelShuffle(2)`` rearranges into one 8x8 image, added to a bicubic upsampling
of the input (so the network learns only the missing detail). Saves a comparison PNG
(input, nearest, bicubic, network, ground truth) for test digits.
Criterion: test PSNR beats bicubic interpolation by at least 4 dB (smoke: beats the
better of nearest and bicubic).

Usage: python examples/super_resolution.py [--device cpu|cuda|wgpu|auto] [--smoke]
"""

from __future__ import annotations

import math
from pathlib import Path

import _common

import volta_core as vt
from volta_core import nn, optim
from volta_core.data import DataLoader, TensorDataset
from volta_core.data.datasets import load_digits


class ESPCN(nn.Module):
    """Convolutions at low resolution, then a sub-pixel (PixelShuffle) upsampling."""

    def __init__(self, scale: int = 2, width: int = 32) -> None:
        super().__init__()
        self.scale = scale
        self.body = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, scale * scale, 3, padding=1),
            nn.PixelShuffle(scale),
        )

    def forward(self, low: vt.Tensor) -> vt.Tensor:
        base = bicubic(low, self.scale)
        return (base + self.body(low)).clamp(0.0, 1.0)


def bicubic(low: vt.Tensor, scale: int) -> vt.Tensor:
    return nn.functional.interpolate(low, scale_factor=scale, mode="bicubic",
                                     align_corners=False).clamp(0.0, 1.0)


def psnr(pred: vt.Tensor, target: vt.Tensor) -> float:
    """Peak signal-to-noise ratio in dB for images in [0, 1] (over the whole set)."""
    return 10 * math.log10(1.0 / ((pred - target) ** 2).mean().item())


def plot_comparison(rows: list[tuple[str, vt.Tensor]], path: Path) -> None:
    plt = _common.pyplot()
    n = rows[0][1].shape[0]
    fig, axes = plt.subplots(len(rows), n, figsize=(n * 0.9, len(rows) * 1.0 + 0.3))
    for r, (name, images) in enumerate(rows):
        host = images.numpy()
        for c in range(n):
            ax = axes[r, c]
            ax.imshow(host[c, 0], cmap="gray_r", vmin=0, vmax=1, interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
        axes[r, 0].set_ylabel(name, rotation=0, ha="right", va="center", fontsize=9)
    fig.suptitle("4x4 -> 8x8 super-resolution on test digits")
    _common.save_figure(fig, path)


def main(argv: list[str] | None = None) -> None:
    parser = _common.make_parser(__doc__, "runs/super_resolution")
    parser.add_argument("--epochs", type=int, default=None, help="default 20 (smoke: 2)")
    args = parser.parse_args(argv)
    device, out = _common.setup(args)
    epochs = args.epochs or (2 if args.smoke else 20)

    shrink = nn.AvgPool2d(2)
    train_set, test_set = load_digits()
    train_hi = train_set.data.to(device)
    test_hi = test_set.data.to(device)
    train_lo, test_lo = shrink(train_hi), shrink(test_hi)
    loader = DataLoader(TensorDataset(train_lo, train_hi), batch_size=32, shuffle=True)

    model = ESPCN().to(device)
    optimizer = optim.Adam(model.parameters(), lr=2e-3)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    loss_fn = nn.MSELoss()
    with _common.Timer() as timer:
        for epoch in range(1, epochs + 1):
            total = 0.0
            for lo, hi in loader:
                optimizer.zero_grad()
                loss = loss_fn(model(lo), hi)
                loss.backward()
                optimizer.step()
                total += loss.item()
            scheduler.step()
            if epoch % max(1, epochs // 5) == 0 or epoch == epochs:
                print(f"epoch {epoch:3d}  train MSE {total / len(loader):.5f}")
    print(f"trained {epochs} epochs in {timer.seconds:.1f} s")

    model.eval()
    with vt.no_grad():
        pred = model(test_lo)
    near = nn.functional.interpolate(test_lo, scale_factor=2, mode="nearest")
    cubic = bicubic(test_lo, 2)
    scores = {"nearest": psnr(near, test_hi), "bicubic": psnr(cubic, test_hi),
              "ESPCN": psnr(pred, test_hi)}
    for name, value in scores.items():
        print(f"test PSNR {name:8s} {value:6.2f} dB")
    if not args.smoke:
        k = slice(0, 10)
        plot_comparison([("input 4x4", test_lo[k]), ("nearest", near[k]),
                         ("bicubic", cubic[k]), ("ESPCN", pred[k]), ("truth", test_hi[k])],
                        out / "super_resolution.png")
    ours = scores["ESPCN"]
    if args.smoke:
        best = max(scores["nearest"], scores["bicubic"])
        _common.check(ours > best, f"PSNR {ours:.2f} dB > best interpolation {best:.2f} dB")
    else:
        want = scores["bicubic"] + 4.0
        _common.check(ours >= want, f"PSNR {ours:.2f} dB >= bicubic + 4 dB = {want:.2f} dB")


if __name__ == "__main__":
    main()
