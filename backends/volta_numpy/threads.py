"""BLAS thread count of the CPU backend: a sensible default, and ``vt.set_num_threads``.

OpenBLAS starts one thread per core of the *host*, even where the process may use fewer
(a CPU affinity mask, a container's CPU quota); its threads then fight over the cores the
process has and a small GEMM becomes many times slower. The backend limits BLAS to the
cores this process may run on, unless the user chose a count through the usual
environment variables. ``threadpoolctl`` does the work; without it nothing changes.
"""

from __future__ import annotations

import math
import os

# variables through which a user already chose the BLAS thread count: respected as set
_USER_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


def available_cores() -> int:
    """The cores this process may use: its affinity mask, capped by a cgroup v2 quota."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            n = min(n, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, n)


def _controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


def get_num_threads() -> int:
    """The BLAS thread count NumPy's GEMMs run with (``available_cores()`` if unknown)."""
    ctl = _controller()
    if ctl is not None:
        blas = ctl.select(user_api="blas")
        if blas.lib_controllers:
            return max(c.num_threads for c in blas.lib_controllers)
    return available_cores()


def set_num_threads(n: int) -> None:
    """Run NumPy's BLAS (and the OpenMP pools loaded with it) on ``n`` threads."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: expected a positive int, got {n!r}")
    ctl = _controller()
    if ctl is not None:
        ctl.limit(limits=n, user_api="blas")


def apply_default() -> None:
    """Limit BLAS to the cores this process may use, unless the user chose a count."""
    if any(os.environ.get(v) for v in _USER_VARS):
        return
    n = available_cores()
    if get_num_threads() > n:
        set_num_threads(n)
