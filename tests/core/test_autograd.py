"""The autograd engine: ordering, accumulation, graph freeing, higher order, hooks, memory."""

import gc
import math
import tracemalloc
import weakref

import numpy as np
import pytest
from vt_helpers import assert_close, rand

import volta_core as vt
from volta_core.autograd import Function
from volta_core.errors import AutogradError


def test_long_chain_backpropagates_without_recursion():
    x = vt.tensor([1.0, 2.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


class CountingExp(Function):
    calls = 0

    def forward(ctx, x):
        y = ctx.xp.exp(x)
        ctx.save_for_backward(y)
        return y

    def backward(ctx, g):
        CountingExp.calls += 1
        (y,) = ctx.saved_tensors
        return g * y


def test_each_node_called_once_and_reused_tensors_sum_gradients():
    x = vt.tensor([0.5, -1.0], dtype="float64", requires_grad=True)
    e = CountingExp.apply(x)
    CountingExp.calls = 0
    out = (e * e + e * 3 + e).sum()  # e used four times
    out.backward()
    assert CountingExp.calls == 1
    ex = np.exp([0.5, -1.0])
    assert_close(x.grad, (2 * ex + 3 + 1) * ex, rtol=1e-12)


def test_grad_accumulates_across_backward_calls():
    x = vt.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]


def test_backward_through_freed_graph_raises_and_retain_graph_allows_it():
    x = vt.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp().sum()
    y.backward(retain_graph=True)
    y.backward()
    assert_close(x.grad, 2 * np.exp([1.0, 2.0]).astype(np.float32), rtol=1e-6)
    with pytest.raises(AutogradError, match="backward through the graph a second time"):
        y.backward()


def test_backward_needs_gradient_for_non_scalar_and_checks_its_shape():
    x = vt.ones(2, 3, requires_grad=True)
    with pytest.raises(AutogradError, match="only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(ValueError, match="does not match output shape"):
        (x * 2).backward(vt.ones(3))
    (x * 2).backward(vt.full((2, 3), 0.5))
    assert x.grad.tolist() == [[1.0] * 3] * 2


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(AutogradError, match="does not require grad"):
        vt.ones(2).sum().backward()


def test_second_derivative_of_cube():
    x = vt.tensor(1.5, dtype="float64", requires_grad=True)
    (g,) = vt.autograd.grad(x ** 3, x, create_graph=True)
    assert g.item() == pytest.approx(3 * 1.5 ** 2)
    (g2,) = vt.autograd.grad(g, x)
    assert g2.item() == pytest.approx(6 * 1.5)


def test_second_derivative_of_tanh():
    x = vt.tensor([-0.7, 0.2, 1.3], dtype="float64", requires_grad=True)
    (g,) = vt.autograd.grad(x.tanh().sum(), x, create_graph=True)
    t = np.tanh([-0.7, 0.2, 1.3])
    assert_close(g, 1 - t ** 2, rtol=1e-12)
    g.sum().backward()
    assert_close(x.grad, -2 * t * (1 - t ** 2), rtol=1e-12)


def test_third_derivative_through_backward_with_create_graph():
    x = vt.tensor(0.3, dtype="float64", requires_grad=True)
    y = x.sin()
    (d1,) = vt.autograd.grad(y, x, create_graph=True)
    (d2,) = vt.autograd.grad(d1, x, create_graph=True)
    (d3,) = vt.autograd.grad(d2, x)
    assert (d1.item(), d2.item(), d3.item()) == pytest.approx(
        (math.cos(0.3), -math.sin(0.3), -math.cos(0.3)))


def test_gradgradcheck_of_composite():
    x = vt.tensor(rand(3, seed=1), requires_grad=True)
    w = vt.tensor(rand(3, 2, seed=2), requires_grad=True)
    assert vt.autograd.gradgradcheck(lambda a, b: (a @ b).tanh() * a.sum(), (x, w))


def test_autograd_grad_options():
    x = vt.tensor([1.0, 2.0], requires_grad=True)
    z = vt.tensor([3.0], requires_grad=True)
    y = (x * x).sum()
    with pytest.raises(AutogradError, match="not used"):
        vt.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = vt.autograd.grad(y, [x, z], allow_unused=True)
    assert gx.tolist() == [2.0, 4.0] and gz is None
    assert x.grad is None  # grad() does not touch .grad
    h = x * 3
    out = (h * h).sum()
    (gh,) = vt.autograd.grad(out, h, grad_outputs=vt.tensor(2.0))
    assert gh.tolist() == [12.0, 24.0]


def test_no_grad_and_enable_grad():
    x = vt.ones(2, requires_grad=True)
    with vt.no_grad():
        y = x * 2
        assert not y.requires_grad and y.grad_fn is None
        with vt.enable_grad():
            assert (x * 2).requires_grad
    assert (x * 2).requires_grad

    @vt.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad
    with vt.set_grad_enabled(False):
        assert not vt.is_grad_enabled()
    assert vt.is_grad_enabled()


def test_detach_and_requires_grad_():
    x = vt.ones(2, requires_grad=True)
    d = (x * 2).detach()
    assert not d.requires_grad and d.is_leaf
    y = vt.ones(2)
    assert y.requires_grad_() is y and y.requires_grad
    with pytest.raises(AutogradError, match="only floating-point"):
        vt.tensor([1, 2]).requires_grad_()
    assert x.is_leaf and not (x * 2).is_leaf


def test_hooks_on_leaves_and_intermediates():
    x = vt.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(("x", g.tolist())))
    h = x * 3
    remove = h.register_hook(lambda g: g * 10)  # replaces the gradient flowing on
    h.retain_grad()
    h.sum().backward()
    assert x.grad.tolist() == [30.0, 30.0]
    assert h.grad.tolist() == [10.0, 10.0]
    assert seen == [("x", [30.0, 30.0])]
    remove()
    x.grad = None
    h2 = x * 3
    h2.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_retained_grad_is_a_copy_and_accumulates_as_pytorchs():
    torch = pytest.importorskip("torch")
    grads = {}
    for lib in (vt, torch):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        h = x * 2
        h.retain_grad()
        y = h * 1  # mul by 1 hands h's incoming gradient on unchanged
        y.retain_grad()
        (y * y).sum().backward(retain_graph=True)
        first = h.grad.clone()
        y.grad.add_(100.0)  # the retained gradients do not share memory
        (y * y).sum().backward()
        grads[lib.__name__] = (first.tolist(), h.grad.tolist(), y.grad.tolist())
    assert grads["volta_core"] == grads["torch"]


def test_memory_stays_flat_over_10000_training_iterations():
    w = vt.randn(8, 8, requires_grad=True)
    x = vt.randn(4, 8)
    graphs = []

    def step(keep_ref: bool):
        loss = ((x @ w).tanh() ** 2).mean()
        if keep_ref:
            graphs.append(weakref.ref(loss.grad_fn))
        loss.backward()
        with vt.no_grad():
            w.array = w.array - 0.01 * w.grad.array
        w.grad = None

    for _ in range(200):  # warm-up: caches, interned devices
        step(False)
    gc.collect()
    objects_before = len(gc.get_objects())
    for i in range(9_000):
        step(i % 100 == 0)
    tracemalloc.start()  # traced over the last 1,000 (tracing slows every allocation)
    base = tracemalloc.get_traced_memory()[0]
    for _ in range(1_000):
        step(False)
    grown = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    gc.collect()
    assert sum(r() is not None for r in graphs) == 0, "graphs kept alive after backward"
    assert len(gc.get_objects()) - objects_before < 200, "objects accumulate per iteration"
    assert grown < 64 * 1024, f"memory grew by {grown} bytes over 1,000 iterations"


def test_graph_is_freed_by_refcounting_without_gc():
    gc.disable()
    try:
        x = vt.ones(4, requires_grad=True)
        y = (x.exp() * 2).sum()
        ref = weakref.ref(y.grad_fn)
        y.backward()
        del y
        assert ref() is None
    finally:
        gc.enable()


def test_to_dot_names_ops_shapes_dtypes_devices(tmp_path):
    w = vt.randn(3, 2, requires_grad=True)
    x = vt.randn(4, 3)
    dot = vt.autograd.to_dot(((x @ w).tanh()).sum(), {"w": w})
    assert dot.startswith("digraph autograd {")
    assert 'label="Matmul\\n(4, 2) float32 cpu"' in dot
    assert 'label="Tanh\\n(4, 2) float32 cpu"' in dot
    assert 'label="w\\n(3, 2) float32 cpu"' in dot
    assert dot.count("->") == 3
    out = vt.autograd.render_dot(dot, tmp_path / "graph.svg")
    assert out.exists() and out.suffix in (".svg", ".dot")


def test_post_accumulate_hook_fires_as_soon_as_a_leaf_gradient_is_final():
    w1 = vt.ones(2, requires_grad=True)
    w2 = vt.ones(2, requires_grad=True)
    events = []
    w2.register_post_accumulate_grad_hook(lambda t: events.append(("w2", t.grad.tolist())))
    w1.register_post_accumulate_grad_hook(lambda t: events.append(("w1", t.grad.tolist())))

    class Spy(Function):  # records when backward reaches the first layer
        def forward(ctx, x):
            return x

        def backward(ctx, g):
            events.append(("first-layer backward",))
            return g

    h = Spy.apply(w1 * 2)
    loss = ((h * w2) * 3).sum()
    loss.backward()
    # w2's gradient is final before backward reaches the first layer
    assert events[0] == ("w2", [6.0, 6.0])
    assert events[1] == ("first-layer backward",)
    assert events[2] == ("w1", [6.0, 6.0])


def test_leaf_hooks_run_after_a_nodes_other_gradients_are_released():
    """FSDP and DDP reduce inside post-accumulate hooks: a weight gradient the hooks have
    taken must not be kept alive by the engine while the bias's hook runs."""
    x, w, b = (vt.randn(*s, requires_grad=True) for s in ((4, 3), (5, 3), (5,)))
    seen = {}

    def take(p):
        seen["w"] = weakref.ref(p.grad.array)
        p.grad = None  # as FSDP does once the gradient is in its flat buffer

    def check(p):
        seen["alive"] = seen["w"]() is not None

    w.register_post_accumulate_grad_hook(take)
    b.register_post_accumulate_grad_hook(check)
    vt.nn.functional.linear(x, w, b).sum().backward()
    assert seen == {"w": seen["w"], "alive": False}


@pytest.mark.parametrize("case", ["shared", "caller", "sum"])
def test_leaf_grad_is_its_own_tensor(case):
    # as PyTorch's AccumulateGrad: x.grad aliases neither the caller's gradient, nor the
    # gradient another leaf got, nor an expanded view; an in-place change stays in x.grad
    torch = pytest.importorskip("torch")
    results = []
    for m in (vt, torch):
        x = m.zeros(3, requires_grad=True)
        y = m.zeros(3, requires_grad=True)
        v = m.ones(3)
        if case == "shared":
            (x + y).backward(v)
        elif case == "caller":
            x.backward(v)
        else:
            x.sum().backward()
        with m.no_grad():
            x.grad.add_(1.0)
        results.append((x.grad.tolist(), v.tolist(),
                        None if y.grad is None else y.grad.tolist(), x.grad.stride()))
    assert results[0] == results[1]
