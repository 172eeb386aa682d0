"""An LSTM time-series predictor in PyTorch's idiom: sliding windows of a noisy sine,
nn.LSTM(batch_first=True), MSELoss, Adam, then an autoregressive forecast."""

import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Forecaster(nn.Module):
    def __init__(self, hidden=24):
        super().__init__()
        self.lstm = nn.LSTM(input_size=1, hidden_size=hidden, num_layers=1, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.head(out[:, -1, :])


def main():
    torch.manual_seed(0)
    t = torch.arange(0, 400, dtype=torch.float32)
    series = torch.sin(2 * math.pi * t / 25) + 0.05 * torch.randn(400)
    window = 20
    xs = torch.stack([series[i:i + window] for i in range(len(series) - window)])
    ys = series[window:].unsqueeze(1)
    loader = DataLoader(TensorDataset(xs.unsqueeze(-1), ys), batch_size=32, shuffle=True)
    model = Forecaster()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    loss_fn = nn.MSELoss()
    losses = []
    for _epoch in range(6):
        epoch_loss = 0.0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
        losses.append(epoch_loss / len(loader))
    model.eval()
    context = series[-window:].view(1, window, 1)
    preds = []
    with torch.no_grad():
        for _ in range(10):
            nxt = model(context)
            preds.append(nxt.item())
            context = torch.cat([context[:, 1:, :], nxt.view(1, 1, 1)], dim=1)
    truth = torch.sin(2 * math.pi * torch.arange(400, 410, dtype=torch.float32) / 25)
    err = (torch.tensor(preds) - truth).abs().mean().item()
    assert losses[-1] < 0.2 * losses[0], losses
    assert err < 0.3, err
    return {"first_loss": losses[0], "last_loss": losses[-1], "forecast_error": err}
