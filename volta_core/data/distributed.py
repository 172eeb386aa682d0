"""``DistributedSampler``: each rank of a data-parallel job reads its own shard."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from .sampler import Sampler, _rng


class DistributedSampler(Sampler[int]):
    """Split a map-style dataset into ``num_replicas`` equal, disjoint shards.

    Every rank gets ``ceil(len(dataset) / num_replicas)`` indices: the (shuffled) order
    is padded by repeating its first indices so it divides evenly, or, with
    ``drop_last``, cut down to the largest multiple of ``num_replicas``. Rank ``r`` takes
    positions ``r, r + num_replicas, ...``. The order depends only on ``(seed, epoch)``,
    so every rank computes the same permutation: call :meth:`set_epoch` at the start of
    each epoch, before creating the DataLoader iterator, to reshuffle.

    Args:
        dataset: the dataset to sample from.
        num_replicas: the number of shards (default: the world size).
        rank: this shard (default: this process's rank).
        shuffle: shuffle the indices each epoch.
        seed: the seed of the shuffle; must be the same on every rank.
        drop_last: drop the tail instead of padding.

    Example:
        >>> sampler = DistributedSampler(dataset)
        >>> loader = DataLoader(dataset, batch_size=64, sampler=sampler)
        >>> for epoch in range(epochs):
        ...     sampler.set_epoch(epoch)
        ...     for x, y in loader: ...
    """

    def __init__(self, dataset: Any, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            from ..distributed import get_rank, get_world_size, is_initialized

            if not is_initialized():
                raise RuntimeError("DistributedSampler: num_replicas and rank default to the "
                                   "process group's; call init_process_group() first or pass "
                                   "them explicitly")
            num_replicas = get_world_size() if num_replicas is None else num_replicas
            rank = get_rank() if rank is None else rank
        if num_replicas < 1:
            raise ValueError(f"DistributedSampler: num_replicas must be >= 1, got "
                             f"{num_replicas}")
        if not 0 <= rank < num_replicas:
            raise ValueError(f"DistributedSampler: invalid rank {rank}; rank must be in "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.shuffle = shuffle
        self.seed = int(seed)
        self.drop_last = drop_last
        self.epoch = 0
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = n // num_replicas
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        indices = list(range(n))
        if self.shuffle:
            _rng(self.seed, self.epoch, "DistributedSampler").shuffle(indices)
        if self.drop_last:
            indices = indices[:self.total_size]
        elif indices:
            while len(indices) < self.total_size:
                indices += indices[:self.total_size - len(indices)]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use epoch ``epoch``'s order from the next iteration on (same on every rank)."""
        self.epoch = int(epoch)

    def state_dict(self) -> dict:
        """``{"seed", "epoch"}``."""
        return {"seed": self.seed, "epoch": self.epoch}

    def load_state_dict(self, state: dict) -> None:
        """Restore the seed and epoch saved by :meth:`state_dict`."""
        self.seed, self.epoch = int(state["seed"]), int(state["epoch"])


__all__ = ["DistributedSampler"]
