"""Threads: per-thread grad mode, and two threads training at once get what each gets alone."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from vt_helpers import run_threads

import volta_core as vt
from volta_core import nn


def _unavailable(device_type: str) -> str | None:
    from volta_core.backend.registry import backends
    rows = [b for b in backends() if b.device_type == device_type]
    return rows[0].reason if rows else f"no backend serves {device_type!r}"


def _on(device_type: str):
    reason = _unavailable(device_type)
    return pytest.param(device_type, marks=pytest.mark.skipif(
        reason is not None, reason=f"{device_type} unavailable: {reason}"))


DEVICES = ["cpu", _on("wgpu"), _on("cuda")]
STEPS = 500


def _make(seed: int, device: str):
    """A small MLP with its optimiser and fixed data, all from ``seed``."""
    rng = np.random.default_rng(seed)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    with vt.no_grad():  # explicit weights: no shared random generator involved
        for p in model.parameters():
            p.copy_(vt.tensor(rng.normal(scale=0.5, size=p.shape).astype(np.float32)))
    model = model.to(device)
    opt = (vt.optim.Adam(model.parameters(), lr=1e-2) if seed % 2 else
           vt.optim.SGD(model.parameters(), lr=0.05, momentum=0.9))
    x = vt.tensor(rng.normal(size=(32, 6)).astype(np.float32), device=device)
    y = vt.tensor(rng.normal(size=(32, 3)).astype(np.float32), device=device)
    return model, opt, x, y


def _train(model, opt, x, y, steps: int = STEPS) -> list[np.ndarray]:
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    return [p.detach().cpu().numpy() for p in model.parameters()]


@pytest.mark.parametrize("device", DEVICES)
def test_two_threads_train_as_each_alone(device):
    seeds = (1, 2)  # one Adam, one SGD with momentum
    alone = [_train(*_make(s, device)) for s in seeds]

    setups = [_make(s, device) for s in seeds]  # built before the threads start
    got: dict[int, list] = {}
    start = threading.Barrier(len(seeds))

    def run(i: int) -> None:
        start.wait()
        got[i] = _train(*setups[i])

    run_threads(run, [(i,) for i in range(len(seeds))])
    for i in range(len(seeds)):
        for a, b in zip(alone[i], got[i]):
            np.testing.assert_array_equal(a, b)  # bit-identical


def test_no_grad_in_one_thread_does_not_stop_recording_in_another():
    entered, recorded = threading.Event(), threading.Event()
    seen: dict[str, object] = {}

    def other() -> None:
        with vt.no_grad():
            entered.set()
            recorded.wait(10)
            seen["other_enabled"] = vt.is_grad_enabled()

    t = threading.Thread(target=other)
    t.start()
    assert entered.wait(10)
    # the other thread is inside no_grad now: this thread still records
    w = vt.ones(3, requires_grad=True)
    y = (w * 2).sum()
    seen["main_enabled"] = vt.is_grad_enabled()
    recorded.set()
    t.join()
    assert seen == {"main_enabled": True, "other_enabled": False}
    assert y.requires_grad
    y.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0, 2.0])


def test_overlapping_no_grad_blocks_leave_grad_mode_on():
    # A enters, B enters, A exits, B exits: with one global flag saved/restored per
    # block, B would restore "off" and leave grad mode off for everyone
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    after: dict[str, bool] = {}

    def a() -> None:
        with vt.no_grad():
            a_in.set()
            b_in.wait(10)
        a_out.set()
        after["a"] = vt.is_grad_enabled()

    def b() -> None:
        a_in.wait(10)
        with vt.no_grad():
            b_in.set()
            a_out.wait(10)
        after["b"] = vt.is_grad_enabled()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert after == {"a": True, "b": True}
    assert vt.is_grad_enabled()
    assert (vt.ones(2, requires_grad=True) * 3).requires_grad
