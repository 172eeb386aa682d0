"""DataLoader with worker processes: order, seeding, errors, shutdown, iterables."""

from __future__ import annotations

import os
import random
import time

import numpy as np
import pytest

import volta_core as vt
from volta_core.data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info
from volta_core.data.transforms import RandomHorizontalFlip


class Slow(Dataset):
    """Sample i: (float32 [i, 2i], i); odd indices are slower, to shuffle arrival order."""

    def __init__(self, n: int = 24) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        if i % 2:
            time.sleep(0.002)
        return np.array([i, 2 * i], dtype=np.float32), i


class Boom(Dataset):
    def __len__(self) -> int:
        return 8

    def __getitem__(self, i: int):
        if i == 5:
            raise ValueError(f"bad sample {i}")
        return i


class MyError(Exception):
    pass


class BoomCustom(Boom):
    def __getitem__(self, i: int):
        raise MyError("custom failure")


class WhoAmI(Dataset):
    """Sample i: (worker id, worker seed, a Python random draw, a Volta random draw)."""

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int):
        info = get_worker_info()
        return info.id, info.seed, random.random(), vt.rand(1).item(), os.getpid()


class Sharded(IterableDataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        wid, nw = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(wid, self.n, nw))


class Flipped(Dataset):
    def __len__(self) -> int:
        return 6

    def __getitem__(self, i: int):
        return RandomHorizontalFlip(0.5)(vt.from_numpy(np.arange(4.0).reshape(1, 2, 2)))


def _flat(batches):
    return [[x.tolist() for x in b] for b in batches]


@pytest.mark.parametrize("shuffle", [False, True])
def test_two_workers_match_main_process(shuffle):
    kw = dict(batch_size=5, shuffle=shuffle, generator=9)
    ref = _flat(DataLoader(Slow(), **kw))
    got = _flat(DataLoader(Slow(), num_workers=2, **kw))
    assert got == ref and len(got) == 5


def test_tensor_dataset_with_workers_and_device():
    x = vt.from_numpy(np.arange(40, dtype=np.float32).reshape(20, 2))
    ds = TensorDataset(x, vt.arange(20))
    kw = dict(batch_size=6, shuffle=True, generator=1)
    ref = _flat(DataLoader(ds, **kw))
    batches = list(DataLoader(ds, num_workers=2, device="cpu", prefetch_factor=1, **kw))
    assert _flat(batches) == ref
    assert all(t.device == "cpu" for b in batches for t in b)


def test_worker_exception_surfaces_with_type_message_and_traceback():
    with pytest.raises(ValueError, match="bad sample 5") as info:
        list(DataLoader(Boom(), batch_size=2, num_workers=2))
    msg = str(info.value)
    assert "DataLoader worker process" in msg and "Traceback" in msg
    assert "__getitem__" in msg
    with pytest.raises(MyError, match="custom failure"):
        list(DataLoader(BoomCustom(), batch_size=2, num_workers=1))


def test_workers_are_seeded_and_init_fn_called():
    calls = []  # filled in the workers, so stays empty here

    def init(worker_id: int) -> None:
        calls.append(worker_id)
        random.seed(1000 + worker_id)

    def run():
        dl = DataLoader(WhoAmI(), batch_size=None, num_workers=2, generator=5,
                        worker_init_fn=init)
        return list(dl)

    a, b = run(), run()
    assert [s[:4] for s in a] == [s[:4] for s in b]
    ids = [s[0] for s in a]
    seeds = [s[1] for s in a]
    assert ids == [0, 1, 0, 1]
    assert seeds[1] == seeds[0] + 1
    assert a[0][2] == random.Random(1000).random()  # worker_init_fn ran after seeding
    assert a[0][4] != os.getpid() and calls == []


def test_random_transforms_in_workers_are_reproducible():
    def run():
        return _flat(DataLoader(Flipped(), batch_size=3, num_workers=2, generator=2))

    assert run() == run()


def test_iterable_dataset_sharded_by_workers():
    dl = DataLoader(Sharded(10), batch_size=2, num_workers=2)
    got = sorted(v for b in dl for v in b.tolist())
    assert got == list(range(10))
    dl = DataLoader(Sharded(5), batch_size=None, num_workers=2)
    assert sorted(int(v) for v in dl) == list(range(5))


def test_persistent_workers_reuse_processes_across_epochs():
    dl = DataLoader(WhoAmI(), batch_size=None, num_workers=2, persistent_workers=True)
    pids0 = {s[4] for s in dl}
    pids1 = {s[4] for s in dl}
    assert pids0 == pids1 and len(pids0) == 2
    dl = DataLoader(Sharded(6), batch_size=2, num_workers=2, persistent_workers=True)
    assert sorted(v for b in dl for v in b.tolist()) == list(range(6))
    assert sorted(v for b in dl for v in b.tolist()) == list(range(6))
    dl._iterator._shutdown()


def test_early_break_shuts_workers_down():
    dl = DataLoader(Slow(40), batch_size=2, num_workers=2)
    it = iter(dl)
    next(it)
    procs = list(it._workers)
    it._shutdown()
    assert all(not p.is_alive() for p in procs)


def test_timeout_raises():
    class Sleepy(Dataset):
        def __len__(self) -> int:
            return 2

        def __getitem__(self, i: int):
            time.sleep(10)
            return i

    start = time.perf_counter()
    with pytest.raises(RuntimeError, match="timed out"):
        list(DataLoader(Sleepy(), num_workers=1, timeout=0.2))
    assert time.perf_counter() - start < 8  # the sleeping worker was terminated


class Dies(Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int):
        os._exit(3)


def test_worker_that_dies_raises_instead_of_hanging():
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        list(DataLoader(Dies(), num_workers=1))


def test_worker_init_fn_error_is_reported():
    def init(worker_id: int) -> None:
        raise KeyError("no such resource")

    with pytest.raises(KeyError, match="no such resource") as info:
        list(DataLoader(Slow(4), batch_size=2, num_workers=1, worker_init_fn=init))
    assert "at start" in str(info.value)


def test_spawn_context_works():
    x = vt.from_numpy(np.arange(12, dtype=np.float32).reshape(6, 2))
    ds = TensorDataset(x, vt.arange(6))
    dl = DataLoader(ds, batch_size=4, num_workers=1, multiprocessing_context="spawn")
    assert [b[1].tolist() for b in dl] == [[0, 1, 2, 3], [4, 5]]


def test_state_dict_with_workers_counts_yielded_not_prefetched_batches():
    kw = dict(batch_size=3, shuffle=True, generator=4)
    dl = DataLoader(Slow(18), num_workers=2, **kw)
    it = iter(dl)
    head = [next(it)[1].tolist() for _ in range(2)]
    state = dl.state_dict()
    assert state["batches_yielded"] == 2
    rest = [b[1].tolist() for b in it]
    resumed = DataLoader(Slow(18), **kw)
    resumed.load_state_dict(state)
    assert [b[1].tolist() for b in resumed] == rest
    assert [b[1].tolist() for b in DataLoader(Slow(18), **kw)] == head + rest


def test_vt_data_is_reachable_from_the_top_level():
    assert vt.data.DataLoader is DataLoader
    assert vt.data.transforms.ToTensor is not None
