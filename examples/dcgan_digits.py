"""A small DCGAN learns to draw 8x8 handwritten digits.

The generator maps 16 random numbers through ``nn.ConvTranspose2d`` + ``nn.BatchNorm2d`` +
ReLU layers to an 8x8 image; the discriminator is strided ``nn.Conv2d`` + ``nn.LeakyReLU``
(+ batch norm). Both train adversarially with ``BCEWithLogitsLoss`` and Adam. To judge
the samples honestly, the script also trains a small digit classifier on the real
training images and asks it about 512 generated ones. Saves a grid of samples (PNG).
Criterion: both losses stay finite; at least 35% of the samples are recognised as a digit
with >= 90% confidence (it prints the rates of real digits and of noise), and 8 of
the 10 digits appear among them (no mode collapse). Smoke: losses finite and 5 points
more confident samples than for noise.

Usage: python examples/dcgan_digits.py [--device cpu|cuda|wgpu|auto] [--smoke]
"""

from __future__ import annotations

import math

import _common

import volta_core as vt
from volta_core import nn, optim
from volta_core.data import DataLoader, TensorDataset
from volta_core.data.datasets import load_digits

LATENT = 16


def generator() -> nn.Module:
    return nn.Sequential(
        nn.Linear(LATENT, 64 * 2 * 2), nn.Unflatten(1, (64, 2, 2)),
        nn.BatchNorm2d(64), nn.ReLU(),
        nn.ConvTranspose2d(64, 32, 4, stride=2, padding=1),       # 32 x 4 x 4
        nn.BatchNorm2d(32), nn.ReLU(),
        nn.ConvTranspose2d(32, 1, 4, stride=2, padding=1),        # 1 x 8 x 8
        nn.Sigmoid(),
    )


def discriminator() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 32, 4, stride=2, padding=1), nn.LeakyReLU(0.2),          # 32 x 4 x 4
        nn.Conv2d(32, 64, 4, stride=2, padding=1), nn.BatchNorm2d(64),
        nn.LeakyReLU(0.2),                                                    # 64 x 2 x 2
        nn.Flatten(), nn.Linear(64 * 2 * 2, 1),
    )


def judge(device: vt.Device, train_x: vt.Tensor, train_y: vt.Tensor, epochs: int) -> nn.Module:
    """A small CNN digit classifier trained on the real digits (the GAN's examiner)."""
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(16 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10)).to(device)
    opt = optim.Adam(model.parameters(), lr=3e-3)
    loader = DataLoader(TensorDataset(train_x, train_y), batch_size=64, shuffle=True)
    for _ in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
    return model.eval()


def confident(classifier: nn.Module, images: vt.Tensor) -> tuple[float, list[int]]:
    """Fraction of ``images`` classified with >= 90% confidence, and the count per digit."""
    with vt.no_grad():
        probs = classifier(images).softmax(dim=1)
    top, label = probs.max(dim=1)
    sure = (top >= 0.9)
    counts = [int((label == d).logical_and(sure).sum().item()) for d in range(10)]
    return sure.float().mean().item(), counts


def main(argv: list[str] | None = None) -> None:
    parser = _common.make_parser(__doc__, "runs/dcgan")
    parser.add_argument("--epochs", type=int, default=None, help="default 30 (smoke: 4)")
    args = parser.parse_args(argv)
    device, out = _common.setup(args)
    epochs = args.epochs or (4 if args.smoke else 30)

    train_set, test_set = load_digits()
    real_x, real_y = train_set.data.to(device), train_set.targets.to(device)
    examiner = judge(device, real_x, real_y, 6)
    with vt.no_grad():
        acc = (examiner(test_set.data.to(device)).argmax(dim=1)
               == test_set.targets.to(device)).float().mean().item()
    real_frac, _ = confident(examiner, test_set.data.to(device))
    print(f"examiner (a digit classifier trained on real digits): test accuracy {acc:.1%}, "
          f"{real_frac:.1%} of real test digits recognised with >= 90% confidence")

    gen, disc = generator().to(device), discriminator().to(device)
    opt_g = optim.Adam(gen.parameters(), lr=2e-3, betas=(0.5, 0.999))
    opt_d = optim.Adam(disc.parameters(), lr=2e-3, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    loader = DataLoader(TensorDataset(real_x), batch_size=64, shuffle=True, drop_last=True)
    fixed_z = vt.randn(64, LATENT, device=device)
    finite = True
    with _common.Timer() as timer:
        for epoch in range(1, epochs + 1):
            sums = [0.0, 0.0]
            for (real,) in loader:
                n = real.shape[0]
                ones, zeros = vt.ones(n, 1, device=device), vt.zeros(n, 1, device=device)
                fake = gen(vt.randn(n, LATENT, device=device))
                # discriminator: real -> 1 (smoothed to 0.9), fake -> 0
                opt_d.zero_grad()
                loss_d = bce(disc(real), 0.9 * ones) + bce(disc(fake.detach()), zeros)
                loss_d.backward()
                opt_d.step()
                # generator: make the discriminator say 1 for fakes
                opt_g.zero_grad()
                loss_g = bce(disc(fake), ones)
                loss_g.backward()
                opt_g.step()
                sums[0] += loss_d.item()
                sums[1] += loss_g.item()
            ld, lg = sums[0] / len(loader), sums[1] / len(loader)
            finite = finite and math.isfinite(ld) and math.isfinite(lg)
            if epoch % max(1, epochs // 6) == 0 or epoch == epochs:
                gen.eval()
                with vt.no_grad():
                    frac, _ = confident(examiner, gen(vt.randn(512, LATENT, device=device)))
                gen.train()
                print(f"epoch {epoch:3d}  loss D {ld:.3f}  loss G {lg:.3f}  "
                      f"confidently recognised samples {frac:.1%}")
    print(f"trained {epochs} epochs in {timer.seconds:.1f} s")

    gen.eval()
    with vt.no_grad():
        samples = gen(vt.randn(512, LATENT, device=device))
        grid = gen(fixed_z)
    frac, counts = confident(examiner, samples)
    noise_frac, _ = confident(examiner, vt.rand(512, 1, 8, 8, device=device))
    digits = sum(c > 0 for c in counts)
    print(f"samples recognised with >= 90% confidence: {frac:.1%} (random noise: "
          f"{noise_frac:.1%}); per digit {counts}")
    if not args.smoke:
        _common.image_grid(grid.numpy(), out / "dcgan_samples.png",
                           f"DCGAN samples after {epochs} epochs")
    if args.smoke:
        _common.check(finite and frac > noise_frac + 0.05, f"losses finite and confident "
                      f"samples {frac:.1%} > noise {noise_frac:.1%} + 5 points")
    else:
        _common.check(finite and frac >= 0.35 and digits >= 8,
                      f"losses finite, {frac:.1%} >= 35% of samples confidently recognised, "
                      f"{digits} >= 8 digits present")


if __name__ == "__main__":
    main()
