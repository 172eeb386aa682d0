"""Exact mid-epoch resume with random augmentation in worker processes (issue 19)."""

from __future__ import annotations

import random

import numpy as np
import pytest

import volta_core as vt
from volta_core.data import DataLoader, Dataset


class Augmented(Dataset):
    """Sample i: i plus noise drawn from Python's, NumPy's and Volta's generators."""

    def __len__(self) -> int:
        return 40

    def __getitem__(self, i: int):
        return np.float64(i + random.random() + np.random.rand() + vt.rand(1).item())


def _loader(**kw) -> DataLoader:
    return DataLoader(Augmented(), batch_size=3, shuffle=True, num_workers=2, generator=7,
                      **kw)


def _values(batches) -> list[list[float]]:
    return [b.tolist() for b in batches]


@pytest.mark.parametrize("stop", [1, 5, 11])
def test_mid_epoch_resume_with_workers_is_exact(tmp_path, stop):
    full = _values(_loader())
    first = _loader()
    it = iter(first)
    head = [next(it).tolist() for _ in range(stop)]
    vt.save({"loader": first.state_dict()}, tmp_path / "ckpt.vt")  # through a checkpoint
    del it, first
    resumed = _loader()
    resumed.load_state_dict(vt.load(tmp_path / "ckpt.vt")["loader"])
    assert head + _values(resumed) == full


def test_resume_at_an_epoch_boundary_with_persistent_workers(tmp_path):
    ref = _loader(persistent_workers=True)
    epochs = [_values(ref) for _ in range(3)]
    first = _loader(persistent_workers=True)
    _values(first)
    it = iter(first)
    second_head = [next(it).tolist() for _ in range(4)]
    state = first.state_dict()
    resumed = _loader(persistent_workers=True)
    resumed.load_state_dict(state)
    assert second_head + _values(resumed) == epochs[1]
    assert _values(resumed) == epochs[2]  # the next epoch continues the workers' streams


class PyDraws(Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int):
        return random.random()


def test_worker_init_fn_seeding_is_still_respected():
    def init(worker_id: int) -> None:
        random.seed(1000 + worker_id)

    dl = DataLoader(PyDraws(), batch_size=None, num_workers=2, worker_init_fn=init,
                    generator=1)
    got = [float(x) for x in dl]
    assert got[:2] == [random.Random(1000).random(), random.Random(1001).random()]
