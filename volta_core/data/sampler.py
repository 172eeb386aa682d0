"""Samplers: the order in which a :class:`DataLoader` visits a map-style dataset.

Random samplers are reproducible and resumable. Each epoch's order is a pure function of
``(seed, epoch)``: the seed is the sampler's ``generator`` (an int, or an object with
``initial_seed()``), or the seed last given to ``vt.manual_seed`` when None; the epoch
counts the sampler's iterations. The order is drawn with Python's ``random.Random``
seeded by a string naming the sampler, the seed and the epoch, so it is the same on every
platform and in worker processes. ``state_dict()`` records seed, epoch and how far the
current epoch got; ``load_state_dict()`` resumes exactly there.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

T_co = TypeVar("T_co", covariant=True)


def _seed_of(generator: Any) -> int:
    """The int seed for ``generator``: an int, ``x.initial_seed()``, or vt.manual_seed's."""
    if generator is None:
        from ..random import initial_seed

        return initial_seed()
    if isinstance(generator, bool):
        raise TypeError("generator must be an int seed or have initial_seed(), got a bool")
    if isinstance(generator, int):
        return generator
    initial = getattr(generator, "initial_seed", None)
    if callable(initial):
        return int(initial())
    raise TypeError(f"generator must be an int seed, None or have initial_seed(), "
                    f"got {type(generator).__name__}")


def _rng(seed: int, epoch: int, tag: str) -> random.Random:
    """A stream that depends only on ``(tag, seed, epoch)`` (stable across platforms)."""
    return random.Random(f"volta:{tag}:{seed}:{epoch}")


def _as_list(values: Any) -> list:
    if hasattr(values, "tolist"):
        values = values.tolist()
    return list(values)


class Sampler(Generic[T_co]):
    """Base class of samplers: ``__iter__`` yields dataset indices (or lists of them).

    Args:
        data_source: unused; accepted for PyTorch compatibility.
    """

    def __init__(self, data_source: Any = None) -> None:
        pass

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")

    def state_dict(self) -> dict:
        """The sampler's position, for :meth:`load_state_dict` (empty if stateless)."""
        return {}

    def load_state_dict(self, state: dict) -> None:
        """Restore a position returned by :meth:`state_dict`."""


class SequentialSampler(Sampler[int]):
    """Yield ``0, 1, ..., len(data_source) - 1``.

    Args:
        data_source: the dataset to sample from.
    """

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class _SeededSampler(Sampler[int]):
    """Epoch-counting, resumable base of the random samplers (see the module docstring)."""

    generator: Any

    def __init__(self) -> None:
        self.epoch = 0
        self._offset = 0
        self._seed: int | None = None
        self._progress: list[int] | None = None  # [epoch, yielded] while iterating

    def _order(self, seed: int, epoch: int) -> Iterable[int]:
        """The epoch's indices: a list, or an iterator drawn lazily."""
        raise NotImplementedError

    @property
    def seed(self) -> int:
        """The seed of the last (or next) epoch."""
        return self._seed if self._seed is not None else _seed_of(self.generator)

    def set_epoch(self, epoch: int) -> None:
        """Make the next iteration use epoch ``epoch`` (from its beginning)."""
        self.epoch, self._offset = int(epoch), 0

    def __iter__(self) -> Iterator[int]:
        seed = _seed_of(self.generator)
        epoch, start = self.epoch, self._offset
        self._seed = seed
        self.epoch, self._offset = epoch + 1, 0
        return self._run(self._order(seed, epoch), epoch, start)

    def _run(self, order: Iterable[int], epoch: int, start: int) -> Iterator[int]:
        progress = self._progress = [epoch, start]
        for i, index in enumerate(itertools.islice(order, start, None), start + 1):
            progress[1] = i
            yield index
        self._progress = None

    def state_dict(self) -> dict:
        """``{"seed", "epoch", "offset"}``: the epoch in progress and indices yielded."""
        if self._progress is not None:
            epoch, offset = self._progress
        else:
            epoch, offset = self.epoch, self._offset
        return {"seed": self.seed, "epoch": epoch, "offset": offset}

    def load_state_dict(self, state: dict) -> None:
        """Resume at ``state`` (the seed replaces ``generator``)."""
        self.generator = int(state["seed"])
        self._seed = None
        self.epoch, self._offset = int(state["epoch"]), int(state.get("offset", 0))
        self._progress = None


