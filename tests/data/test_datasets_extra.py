"""``StackDataset`` as PyTorch's: positional datasets give tuples, keyword ones dicts; lengths
must agree, and the two forms do not mix."""

from __future__ import annotations

import pytest
import torch

import volta_core as vt


def test_stack_dataset_like_torch():
    for m in (torch, vt):
        data = m.utils.data
        a = data.TensorDataset(m.arange(4))
        b = data.TensorDataset(m.arange(4) * 10)
        pos = data.StackDataset(a, b)
        kw = data.StackDataset(x=a, y=b)
        assert len(pos) == 4 and len(kw) == 4
        assert int(pos[2][1][0]) == 20 and int(kw[3]["x"][0]) == 3
        with pytest.raises(ValueError):
            data.StackDataset(a, data.TensorDataset(m.arange(3)))
        with pytest.raises(ValueError):
            data.StackDataset(a, y=b)
