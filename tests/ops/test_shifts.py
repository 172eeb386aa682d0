"""Bit shifts (``<<``, ``>>``, ``bitwise_left_shift``, ``bitwise_right_shift``) and the
in-place bitwise ops (``&=``, ``|=``, ``^=``, ``<<=``, ``>>=``, ``bitwise_*_``) against
PyTorch on every device: every integer dtype pair, counts outside ``[0, bits)`` (0 for a
left shift, the sign for a right one), scalars on either side (wrapped into the tensor's
dtype), in place through a view."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vt_helpers import assert_matches_torch as _same
from vt_helpers import available_devices, device_has

import volta_core as vt

torch = pytest.importorskip("torch")

DEVICES = available_devices()
INTS = ["int8", "uint8", "int16", "int32", "int64"]


def _ints(rng, dtype, n, lo, hi):
    return rng.integers(lo, hi, n).astype(dtype)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=40, deadline=None)
@given(data=st.data(), seed=st.integers(0, 99))
def test_shifts_of_two_tensors_match_pytorch(device, data, seed):
    ints = [d for d in INTS if device_has(device, d)]
    da = data.draw(st.sampled_from(ints + ["bool"]), label="da")
    db = data.draw(st.sampled_from(ints), label="db")
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, 9).astype(bool) if da == "bool" else _ints(rng, da, 9, -130, 260)
    b = _ints(rng, db, 9, -3, 70)  # counts below 0 and past every width
    for op in ("__lshift__", "__rshift__"):
        want = getattr(torch.tensor(a), op)(torch.tensor(b))
        _same(want, getattr(vt.tensor(a, device=device), op)(vt.tensor(b, device=device)))
    _same(torch.bitwise_left_shift(torch.tensor(a), torch.tensor(b)),
          vt.bitwise_left_shift(vt.tensor(a, device=device), vt.tensor(b, device=device)))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("count", [0, 1, 7, 8, 15, 31, 63, 64, 70, -1, 300, -300])
def test_shifts_by_a_number_on_either_side_match_pytorch(device, dtype, count):
    if not device_has(device, dtype):
        pytest.skip(f"no {dtype} on {device}")
    a = np.array([1, -8, 5, 127, 0, 100], dtype=np.int64).astype(dtype)
    t, v = torch.tensor(a), vt.tensor(a, device=device)
    for op in ("__lshift__", "__rshift__", "__rlshift__", "__rrshift__"):
        _same(getattr(t, op)(count), getattr(v, op)(count))


@pytest.mark.parametrize("device", DEVICES)
def test_floats_and_bool_pairs_are_refused(device):
    f = vt.tensor([1.0, 2.0], device=device)
    i = vt.tensor([1, 2], device=device)
    for bad in (lambda: f << 1, lambda: i << 1.5, lambda: i >> f,
                lambda: vt.tensor([True], device=device) << vt.tensor([True], device=device)):
        with pytest.raises(TypeError, match="integer"):
            bad()


@pytest.mark.parametrize("device", DEVICES)
def test_in_place_bitwise_ops_write_through_views(device):
    base = np.array([1, 2, 3, 12], dtype=np.int32)
    t, v = torch.tensor(base), vt.tensor(base, device=device)
    for tv, vv in ((t[1:], v[1:]), (t, v)):
        tv <<= 2
        vv <<= 2
        tv >>= 1
        vv >>= 1
        tv &= 13
        vv &= 13
        tv |= 16
        vv |= 16
        tv ^= 5
        vv ^= 5
    _same(t, v)
    t.bitwise_left_shift_(1).bitwise_xor_(3).bitwise_not_()
    v.bitwise_left_shift_(1).bitwise_xor_(3).bitwise_not_()
    _same(t, v)
    b = vt.tensor([True, False], device=device)
    b &= vt.tensor([True, True], device=device)
    b.logical_not_()
    np.testing.assert_array_equal(b.cpu().numpy(), [False, True])
