"""``vt.empty_strided`` as PyTorch's: the shape and element strides asked for (a view of a
buffer just large enough), argument checks."""

from __future__ import annotations

import pytest
import torch

import volta_core as vt


@pytest.mark.parametrize("size,stride", [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((0, 3), (3, 1)),
                                         ((4,), (2,)), ((), ()), ((2, 2), (0, 1))])
def test_matches_torch(size, stride):
    t = torch.empty_strided(size, stride)
    v = vt.empty_strided(size, stride, dtype=vt.float64)
    assert tuple(v.shape) == tuple(t.shape) and v.stride() == t.stride()
    assert v.is_contiguous() == t.is_contiguous() and v.dtype is vt.float64
    v.fill_(2.0)
    assert float(v.sum()) == 2.0 * v.numel() or 0 in size or 0 in stride


def test_requires_grad_and_checks():
    v = vt.empty_strided((2, 3), (1, 2), requires_grad=True)
    assert v.requires_grad and v.is_leaf
    with pytest.raises(ValueError, match="mismatch"):
        vt.empty_strided((2, 3), (1,))
