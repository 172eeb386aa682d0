"""Samplers and datasets: determinism, resumption, distributions, splits."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import volta_core as vt
from volta_core.data import (
    BatchSampler,
    ConcatDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    random_split,
)


def test_sequential_and_batch_sampler():
    assert list(SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    bs = BatchSampler(SequentialSampler(range(5)), 2, drop_last=False)
    assert list(bs) == [[0, 1], [2, 3], [4]] and len(bs) == 3
    bs = BatchSampler(SequentialSampler(range(5)), 2, drop_last=True)
    assert list(bs) == [[0, 1], [2, 3]] and len(bs) == 2
    with pytest.raises(ValueError, match="batch_size"):
        BatchSampler(range(5), 0, False)


def test_random_sampler_is_a_permutation_that_changes_each_epoch():
    s = RandomSampler(range(50), generator=7)
    e0, e1 = list(s), list(s)
    assert sorted(e0) == list(range(50)) and sorted(e1) == list(range(50))
    assert e0 != e1
    assert list(RandomSampler(range(50), generator=7)) == e0  # same seed, same epoch 0


def test_random_sampler_follows_manual_seed():
    vt.manual_seed(3)
    a = list(RandomSampler(range(30)))
    vt.manual_seed(4)
    b = list(RandomSampler(range(30)))
    vt.manual_seed(3)
    c = list(RandomSampler(range(30)))
    vt.manual_seed(0)
    assert a == c and a != b


def test_random_sampler_resumes_mid_epoch():
    s = RandomSampler(range(40), generator=1)
    list(s)  # epoch 0
    it = iter(s)
    head = [next(it) for _ in range(15)]
    state = s.state_dict()
    assert state == {"seed": 1, "epoch": 1, "offset": 15}
    tail = list(it)
    r = RandomSampler(range(40), generator=99)
    r.load_state_dict(state)
    assert list(r) == tail
    fresh = RandomSampler(range(40), generator=1)
    fresh.set_epoch(1)
    assert list(fresh) == head + tail


def test_random_sampler_replacement_and_num_samples():
    s = RandomSampler(range(10), replacement=True, num_samples=1000, generator=0)
    draws = list(s)
    assert len(draws) == 1000 == len(s) and set(draws) == set(range(10))
    s = RandomSampler(range(10), num_samples=25, generator=0)
    out = list(s)
    assert len(out) == 25 and sorted(out[:10]) == list(range(10))
    with pytest.raises(ValueError, match="num_samples"):
        RandomSampler(range(10), num_samples=0)


def test_weighted_sampler_distribution():
    w = [1.0, 2.0, 0.0, 7.0]
    draws = list(WeightedRandomSampler(w, 20000, generator=5))
    freq = Counter(draws)
    assert freq[2] == 0
    for i, wi in enumerate(w):
        assert abs(freq[i] / 20000 - wi / 10) < 0.015
    assert list(WeightedRandomSampler(w, 50, generator=5)) == draws[:50]


def test_weighted_sampler_without_replacement():
    s = WeightedRandomSampler(np.array([5.0, 1.0, 0.0, 1.0, 1.0]), 4, replacement=False,
                              generator=2)
    out = list(s)
    assert sorted(out) == [0, 1, 3, 4]
    firsts = Counter(list(WeightedRandomSampler([5.0, 1.0, 1.0], 1, False, generator=g))[0]
                     for g in range(400))
    assert 0.6 < firsts[0] / 400 < 0.82  # 5/7 = 0.71
    with pytest.raises(ValueError, match="without replacement"):
        WeightedRandomSampler([1.0, 0.0], 2, replacement=False)
    with pytest.raises(ValueError, match="non-negative"):
        WeightedRandomSampler([1.0, -1.0], 2)


def test_subset_random_sampler():
    idx = [3, 9, 12, 40]
    s = SubsetRandomSampler(idx, generator=1)
    a, b = list(s), list(s)
    assert sorted(a) == idx and sorted(b) == idx and len(s) == 4
    assert list(SubsetRandomSampler(idx, generator=1)) == a


def test_tensor_dataset_subset_concat():
    x = vt.from_numpy(np.arange(12, dtype=np.float32).reshape(6, 2))
    ds = TensorDataset(x, vt.arange(6))
    assert len(ds) == 6
    xi, yi = ds[-1]
    assert xi.tolist() == [10.0, 11.0] and yi.item() == 5
    with pytest.raises(IndexError):
        ds[6]
    with pytest.raises(ValueError, match="size mismatch"):
        TensorDataset(x, vt.arange(5))
    sub = Subset(ds, [4, 0])
    assert len(sub) == 2 and sub[0][1].item() == 4
    cat = ConcatDataset([sub, ds])
    assert len(cat) == 8 and cat[2][1].item() == 0 and cat[-1][1].item() == 5
    assert len(ds + sub) == 8


def test_random_split_lengths_fractions_and_seed():
    parts = random_split(range(10), [3, 7], generator=4)
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    again = random_split(range(10), [3, 7], generator=4)
    assert again[0].indices == parts[0].indices
    fr = random_split(range(11), [0.5, 0.3, 0.2], generator=4)
    assert [len(p) for p in fr] == [6, 3, 2]
    with pytest.raises(ValueError, match="summing"):
        random_split(range(10), [3, 3])
