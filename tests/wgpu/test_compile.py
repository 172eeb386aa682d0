"""``vt.compile`` on wgpu: calls run with the lazy engine on (fewer dispatches, eager's
results bit for bit), the previous mode comes back after, and Modules stay themselves."""

from __future__ import annotations

import copy
import pickle

import pytest

import volta_core as vt


class _Net(vt.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = vt.nn.Linear(8, 16)
        self.b = vt.nn.Linear(16, 4)
        self.seen: list[bool] = []

    def forward(self, x):
        self.seen.append(vt.wgpu.is_lazy())
        h = vt.nn.functional.gelu(self.a(x)) * 0.5 + 0.25
        return self.b(vt.tanh(h) * h).softmax(-1)


@pytest.fixture
def eager_mode(xp):
    was = vt.wgpu.is_lazy()
    vt.wgpu.set_lazy(False)
    yield
    vt.wgpu.set_lazy(was)


def _run(model, x):
    from volta_wgpu.engine import get_engine
    eng = get_engine()
    vt.wgpu.synchronize()
    d0 = eng.dispatch_count
    out = model(x)
    loss = (out * out).sum()
    loss.backward()
    vals = out.tolist(), [p.grad.tolist() for p in model.parameters()]
    return vals, eng.dispatch_count - d0


def test_compiled_module_runs_lazily_and_matches_eager(eager_mode, monkeypatch):
    monkeypatch.delenv("VOLTA_WGPU_EAGER", raising=False)
    vt.manual_seed(0)
    net = _Net().to("wgpu")
    x = vt.randn(5, 8, device="wgpu")
    eager, n_eager = _run(net, x)
    net.zero_grad()
    assert vt.compile(net) is net
    assert vt.compile(net) is net  # twice: wrapped once
    fused, n_lazy = _run(net, x)
    assert fused == eager
    assert n_lazy < n_eager
    assert net.seen == [False, True]
    assert vt.wgpu.is_lazy() is False  # restored after the call
    assert list(net.state_dict()) == ["a.weight", "a.bias", "b.weight", "b.bias"]
    for other in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        other.seen.clear()
        assert other(x).tolist() == eager[0]
        assert other.seen == [True]


def test_compiled_function_and_decorator(eager_mode, monkeypatch):
    monkeypatch.delenv("VOLTA_WGPU_EAGER", raising=False)
    seen = []

    @vt.compile(mode="reduce-overhead")
    def f(t):
        """Doc."""
        seen.append(vt.wgpu.is_lazy())
        return vt.exp(t) * 2.0 - 1.0

    t = vt.linspace(-2, 2, 7, device="wgpu")
    assert f.__doc__ == "Doc." and f.__name__ == "f"
    assert f(t).tolist() == (vt.exp(t) * 2.0 - 1.0).tolist()
    assert seen == [True] and not vt.wgpu.is_lazy()
    assert vt.compile(f, disable=True) is f


def test_eager_switch_wins(eager_mode, monkeypatch):
    monkeypatch.setenv("VOLTA_WGPU_EAGER", "1")
    seen = []
    g = vt.compile(lambda t: seen.append(vt.wgpu.is_lazy()) or t + 1)
    g(vt.ones(2, device="wgpu"))
    assert seen == [False]


def test_cpu_is_a_passthrough():
    net = vt.nn.Linear(3, 2)
    assert vt.compile(net) is net
    x = vt.ones(4, 3)
    assert vt.compile(lambda t: t * 2)(x).tolist() == (x * 2).tolist()
    assert net(x).shape == (4, 2)
