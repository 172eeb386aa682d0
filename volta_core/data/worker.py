"""The DataLoader's worker processes: seeding, fetching, and sending errors home.

A worker receives tasks ``(epoch, task_index, indices)`` on its own index queue and puts
``(epoch, task_index, result)`` on the shared result queue. Results hold host data only
(NumPy arrays wrapped in :class:`~volta_core.data.collate.HostArray`); the main process
makes the tensors. A ``None`` task stops the worker; ``("resume", epoch)`` restarts an
iterable dataset's iterator (persistent workers).
"""

from __future__ import annotations

import os
import pickle
import queue
import random
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .collate import collate_host, convert_host, default_collate, default_convert, is_default

_POLL_S = 1.0  # how often an idle worker checks that its parent is alive


@dataclass(frozen=True)
class WorkerInfo:
    """What a worker process knows about itself (see :func:`get_worker_info`).

    Attributes:
        id: the worker's index, in ``[0, num_workers)``.
        num_workers: how many workers the DataLoader runs.
        seed: this worker's seed, ``base_seed + id``.
        dataset: the worker's copy of the dataset.
    """

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """Return this worker's :class:`WorkerInfo`, or None in the main process.

    An :class:`~volta_core.data.IterableDataset` uses it in ``__iter__`` to shard its
    samples between workers.
    """
    return _worker_info


class IterationEnd:
    """Sent by a worker whose iterable dataset is exhausted."""

    def __reduce__(self):
        return (IterationEnd, ())


class ExceptionWrapper:
    """An exception raised in a worker, sent to the main process to be raised again.

    Args:
        exc: the exception.
        where: where it was raised, e.g. ``"in DataLoader worker process 1"``.
    """

    def __init__(self, exc: BaseException, where: str) -> None:
        self.exc_type = type(exc)
        self.message = str(exc)
        self.where = where
        self.tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))

    def __reduce__(self):
        try:  # the type must be importable in the main process
            pickle.dumps(self.exc_type)
            exc_type: Any = self.exc_type
        except Exception:
            exc_type = RuntimeError
        return (_rebuild_wrapper, (exc_type, self.message, self.where, self.tb))

    def reraise(self) -> None:
        """Raise the original type with its message, the worker's traceback appended."""
        msg = (f"{self.message}\n\nCaught {self.exc_type.__name__} {self.where}.\n"
               f"Original traceback in the worker:\n{self.tb}")
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exc


class _KeyErrorMessage(str):
    """Keeps ``str(KeyError(msg))`` readable (KeyError quotes its argument)."""

    def __repr__(self) -> str:
        return self


def _rebuild_wrapper(exc_type: type, message: str, where: str, tb: str) -> ExceptionWrapper:
    w = ExceptionWrapper.__new__(ExceptionWrapper)
    w.exc_type, w.message, w.where, w.tb = exc_type, message, where, tb
    return w


def _seed_worker(seed: int) -> None:
    """Seed Python's, Volta's CPU and (if loaded) NumPy's global generators.

    Only the CPU generator: touching a GPU in a forked child is unsafe.
    """
    from ..random import seed_cpu

    random.seed(seed)
    seed_cpu(seed)  # vt.initial_seed() in the worker is its seed, as in PyTorch
    np = sys.modules.get("numpy")
    if np is not None:
        np.random.seed(seed % 2**32)


def rng_state() -> dict:
    """The state of the generators a worker seeds (Python's, Volta's CPU, NumPy's), as
    JSON-able data: saved with a mid-epoch ``DataLoader.state_dict()`` so that random
    augmentation in workers resumes exactly."""
    from ..backend.device import Device
    from ..creation import _generator

    version, internal, gauss = random.getstate()
    state: dict = {"random": [version, list(internal), gauss],
                   "volta": _generator(Device("cpu")).get_state()}
    np = sys.modules.get("numpy")
    if np is not None:
        name, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)
        state["numpy"] = [name, [int(k) for k in keys], int(pos), int(has_gauss),
                          float(cached)]
    return state


def set_rng_state(state: dict) -> None:
    """Restore a state returned by :func:`rng_state`."""
    from ..backend.device import Device
    from ..creation import _generator

    version, internal, gauss = state["random"]
    random.setstate((version, tuple(internal), gauss))
    _generator(Device("cpu")).set_state(state["volta"])
    np = sys.modules.get("numpy")  # loaded wherever a saved state has a NumPy entry
    if "numpy" in state and np is not None:
        name, keys, pos, has_gauss, cached = state["numpy"]
        np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))


