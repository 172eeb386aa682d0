"""DistributedSampler: equal, disjoint shards covering the dataset, reshuffled per epoch."""

from __future__ import annotations

import pytest

from volta_core.data.distributed import DistributedSampler


@pytest.mark.parametrize("n,replicas", [(10, 2), (11, 3), (5, 4), (2, 3)])
def test_shards_are_equal_and_cover_the_dataset(n, replicas):
    shards = [list(DistributedSampler(range(n), replicas, r, seed=1)) for r in range(replicas)]
    size = -(-n // replicas)
    assert all(len(s) == size for s in shards)
    assert all(len(DistributedSampler(range(n), replicas, r)) == size for r in range(replicas))
    everything = sorted(i for s in shards for i in s)
    assert set(everything) == set(range(n))
    assert len(everything) - n == size * replicas - n  # padding repeats a few indices


def test_drop_last_gives_disjoint_shards_without_padding():
    shards = [list(DistributedSampler(range(11), 3, r, drop_last=True)) for r in range(3)]
    assert [len(s) for s in shards] == [3, 3, 3]
    flat = [i for s in shards for i in s]
    assert len(set(flat)) == 9


def test_no_shuffle_is_strided_and_epochs_reshuffle():
    assert list(DistributedSampler(range(7), 2, 1, shuffle=False)) == [1, 3, 5, 0]
    s = DistributedSampler(range(100), 2, 0, seed=5)
    first, again = list(s), list(s)
    assert first == again  # same epoch, same order (every rank agrees)
    s.set_epoch(1)
    assert list(s) != first
    other = DistributedSampler(range(100), 2, 0, seed=5)
    other.load_state_dict(s.state_dict())
    assert list(other) == list(s)


def test_bad_arguments_and_missing_process_group():
    with pytest.raises(ValueError, match="invalid rank 2"):
        DistributedSampler(range(4), 2, 2)
    with pytest.raises(RuntimeError, match="init_process_group"):
        DistributedSampler(range(4))
