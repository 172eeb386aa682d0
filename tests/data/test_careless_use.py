"""Clear errors for careless data use: mixed collate fields, indices out of range (#19)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.data import TensorDataset as TorchTensorDataset
from torch.utils.data import default_collate as torch_collate

import volta_core as vt
from volta_core.data import DataLoader, Dataset, TensorDataset, default_collate


@pytest.mark.parametrize("batch", [
    [("a", np.ones(2)), (np.ones(2), "b")],
    [np.ones(2), "a"],
    [1, "a"],
    [1.5, "a"],
])
def test_collate_of_str_mixed_with_arrays_is_a_type_error_as_in_torch(batch):
    with pytest.raises(TypeError):
        torch_collate(batch)
    with pytest.raises(TypeError, match=r"cannot batch a str \(sample 1\) with"):
        default_collate(batch)


def test_collate_keeps_str_lists_as_torch():
    assert default_collate(["a", np.ones(2)])[0] == "a"
    assert torch_collate([{"x": "a"}, {"x": 1}]) == default_collate([{"x": "a"}, {"x": 1}])
    with pytest.raises(TypeError, match=r"cannot batch a str \(sample 1\) with a Tensor"):
        default_collate([vt.ones(2), "a"])


class Mixed(Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i):
        return np.ones(2) if i % 2 == 0 else "text"


def test_mixed_samples_in_a_worker_name_the_problem():
    with pytest.raises(TypeError, match=r"cannot batch a str \(sample 1\) with an array"):
        list(DataLoader(Mixed(), batch_size=2, num_workers=1))


@pytest.mark.parametrize("index", [5, -6, np.int64(9)])
def test_tensor_dataset_index_out_of_range(index):
    with pytest.raises(IndexError):
        TorchTensorDataset(torch.arange(5))[index]
    with pytest.raises(IndexError, match=r"TensorDataset: index -?\d+ is out of range for 5"):
        TensorDataset(vt.arange(5))[index]


def test_tensor_dataset_batched_indices_out_of_range():
    ds = TensorDataset(vt.arange(5))
    assert TensorDataset(vt.arange(5))[np.int64(2)][0].item() == 2
    with pytest.raises(IndexError, match=r"indices \[7\] are out of range for 5 samples"):
        list(DataLoader(ds, batch_size=None, sampler=[[0, 7]]))
    with pytest.raises(IndexError, match=r"out of range for 5 samples"):
        list(DataLoader(ds, batch_size=2, sampler=[0, 1, 8]))
