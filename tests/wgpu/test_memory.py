"""``vt.wgpu`` memory statistics, ``empty_cache``, and retry-after-trim on allocation failure."""

from __future__ import annotations

import gc
import threading

import pytest
from volta_wgpu.engine import bucket_size, get_engine

import volta_core as vt

MB = 1 << 20


def test_is_available_and_name():
    assert vt.wgpu.is_available()
    assert vt.wgpu.device_count() >= 1
    assert isinstance(vt.wgpu.get_device_name(), str)
    vt.wgpu.synchronize()


def test_allocated_follows_live_tensors():
    base = vt.wgpu.memory_allocated()
    x = vt.zeros(MB // 4, device="wgpu")  # 1 MiB of float32
    assert vt.wgpu.memory_allocated() == base + bucket_size(MB)
    y = x + 1
    assert vt.wgpu.memory_allocated() == base + 2 * bucket_size(MB)
    assert vt.wgpu.memory_allocated("wgpu:0") == vt.wgpu.memory_allocated(0)
    del x, y
    assert vt.wgpu.memory_allocated() == base


def test_peak_and_reset():
    vt.wgpu.reset_peak_memory_stats()
    base = vt.wgpu.memory_allocated()
    assert vt.wgpu.max_memory_allocated() == base
    x = vt.zeros(2 * MB // 4, device="wgpu")
    del x
    assert vt.wgpu.max_memory_allocated() == base + bucket_size(2 * MB)
    assert vt.wgpu.memory_allocated() == base
    vt.wgpu.reset_peak_memory_stats()
    assert vt.wgpu.max_memory_allocated() == base


def test_empty_cache_gives_back_cached_buffers():
    xs = [vt.ones(MB // 4, device="wgpu") * i for i in range(4)]
    keep = xs[0]
    del xs
    assert vt.wgpu.memory_reserved() >= vt.wgpu.memory_allocated() + 3 * bucket_size(MB)
    vt.wgpu.empty_cache()
    # only the buffers of live tensors remain, and they still hold their values
    assert vt.wgpu.memory_reserved() == vt.wgpu.memory_allocated()
    assert float(keep.sum()) == 0.0
    assert float((vt.ones(4, device="wgpu") + keep[:4]).sum()) == 4.0


def test_freed_by_cyclic_gc_and_by_other_threads_is_counted():
    gc.collect()
    base = vt.wgpu.memory_allocated()
    node = {"t": vt.zeros(MB // 4, device="wgpu")}
    node["self"] = node
    del node
    assert vt.wgpu.memory_allocated() == base + bucket_size(MB)  # only GC can free it
    gc.collect()
    assert vt.wgpu.memory_allocated() == base

    box = [vt.zeros(MB // 4, device="wgpu")]
    t = threading.Thread(target=box.clear)  # the last reference dies in another thread
    t.start()
    t.join()
    assert vt.wgpu.memory_allocated() == base


class _FailingDevice:
    """Wraps the wgpu device; ``create_buffer`` fails the first ``fails`` times."""

    def __init__(self, device, fails: int) -> None:
        self._device = device
        self.fails = fails
        self.calls = 0

    def create_buffer(self, **kw):
        self.calls += 1
        if self.fails:
            self.fails -= 1
            raise RuntimeError("out of device memory (simulated)")
        return self._device.create_buffer(**kw)

    def __getattr__(self, name):
        return getattr(self._device, name)


def test_allocation_failure_trims_the_pool_and_retries(monkeypatch):
    eng = get_engine(0)
    cached = [vt.ones(3 * MB // 4, device="wgpu") + i for i in range(3)]
    del cached
    assert vt.wgpu.memory_reserved() > vt.wgpu.memory_allocated()  # freed, but cached
    dev = _FailingDevice(eng.device, fails=1)
    monkeypatch.setattr(eng, "device", dev)
    x = vt.zeros(5 * MB // 4 + 7, device="wgpu")  # a bucket the pool does not hold
    assert dev.calls == 2  # failed, trimmed, retried
    assert vt.wgpu.memory_reserved() == vt.wgpu.memory_allocated()
    assert float(x.sum()) == 0.0


def test_allocation_failure_after_the_retry_raises(monkeypatch):
    eng = get_engine(0)
    dev = _FailingDevice(eng.device, fails=2)
    monkeypatch.setattr(eng, "device", dev)
    with pytest.raises(vt.OutOfMemoryError, match="cache was emptied and the allocation "
                                                   "retried"):
        vt.zeros(7 * MB // 4 + 3, device="wgpu")
    assert dev.calls == 2
    monkeypatch.undo()
    assert float((vt.ones(3, device="wgpu") * 2).sum()) == 6.0  # the device still works
