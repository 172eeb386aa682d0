"""Intra-op threads of the CPU backend: a kernel's batch split into chunks that the calling
thread and a few persistent workers share.

NumPy releases the GIL in its copies, ufunc loops and BLAS calls, so two threads working
on two halves of a batch run at once. Chunks are handed out one at a time from a shared
counter, so the caller never waits for a worker that has not started: on a busy machine
(another process on the other core) the caller simply takes every chunk itself. The
chunking does not depend on the thread count, and callers combine per-chunk results in
chunk order, so such a kernel returns the same bits on any thread count.

While chunks run, NumPy's BLAS is held to one thread: each chunk makes its own small GEMM
calls, and two threads each calling a multi-threaded BLAS would oversubscribe the cores.

A trailing job (:func:`trailing`) is the other shape of parallel work: the caller runs a
sequential loop (an RNN's time steps) and a worker takes the work that each finished
stretch of it makes possible, so the second core is busy while the first loops.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
from collections.abc import Callable, Sequence

from .threads import blas_controllers

_jobs: queue.SimpleQueue = queue.SimpleQueue()
_workers: list[threading.Thread] = []
_threads = 1  # threads a parallel loop uses: the caller plus _threads - 1 workers
_lock = threading.Lock()  # guards _workers, _active and the BLAS thread count
_active = 0  # parallel loops running now (the BLAS count is restored when the last ends)
_blas_saved: list = []  # (controller, thread count) to restore after the loops


def get_num_threads() -> int:
    """Threads a parallel kernel runs on (the caller included)."""
    return _threads


def set_num_threads(n: int) -> None:
    """Run parallel kernels on ``n`` threads; workers start on first use."""
    global _threads
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: expected a positive int, got {n!r}")
    _threads = n


class _Local(threading.local):
    nested = False  # this thread is running a piece of a loop now


_local = _Local()


class _Job:
    """One parallel loop: ``fn(lo, hi)`` over ``chunks``, taken one at a time (a trailing
    job's chunk ``i`` once ``ready[i]`` is set)."""

    __slots__ = ("fn", "chunks", "counter", "left", "done", "error", "lock", "ready")

    def __init__(self, fn: Callable[[int, int], None], chunks: Sequence[tuple[int, int]],
                 trailing: bool = False):
        self.fn, self.chunks = fn, chunks
        self.counter = itertools.count()  # next() is atomic under the GIL
        self.left = len(chunks)
        self.done = threading.Event()
        if not chunks:
            self.done.set()
        self.error: BaseException | None = None
        self.lock = threading.Lock()
        self.ready = [threading.Event() for _ in chunks] if trailing else None

    def work(self) -> None:
        n = len(self.chunks)
        nested, _local.nested = _local.nested, True
        try:
            while (i := next(self.counter)) < n:
                if self.ready is not None:
                    self.ready[i].wait()
                try:
                    if self.error is None:
                        self.fn(*self.chunks[i])
                except BaseException as e:  # re-raised in the caller
                    self.error = e
                with self.lock:
                    self.left -= 1
                    if self.left == 0:
                        self.done.set()
        finally:
            _local.nested = nested


def _worker() -> None:
    while True:
        _jobs.get().work()


def _after_fork_in_child() -> None:
    """A forked child (a DataLoader worker) has none of the parent's threads: start over
    (else jobs would pile up in a queue nobody reads)."""
    global _jobs, _lock, _active
    _jobs, _lock, _active = queue.SimpleQueue(), threading.Lock(), 0
    _workers.clear()
    _blas_saved.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _start_workers(n: int) -> None:
    with _lock:
        while len(_workers) < n:
            t = threading.Thread(target=_worker, name=f"volta-cpu-{len(_workers)}",
                                 daemon=True)
            t.start()
            _workers.append(t)


def _blas_one_thread(enter: bool) -> None:
    """Hold NumPy's BLAS to one thread while any parallel loop runs."""
    global _active
    with _lock:
        if enter:
            _active += 1
            if _active == 1:
                for c in blas_controllers():
                    n = c.get()
                    if n is not None and n > 1:
                        _blas_saved.append((c, n))
                        c.set(1)
        else:
            _active -= 1
            if _active == 0:
                while _blas_saved:
                    c, n = _blas_saved.pop()
                    c.set(n)


class _OneBlasThread:
    """The context of :func:`one_blas_thread` (a class: a generator-based context manager
    costs ~3 us, paid by every mid-size product)."""

    __slots__ = ()

    def __enter__(self) -> None:
        _blas_one_thread(True)

    def __exit__(self, *exc: object) -> None:
        _blas_one_thread(False)


_ONE_BLAS_THREAD = _OneBlasThread()


def one_blas_thread() -> _OneBlasThread:
    """Hold NumPy's BLAS to one thread inside the ``with`` block (a product the caller runs
    alone, while the backend's workers may run other kernels; or a loop of such products,
    held once for all of them)."""
    return _ONE_BLAS_THREAD


def blas_held() -> bool:
    """Whether NumPy's BLAS is held to one thread now (a parallel loop or a
    :func:`one_blas_thread` block is running)."""
    return _active > 0


def chunks(n: int, size: int) -> list[tuple[int, int]]:
    """``[0, n)`` cut into ``(lo, hi)`` pieces of ``size`` (the last may be shorter)."""
    size = max(1, size)
    return [(lo, min(lo + size, n)) for lo in range(0, n, size)]


# a chunk's work in elements at most (~4 MiB of float32): fewer, larger chunks cost less
# Python per element than cache-sized ones save (measured on LeNet's layers, 2 cores: 2
# chunks beat 4 and 8 on 1 and on 2 threads); at least MIN_CHUNKS chunks where the batch
# allows, so two threads share the work; and at least MIN_CHUNK_ELEMENTS per chunk (each
# chunk costs ~10-30 us of Python and calls)
CHUNK_ELEMENTS = 1 << 20
MIN_CHUNKS = 2
MIN_CHUNK_ELEMENTS = 1 << 16


def batch_chunk(n: int, per_sample: int) -> int:
    """Samples per chunk for a batch of ``n`` whose samples each touch ``per_sample``
    elements; it depends on the shapes only (not on the thread count)."""
    if n == 0:  # an empty batch: one (empty) chunk
        return 1
    total = n * max(1, per_sample)
    count = max(MIN_CHUNKS, -(-total // CHUNK_ELEMENTS))
    count = min(n, count, max(1, total // MIN_CHUNK_ELEMENTS))
    return max(1, -(-n // count))


def row_blocks(n: int, per_row: int) -> list[tuple[int, int]]:
    """``[0, n)`` in :func:`batch_chunk`'s number of pieces (the shapes alone fix it), cut
    by :func:`lead_blocks`, for kernels whose rows do not depend on the cut."""
    return lead_blocks(n, -(-n // batch_chunk(n, per_row)) if n else 1)


def by_rows(run: Callable[[int, int], None], n: int, per_row: int, split_at: int) -> None:
    """``run(lo, hi)`` over ``n`` rows of ``per_row`` elements: one call below ``split_at``
    elements (cheaper than waking a worker), else :func:`row_blocks` on the threads."""
    if n * per_row < split_at:
        run(0, n)
    else:
        parallel_for(run, row_blocks(n, per_row))


def split(n: int, min_size: int, max_size: int = 1 << 20) -> list[tuple[int, int]]:
    """``[0, n)`` in one piece per thread where each gets ``min_size`` at least (pieces of
    ``max_size`` at most), for elementwise kernels whose values do not depend on the
    cut. Few large pieces: each NumPy call of a piece runs long, so two threads seldom
    wait for the GIL between calls (a waiting thread is woken ~10-50 us later)."""
    count = max(-(-n // max_size), min(_threads, n // max(1, min_size)), 1)
    return lead_blocks(n, count)


def lead_blocks(n: int, count: int) -> list[tuple[int, int]]:
    """``[0, n)`` in ``count`` pieces, the first (the caller takes it first) ~6% larger than
    the others: a sleeping worker starts its piece ~40 us late, and when it then ends
    before the caller, the caller finds the loop done instead of waiting ~35 us to be
    woken (a (256, 512) @ (512, 512) product in two blocks: 784 -> 745 us on 2 cores)."""
    first = min(n, -(-n * 106 // (100 * count)))
    if count < 2 or first >= n:
        return chunks(n, n)
    step = -(-(n - first) // (count - 1))
    return [(0, first)] + [(lo, min(lo + step, n)) for lo in range(first, n, step)]


def parallel_for(fn: Callable[[int, int], None], pieces: Sequence[tuple[int, int]]) -> None:
    """Run ``fn(lo, hi)`` for every piece, on the caller and the workers; return when all
    are done. ``fn`` must write disjoint outputs per piece; an exception in any piece is
    raised here (the remaining pieces are skipped)."""
    if _threads == 1 or len(pieces) < 2 or _local.nested:
        for lo, hi in pieces:  # a loop inside a piece runs on its own thread
            fn(lo, hi)
        return
    helpers = min(_threads, len(pieces)) - 1
    if len(_workers) < helpers:
        _start_workers(helpers)
    job = _Job(fn, pieces)
    _blas_one_thread(True)
    try:
        for _ in range(helpers):
            _jobs.put(job)
        job.work()
        job.done.wait()
    finally:
        _blas_one_thread(False)
    if job.error is not None:
        raise job.error


class Trailing:
    """Pieces of work that trail the caller's loop (:func:`trailing`)."""

    __slots__ = ("job", "held")

    def __init__(self, fn: Callable[[int, int], None], pieces: Sequence[tuple[int, int]]):
        self.job = _Job(fn, pieces, trailing=True)
        self.held = _threads > 1 and len(pieces) > 0 and not _local.nested
        if self.held:
            if not _workers:
                _start_workers(1)
            _blas_one_thread(True)
            _jobs.put(self.job)

    def ready(self, i: int) -> None:
        """Piece ``i``'s inputs are final: a worker may run it now."""
        self.job.ready[i].set()

    def __enter__(self) -> Trailing:
        return self

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        job = self.job
        if exc is not None and job.error is None:
            job.error = exc  # the caller's loop failed: skip the pieces not begun
        for e in job.ready:
            e.set()
        try:
            job.work()  # the caller takes the pieces no worker has begun
            job.done.wait()
        finally:
            if self.held:
                _blas_one_thread(False)
        if exc is None and job.error is not None:
            raise job.error


def trailing(fn: Callable[[int, int], None], pieces: Sequence[tuple[int, int]]) -> Trailing:
    """Run ``fn(lo, hi)`` for every piece on a worker *while the caller goes on*: piece
    ``i`` starts once the caller calls ``ready(i)``; at the end of the ``with`` block the
    caller runs the pieces no worker has begun and waits for the rest. For a sequential
    loop (an RNN's time steps) whose finished steps feed independent work (the weight
    gradients), which then runs on the otherwise idle core. BLAS is held to one thread
    meanwhile; pieces must write disjoint outputs, and an error in one is raised at the
    end of the block."""
    return Trailing(fn, pieces)
