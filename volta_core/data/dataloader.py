"""DataLoader: batches from a dataset, in the main process or in worker processes."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from ..backend.device import Device
from .collate import default_collate, default_convert, place
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, _rng, _seed_of
from .worker import ExceptionWrapper, IterationEnd, _Fetcher, worker_loop

T_co = TypeVar("T_co", covariant=True)
_POLL_S = 1.0  # how often the main process checks that its workers are alive
_JOIN_S = 1.0  # how long workers get to exit on their own at shutdown


class _InfiniteConstantSampler(Sampler[None]):
    """Yields None forever: each None asks an iterable dataset for the next batch."""

    def __iter__(self) -> Iterator[None]:
        while True:
            yield None


class DataLoader(Generic[T_co]):
    """Iterate over batches of a dataset, optionally loading them in worker processes.

    Batches are made of host data, then placed on ``device``: arrays and numbers become
    tensors there and tensors are moved there. Without ``device``, host data becomes CPU
    tensors and tensors stay on their device (nothing moves silently).

    Args:
        dataset: a map-style :class:`Dataset` or an :class:`IterableDataset`.
        batch_size: samples per batch; None turns automatic batching off.
        shuffle: reshuffle every epoch (a :class:`RandomSampler` seeded by ``generator``).
        sampler: the order of the indices (excludes ``shuffle``).
        batch_sampler: yields lists of indices (excludes ``batch_size``, ``shuffle``,
            ``sampler`` and ``drop_last``).
        num_workers: worker processes loading batches; 0 loads in the main process.
        collate_fn: merges a list of samples into a batch (:func:`default_collate`).
        pin_memory: accepted for PyTorch compatibility; no effect.
        drop_last: drop the last, incomplete batch.
        timeout: seconds to wait for a worker's batch before raising (0: no limit).
        worker_init_fn: called as ``worker_init_fn(worker_id)`` in each worker, after
            seeding.
        generator: a :class:`vt.Generator` or an int seed (its ``initial_seed()``); the seed of
            ``vt.manual_seed`` when None. Seeds the shuffle and the workers (worker
            ``i`` of epoch ``e`` is seeded ``base_seed(seed, e) + i``).
        prefetch_factor: batches loaded in advance per worker.
        persistent_workers: keep the workers between epochs.
        device: where batches are placed (a device string or :class:`Device`).
        multiprocessing_context: a ``multiprocessing`` context or start method name;
            'fork' where available, else 'spawn'.

    Example::

        >>> ds = TensorDataset(vt.randn(1000, 8), vt.randint(0, 2, (1000,)))
        >>> for x, y in DataLoader(ds, batch_size=64, shuffle=True, num_workers=2):
        ...     pass
    """

    def __init__(self, dataset: Dataset[T_co], batch_size: int | None = 1,
                 shuffle: bool | None = False, sampler: Sampler | None = None,
                 batch_sampler: Sampler | None = None, num_workers: int = 0,
                 collate_fn: Callable[[list], Any] | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None, generator: Any = None,
                 prefetch_factor: int | None = 2, persistent_workers: bool = False,
                 device: str | Device | None = None, multiprocessing_context: Any = None
                 ) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise ValueError(f"num_workers option should be a non-negative int, got "
                             f"{num_workers!r}")
        if timeout < 0:
            raise ValueError(f"timeout option should be non-negative, got {timeout}")
        prefetch_factor = 2 if prefetch_factor is None else prefetch_factor
        if not isinstance(prefetch_factor, int) or prefetch_factor < 1:
            raise ValueError(f"prefetch_factor should be a positive int, got "
                             f"{prefetch_factor!r}")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        iterable = isinstance(dataset, IterableDataset)
        if iterable and (shuffle or sampler is not None or batch_sampler is not None):
            raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle, "
                             "sampler and batch_sampler; shuffle or shard inside the dataset")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with "
                                 "batch_size, shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.collate_fn = collate_fn or (default_collate if batch_sampler is not None
                                         else default_convert)
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.device = Device(device) if device is not None else None
        self.multiprocessing_context = multiprocessing_context
        self._iterable = iterable
        self._epoch = 0
        self._skip = 0
        self._resume_rng: dict | None = None  # workers' generators, from load_state_dict
        self._iterator: _BaseIter | None = None

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self) -> Any:
        return self.batch_sampler if self._auto_collation else self.sampler

    def _fetcher_args(self, host: bool) -> dict:
        return dict(iterable=self._iterable, auto_collation=self._auto_collation,
                    collate_fn=self.collate_fn, batch_size=self.batch_size,
                    drop_last=self.drop_last, host=host)

    def _context(self) -> Any:
        ctx = self.multiprocessing_context
        if ctx is None:
            methods = multiprocessing.get_all_start_methods()
            ctx = "fork" if "fork" in methods else "spawn"
        return multiprocessing.get_context(ctx) if isinstance(ctx, str) else ctx

    def __iter__(self) -> Iterator[Any]:
        if self.num_workers == 0:
            self._iterator = _SingleProcessIter(self)
            return self._iterator
        if self.persistent_workers and isinstance(self._iterator, _MultiProcessIter) \
                and not self._iterator._stopped:
            self._iterator._reset(self)
            return self._iterator
        if isinstance(self._iterator, _MultiProcessIter):
            self._iterator._shutdown()
        self._iterator = _MultiProcessIter(self)
        return self._iterator

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)

    # -- resuming ------------------------------------------------------------------------
    def state_dict(self) -> dict:
        """The loader's position: ``{"epoch", "batches_yielded", "sampler"}``.

        Taken mid-epoch it records the batches already yielded, so that a loader given
        it by :meth:`load_state_dict` continues with the next batch of the same epoch
        (exactly, for the built-in samplers, whose order depends only on seed and epoch).
        """
        it = self._iterator
        rng = getattr(it, "_worker_rng", None)  # workers' generators after their last batch
        extra = {"worker_rng": {str(w): s for w, s in rng.items()}} if rng else {}
        if it is not None and not it._done:
            return {"epoch": it._epoch, "batches_yielded": it._yielded,
                    "sampler": it._sampler_state, **extra}
        state = getattr(self.sampler, "state_dict", None)
        if not self.persistent_workers:  # workers are seeded afresh each epoch
            extra = {}
        return {"epoch": self._epoch, "batches_yielded": 0,
                "sampler": state() if callable(state) else {}, **extra}

    def load_state_dict(self, state: dict) -> None:
        """Make the next iteration resume at ``state`` (from :meth:`state_dict`)."""
        self._epoch = int(state["epoch"])
        self._skip = int(state.get("batches_yielded", 0))
        self._resume_rng = state.get("worker_rng") or None
        load = getattr(self.sampler, "load_state_dict", None)
        if callable(load) and state.get("sampler"):
            load(state["sampler"])


class _BaseIter:
    """What both iterators share: epoch bookkeeping, skipping, placing batches."""

    def __init__(self, loader: DataLoader) -> None:
        self._loader = weakref.ref(loader)  # no reference cycle with a persistent loader
        self._device = loader.device
        self._done = False
        self._start_epoch(loader)

    def _start_epoch(self, loader: DataLoader) -> None:
        self._epoch = loader._epoch
        loader._epoch += 1
        skip, loader._skip = loader._skip, 0
        state = getattr(loader.sampler, "state_dict", None)
        self._sampler_state = dict(state(), offset=0) if callable(state) and state() else {}
        self._sampler_iter = iter(loader._index_sampler)
        self._base_seed = _rng(_seed_of(loader.generator), self._epoch,
                               "DataLoader.workers").getrandbits(32)
        self._yielded = 0
        self._drop = 0
        self._done = False
        if loader._iterable:
            self._drop = skip  # batches can only be skipped by loading them
        else:
            for _ in range(skip):
                if next(self._sampler_iter, _END) is _END:
                    break
                self._yielded += 1

    def __iter__(self) -> _BaseIter:
        return self

    def __len__(self) -> int:
        loader = self._loader()
        if loader is None:
            raise TypeError("len() of an iterator whose DataLoader is gone")
        return len(loader)


_END = object()


class _SingleProcessIter(_BaseIter):
    """Loads batches in the main process."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._fetcher = _Fetcher(loader.dataset, **loader._fetcher_args(host=False))

    def __next__(self) -> Any:
        while True:
            indices = next(self._sampler_iter, _END)
            if indices is _END:
                self._done = True
                raise StopIteration
            data = self._fetcher.fetch(indices)
            if isinstance(data, IterationEnd):
                self._done = True
                raise StopIteration
            if self._drop:
                self._drop -= 1
                self._yielded += 1
                continue
            self._yielded += 1
            return place(data, self._device)


