"""An LSTM forecasts a noisy sum of sines one step ahead.

The series is ``sin(0.21 t) + 0.5 sin(0.57 t + 1) + 0.1 * noise``. The model
(``nn.LSTM`` with ``batch_first=True`` and a linear head) reads a window of 40 past values
and predicts the next one; it trains on the first 80% of the series and is tested on the
last 20%, which it has never seen. Saves prediction vs truth on the test part as a PNG.
Criterion: test MSE against the clean signal below 0.01 (smoke: 0.1) and below the
"repeat the last value" baseline.

Usage: python examples/lstm_timeseries.py [--device cpu|cuda|wgpu|auto] [--smoke]
"""

from __future__ import annotations

from pathlib import Path

import _common

import volta_core as vt
from volta_core import nn, optim
from volta_core.data import DataLoader, TensorDataset

WINDOW = 40
NOISE = 0.1


def make_series(n: int, device: vt.Device) -> tuple[vt.Tensor, vt.Tensor]:
    """(noisy, clean) series of length ``n``."""
    t = vt.arange(n, dtype=vt.float32, device=device)
    clean = vt.sin(0.21 * t) + 0.5 * vt.sin(0.57 * t + 1.0)
    return clean + NOISE * vt.randn(n, device=device), clean


def windows(series: vt.Tensor, target: vt.Tensor) -> tuple[vt.Tensor, vt.Tensor]:
    """Every ``(WINDOW, 1)`` slice of ``series`` and the value of ``target`` after it."""
    n = series.shape[0] - WINDOW
    idx = vt.arange(WINDOW, device=series.device).reshape(1, -1) \
        + vt.arange(n, device=series.device).reshape(-1, 1)        # (n, WINDOW)
    return series[idx].reshape(n, WINDOW, 1), target[WINDOW:].reshape(n, 1)


class Forecaster(nn.Module):
    """LSTM over the window, a linear layer on the last hidden state."""

    def __init__(self, hidden: int = 32) -> None:
        super().__init__()
        self.lstm = nn.LSTM(1, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x: vt.Tensor) -> vt.Tensor:
        out, _ = self.lstm(x)            # (batch, WINDOW, hidden)
        return self.head(out[:, -1])     # (batch, 1)


def plot_forecast(noisy: list[float], clean: list[float], pred: list[float], mse: float,
                  path: Path) -> None:
    plt = _common.pyplot()
    n = min(len(pred), 200)                    # the first 200 test steps, for legibility
    fig, ax = plt.subplots(figsize=(10, 3.8))
    steps = range(n)
    ax.plot(steps, noisy[:n], ".", color="gray", ms=4, label="noisy series")
    ax.plot(steps, clean[:n], "k", lw=1, label="clean signal")
    ax.plot(steps, pred[:n], "r", lw=1.2, label="LSTM one-step forecast")
    ax.set(title=f"LSTM one-step-ahead forecast on unseen data (test MSE {mse:.4f})",
           xlabel="time step (test part)", ylabel="value", ylim=(-2.0, 2.4))
    ax.legend(loc="upper center", ncol=3)
    _common.save_figure(fig, path)


def main(argv: list[str] | None = None) -> None:
    parser = _common.make_parser(__doc__, "runs/lstm")
    parser.add_argument("--epochs", type=int, default=None, help="default 12 (smoke: 3)")
    args = parser.parse_args(argv)
    device, out = _common.setup(args)
    epochs = args.epochs or (3 if args.smoke else 12)

    noisy, clean = make_series(2000, device)
    cut = 1600
    train_x, train_y = windows(noisy[:cut], noisy[:cut])
    test_x, test_y = windows(noisy[cut - WINDOW:], clean[cut - WINDOW:])
    loader = DataLoader(TensorDataset(train_x, train_y), batch_size=64, shuffle=True)

    model = Forecaster().to(device)
    optimizer = optim.Adam(model.parameters(), lr=1e-2)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs * len(loader))
    loss_fn = nn.MSELoss()
    with _common.Timer() as timer:
        for epoch in range(1, epochs + 1):
            total = 0.0
            for x, y in loader:
                optimizer.zero_grad()
                loss = loss_fn(model(x), y)
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                total += loss.item()
            print(f"epoch {epoch:2d}  train MSE (vs noisy targets) {total / len(loader):.4f}")
    print(f"trained in {timer.seconds:.1f} s")

    model.eval()
    with vt.no_grad():
        pred = model(test_x)
    mse = loss_fn(pred, test_y).item()
    baseline = loss_fn(test_x[:, -1], test_y).item()     # repeat the last noisy value
    print(f"test MSE vs the clean signal: {mse:.4f}  (repeat-last-value baseline "
          f"{baseline:.4f}, noise variance {NOISE ** 2:.4f})")
    if not args.smoke:
        plot_forecast(noisy[cut:].tolist(), test_y[:, 0].tolist(), pred[:, 0].tolist(),
                      mse, out / "lstm_forecast.png")
    bound = 0.1 if args.smoke else 0.01
    _common.check(mse < bound and mse < baseline,
                  f"test MSE {mse:.4f} < {bound} and < baseline {baseline:.4f}")


if __name__ == "__main__":
    main()
