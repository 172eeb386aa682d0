"""``out=`` on the module-level functions, against PyTorch: the result written into the
given tensor (cast, resized with a warning), several results into a tuple, and PyTorch's
refusals (gradients, lossy casts)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_ref import torch

import volta_core as vt


@pytest.mark.parametrize("case", [
    lambda m, o: m.add(m.ones(3), m.arange(3.0), alpha=2, out=o(3)),
    lambda m, o: m.matmul(m.ones(2, 3), m.ones(3, 2), out=o(2, 2)),
    lambda m, o: m.sum(m.ones(2, 3), 1, out=o(2)),
    lambda m, o: m.cat([m.ones(2), m.zeros(2)], out=o(4)),
    lambda m, o: m.exp(m.zeros(2), out=o(2)),
    lambda m, o: m.zeros(2, 2, out=o(2, 2)),
    lambda m, o: m.add(m.arange(3), m.arange(3), out=o(3)),  # int64 written into float32
])
def test_out_matches_pytorch(case):
    for m in (vt, torch):
        made = []

        def new(*shape, m=m, made=made):
            made.append(m.full(shape, -7.0))
            return made[-1]

        got = case(m, new)
        assert got is made[0]  # the out tensor itself comes back
        if m is vt:
            want_vals = got.numpy()
        else:
            np.testing.assert_allclose(want_vals, got.numpy())


def test_out_tuple_resize_and_refusals():
    for m in (vt, torch):
        values, indices = m.empty(2), m.empty(2, dtype=m.int64)
        r = m.max(m.arange(6.0).reshape(2, 3), 1, out=(values, indices))
        assert r.values is values and r.indices is indices
        assert values.tolist() == [2.0, 5.0] and indices.tolist() == [2, 2]
        grow = m.ones(1)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m.add(m.ones(3), 1, out=grow)
        assert grow.shape == (3,) and grow.tolist() == [2.0, 2.0, 2.0]
        assert any("resized" in str(w.message) for w in caught)
        empty = m.empty(0)
        m.add(m.ones(2), 1, out=empty)  # an empty out is resized without a warning
        assert empty.shape == (2,)
        with pytest.raises((RuntimeError, TypeError)):  # float into int64: refused
            m.add(m.ones(3), 1, out=m.empty(3, dtype=m.int64))
        with pytest.raises(RuntimeError):  # out= is never recorded for autograd
            m.mul(m.ones(3, requires_grad=True), 2, out=m.empty(3))
    with vt.no_grad():  # without recording it is fine, as in PyTorch
        assert vt.mul(vt.ones(3, requires_grad=True), 2, out=vt.empty(3)).tolist() == [2.0] * 3


def test_transfer_keywords_and_memory_formats_as_pytorch():
    """``x.to(device, non_blocking=True)`` (every data loop writes it), ``copy=True``,
    ``memory_format=`` on ``to``/``Module.to``/``*_like``/``empty``, and
    ``is_contiguous(memory_format=channels_last)`` answering as PyTorch does for a
    row-major tensor."""
    for m in (vt, torch):
        x = m.ones(2, 3)
        assert x.to("cpu", non_blocking=True) is x
        y = x.to("cpu", copy=True)
        assert y is not x and y.tolist() == x.tolist()
        assert x.to(m.float64, non_blocking=True).dtype == m.float64
        m.nn.Conv2d(2, 2, 1).to("cpu", memory_format=m.channels_last)
        assert m.empty_like(x, memory_format=m.preserve_format).shape == (2, 3)
        assert m.zeros(2, 3).clone(memory_format=m.contiguous_format).shape == (2, 3)
        for shape, want in (((1, 2, 3, 3), False), ((1, 1, 3, 3), True), ((2, 3, 1, 1), True)):
            assert m.ones(*shape).is_contiguous(memory_format=m.channels_last) is want
        assert m.ones(2, 3).is_contiguous(memory_format=m.contiguous_format)
