"""Training runs: 20 steps of a small MLP and a small CNN; loss curves must match."""

from __future__ import annotations

from ..case import FLOAT, Arg
from ..case_nn import TrainCase


def _mlp(nn):
    return nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.ReLU(),
                         nn.Linear(16, 3))


def _cnn(nn):
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 3), nn.ReLU(), nn.Flatten(), nn.Linear(6 * 2 * 2, 3))


def _ce(nn, out, y):
    return nn.functional.cross_entropy(out, y)


def _mse(nn, out, y):
    return nn.functional.mse_loss(out, y)


CASES: list = [
    TrainCase("training/mlp_sgd", "nn.Module", FLOAT, tol=100.0, needs=("optim.SGD",),
              make=_mlp, x=Arg((32, 6)), y=Arg((32,), 0, 3, kind="index"), loss=_ce,
              optimizer=lambda optim, ps: optim.SGD(ps, lr=0.1, momentum=0.9)),
    TrainCase("training/mlp_adam_mse", "nn.Module", FLOAT, tol=100.0, needs=("optim.Adam",),
              make=_mlp, x=Arg((32, 6)), y=Arg((32, 3)), loss=_mse,
              optimizer=lambda optim, ps: optim.Adam(ps, lr=0.01)),
    TrainCase("training/cnn_sgd", "nn.Module", FLOAT, tol=100.0, needs=("optim.SGD",),
              make=_cnn, x=Arg((8, 1, 8, 8)), y=Arg((8,), 0, 3, kind="index"), loss=_ce,
              optimizer=lambda optim, ps: optim.SGD(ps, lr=0.05, momentum=0.9)),
]
