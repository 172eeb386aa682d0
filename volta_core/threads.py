"""``vt.get_num_threads`` / ``vt.set_num_threads``: the CPU backend's intra-op threads.

As ``torch.set_num_threads``: the number of threads one CPU op (a GEMM, a convolution)
may use. The CPU backend starts on the cores this process may run on (its affinity mask
and CPU quota), not on every core of the host.
"""

from __future__ import annotations

from .backend import Device


def _cpu_backend():
    return Device("cpu").backend


def get_num_threads() -> int:
    """Return the number of threads the CPU backend's ops run on.

    Example::

        >>> vt.get_num_threads()  # doctest: +SKIP
        2
    """
    backend = _cpu_backend()
    backend.namespace(0)  # the default count is applied when the backend first loads
    get = getattr(backend, "get_num_threads", None)
    return int(get()) if get is not None else 1


def set_num_threads(n: int) -> None:
    """Set the number of threads the CPU backend's ops run on (``n >= 1``).

    Args:
        n: the thread count, as ``torch.set_num_threads``.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: expected a positive int, got {n!r}")
    backend = _cpu_backend()
    backend.namespace(0)  # load first, so the default does not overwrite this choice later
    set_ = getattr(backend, "set_num_threads", None)
    if set_ is not None:
        set_(n)
