"""Arrays freed by the cycle collector: their buffers must not come back from the pool dead.

In a garbage cycle the GPU buffer's own finalizer releases its native handle in the same
pass as the Storage's finalizer returns it to the pool; the pool skips such buffers.
(Exceptions hold frames that hold arrays, so this is common under pytest/hypothesis.)
"""

from __future__ import annotations

import gc

import numpy as np


def test_pool_skips_buffers_released_in_a_garbage_cycle(xp, check):
    a = np.arange(5, dtype=np.float32)
    for _ in range(20):
        x = xp.asarray(a)
        cycle = [x]
        cycle.append(cycle)
        del x, cycle
        gc.collect()
        y = xp.asarray(a) + 1  # an upload and a kernel from the same pool bucket
    check(y, a + 1)
