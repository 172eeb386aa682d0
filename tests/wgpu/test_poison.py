"""After an out-of-range index on wgpu, the spoiled results stay unreadable (issue 19).

As on CUDA, the error surfaces at the next sync point; unlike a plain error flag, the
tensors computed in that window (and from them) must not read back as garbage later.
"""

from __future__ import annotations

import numpy as np
import pytest

from volta_core.errors import IndexOutOfRangeError


def test_bad_take_result_is_poisoned(xp):
    x = xp.asarray(np.arange(10, dtype=np.float32))
    r = xp.take(x, xp.asarray(np.array([1, 12], np.int32)))
    later = r * 2.0  # computed from the spoiled result before anyone synced
    with pytest.raises(IndexOutOfRangeError, match="index 12 for a dim of size 10"):
        xp.to_numpy(r)
    for spoiled in (r, later, later + 1.0):  # also what is computed from it afterwards
        with pytest.raises(IndexOutOfRangeError, match="this tensor is unreadable"):
            xp.to_numpy(spoiled)
    np.testing.assert_array_equal(xp.to_numpy(x), np.arange(10))  # inputs are intact
    ok = xp.take(x, xp.asarray([-1, 2]))
    np.testing.assert_array_equal(xp.to_numpy(ok), [9.0, 2.0])
    fresh = xp.asarray(np.ones(2, np.float32)) + 1.0  # new arrays (reused buffers) are fine
    np.testing.assert_array_equal(xp.to_numpy(fresh), [2.0, 2.0])