class _MultiProcessIter(_BaseIter):
    """Loads batches in worker processes and yields them in sampler order."""

    def __init__(self, loader: DataLoader) -> None:
        self._stopped = True
        self._workers: list[Any] = []
        ctx = loader._context()
        Device("cpu")  # discover backends once, before forking, not once per worker
        n = loader.num_workers
        self._num_workers = n
        self._persistent = loader.persistent_workers
        self._timeout = loader.timeout
        self._result_queue = ctx.Queue()
        self._index_queues = [ctx.Queue() for _ in range(n)]
        super().__init__(loader)  # starts the epoch: base seed, skipped batches
        args = loader._fetcher_args(host=True)
        # a resumed map-style epoch: workers continue their generators where they were
        # (an iterable one replays the skipped batches, and with them the draws)
        resume = getattr(loader, "_resume_rng", None) if not loader._iterable else None
        loader._resume_rng = None
        self._worker_rng: dict[int, dict] = {}
        for i in range(n):
            rng = (resume or {}).get(str(i))
            if rng is not None:
                self._worker_rng[i] = rng
            p = ctx.Process(target=worker_loop, daemon=True,
                            args=(loader.dataset, self._index_queues[i], self._result_queue,
                                  args, self._base_seed, i, n, loader.worker_init_fn,
                                  os.getpid(), rng))
            p.start()
            self._workers.append(p)
        self._stopped = False
        self._prime(loader.prefetch_factor * n)

    def _reset(self, loader: DataLoader) -> None:
        """Start a new epoch on the same (persistent) workers."""
        self._start_epoch(loader)
        if loader._iterable:
            for q in self._index_queues:
                q.put(("resume", self._epoch))
        self._prime(loader.prefetch_factor * self._num_workers)

    def _prime(self, count: int) -> None:
        self._send_idx = self._rcvd_idx = 0
        self._tasks: dict[int, tuple] = {}  # task index -> (worker,) or (worker, data)
        self._rng_after: dict[int, dict] = {}  # task index -> its worker's generators after it
        self._active = [True] * self._num_workers
        # batch k of an epoch goes to worker k % n, also when resuming after skipped ones
        self._next_worker = self._yielded % self._num_workers
        for _ in range(count):
            self._put_task()

    def _put_task(self) -> None:
        indices = next(self._sampler_iter, _END)
        if indices is _END:
            return
        for _ in range(self._num_workers):
            w = self._next_worker
            self._next_worker = (w + 1) % self._num_workers
            if self._active[w]:
                break
        else:
            return
        self._index_queues[w].put((self._epoch, self._send_idx, indices))
        self._tasks[self._send_idx] = (w,)
        self._send_idx += 1

    def __next__(self) -> Any:
        while True:
            data = self._next_data()
            if self._drop:
                self._drop -= 1
                self._yielded += 1
                continue
            self._yielded += 1
            return place(data, self._device)

    def _next_data(self) -> Any:
        while True:
            while self._rcvd_idx < self._send_idx:  # skip tasks of exhausted workers
                info = self._tasks.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._active[info[0]]):
                    break
                self._tasks.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                self._done = True
                if not self._persistent:
                    self._shutdown()
                raise StopIteration
            info = self._tasks[self._rcvd_idx]
            if len(info) == 2:
                return self._take(self._rcvd_idx, info[1])
            epoch, idx, payload, rng = self._get()
            if epoch != self._epoch or idx not in self._tasks:
                continue  # a result of an abandoned epoch
            self._rng_after[idx] = rng
            data = pickle.loads(payload)
            if isinstance(data, IterationEnd):
                self._active[self._tasks.pop(idx)[0]] = False
                continue
            if idx != self._rcvd_idx:
                self._tasks[idx] = (self._tasks[idx][0], data)
                continue
            return self._take(idx, data)

    def _take(self, idx: int, data: Any) -> Any:
        rng = self._rng_after.pop(idx, None)
        if rng is not None:
            self._worker_rng[self._tasks[idx][0]] = rng
        del self._tasks[idx]
        self._rcvd_idx += 1
        self._put_task()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _get(self) -> tuple:
        if self._timeout > 0:
            try:
                return self._result_queue.get(timeout=self._timeout)
            except queue.Empty:
                self._shutdown()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds "
                                   "waiting for a batch from its workers") from None
        while True:
            try:
                return self._result_queue.get(timeout=_POLL_S)
            except queue.Empty:
                dead = [(p.pid, p.exitcode) for p in self._workers if not p.is_alive()]
                if dead:
                    self._shutdown()
                    raise RuntimeError(
                        "DataLoader worker(s) (pid, exit code) " + ", ".join(map(str, dead))
                        + " exited unexpectedly; a negative code is the signal that killed "
                          "it (e.g. -9: out of memory)") from None

    def _shutdown(self) -> None:
        """Stop the workers and close the queues (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        for q in self._index_queues:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + _JOIN_S
        for p in self._workers:  # idle workers exit at once; busy ones are terminated
            p.join(timeout=max(0.0, deadline - time.monotonic()))
        for p in self._workers:
            if p.is_alive():
                p.terminate()
                p.join(timeout=1.0)
        for q in (*self._index_queues, self._result_queue):
            q.cancel_join_thread()
            q.close()

    def __del__(self) -> None:
        try:
            self._shutdown()
        except Exception:
            pass


__all__ = ["DataLoader"]
