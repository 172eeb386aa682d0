"""Fit a cubic polynomial to noisy samples with plain SGD (with momentum).

The model is four ``nn.Parameter`` coefficients and the features are the powers
``1, x, x^2, x^3`` built with broadcasting, so the example shows parameters, a
hand-written model, ``nn.MSELoss``, ``optim.SGD`` and a step-decay scheduler. Saves the
data, the true curve and the fit as a PNG.
Criterion: every learned coefficient within 0.1 of the truth (smoke: 0.3).

Usage: python examples/polynomial_regression.py [--device cpu|cuda|wgpu|auto] [--smoke]
"""

from __future__ import annotations

from pathlib import Path

import _common

import volta_core as vt
from volta_core import nn, optim

TRUE_COEFFS = [1.0, -2.0, -1.0, 0.5]   # y = 1 - 2x - x^2 + 0.5x^3
NOISE = 0.3


class Cubic(nn.Module):
    """y = c0 + c1 x + c2 x^2 + c3 x^3 with learnable coefficients."""

    def __init__(self) -> None:
        super().__init__()
        self.coeffs = nn.Parameter(vt.zeros(4))

    def forward(self, x: vt.Tensor) -> vt.Tensor:
        powers = x.reshape(-1, 1) ** vt.arange(4, dtype=x.dtype, device=x.device)  # (n, 4)
        return powers @ self.coeffs


def cubic(x: vt.Tensor, coeffs: list[float]) -> vt.Tensor:
    return sum(c * x ** i for i, c in enumerate(coeffs))


def plot_fit(x: vt.Tensor, y: vt.Tensor, model: Cubic, losses: list[float],
             path: Path) -> None:
    """Save the samples, the true cubic and the fit, next to the loss curve."""
    plt = _common.pyplot()
    grid = vt.linspace(-2.2, 2.2, 200, device=x.device)
    with vt.no_grad():
        fit = model(grid)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.scatter(x.tolist(), y.tolist(), s=8, alpha=0.5, label="noisy samples")
    ax1.plot(grid.tolist(), cubic(grid, TRUE_COEFFS).tolist(), "k--", label="true cubic")
    ax1.plot(grid.tolist(), fit.tolist(), "r", label="SGD fit")
    ax1.set(title="cubic regression", xlabel="x", ylabel="y")
    ax1.legend()
    ax2.semilogy(losses)
    ax2.axhline(NOISE ** 2, color="gray", ls=":", label="noise variance")
    ax2.set(title="training loss", xlabel="epoch", ylabel="MSE")
    ax2.legend()
    _common.save_figure(fig, path)


def main(argv: list[str] | None = None) -> None:
    parser = _common.make_parser(__doc__, "runs/polynomial")
    parser.add_argument("--epochs", type=int, default=None, help="default 100 (smoke: 10)")
    args = parser.parse_args(argv)
    device, out = _common.setup(args)
    epochs = args.epochs or (10 if args.smoke else 100)

    n = 1000
    x = vt.rand(n, device=device) * 4 - 2                       # uniform on [-2, 2]
    y = cubic(x, TRUE_COEFFS) + NOISE * vt.randn(n, device=device)
    model = Cubic().to(device)
    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=epochs // 2, gamma=0.3)
    loss_fn = nn.MSELoss()
    batch = 50
    losses = []
    with _common.Timer() as timer:
        for epoch in range(1, epochs + 1):
            perm = vt.randperm(n, device=device)
            total = 0.0
            for start in range(0, n, batch):
                idx = perm[start:start + batch]
                optimizer.zero_grad()
                loss = loss_fn(model(x[idx]), y[idx])
                loss.backward()
                optimizer.step()
                total += loss.item()
            scheduler.step()
            losses.append(total / (n // batch))
            if epoch % (epochs // 4) == 0:
                print(f"epoch {epoch:3d}  loss {losses[-1]:.4f}")
    print(f"trained in {timer.seconds:.1f} s")

    learned = model.coeffs.tolist()
    terms = ["1", "x", "x^2", "x^3"]
    print("coefficient   true   learned")
    for term, t, c in zip(terms, TRUE_COEFFS, learned):
        print(f"  {term:9s} {t:7.3f} {c:9.3f}")
    err = max(abs(t - c) for t, c in zip(TRUE_COEFFS, learned))
    if not args.smoke:
        plot_fit(x, y, model, losses, out / "polynomial_fit.png")
    bound = 0.3 if args.smoke else 0.1
    _common.check(err < bound, f"max coefficient error {err:.3f} < {bound}")


if __name__ == "__main__":
    main()
