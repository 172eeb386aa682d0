"""Built-in datasets that need no network.

``Digits``: the UCI handwritten digits, 1797 greyscale 8x8 images of the digits 0-9
(about 180 per class), the set scikit-learn ships as ``load_digits``. Volta keeps its own
copy, ``digits.bin.gz`` (44 KB, made once by :mod:`volta_core.data.make_digits`), so
neither scikit-learn nor the network is needed.

Source and license: "Optical Recognition of Handwritten Digits", E. Alpaydin and
C. Kaynak, UCI Machine Learning Repository (1998), https://doi.org/10.24432/C50P49,
licensed under Creative Commons Attribution 4.0 (CC BY 4.0). The images here are the
dataset's test part as distributed with scikit-learn; grey levels 0..16 are divided by
16.

The train/test split is fixed: the 1797 indices are shuffled by ``random.Random`` seeded
with the string ``"volta:digits:<seed>"`` and the first ``int(split * 1797)`` form the
training set (1437 images for the defaults ``split=0.8, seed=0``), the other 360 the test
set. The same ``(split, seed)`` always gives the same split, on every platform.
"""

from __future__ import annotations

import gzip
import random
import struct
from collections.abc import Callable
from functools import lru_cache
from importlib import resources
from typing import Any

from ..backend.device import Device
from ..tensor import Tensor
from .dataset import Dataset

_MAGIC = b"VDIGITS1"
_HEADER = struct.Struct("<III")
_FILE = "digits.bin.gz"


@lru_cache(maxsize=1)
def _read_digits() -> tuple[Any, Any]:
    """(images uint8 (n, 8, 8) in 0..16, labels uint8 (n,)) as CPU NumPy arrays."""
    raw = resources.files(__package__).joinpath(_FILE).read_bytes()
    data = gzip.decompress(raw)
    if data[:8] != _MAGIC:
        raise ValueError(f"{_FILE} is not a Volta digits file (bad magic {data[:8]!r}); "
                         "rebuild it with python -m volta_core.data.make_digits")
    n, h, w = _HEADER.unpack_from(data, 8)
    start = 8 + _HEADER.size
    if len(data) != start + n * h * w + n:
        raise ValueError(f"{_FILE} is truncated: {len(data)} bytes for {n} images")
    xp = Device("cpu").xp
    buf = memoryview(data)
    images = xp.reshape(xp.asarray(buf[start:start + n * h * w], dtype=xp.uint8), (n, h, w))
    labels = xp.asarray(buf[start + n * h * w:], dtype=xp.uint8)
    return images, labels


def _split_indices(n: int, split: float, seed: int, train: bool) -> list[int]:
    if not 0.0 < split < 1.0:
        raise ValueError(f"Digits: split must be in (0, 1), got {split}")
    order = list(range(n))
    random.Random(f"volta:digits:{seed}").shuffle(order)
    cut = int(split * n)
    return sorted(order[:cut]) if train else sorted(order[cut:])


class Digits(Dataset[tuple[Any, int]]):
    """The UCI handwritten digits (8x8 greyscale, 10 classes), split into train and test.

    Sample ``i`` is ``(image, label)``: ``image`` a float32 CPU tensor of shape
    ``(1, 8, 8)`` with values in ``[0, 1]`` (after ``transform``, if any), ``label`` an
    int in ``0..9`` (after ``target_transform``). The whole split is also available as
    ``data`` (float32, ``(n, 1, 8, 8)``) and ``targets`` (int64, ``(n,)``).

    Args:
        train: the training part (True) or the test part.
        split: the fraction of the 1797 images used for training.
        seed: the seed of the fixed split (see the module docstring).
        transform: applied to each image tensor.
        target_transform: applied to each label.

    Example::

        >>> train = Digits(train=True)
        >>> len(train), len(Digits(train=False))
        (1437, 360)
    """

    classes = [str(d) for d in range(10)]

    def __init__(self, train: bool = True, split: float = 0.8, seed: int = 0,
                 transform: Callable[[Any], Any] | None = None,
                 target_transform: Callable[[int], Any] | None = None) -> None:
        images, labels = _read_digits()
        dev = Device("cpu")
        xp = dev.xp
        idx = xp.asarray(_split_indices(int(images.shape[0]), split, seed, train),
                         dtype=xp.int64)
        imgs = xp.astype(xp.take(images, idx, axis=0), xp.float32) / 16.0
        self.data = Tensor._make(xp.reshape(imgs, (-1, 1, 8, 8)), dev)
        self.targets = Tensor._make(xp.astype(xp.take(labels, idx, axis=0), xp.int64), dev)
        self._labels = self.targets.tolist()
        self.train, self.split, self.seed = train, split, seed
        self.transform, self.target_transform = transform, target_transform

    def __len__(self) -> int:
        return len(self._labels)

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        n = len(self._labels)
        if not -n <= index < n:
            raise IndexError(f"Digits: index {index} is out of range for {n} images")
        img: Any = Tensor._make(self.data.array[index], self.data.device)
        target: Any = self._labels[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __repr__(self) -> str:
        part = "train" if self.train else "test"
        return f"Digits({part}, {len(self)} images, split={self.split}, seed={self.seed})"


def load_digits(split: float = 0.8, seed: int = 0, transform: Callable | None = None
                ) -> tuple[Digits, Digits]:
    """Return the ``(train, test)`` :class:`Digits` sets of the fixed split.

    Args:
        split: the fraction of images used for training.
        seed: the seed of the split.
        transform: applied to each image of both sets.
    """
    return (Digits(True, split, seed, transform), Digits(False, split, seed, transform))


__all__ = ["Digits", "load_digits"]