def _find_gather(dataset: Any) -> Callable[[list[int]], list] | None:
    """A batched fast path for default-collated batches of ``dataset``, if it has one."""
    from .dataset import Subset

    gather = getattr(dataset, "_gather", None)
    if gather is not None:
        return gather
    if isinstance(dataset, Subset):
        inner = _find_gather(dataset.dataset)
        if inner is not None:
            idx = dataset.indices
            return lambda indices: inner([idx[i] for i in indices])
    return None


class _Fetcher:
    """Turns indices (map-style) or "next batch" requests (iterable) into batches.

    With ``host=True`` (workers) default-collated batches hold :class:`HostArray`
    leaves; otherwise (main process) they hold tensors.
    """

    def __init__(self, dataset: Any, iterable: bool, auto_collation: bool,
                 collate_fn: Callable | None, batch_size: int | None, drop_last: bool,
                 host: bool = True) -> None:
        self.dataset, self.iterable = dataset, iterable
        self.auto, self.batch_size, self.drop_last = auto_collation, batch_size, drop_last
        self.gather = None
        if not is_default(collate_fn):
            self.collate = collate_fn
        elif host:
            self.collate = collate_host if auto_collation else convert_host
        else:
            self.collate = default_collate if auto_collation else default_convert
        if is_default(collate_fn) and auto_collation and not iterable:
            gather = _find_gather(dataset)
            if gather is not None:
                self.gather = (lambda idx: convert_host(gather(idx))) if host else gather
        self.it = iter(dataset) if iterable else None
        self.ended = False

    def reset(self) -> None:
        if self.iterable:
            self.it, self.ended = iter(self.dataset), False

    def fetch(self, indices: Any) -> Any:
        if self.iterable:
            return self._fetch_iterable()
        if not self.auto:
            return self.collate(self.dataset[indices])
        if self.gather is not None:
            return self.gather(indices)
        getitems = getattr(self.dataset, "__getitems__", None)
        samples = getitems(indices) if getitems else [self.dataset[i] for i in indices]
        return self.collate(samples)

    def _fetch_iterable(self) -> Any:
        if self.ended:
            return IterationEnd()
        if not self.auto:
            try:
                return self.collate(next(self.it))  # type: ignore[arg-type]
            except StopIteration:
                self.ended = True
                return IterationEnd()
        batch = []
        for item in self.it:  # type: ignore[union-attr]
            batch.append(item)
            if len(batch) == self.batch_size:
                return self.collate(batch)
        self.ended = True
        if not batch or self.drop_last:
            return IterationEnd()
        return self.collate(batch)


def worker_loop(dataset: Any, index_queue: Any, result_queue: Any, fetcher_args: dict,
                base_seed: int, worker_id: int, num_workers: int,
                worker_init_fn: Callable[[int], None] | None, parent_pid: int,
                resume_rng: dict | None = None) -> None:
    """The body of one worker process (module-level, so that 'spawn' can pickle it).

    ``resume_rng``: generator states to continue from (a resumed epoch), set after the
    usual seeding and ``worker_init_fn``. Each result carries the states after it.
    """
    global _worker_info
    seed = base_seed + worker_id
    try:
        _seed_worker(seed)
        _worker_info = WorkerInfo(worker_id, num_workers, seed, dataset)
        if worker_init_fn is not None:
            worker_init_fn(worker_id)
        if resume_rng is not None:
            set_rng_state(resume_rng)
        fetcher: _Fetcher | ExceptionWrapper = _Fetcher(dataset, **fetcher_args)
    except Exception as e:  # reported with the first task
        fetcher = ExceptionWrapper(e, f"in DataLoader worker process {worker_id} at start")
    where = f"in DataLoader worker process {worker_id}"
    while True:
        try:
            task = index_queue.get(timeout=_POLL_S)
        except queue.Empty:
            if os.getppid() != parent_pid:  # the main process died: exit quietly
                return
            continue
        except (EOFError, OSError, KeyboardInterrupt):
            return
        if task is None:
            break
        if isinstance(task[0], str):  # ("resume", epoch)
            if isinstance(fetcher, _Fetcher):
                fetcher.reset()
            continue
        epoch, idx, indices = task
        if isinstance(fetcher, ExceptionWrapper):
            result: Any = fetcher
        else:
            try:
                result = fetcher.fetch(indices)
            except Exception as e:
                result = ExceptionWrapper(e, where)
        try:  # pickle here, so that an unpicklable batch is reported, not lost
            payload = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as e:  # e.g. a custom collate_fn returning a lambda
            payload = pickle.dumps(ExceptionWrapper(e, where))
        del result
        result_queue.put((epoch, idx, payload, rng_state()))
    # stopped on purpose: don't block exit on results nobody will read
    result_queue.cancel_join_thread()
