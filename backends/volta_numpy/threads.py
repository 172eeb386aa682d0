"""Thread count of the CPU backend: a sensible default, and ``vt.set_num_threads``.

One count for NumPy's BLAS and for the backend's own parallel kernels (``parallel.py``).

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


class _Blas:
    """Fast get/set of one BLAS library's thread count, for ``parallel.py``'s per-loop
    switch (a threadpoolctl limit costs ~200 us; this ~1 us). OpenBLAS with its own
    (pthreads) pool is set through its C function directly: threadpoolctl lets only the
    first Python thread that set it change it. Others go through threadpoolctl."""

    def __init__(self, lib) -> None:
        self.lib = lib
        self._set = self._get = None
        if lib.internal_api == "openblas" and lib.threading_layer == "pthreads":
            for pre in ("", "scipy_"):
                for post in ("", "64_", "_64"):
                    self._set = self._set or getattr(
                        lib.dynlib, f"{pre}openblas_set_num_threads{post}", None)
                    self._get = self._get or getattr(
                        lib.dynlib, f"{pre}openblas_get_num_threads{post}", None)

    def get(self) -> int | None:
        if self._get is not None:
            return self._get()
        return self.lib.get_num_threads()

    def set(self, n: int) -> None:
        if self._set is not None:
            self._set(n)
        else:
            self.lib.set_num_threads(n)


_blas: list[_Blas] | None = None


def blas_controllers() -> list[_Blas]:
    """NumPy's BLAS libraries (found once, after NumPy is loaded); [] without
    threadpoolctl."""
    global _blas
    if _blas is None:
        ctl = _controller()
        libs = ctl.select(user_api="blas").lib_controllers if ctl is not None else []
        _blas = [_Blas(c) for c in libs]
    return _blas


def blas_num_threads() -> int | None:
    """The BLAS thread count NumPy's GEMMs run with (None if unknown)."""
    counts = [n for n in (b.get() for b in blas_controllers()) if n is not None]
    return max(counts) if counts else None


def get_num_threads() -> int:
    """The thread count of the backend's parallel kernels and BLAS."""
    from . import parallel

    return parallel.get_num_threads()


def set_num_threads(n: int) -> None:
    """Run NumPy's BLAS (and the OpenMP pools loaded with it) and the backend's parallel
    kernels on ``n`` threads."""
    from . import parallel

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: expected a positive int, got {n!r}")
    ctl = _controller()
    if ctl is not None:
        ctl.limit(limits=n, user_api="blas")
    parallel.set_num_threads(n)


def apply_default() -> None:
    """Limit BLAS to the cores this process may use, unless the user chose a count; the
    parallel kernels take BLAS's count (the cores, if BLAS's is unknown)."""
    from . import parallel

    n = available_cores()
    blas = blas_num_threads()
    if blas is not None and blas > n and not any(os.environ.get(v) for v in _USER_VARS):
        set_num_threads(n)
        blas = n
    parallel.set_num_threads(blas if blas is not None else n)
