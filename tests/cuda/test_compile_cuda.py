"""``vt.compile(module, mode="reduce-overhead")`` on CUDA (``volta_core.cuda_compile``): the
module's forward and backward replayed as CUDA graphs, checked against an eager copy of
the same model step by step; and running statistics updated in place under a capture.

Skipped, with the reason, where CUDA is unavailable.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from vt_helpers import to_np as _np

import volta_core as vt
from volta_core import nn

DEV = "cuda"

def _batches(n: int, shape: tuple, classes: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [(vt.tensor(rng.standard_normal(shape, dtype=np.float32), device=DEV),
             vt.tensor(rng.integers(0, classes, shape[0]), device=DEV)) for _ in range(n)]


def _mlp() -> nn.Module:
    vt.manual_seed(0)
    return nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)).to(DEV)


def _cnn() -> nn.Module:
    vt.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Flatten(), nn.Linear(8 * 6 * 6, 4)).to(DEV)


def _train(model: nn.Module, batches: list, opt_cls=vt.optim.Adam) -> list:
    opt = opt_cls(model.parameters(), lr=1e-2)
    lossf = nn.CrossEntropyLoss()
    losses = []
    for x, y in batches:
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return losses


@pytest.mark.parametrize("make,shape,classes", [(_mlp, (16, 20), 5), (_cnn, (8, 3, 6, 6), 4)])
def test_training_matches_eager(make, shape, classes):
    eager = make()
    compiled = vt.compile(copy.deepcopy(eager), mode="reduce-overhead")
    batches = _batches(8, shape, classes)
    want = _train(eager, batches, vt.optim.Adam)
    got = _train(compiled, batches, vt.optim.Adam)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert compiled.forward.graphed.replays == 7  # call 1 eager, call 2 captures and replays
    for (name, a), (_, b) in zip(eager.state_dict().items(), compiled.state_dict().items()):
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-5, atol=1e-6, err_msg=name)


def test_new_shape_captures_again_and_eval_and_no_grad():
    model = _mlp()
    ref = copy.deepcopy(model)
    compiled = vt.compile(model, mode="reduce-overhead")
    for n in (4, 4, 4, 7, 7, 7, 4):
        x = vt.randn(n, 20, device=DEV)
        np.testing.assert_allclose(_np(compiled(x)), _np(ref(x)), rtol=1e-5, atol=1e-6)
    compiled.eval()
    ref.eval()
    with vt.no_grad():
        for _ in range(3):
            x = vt.randn(4, 20, device=DEV)
            out = compiled(x)
            assert not out.requires_grad
            np.testing.assert_allclose(_np(out), _np(ref(x)), rtol=1e-5, atol=1e-6)
    assert compiled.forward.graphed.replays >= 5


def test_outputs_kept_are_not_overwritten_and_inputs_untouched():
    compiled = vt.compile(_mlp(), mode="reduce-overhead")
    xs = [vt.randn(4, 20, device=DEV) for _ in range(5)]
    before = [_np(x) for x in xs]
    with vt.no_grad():
        outs = [compiled(x) for x in xs]
        want = [_np(compiled.forward.graphed.forward(x)) for x in xs]
    for o, w in zip(outs, want):
        np.testing.assert_allclose(_np(o), w, rtol=1e-6)
    for x, b in zip(xs, before):
        np.testing.assert_array_equal(_np(x), b)


def test_two_forwards_before_backward():
    """A forward called again before the previous replay's backward runs eagerly: the
    gradients of both still match eager ones (a siamese use of one module)."""
    eager = _mlp()
    compiled = vt.compile(copy.deepcopy(eager), mode="reduce-overhead")
    for _ in range(4):
        a, b = vt.randn(4, 20, device=DEV), vt.randn(4, 20, device=DEV)
        for m in (eager, compiled):
            m.zero_grad()
            (m(a).square().sum() + 2 * m(b).sum()).backward()
        for pe, pc in zip(eager.parameters(), compiled.parameters()):
            np.testing.assert_allclose(_np(pc.grad), _np(pe.grad), rtol=1e-5, atol=1e-5)


def test_two_shapes_pending_at_once():
    """Two guards' replays before either backward: each capture has its own memory, so
    one's replay cannot overwrite what the other's backward reads."""
    eager = _mlp()
    compiled = vt.compile(copy.deepcopy(eager), mode="reduce-overhead")
    for _ in range(4):
        a, b = vt.randn(4, 20, device=DEV), vt.randn(9, 20, device=DEV)
        for m in (eager, compiled):
            m.zero_grad()
            (m(a).square().sum() + m(b).tanh().sum()).backward()
        for pe, pc in zip(eager.parameters(), compiled.parameters()):
            np.testing.assert_allclose(_np(pc.grad), _np(pe.grad), rtol=1e-5, atol=1e-5)
    assert compiled.forward.graphed.replays == 6


def test_input_gradient_and_accumulation():
    eager = _mlp()
    compiled = vt.compile(copy.deepcopy(eager), mode="reduce-overhead")
    for _ in range(4):
        x = vt.randn(4, 20, device=DEV)
        xe, xc = x.clone().requires_grad_(), x.clone().requires_grad_()
        eager(xe).sum().backward()  # no zero_grad: gradients accumulate
        compiled(xc).sum().backward()
        np.testing.assert_allclose(_np(xc.grad), _np(xe.grad), rtol=1e-5, atol=1e-6)
    for pe, pc in zip(eager.parameters(), compiled.parameters()):
        np.testing.assert_allclose(_np(pc.grad), _np(pe.grad), rtol=1e-5, atol=1e-5)


def test_what_runs_eagerly():
    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x, scale=1.0):
            return self.lin(x) * scale, x.sum()

    m = vt.compile(Pair().to(DEV), mode="reduce-overhead")
    x = vt.randn(2, 3, device=DEV)
    for _ in range(3):
        out, s = m(x, scale=2.0)
    assert m.forward.graphed.replays == 0
    # a forward that reads a value back cannot be captured: eager from then on
    class Reads(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(x) * float(x.sum().item())

    r = vt.compile(Reads().to(DEV), mode="reduce-overhead")
    ref = Reads().to(DEV)
    ref.load_state_dict(r.state_dict())
    for _ in range(4):
        x = vt.randn(2, 3, device=DEV)
        np.testing.assert_allclose(_np(r(x)), _np(ref(x)), rtol=1e-5)
    assert r.forward.graphed.replays == 0


def test_double_backward_refused():
    m = vt.compile(_mlp(), mode="reduce-overhead")
    x = vt.randn(4, 20, device=DEV, requires_grad=True)
    for _ in range(2):
        m(x).sum()  # dropped: no backward awaited
    y = m(x).sum()
    assert m.forward.graphed.replays == 2
    with pytest.raises(vt.VoltaError, match="create_graph"):
        vt.autograd.grad(y, x, create_graph=True)


def test_running_stats_accumulate_in_a_graph():
    """Batch norm's running statistics are written in place during a capture, so each
    replay updates them (they used to be rebound to the graph's memory and stop
    accumulating)."""
    vt.manual_seed(0)
    bn = nn.BatchNorm1d(6).to(DEV)
    ref = copy.deepcopy(bn)
    static = vt.randn(32, 6, device=DEV)
    s = vt.cuda.Stream()
    s.wait_stream(vt.cuda.current_stream())
    with vt.cuda.stream(s):
        for _ in range(2):
            bn(static)
            ref(static)
    vt.cuda.current_stream().wait_stream(s)
    g = vt.cuda.CUDAGraph()
    with vt.cuda.graph(g):
        bn(static)
    for i in range(4):
        static.copy_(vt.randn(32, 6, device=DEV) * (i + 1) + i)
        g.replay()
        ref(static)
        np.testing.assert_allclose(_np(bn.running_mean), _np(ref.running_mean), rtol=1e-5)
        np.testing.assert_allclose(_np(bn.running_var), _np(ref.running_var), rtol=1e-5)
    # the capture runs nothing; each replay counts one batch
    assert int(bn.num_batches_tracked.item()) == int(ref.num_batches_tracked.item())


def test_dropout_draws_new_masks_on_each_replay():
    vt.manual_seed(0)
    m = vt.compile(nn.Sequential(nn.Linear(64, 256), nn.Dropout(0.5)).to(DEV),
                   mode="reduce-overhead")
    x = vt.randn(32, 64, device=DEV)
    masks = [_np(m(x)) != 0 for _ in range(5)]
    assert m.forward.graphed.replays == 4
    for a, b in zip(masks[1:], masks[2:]):  # replays: new masks, about half kept
        assert (a != b).mean() > 0.3
        assert 0.4 < b.mean() < 0.6


def test_a_module_attribute_the_forward_reads_is_guarded():
    class Tempered(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(5, 5)
            self.temperature = 1.0

        def forward(self, x):
            return self.lin(x) / self.temperature

    m = vt.compile(Tempered().to(DEV), mode="reduce-overhead")
    x = vt.randn(3, 5, device=DEV)
    with vt.no_grad():
        base = _np(m.lin(x))
        for t in (1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 0.5):
            m.temperature = t
            np.testing.assert_allclose(_np(m(x)), base / t, rtol=1e-6)
    assert m.forward.graphed.replays == 4  # two replays per value seen three times


class _Tracker(nn.Module):
    """Buffers updated in place by the forward (``mul_``/``add_``); ``indexed``: also
    through an indexed view (``steps[0] += 1``, which copies to the host: no capture)."""

    def __init__(self, indexed: bool = False):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.indexed = indexed
        self.register_buffer("ema", vt.zeros(4))
        self.register_buffer("steps", vt.zeros(2))

    def forward(self, x):
        with vt.no_grad():
            self.ema.mul_(0.9).add_(x.mean(0), alpha=0.1)
            if self.indexed:
                self.steps[0] += 1
            else:
                self.steps.add_(1)
        return self.lin(x)


def test_in_place_buffer_updates_accumulate_across_replays():
    vt.manual_seed(0)
    eager = _Tracker().to(DEV)
    graphed = copy.deepcopy(eager)
    compiled = vt.compile(copy.deepcopy(eager), mode="reduce-overhead")
    static = vt.zeros(3, 4, device=DEV)
    s = vt.cuda.Stream()
    s.wait_stream(vt.cuda.current_stream())
    with vt.cuda.stream(s):
        graphed(static)
    vt.cuda.current_stream().wait_stream(s)
    g = vt.cuda.CUDAGraph()
    with vt.cuda.graph(g):
        graphed(static)
    eager(static)  # as the warm-up (the capture itself runs nothing)
    compiled(static)
    for i in range(5):
        x = vt.randn(3, 4, device=DEV) + i
        static.copy_(x)
        g.replay()
        with vt.no_grad():
            compiled(x)
        eager(x)
    for m in (graphed, compiled):
        np.testing.assert_allclose(_np(m.ema), _np(eager.ema), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(_np(m.steps), _np(eager.steps))
    assert compiled.forward.graphed.replays >= 3


def test_a_forward_the_capture_refuses_runs_eagerly():
    vt.manual_seed(0)
    eager = _Tracker(indexed=True).to(DEV)
    compiled = vt.compile(copy.deepcopy(eager), mode="reduce-overhead")
    for i in range(4):
        x = vt.randn(3, 4, device=DEV) + i
        np.testing.assert_allclose(_np(compiled(x)), _np(eager(x)), rtol=1e-6)
    np.testing.assert_array_equal(_np(compiled.steps), [4, 0])
    assert compiled.forward.graphed.replays == 0
    g = vt.cuda.CUDAGraph()
    with pytest.raises(vt.GraphCaptureError, match="host"), vt.cuda.graph(g):
        eager(x)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_autocast_and_grad_scaler_training_matches_eager(dtype):
    """A CNN with batch norm and dropout trained under CUDA autocast with a GradScaler
    (float16) for 12 steps, switching to eval for a no-grad pass every 4: the compiled
    model's losses, eval outputs, parameters and running statistics follow the eager
    model's (dropout off, so both draw nothing)."""
    def make():
        vt.manual_seed(0)
        return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.0),
                             nn.Linear(8 * 4 * 4, 5)).to(DEV)

    eager, compiled = make(), vt.compile(make(), mode="reduce-overhead")
    rng = np.random.default_rng(1)
    batches = [(vt.tensor(rng.standard_normal((6, 3, 8, 8), dtype=np.float32), device=DEV),
                vt.tensor(rng.integers(0, 5, 6), device=DEV)) for _ in range(12)]
    results = []
    for m in (eager, compiled):
        opt = vt.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
        scaler = vt.amp.GradScaler("cuda", enabled=dtype == "float16")
        losses, evals = [], []
        for i, (x, y) in enumerate(batches):
            m.train()
            opt.zero_grad()
            with vt.autocast("cuda", dtype=getattr(vt, dtype)):
                loss = nn.functional.cross_entropy(m(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            losses.append(float(loss.item()))
            if i % 4 == 3:
                m.eval()
                with vt.no_grad(), vt.autocast("cuda", dtype=getattr(vt, dtype)):
                    evals.append(_np(m(x).float()))
        results.append((losses, evals, [_np(t.float()) for t in m.state_dict().values()]))
    (l_e, ev_e, st_e), (l_c, ev_c, st_c) = results
    np.testing.assert_allclose(l_c, l_e, rtol=1e-3, atol=1e-3)
    for a, b in zip(ev_c + st_c, ev_e + st_e):
        np.testing.assert_allclose(a, b, rtol=2e-2, atol=2e-2)
    assert compiled.forward.graphed.replays >= 9
