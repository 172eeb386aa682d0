"""Padding layers (``ZeroPad*``, ``ConstantPad*``, ``ReflectionPad*``, ``ReplicationPad*``,
``CircularPad*``) against PyTorch: values, gradients, errors."""

from __future__ import annotations

import numpy as np
import pytest
from torch_ref import compare, raises_like_torch

SHAPES = {1: (2, 3, 6), 2: (2, 3, 5, 6), 3: (1, 2, 4, 5, 6)}
KINDS = ["ZeroPad", "ConstantPad", "ReflectionPad", "ReplicationPad", "CircularPad"]


def _layer(m, kind: str, n: int, padding):
    cls = getattr(m.nn, f"{kind}{n}d")
    return cls(padding, 2.5) if kind == "ConstantPad" else cls(padding)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_pad_layers_match_torch(kind: str, n: int) -> None:
    x = np.random.default_rng(n).standard_normal(SHAPES[n])
    compare(lambda m, t: _layer(m, kind, n, 2)(t), x)
    asym = tuple([1, 3, 0, 2, 2, 1][: 2 * n])
    compare(lambda m, t: _layer(m, kind, n, asym)(t), x)
    compare(lambda m, t: _layer(m, kind, n, 1)(t), x[0])  # unbatched


@pytest.mark.parametrize("n", [1, 2])
def test_reflection_pad_too_large_raises_like_torch(n: int) -> None:
    x = np.zeros(SHAPES[n])
    raises_like_torch(lambda m, t: m.nn.__dict__[f"ReflectionPad{n}d"](7)(t), x)


def test_zero_pad_crops_with_negative_amounts() -> None:
    x = np.random.default_rng(0).standard_normal((1, 2, 5, 6))
    compare(lambda m, t: m.nn.ZeroPad2d((-1, 2, 0, -2))(t), x)


def test_repr_matches_torch() -> None:
    import torch

    import volta_core as vt

    assert repr(vt.nn.ReflectionPad2d(2)) == repr(torch.nn.ReflectionPad2d(2))
    assert repr(vt.nn.ConstantPad1d(1, 3.5)) == repr(torch.nn.ConstantPad1d(1, 3.5))
