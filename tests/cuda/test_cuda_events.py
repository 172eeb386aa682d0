"""``vt.cuda.Event`` (timing and ordering GPU work, ``Stream.record_event``/``wait_event``),
``vt.cuda.get_device_properties``/``get_device_capability`` and the memory queries
(``mem_get_info``, ``memory_stats``, the pool's cap), against PyTorch's when it has CUDA.
Skipped, with the reason, where CUDA is unavailable."""

from __future__ import annotations

import pytest

import volta_core as vt


def test_events_time_gpu_work():
    x = vt.randn(2048, 2048, device="cuda")
    start, end = vt.cuda.Event(enable_timing=True), vt.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        x = x @ x / 2048
    end.record()
    end.synchronize()
    assert end.query() and start.query()
    ms = start.elapsed_time(end)
    assert 0.0 < ms < 10_000.0
    with pytest.raises(ValueError, match="enable_timing"):
        vt.cuda.Event().elapsed_time(end)
    with pytest.raises(ValueError, match="interprocess"):
        vt.cuda.Event(interprocess=True)


def test_events_order_streams():
    """Work on a side stream waits for an event recorded after a write on the main one."""
    x = vt.zeros(1 << 20, device="cuda")
    side = vt.cuda.Stream()
    x.add_(1.0)
    done = vt.cuda.current_stream().record_event()
    side.wait_event(done)
    with vt.cuda.stream(side):
        y = x * 2
    ev = side.record_event(vt.cuda.Event(blocking=True))
    ev.wait()  # the current stream waits for the side stream's product
    ev.synchronize()
    assert float(y.sum()) == 2.0 * (1 << 20)


def test_device_properties_match_pytorch():
    props = vt.cuda.get_device_properties(0)
    assert props.name == vt.cuda.get_device_name(0)
    assert props.total_memory > 0 and props.multi_processor_count > 0
    assert vt.cuda.get_device_capability() == (props.major, props.minor)
    assert "_DeviceProperties(name=" in repr(props)
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA here")
    want = torch.cuda.get_device_properties(0)
    assert (props.name, props.major, props.minor, props.total_memory,
            props.multi_processor_count) == (want.name, want.major, want.minor,
                                             want.total_memory, want.multi_processor_count)
    assert vt.cuda.get_device_capability(0) == torch.cuda.get_device_capability(0)


def test_memory_queries_and_cap():
    """mem_get_info, memory_stats/summary and set_per_process_memory_fraction: a capped
    pool refuses an allocation beyond the cap with vt.cuda.OutOfMemoryError."""
    free, total = vt.cuda.mem_get_info()
    assert 0 < free <= total == vt.cuda.get_device_properties().total_memory
    x = vt.zeros(1 << 20, device="cuda")
    stats = vt.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == vt.cuda.memory_allocated() >= x.numel() * 4
    assert stats["allocated_bytes.all.peak"] >= stats["allocated_bytes.all.current"]
    assert "Allocated memory" in vt.cuda.memory_summary()
    vt.cuda.reset_max_memory_allocated()
    assert vt.cuda.max_memory_allocated() == vt.cuda.memory_allocated()
    try:
        vt.cuda.set_per_process_memory_fraction(0.001)
        with pytest.raises(vt.cuda.OutOfMemoryError, match="out of memory"):
            vt.empty(int(total * 0.002) // 4, device="cuda")
    finally:
        vt.cuda.set_per_process_memory_fraction(1.0)
    with pytest.raises(ValueError, match="fraction"):
        vt.cuda.set_per_process_memory_fraction(1.5)
    assert vt.cuda.is_initialized() and len(vt.cuda.get_rng_state_all()) == vt.cuda.device_count()
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        assert torch.cuda.mem_get_info()[1] == total
