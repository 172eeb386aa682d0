"""glibc's malloc settings for array workloads (the CPU backend sets them once).

glibc serves a block of 128 KiB or more with fresh ``mmap`` pages, raising that limit
(up to 32 MiB) as such blocks are freed, and gives the heap's free top back to the
system beyond twice the limit. A training step allocates and frees the same few
MiB-sized arrays every step, so with the defaults they keep coming back as fresh pages,
and the first touch of each 4 KiB page is a page fault: about 4 microseconds each on a
sandboxed or virtualised kernel, often more than the arithmetic on the page. Fixed
limits keep such blocks in the heap for reuse: the process keeps up to ``TRIM`` bytes of
freed heap instead of returning them at once.

``VOLTA_MALLOC_TUNING=0`` leaves malloc as it is; so does any ``MALLOC_*`` variable of
glibc's own (the user's choice stands). Linux with glibc only: elsewhere, nothing.
"""

from __future__ import annotations

import ctypes
import os
import sys

MMAP_THRESHOLD = 32 << 20  # glibc's upper bound: blocks below it come from the heap
TRIM = 256 << 20  # free heap kept before it is given back
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (malloc.h)

_done = False


def apply_default() -> bool:
    """Set the thresholds once per process; True if they were set."""
    global _done
    if _done:
        return False
    _done = True
    if os.environ.get("VOLTA_MALLOC_TUNING", "1") == "0" or sys.platform != "linux":
        return False
    if any(k.startswith("MALLOC_") for k in os.environ):
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc (musl, ...)
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                and mallopt(_M_TRIM_THRESHOLD, TRIM))
