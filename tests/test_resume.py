"""Exact resume: 20 steps straight == 10 steps, checkpoint, fresh objects, 10 more steps.

The checkpoint holds the model, optimizer, scheduler, data-loader position and RNG
states; parameters must match bit for bit on the CPU. A crash in the middle of a
later save must leave the earlier checkpoint intact and loadable.
"""

from __future__ import annotations

import numpy as np
import pytest
from vt_helpers import to_np

import volta_core as vt
from volta_core.io import safetensors_io
from volta_core.nn.utils import clip_grad_norm_
from volta_core.optim import AdamW
from volta_core.optim.lr_scheduler import CosineAnnealingLR, LinearLR, SequentialLR

HAS_LOADER = hasattr(vt, "data") and hasattr(vt.data, "DataLoader")
DATA_X = np.random.default_rng(11).normal(size=(40, 4))
DATA_Y = np.random.default_rng(12).normal(size=(40, 2))


class Run:
    """Everything a training run holds: model, optimizer, scheduler and batch source."""

    def __init__(self, source: str) -> None:
        nn = vt.nn
        self.model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.2),
                                   nn.Linear(16, 2))
        self.opt = AdamW(self.model.parameters(), lr=0.05, weight_decay=0.01)
        self.sched = SequentialLR(self.opt, [LinearLR(self.opt, 0.2, total_iters=4),
                                             CosineAnnealingLR(self.opt, T_max=16)], [4])
        self.source = source
        self.x = vt.tensor(DATA_X, dtype="float32")
        self.y = vt.tensor(DATA_Y, dtype="float32")
        if source == "loader":
            ds = vt.data.TensorDataset(self.x, self.y)
            self.loader = vt.data.DataLoader(ds, batch_size=6, shuffle=True, drop_last=True,
                                             generator=5)
            self._it = None

    def batch(self):
        if self.source == "randint":  # batches drawn from the seeded global RNG
            idx = vt.randint(0, 40, (6,)).tolist()
            return (vt.tensor(DATA_X[idx], dtype="float32"),
                    vt.tensor(DATA_Y[idx], dtype="float32"))
        for _ in range(2):
            if self._it is None:
                self._it = iter(self.loader)
            b = next(self._it, None)
            if b is not None:
                return b
            self._it = None
        raise AssertionError("empty loader")

    def train(self, steps: int) -> None:
        for _ in range(steps):
            x, y = self.batch()
            self.opt.zero_grad()
            d = self.model(x) - y
            (d * d).mean().backward()
            clip_grad_norm_(self.model.parameters(), 1.0)
            self.opt.step()
            self.sched.step()

    def checkpoint(self) -> dict:
        ck = {"model": self.model.state_dict(), "optimizer": self.opt.state_dict(),
              "scheduler": self.sched.state_dict(), "rng": vt.generator_states(),
              "step": self.sched.last_epoch}
        if self.source == "loader":
            ck["loader"] = self.loader.state_dict()
        return ck

    def restore(self, ck: dict) -> None:
        self.model.load_state_dict(ck["model"])
        self.opt.load_state_dict(ck["optimizer"])
        self.sched.load_state_dict(ck["scheduler"])
        vt.set_generator_states(ck["rng"])
        if self.source == "loader":
            self.loader.load_state_dict(ck["loader"])

    def params(self) -> list[np.ndarray]:
        return [to_np(p).copy() for p in self.model.parameters()]


SOURCES = ["randint"] + (["loader"] if HAS_LOADER else [])


def fresh(source: str, seed: int) -> Run:
    vt.manual_seed(seed)
    return Run(source)


@pytest.mark.parametrize("source", SOURCES)
def test_resume_is_bitwise_exact(tmp_path, source):
    straight = fresh(source, 0)
    straight.train(20)
    expected = straight.params()

    first = fresh(source, 0)
    first.train(10)
    vt.io.save(first.checkpoint(), tmp_path / "ckpt.vt")
    del first

    resumed = fresh(source, 123)  # other initial weights and RNG: the checkpoint decides
    resumed.restore(vt.io.load(tmp_path / "ckpt.vt"))
    assert resumed.sched.last_epoch == 10
    resumed.train(10)
    for a, b in zip(resumed.params(), expected):
        np.testing.assert_array_equal(a, b)
    assert resumed.sched.get_last_lr() == straight.sched.get_last_lr()


def test_crash_during_save_keeps_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.vt"
    straight = fresh("randint", 0)
    straight.train(12)
    expected = straight.params()

    run = fresh("randint", 0)
    run.train(6)
    vt.io.save(run.checkpoint(), path)
    good = path.read_bytes()
    run.train(4)

    def crash(f, data):  # the process dies halfway through writing the temp file
        f.write(data[: len(data) // 3])
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(safetensors_io, "_write_chunks", crash)
    with pytest.raises(KeyboardInterrupt):
        vt.io.save(run.checkpoint(), path)
    monkeypatch.undo()
    assert path.read_bytes() == good
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.vt"]

    resumed = fresh("randint", 99)
    resumed.restore(vt.io.load(path))
    assert resumed.sched.last_epoch == 6
    resumed.train(6)
    for a, b in zip(resumed.params(), expected):
        np.testing.assert_array_equal(a, b)
