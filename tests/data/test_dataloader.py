"""DataLoader in the main process: batching, shuffling, devices, resuming, iterables."""

from __future__ import annotations

import numpy as np
import pytest
from vt_helpers import to_np

import volta_core as vt
from volta_core.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    IterableDataset,
    SequentialSampler,
    TensorDataset,
    get_worker_info,
)


class Squares(Dataset):
    """Sample i: (NumPy float32 [i, i*i], int i, str)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        return np.array([i, i * i], dtype=np.float32), i, f"s{i}"


class Stream(IterableDataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


def _tensor_ds(n: int = 10) -> TensorDataset:
    x = vt.from_numpy(np.arange(2 * n, dtype=np.float32).reshape(n, 2))
    return TensorDataset(x, vt.arange(n))


def test_batches_in_order_with_last_partial_batch():
    dl = DataLoader(_tensor_ds(10), batch_size=4)
    batches = list(dl)
    assert len(dl) == 3 and len(batches) == 3
    assert [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][0].shape == (4, 2) and batches[0][0].dtype == vt.float32
    assert len(list(DataLoader(_tensor_ds(10), batch_size=4, drop_last=True))) == 2


def test_numpy_samples_and_strings():
    x, i, s = next(iter(DataLoader(Squares(5), batch_size=3)))
    np.testing.assert_array_equal(to_np(x), [[0, 0], [1, 1], [2, 4]])
    assert i.tolist() == [0, 1, 2] and i.dtype == vt.int64
    assert s == ["s0", "s1", "s2"]


def test_shuffle_is_seeded_and_reshuffles_each_epoch():
    dl = DataLoader(_tensor_ds(20), batch_size=5, shuffle=True, generator=3)
    e0 = [v for b in dl for v in b[1].tolist()]
    e1 = [v for b in dl for v in b[1].tolist()]
    assert sorted(e0) == list(range(20)) and e0 != e1
    again = DataLoader(_tensor_ds(20), batch_size=5, shuffle=True, generator=3)
    assert [v for b in again for v in b[1].tolist()] == e0


def test_device_places_batches():
    dl = DataLoader(Squares(4), batch_size=2, device="cpu")
    x, i, _ = next(iter(dl))
    assert x.device == vt.Device("cpu") and i.device == vt.Device("cpu")
    dl = DataLoader(Squares(4), batch_size=2, device=vt.Device("cpu"),
                    collate_fn=lambda b: {"first": vt.tensor(b[0][0])})
    assert next(iter(dl))["first"].device == "cpu"


def test_batch_size_none_and_batch_sampler():
    dl = DataLoader(Squares(3), batch_size=None)
    x, i, s = next(iter(dl))
    assert x.shape == (2,) and i == 0 and s == "s0"
    bs = BatchSampler(SequentialSampler(range(6)), 4, drop_last=False)
    dl = DataLoader(_tensor_ds(6), batch_sampler=bs)
    assert [b[1].tolist() for b in dl] == [[0, 1, 2, 3], [4, 5]]


def test_custom_collate_fn():
    dl = DataLoader(Squares(4), batch_size=2, collate_fn=lambda b: [s for _, _, s in b])
    assert list(dl) == [["s0", "s1"], ["s2", "s3"]]


def test_argument_errors():
    ds = _tensor_ds(4)
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(ds, sampler=SequentialSampler(ds), shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler"):
        DataLoader(ds, batch_size=2, batch_sampler=BatchSampler(range(4), 2, False))
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="persistent_workers"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="IterableDataset"):
        DataLoader(Stream(3), shuffle=True)


def test_iterable_dataset_batches():
    dl = DataLoader(Stream(7), batch_size=3)
    assert [b.tolist() for b in dl] == [[0, 1, 2], [3, 4, 5], [6]]
    assert [b.tolist() for b in DataLoader(Stream(7), batch_size=3, drop_last=True)] == \
        [[0, 1, 2], [3, 4, 5]]
    assert get_worker_info() is None


def test_state_dict_resumes_mid_epoch_exactly():
    ds = _tensor_ds(30)
    dl = DataLoader(ds, batch_size=4, shuffle=True, generator=11)
    list(dl)  # epoch 0
    it = iter(dl)
    seen = [next(it)[1].tolist() for _ in range(3)]
    state = dl.state_dict()
    assert state["epoch"] == 1 and state["batches_yielded"] == 3
    rest = [b[1].tolist() for b in it]
    resumed = DataLoader(ds, batch_size=4, shuffle=True, generator=0)
    resumed.load_state_dict(state)
    assert [b[1].tolist() for b in resumed] == rest
    full = DataLoader(ds, batch_size=4, shuffle=True, generator=11)
    full.load_state_dict({"epoch": 1, "batches_yielded": 0, "sampler": {"seed": 11,
                                                                        "epoch": 1}})
    assert [b[1].tolist() for b in full] == seen + rest
    assert dl.state_dict()["epoch"] == 2 and dl.state_dict()["batches_yielded"] == 0
