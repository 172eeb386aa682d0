"""LeNet-5, the 1998 convolutional network, on Volta's bundled 8x8 handwritten digits.

LeNet expects larger images, so the model first upsamples each 8x8 digit to 16x16
(``nn.Upsample``, bilinear), then runs the classic stack: 5x5 convolution, max-pool,
5x5 convolution, max-pool, and three fully connected layers (120, 84, 10). Shows
``DataLoader`` over a ``TensorDataset``, ``model.train()``/``model.eval()``, a learning-rate
schedule and a confusion matrix. Criterion: test accuracy >= 95% (smoke: >= 70%).

Usage: python examples/lenet_cnn.py [--device cpu|cuda|wgpu|auto] [--smoke] [--epochs 15]
"""

from __future__ import annotations

from pathlib import Path

import _common

import volta_core as vt
from volta_core import nn, optim
from volta_core.data import DataLoader, TensorDataset
from volta_core.data.datasets import load_digits


class LeNet(nn.Module):
    """LeNet-5 for 1x8x8 inputs, upsampled to 1x16x16."""

    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
            nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.ReLU(),   # 6 x 16 x 16
            nn.MaxPool2d(2),                                        # 6 x 8 x 8
            nn.Conv2d(6, 16, kernel_size=5), nn.ReLU(),             # 16 x 4 x 4
            nn.MaxPool2d(2),                                        # 16 x 2 x 2
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(16 * 2 * 2, 120), nn.ReLU(),
            nn.Linear(120, 84), nn.ReLU(),
            nn.Linear(84, num_classes),
        )

    def forward(self, x: vt.Tensor) -> vt.Tensor:
        return self.classifier(self.features(x))


def predict(model: nn.Module, images: vt.Tensor) -> vt.Tensor:
    """Class predictions in eval mode, without recording a graph."""
    model.eval()
    with vt.no_grad():
        preds = model(images).argmax(dim=1)
    model.train()
    return preds


def plot_confusion(labels: list[int], preds: list[int], acc: float, path: Path) -> None:
    """Save the 10x10 confusion matrix of the test set."""
    plt = _common.pyplot()
    matrix = [[0] * 10 for _ in range(10)]
    for t, p in zip(labels, preds):
        matrix[t][p] += 1
    fig, ax = plt.subplots(figsize=(5, 4.5))
    ax.imshow(matrix, cmap="Blues")
    for t in range(10):
        for p in range(10):
            if matrix[t][p]:
                ax.text(p, t, str(matrix[t][p]), ha="center", va="center", fontsize=7,
                        color="white" if matrix[t][p] > 20 else "black")
    ax.set(xticks=range(10), yticks=range(10), xlabel="predicted", ylabel="true",
           title=f"LeNet on the digits: test accuracy {acc:.1%}")
    _common.save_figure(fig, path)


def main(argv: list[str] | None = None) -> None:
    parser = _common.make_parser(__doc__, "runs/lenet")
    parser.add_argument("--epochs", type=int, default=None, help="default 15 (smoke: 2)")
    args = parser.parse_args(argv)
    device, out = _common.setup(args)
    epochs = args.epochs or (2 if args.smoke else 15)

    train_set, test_set = load_digits()
    loader = DataLoader(TensorDataset(train_set.data, train_set.targets), batch_size=32,
                        shuffle=True, device=device)
    test_x, test_y = test_set.data.to(device), test_set.targets.to(device)

    model = LeNet().to(device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"LeNet-5 with {n_params:,} parameters")
    optimizer = optim.Adam(model.parameters(), lr=3e-3)
    scheduler = optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2, epochs=epochs,
                                              steps_per_epoch=len(loader))
    loss_fn = nn.CrossEntropyLoss()

    with _common.Timer() as timer:
        for epoch in range(1, epochs + 1):
            total = 0.0
            for images, labels in loader:
                optimizer.zero_grad()
                loss = loss_fn(model(images), labels)
                loss.backward()
                optimizer.step()
                scheduler.step()
                total += loss.item()
            acc = (predict(model, test_x) == test_y).float().mean().item()
            print(f"epoch {epoch:2d}  loss {total / len(loader):.4f}  test accuracy {acc:.2%}")
    print(f"trained {epochs} epochs in {timer.seconds:.1f} s on {device}")

    preds = predict(model, test_x)
    acc = (preds == test_y).float().mean().item()
    if not args.smoke:
        plot_confusion(test_y.tolist(), preds.tolist(), acc, out / "lenet_confusion.png")
    bound = 0.70 if args.smoke else 0.95
    _common.check(acc >= bound, f"test accuracy {acc:.2%} >= {bound:.0%}")


if __name__ == "__main__":
    main()