class RandomSampler(_SeededSampler):
    """Yield indices in a random order, a new one each epoch.

    Args:
        data_source: the dataset to sample from.
        replacement: draw with replacement (indices may repeat).
        num_samples: how many indices per epoch; ``len(data_source)`` by default. Without
            replacement a larger value concatenates several permutations.
        generator: a :class:`vt.Generator` (its ``initial_seed()`` is used), an int seed,
            or None for the seed last given to ``vt.manual_seed`` (read at each epoch).
    """

    def __init__(self, data_source: Any, replacement: bool = False,
                 num_samples: int | None = None, generator: Any = None) -> None:
        super().__init__()
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a bool, got {replacement!r}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer, got "
                             f"{self.num_samples!r}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def _order(self, seed: int, epoch: int) -> Iterator[int]:
        # drawn lazily, as PyTorch does: num_samples may be far larger than memory allows
        n, k = len(self.data_source), self.num_samples
        rng = _rng(seed, epoch, "RandomSampler")
        if self.replacement:
            return (int(n * rng.random()) for _ in range(k))
        return itertools.islice(_permutations(rng, n), k)

    def __len__(self) -> int:
        return self.num_samples


def _permutations(rng: random.Random, n: int) -> Iterator[int]:
    """Fresh permutations of ``range(n)``, one after another, forever."""
    while True:
        perm = list(range(n))
        rng.shuffle(perm)
        yield from perm


class SubsetRandomSampler(_SeededSampler):
    """Yield the given indices in a random order, a new one each epoch.

    Args:
        indices: the indices to sample from.
        generator: an int seed, an object with ``initial_seed()``, or None (see
            :class:`RandomSampler`).
    """

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        super().__init__()
        self.indices = indices
        self.generator = generator

    def _order(self, seed: int, epoch: int) -> list[int]:
        pos = list(range(len(self.indices)))
        _rng(seed, epoch, "SubsetRandomSampler").shuffle(pos)
        return [self.indices[i] for i in pos]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(_SeededSampler):
    """Yield ``num_samples`` indices drawn with probabilities proportional to ``weights``.

    Args:
        weights: non-negative weights, one per index (need not sum to one).
        num_samples: how many indices per epoch.
        replacement: draw with replacement; without it every index appears at most once.
        generator: an int seed, an object with ``initial_seed()``, or None (see
            :class:`RandomSampler`).
    """

    def __init__(self, weights: Sequence[float] | Any, num_samples: int,
                 replacement: bool = True, generator: Any = None) -> None:
        super().__init__()
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) \
                or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer, got {num_samples!r}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a bool, got {replacement!r}")
        w = [float(x) for x in _as_list(weights)]
        bad = [x for x in w if not (x >= 0 and math.isfinite(x))]
        if not w or bad or sum(w) <= 0:
            raise ValueError("WeightedRandomSampler: weights must be finite, non-negative "
                             f"and not all zero (bad values: {bad[:5]})")
        positive = sum(1 for x in w if x > 0)
        if not replacement and num_samples > positive:
            raise ValueError(f"WeightedRandomSampler: cannot draw {num_samples} samples "
                             f"without replacement from {positive} non-zero weights")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator
        self._cum = [0.0] * len(w)
        total = 0.0
        for i, x in enumerate(w):
            total += x
            self._cum[i] = total

    def _order(self, seed: int, epoch: int) -> Iterable[int]:
        rng = _rng(seed, epoch, "WeightedRandomSampler")
        n = len(self.weights)
        if self.replacement:  # drawn lazily, in blocks
            return itertools.chain.from_iterable(
                rng.choices(range(n), cum_weights=self._cum, k=min(4096, self.num_samples - i))
                for i in range(0, self.num_samples, 4096))
        # exponential race: the k smallest E_i / w_i are a weighted draw without replacement
        keys = ((rng.expovariate(1.0) / w, i) for i, w in enumerate(self.weights) if w > 0)
        return [i for _, i in heapq.nsmallest(self.num_samples, keys)]

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Group the indices of ``sampler`` into lists of ``batch_size``.

    Args:
        sampler: any iterable of indices.
        batch_size: indices per batch.
        drop_last: drop the last batch if it is smaller than ``batch_size``.

    Example::

        >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler: Sampler[int] | Iterable[int], batch_size: int,
                 drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer, got {batch_size!r}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a bool, got {drop_last!r}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        size = self.batch_size
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def state_dict(self) -> dict:
        """The wrapped sampler's state."""
        inner = getattr(self.sampler, "state_dict", None)
        return inner() if callable(inner) else {}

    def load_state_dict(self, state: dict) -> None:
        """Restore the wrapped sampler's state."""
        inner = getattr(self.sampler, "load_state_dict", None)
        if callable(inner):
            inner(state)


__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]
