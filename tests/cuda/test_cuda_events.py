"""``vt.cuda.Event`` (timing and ordering GPU work, ``Stream.record_event``/``wait_event``)
and ``vt.cuda.get_device_properties``/``get_device_capability``, against PyTorch's when it
has CUDA. Skipped, with the reason, where CUDA is unavailable."""

from __future__ import annotations

import pytest

import volta_core as vt

_rows = {b.name: b for b in vt.backends()}
pytestmark = pytest.mark.skipif(
    not _rows["cupy"].available, reason=f"CUDA backend unavailable: {_rows['cupy'].reason}")


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
