"""The bundled UCI digits dataset."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import volta_core as vt
from volta_core.data import DataLoader, datasets
from volta_core.data.datasets import Digits, load_digits
from volta_core.data.make_digits import encode, read_sklearn_csv
from volta_core.data.transforms import Normalize


def test_shapes_labels_and_split_sizes():
    train, test = load_digits()
    assert (len(train), len(test)) == (1437, 360)
    img, label = train[0]
    assert img.shape == (1, 8, 8) and img.dtype == vt.float32
    assert isinstance(label, int) and 0 <= label <= 9
    assert train.data.shape == (1437, 1, 8, 8) and train.targets.dtype == vt.int64
    data = np.asarray(train.data.numpy())
    assert data.min() == 0.0 and data.max() == 1.0
    labels = np.concatenate([train.targets.numpy(), test.targets.numpy()])
    counts = np.bincount(labels, minlength=10)
    assert counts.sum() == 1797 and counts.min() >= 170  # about 180 per class


def test_split_is_fixed_and_disjoint():
    a, b = Digits(train=True), Digits(train=True)
    np.testing.assert_array_equal(a.data.numpy(), b.data.numpy())
    other = Digits(train=True, seed=1)
    assert not np.array_equal(a.targets.numpy(), other.targets.numpy())
    assert len(Digits(train=False, split=0.5)) == 899


def test_data_file_matches_scikit_learn_csv():
    if importlib.util.find_spec("sklearn") is None:
        pytest.skip("scikit-learn is not installed")
    images, labels = read_sklearn_csv()
    assert encode(images, labels) == (Path(datasets.__file__).parent / "digits.bin.gz"
                                      ).read_bytes()
    ours, ours_y = datasets._read_digits()
    np.testing.assert_array_equal(np.asarray(ours).reshape(-1, 64), images)
    np.testing.assert_array_equal(np.asarray(ours_y), labels)


def test_transform_and_loader():
    ds = Digits(train=False, transform=Normalize((0.5,), (0.5,)))
    x, y = next(iter(DataLoader(ds, batch_size=32, shuffle=True, generator=0)))
    assert x.shape == (32, 1, 8, 8) and y.shape == (32,) and y.dtype == vt.int64
    assert float(x.numpy().min()) >= -1.0
