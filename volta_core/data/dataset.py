"""Datasets: the map-style and iterable-style protocols and their combinators."""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from ..tensor import Tensor
from .sampler import _rng, _seed_of

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: ``dataset[i]`` returns sample ``i`` for ``0 <= i < len(dataset)``.

    Subclasses override ``__getitem__`` and usually ``__len__``. They may also define
    ``__getitems__(indices)`` returning a list of samples, which the :class:`DataLoader`
    then calls once per batch instead of once per sample.
    """

    def __getitem__(self, index: int) -> T_co:
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co]):
    """An iterable-style dataset: ``iter(dataset)`` yields the samples.

    With ``num_workers > 0`` every worker iterates its own copy of the dataset, so the
    samples are repeated once per worker unless ``__iter__`` shards them with
    :func:`~volta_core.data.get_worker_info`, as in PyTorch.
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")

    def __add__(self, other: IterableDataset[T_co]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


class ChainDataset(IterableDataset):
    """Iterate several iterable datasets one after the other.

    Args:
        datasets: the iterable datasets to chain.
    """

    def __init__(self, datasets: Iterable[IterableDataset]) -> None:
        self.datasets = list(datasets)

    def __iter__(self) -> Iterator:
        for d in self.datasets:
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self.datasets)  # type: ignore[arg-type]


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """A dataset whose sample ``i`` is ``tuple(t[i] for t in tensors)``.

    The samples are views of the tensors (no copy) and are not part of any autograd
    graph. Together with the default collate function, batches are gathered with one
    ``take`` per tensor instead of stacking samples one by one.

    Args:
        *tensors: tensors with the same size in their first dimension.

    Example::

        >>> ds = TensorDataset(vt.randn(100, 3), vt.arange(100))
        >>> x, y = ds[0]
    """

    def __init__(self, *tensors: Tensor) -> None:
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        bad = [type(t).__name__ for t in tensors if not isinstance(t, Tensor)]
        if bad:
            raise TypeError(f"TensorDataset expects Tensors, got {bad}; "
                            "wrap NumPy arrays with vt.from_numpy(...)")
        sizes = [t.shape[0] if t.shape else None for t in tensors]
        if None in sizes or len(set(sizes)) != 1:
            raise ValueError("TensorDataset: size mismatch between tensors, first "
                             f"dimensions are {sizes}; all must be equal")
        self.tensors = tuple(tensors)

    def __getitem__(self, index: int) -> tuple[Tensor, ...]:
        index = _check_index(index, len(self), "TensorDataset")
        return tuple(Tensor._make(t.array[index], t.device) for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]

    def _gather(self, indices: Sequence[int]) -> list[Tensor]:
        """The default-collated batch of ``indices``: one tensor per stored tensor."""
        n = len(self)
        bad = [i for i in indices if not -n <= i < n]
        if bad:
            raise IndexError(f"TensorDataset: indices {bad[:5]} are out of range for {n} "
                             "samples")
        out = []
        for t in self.tensors:
            xp = t.device.xp
            idx = xp.asarray(indices, dtype=xp.int64, device=t.device.native)
            out.append(Tensor._make(xp.take(t.array, idx, axis=0), t.device))
        return out


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order.

    Args:
        dataset: the whole dataset.
        indices: the indices of ``dataset`` this subset holds.
    """

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx: int | list[int]) -> T_co:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]  # type: ignore[index]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list[T_co]:
        inner = [self.indices[i] for i in indices]
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems is not None:
            return getitems(inner)
        return [self.dataset[i] for i in inner]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset[T_co]):
    """The concatenation of several map-style datasets.

    Args:
        datasets: the datasets, in order.
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset; "
                                "use ChainDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    @staticmethod
    def cumsum(sequence: Sequence[Any]) -> list[int]:
        """The running totals of the lengths of ``sequence``'s datasets."""
        out, total = [], 0
        for d in sequence:
            total += len(d)
            out.append(total)
        return out

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        idx = _check_index(idx, len(self), "ConcatDataset")
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class StackDataset(Dataset):
    """Datasets of one length side by side: sample ``i`` is the tuple of their samples
    ``i`` (positional datasets) or the dict of them (keyword datasets), as PyTorch's."""

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or"
                             "``dict``- (via ``kwargs``) like input/output, but both "
                             "types are given.")
        datasets = args or tuple(kwargs.values())
        if not datasets:
            raise ValueError("At least one dataset should be passed")
        self._length = len(datasets[0])
        if any(len(d) != self._length for d in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets: Any = args if args else dict(kwargs)

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)


def _check_index(index: Any, n: int, name: str) -> Any:
    if not isinstance(index, (int, slice, list, tuple, Tensor)) and hasattr(index, "__index__"):
        index = index.__index__()  # a NumPy integer
    if isinstance(index, bool) or isinstance(index, float):
        raise TypeError(f"{name}: index must be an integer, got {type(index).__name__} "
                        f"{index!r}")
    if isinstance(index, int):
        if not -n <= index < n:
            raise IndexError(f"{name}: index {index} is out of range for {n} samples")
        return index + n if index < 0 else index
    if isinstance(index, list) and all(isinstance(i, int) for i in index):
        bad = [i for i in index if not -n <= i < n]
        if bad:
            raise IndexError(f"{name}: indices {bad[:5]} are out of range for {n} samples")
    return index


def random_split(dataset: Dataset[T_co], lengths: Sequence[int | float],
                 generator: Any = None) -> list[Subset[T_co]]:
    """Split ``dataset`` at random into non-overlapping subsets.

    Args:
        dataset: the dataset to split.
        lengths: the subset lengths, or fractions summing to 1 (the remainder of the
            rounding down is given out one by one, from the first subset, as in PyTorch).
        generator: a :class:`vt.Generator` (its ``initial_seed()`` is used) or an int seed;
            the seed given to ``vt.manual_seed`` when None. The same seed always gives the
            same split.

    Returns:
        one :class:`Subset` per length.
    """
    n = len(dataset)  # type: ignore[arg-type]
    lengths = list(lengths)
    if lengths and math.isclose(sum(lengths), 1) and sum(lengths) <= 1 and any(
            isinstance(f, float) for f in lengths):
        if any(f < 0 or f > 1 for f in lengths):
            raise ValueError(f"random_split: fractions must be in [0, 1], got {lengths}")
        sizes = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if any(not isinstance(k, int) or k < 0 for k in lengths) or sum(lengths) != n:
        raise ValueError(f"random_split: lengths {lengths} must be non-negative ints summing "
                         f"to the dataset's length {n}, or fractions summing to 1")
    order = list(range(n))
    _rng(_seed_of(generator), 0, "random_split").shuffle(order)
    out, start = [], 0
    for k in lengths:
        out.append(Subset(dataset, order[start:start + k]))
        start += k
    return out


__all__ = ["Dataset", "IterableDataset", "ChainDataset", "TensorDataset", "Subset",
           "ConcatDataset", "StackDataset", "random_split"]
