"""A two-layer MLP learns XOR, the classic problem no linear model can solve.

Shows the smallest complete Volta training loop: tensors, ``nn.Sequential``, a loss,
``backward`` and an optimizer. Saves the learned decision surface as a PNG.
Criterion: all four XOR inputs classified correctly (and the loss small).

Usage: python examples/xor_mlp.py [--device cpu|cuda|wgpu|auto] [--smoke]
"""

from __future__ import annotations

from pathlib import Path

import _common

import volta_core as vt
from volta_core import nn, optim

INPUTS = [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
TARGETS = [[0.0], [1.0], [1.0], [0.0]]


def plot_surface(model: nn.Module, device: vt.Device, path: Path) -> None:
    """Draw the model's P(y=1) over the unit square with the four training points."""
    plt = _common.pyplot()
    n = 60
    grid = vt.linspace(-0.25, 1.25, n, device=device)
    xs = grid.reshape(1, n).expand(n, n)
    ys = grid.reshape(n, 1).expand(n, n)
    points = vt.stack([xs.reshape(-1), ys.reshape(-1)], dim=1)
    with vt.no_grad():
        prob = model(points).sigmoid().reshape(n, n).numpy()
    fig, ax = plt.subplots(figsize=(4.5, 4))
    im = ax.imshow(prob, origin="lower", extent=(-0.25, 1.25, -0.25, 1.25),
                   cmap="coolwarm", vmin=0, vmax=1)
    for (x, y), (t,) in zip(INPUTS, TARGETS):
        ax.scatter(x, y, s=120, c="red" if t else "blue", edgecolors="black")
    fig.colorbar(im, ax=ax, label="P(xor = 1)")
    ax.set(title="XOR: learned decision surface", xlabel="a", ylabel="b")
    _common.save_figure(fig, path)


def main(argv: list[str] | None = None) -> None:
    parser = _common.make_parser(__doc__, "runs/xor")
    parser.add_argument("--steps", type=int, default=None, help="default 500 (smoke: 200)")
    args = parser.parse_args(argv)
    device, out = _common.setup(args)
    steps = args.steps or (200 if args.smoke else 500)

    x = vt.tensor(INPUTS, device=device)
    y = vt.tensor(TARGETS, device=device)
    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1)).to(device)
    optimizer = optim.Adam(model.parameters(), lr=0.05)
    loss_fn = nn.BCEWithLogitsLoss()

    with _common.Timer() as timer:
        for step in range(1, steps + 1):
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            if step % (steps // 5) == 0:
                print(f"step {step:4d}  loss {loss.item():.5f}")
    with vt.no_grad():
        prob = model(x).sigmoid()
    preds = (prob > 0.5).float()
    for (a, b), p, t in zip(INPUTS, prob.reshape(-1).tolist(), TARGETS):
        print(f"  xor({a:.0f}, {b:.0f}) = {t[0]:.0f}   model: {p:.3f}")
    correct = int((preds == y).sum().item())
    final = loss.item()
    print(f"{correct}/4 correct, final loss {final:.4f} after {steps} steps "
          f"in {timer.seconds:.1f} s")
    if not args.smoke:
        plot_surface(model, device, out / "xor_surface.png")
    bound = 0.2 if args.smoke else 0.05
    _common.check(correct == 4 and final < bound,
                  f"all 4 XOR inputs right and loss {final:.4f} < {bound}")


if __name__ == "__main__":
    main()
