"""``vt.testing.assert_close`` and ``vt.set_printoptions`` against PyTorch's."""

from __future__ import annotations

import pytest
from torch_ref import torch

import volta_core as vt


def _message(lib, *args, **kwargs):
    try:
        lib.testing.assert_close(*args, **kwargs)
    except AssertionError as e:
        return str(e).replace("torch.", "").replace("volta.", "").replace("Size([", "(") \
            .replace("])", ",)")
    return None


@pytest.mark.parametrize("case", [
    lambda m: (m.ones(3), m.ones(3) + 1e-7, {}),
    lambda m: (m.ones(3), m.tensor([1.0, 2.0, 1.0]), {}),
    lambda m: (m.ones(3), m.ones(3, dtype=m.float64), {}),
    lambda m: (m.ones(3), m.ones(3, dtype=m.float64), {"check_dtype": False}),
    lambda m: (m.tensor([float("nan")]), m.tensor([float("nan")]), {}),
    lambda m: (m.tensor([float("nan")]), m.tensor([float("nan")]), {"equal_nan": True}),
    lambda m: (m.ones(3), m.ones(3) * 1.1, {"rtol": 0.2, "atol": 0.0}),
    lambda m: (m.ones(2, dtype=m.bfloat16), m.ones(2, dtype=m.bfloat16) * 1.01, {}),
    lambda m: (m.arange(3), m.tensor([0, 1, 3]), {}),
    lambda m: ({"a": [m.ones(2), 1.0]}, {"a": [m.ones(2), 1.0]}, {}),
    lambda m: ([m.ones(2), 2.0], [m.ones(2), 2.5], {}),
])
def test_assert_close_as_pytorch(case):
    got, want = (_message(lib, *case(lib)[:2], **case(lib)[2]) for lib in (vt, torch))
    assert (got is None) == (want is None), (got, want)
    if got is not None:  # the same first line (what failed) and the same counts
        assert got.splitlines()[0] == want.splitlines()[0]
        assert got.splitlines()[2:3] == want.splitlines()[2:3]


def test_set_printoptions():
    from volta_core import printing

    x = vt.tensor([[1.23456789, 2e-5], [300.5, -4.0]])
    try:
        vt.set_printoptions(precision=2)
        assert "1.23e+00" in repr(x) and "1.2345" not in repr(x)
        vt.set_printoptions(threshold=5, edgeitems=1)
        assert repr(vt.arange(10.0)) == "tensor([0., ..., 9.])"
        vt.set_printoptions(sci_mode=False, precision=1)
        assert "e+" not in repr(x)
        with pytest.raises(ValueError):
            vt.set_printoptions(profile="long")
    finally:
        printing.numpy_options().clear()  # back to NumPy's defaults for other tests
    assert repr(vt.tensor([1.5, 2.0])) == "tensor([1.5, 2. ])"
