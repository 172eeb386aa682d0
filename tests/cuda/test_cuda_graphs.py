"""CUDA graphs and streams (``vt.cuda.CUDAGraph``, ``vt.cuda.graph``,
``vt.cuda.make_graphed_callables``): replays against eager runs of the same work.

Skipped, with the reason, where CUDA is unavailable.
"""

from __future__ import annotations

import numpy as np
import pytest

import volta_core as vt
from volta_core import nn
from volta_core.errors import GraphCaptureError

DEV = "cuda"


def _np(t: vt.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


def _batches(n: int, shape: tuple, classes: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(shape, dtype=np.float32),
             rng.integers(0, classes, shape[0]).astype(np.int64)) for _ in range(n)]


def _warm_up(fn, iters: int = 3) -> None:
    s = vt.cuda.Stream()
    s.wait_stream(vt.cuda.current_stream())
    with vt.cuda.stream(s):
        for _ in range(iters):
            fn()
    vt.cuda.current_stream().wait_stream(s)


def test_replay_reads_new_static_inputs():
    x = vt.zeros(1000, device=DEV)
    _warm_up(lambda: (x * 2 + 1).tanh())
    g = vt.cuda.CUDAGraph()
    with vt.cuda.graph(g):
        y = (x * 2 + 1).tanh()
    for seed in range(3):
        data = np.random.default_rng(seed).standard_normal(1000).astype(np.float32)
        x.copy_(vt.tensor(data, device=DEV))
        g.replay()
        np.testing.assert_allclose(_np(y), np.tanh(data * 2 + 1), rtol=1e-6, atol=1e-6)


def test_eager_allocations_do_not_reuse_graph_memory():
    x = vt.ones(4096, device=DEV)
    _warm_up(lambda: x * 3 - 1)
    g = vt.cuda.CUDAGraph()
    with vt.cuda.graph(g):
        tmp = x * 3
        y = tmp - 1
        del tmp  # freed during the capture: its block stays in the graph's pool
    keep = [vt.full((4096,), 7.0, device=DEV) for _ in range(50)]  # eager allocations
    g.replay()
    vt.cuda.synchronize()
    np.testing.assert_array_equal(_np(y), np.full(4096, 2.0, np.float32))
    assert all(float(k[0].item()) == 7.0 for k in keep)


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def _lenet() -> nn.Module:
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                         nn.Linear(84, 10))


def _eager_and_graphed(eager, graphed, opt_of, batches, warm: int) -> tuple[list, list]:
    """Losses of ``graphed`` trained on ``batches`` (inputs, targets) with its first
    ``warm`` steps eager on a side stream and the rest as replays of one captured step,
    and of ``eager`` trained eagerly on the same batches."""
    lossf = nn.CrossEntropyLoss()
    opt_e, opt_g = opt_of(eager.parameters()), opt_of(graphed.parameters())
    eager_losses = []
    for xs, ys in batches:
        opt_e.zero_grad()
        loss = lossf(eager(vt.tensor(xs, device=DEV)), vt.tensor(ys, device=DEV))
        loss.backward()
        opt_e.step()
        eager_losses.append(float(loss.item()))

    static_x = vt.tensor(batches[0][0], device=DEV)
    static_y = vt.tensor(batches[0][1], device=DEV)
    losses = []
    s = vt.cuda.Stream()
    s.wait_stream(vt.cuda.current_stream())
    with vt.cuda.stream(s):  # warm-up, optimizer state created
        for xs, ys in batches[:warm]:
            static_x.copy_(vt.tensor(xs, device=DEV))
            static_y.copy_(vt.tensor(ys, device=DEV))
            opt_g.zero_grad(set_to_none=True)
            loss = lossf(graphed(static_x), static_y)
            loss.backward()
            opt_g.step()
            losses.append(float(loss.item()))
    vt.cuda.current_stream().wait_stream(s)
    g = vt.cuda.CUDAGraph()
    opt_g.zero_grad(set_to_none=True)
    with vt.cuda.graph(g):
        static_loss = lossf(graphed(static_x), static_y)
        static_loss.backward()
        opt_g.step()
    for xs, ys in batches[warm:]:
        static_x.copy_(vt.tensor(xs, device=DEV))
        static_y.copy_(vt.tensor(ys, device=DEV))
        g.replay()
        losses.append(float(static_loss.item()))
    return losses, eager_losses


@pytest.mark.parametrize("case", ["mlp_adam", "mlp_adamw", "lenet_sgd"])
def test_whole_training_step_replays_like_eager(case):
    make, shape, opt_of = {
        "mlp_adam": (_mlp, (32, 64),
                     lambda ps: vt.optim.Adam(ps, lr=1e-2, capturable=True)),
        "mlp_adamw": (_mlp, (32, 64),
                      lambda ps: vt.optim.AdamW(ps, lr=1e-2, weight_decay=0.1,
                                                capturable=True)),
        "lenet_sgd": (_lenet, (16, 1, 28, 28),
                      lambda ps: vt.optim.SGD(ps, lr=0.05, momentum=0.9)),
    }[case]
    vt.manual_seed(0)
    eager = make().to(DEV)
    vt.manual_seed(0)
    graphed = make().to(DEV)
    losses, eager_losses = _eager_and_graphed(eager, graphed, opt_of, _batches(8, shape, 10),
                                              warm=3)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-4, atol=1e-5)
    for pe, pg in zip(eager.parameters(), graphed.parameters()):
        np.testing.assert_allclose(_np(pg), _np(pe), rtol=1e-4, atol=1e-5)


def test_item_during_capture_is_a_clear_error():
    x = vt.ones(8, device=DEV)
    _warm_up(lambda: (x * 2).sum())
    g = vt.cuda.CUDAGraph()
    with pytest.raises(GraphCaptureError, match="capture"):
        with vt.cuda.graph(g):
            (x * 2).sum().item()
    # the device works normally afterwards, and a new capture succeeds
    assert float((x * 2).sum().item()) == 16.0
    g2 = vt.cuda.CUDAGraph()
    with vt.cuda.graph(g2):
        y = x * 5
    g2.replay()
    np.testing.assert_array_equal(_np(y), np.full(8, 5.0, np.float32))


def test_synchronize_during_capture_is_a_clear_error():
    x = vt.ones(8, device=DEV)
    g = vt.cuda.CUDAGraph()
    with pytest.raises(GraphCaptureError, match="synchronize"):
        with vt.cuda.graph(g):
            _ = x + 1
            vt.cuda.synchronize()


def test_host_data_upload_during_capture_is_a_clear_error():
    x = vt.ones(4, device=DEV)
    g = vt.cuda.CUDAGraph()
    with pytest.raises(GraphCaptureError, match="capture"):
        with vt.cuda.graph(g):
            _ = x + vt.tensor(np.arange(4.0, dtype=np.float32), device=DEV)
    y = x + vt.tensor(np.arange(4.0, dtype=np.float32), device=DEV)  # fine after it
    np.testing.assert_array_equal(_np(y), [1.0, 2.0, 3.0, 4.0])


def test_adam_without_capturable_refuses_capture():
    model = nn.Linear(4, 2).to(DEV)
    opt = vt.optim.Adam(model.parameters())
    x = vt.ones(3, 4, device=DEV)
    model(x).sum().backward()
    opt.step()
    g = vt.cuda.CUDAGraph()
    with pytest.raises(GraphCaptureError, match="capturable"):
        with vt.cuda.graph(g):
            model(x).sum().backward()
            opt.step()


def test_capture_on_default_stream_is_refused():
    g = vt.cuda.CUDAGraph()
    with pytest.raises(GraphCaptureError, match="default stream"):
        g.capture_begin()
    with pytest.raises(GraphCaptureError, match="nothing captured"):
        g.replay()


def test_graphs_sharing_a_pool_replay_in_order():
    pool = vt.cuda.graph_pool_handle()
    x = vt.ones(256, device=DEV)
    g1, g2 = vt.cuda.CUDAGraph(), vt.cuda.CUDAGraph()
    with vt.cuda.graph(g1, pool=pool):
        a = x + 1
    with vt.cuda.graph(g2, pool=g1.pool()):
        b = a * 3
    x.copy_(vt.full((256,), 2.0, device=DEV))
    g1.replay()
    g2.replay()
    np.testing.assert_array_equal(_np(b), np.full(256, 9.0, np.float32))


def test_make_graphed_callables_matches_eager_gradients():
    vt.manual_seed(1)
    ref = _mlp().to(DEV)
    vt.manual_seed(1)
    model = _mlp().to(DEV)
    sample = vt.randn(32, 64, device=DEV, requires_grad=True)
    model = vt.cuda.make_graphed_callables(model, (sample,))
    for seed in range(3):
        data = np.random.default_rng(seed).standard_normal((32, 64)).astype(np.float32)
        xr = vt.tensor(data, device=DEV, requires_grad=True)
        xg = vt.tensor(data, device=DEV, requires_grad=True)
        out_r, out_g = ref(xr), model(xg)
        np.testing.assert_allclose(_np(out_g), _np(out_r), rtol=1e-5, atol=1e-5)
        (out_r ** 2).sum().backward()
        (out_g ** 2).sum().backward()
        np.testing.assert_allclose(_np(xg.grad), _np(xr.grad), rtol=1e-4, atol=1e-5)
    for pr, pg in zip(ref.parameters(), model.parameters()):  # accumulated over 3 calls
        np.testing.assert_allclose(_np(pg.grad), _np(pr.grad), rtol=1e-4, atol=1e-4)


def test_streams_order_work_and_nest():
    s = vt.cuda.Stream()
    assert vt.cuda.current_stream() == vt.cuda.default_stream()
    x = vt.ones(1 << 16, device=DEV)
    s.wait_stream(vt.cuda.current_stream())
    with vt.cuda.stream(s):
        assert vt.cuda.current_stream() == s
        y = (x * 4).sum()
    assert vt.cuda.current_stream() != s
    vt.cuda.current_stream().wait_stream(s)
    assert float(y.item()) == 4.0 * (1 << 16)
    s.synchronize()
    assert s.query()
    assert not vt.cuda.is_current_stream_capturing()


@pytest.mark.parametrize("make_opt", [
    lambda ps: vt.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True),
    lambda ps: vt.optim.SGD(ps, lr=0.1, maximize=True),
    lambda ps: vt.optim.Adam(ps, lr=1e-2, weight_decay=0.1),
    lambda ps: vt.optim.AdamW(ps, lr=1e-2, weight_decay=0.1, maximize=True),
], ids=["sgd_nesterov", "sgd_plain", "adam", "adamw"])
def test_multi_tensor_optimizer_steps_match_cpu(make_opt):
    # after the first step every group goes through one multi-tensor launch on cuda
    vt.manual_seed(3)
    cpu = _mlp().double()
    gpu = _mlp().double().to(DEV)
    gpu.load_state_dict({k: v.to(DEV) for k, v in cpu.state_dict().items()})
    opt_c, opt_g = make_opt(cpu.parameters()), make_opt(gpu.parameters())
    for xs, ys in _batches(4, (16, 64), 10, seed=5):
        for model, opt, dev in ((cpu, opt_c, "cpu"), (gpu, opt_g, DEV)):
            opt.zero_grad()
            x = vt.tensor(xs.astype(np.float64), device=dev)
            nn.functional.cross_entropy(model(x), vt.tensor(ys, device=dev)).backward()
            opt.step()
    for pc, pg in zip(cpu.parameters(), gpu.parameters()):
        np.testing.assert_allclose(_np(pg), _np(pc), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("make_opt", [
    lambda ps: vt.optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: vt.optim.AdamW(ps, lr=1e-2, weight_decay=0.1),
], ids=["sgd", "adamw"])
def test_multi_tensor_steps_of_more_parameters_than_one_launch_takes(make_opt):
    # 200 parameters: the address table goes out in launches of 96 rows
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(int(n)) for n in rng.integers(1, 300, 200)]
    steps = [[rng.standard_normal(v.shape) for v in values] for _ in range(3)]
    params = {dev: [vt.tensor(v, device=dev, requires_grad=True) for v in values]
              for dev in ("cpu", DEV)}
    for dev, ps in params.items():
        opt = make_opt(ps)
        for grads in steps:
            for p, g in zip(ps, grads):
                p.grad = vt.tensor(g, device=dev)
            opt.step()
    for pc, pg in zip(params["cpu"], params[DEV]):
        np.testing.assert_allclose(_np(pg), _np(pc), rtol=1e-9, atol=1e-12)


def test_bfloat16_autocast_step_replays_like_eager():
    if not vt.cuda.is_bf16_supported():
        pytest.skip("no bfloat16 on this CUDA backend")
    batches = _batches(6, (32, 64), 10, seed=7)
    lossf = nn.CrossEntropyLoss()
    models, opts = [], []
    for _ in range(2):
        vt.manual_seed(4)
        m = _mlp().to(DEV)
        models.append(m)
        opts.append(vt.optim.SGD(m.parameters(), lr=0.05, momentum=0.9))

    def step(model, opt, x, y):
        opt.zero_grad(set_to_none=True)
        with vt.autocast("cuda", dtype=vt.bfloat16):
            loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        return loss

    eager = [float(step(models[0], opts[0], vt.tensor(xs, device=DEV),
                        vt.tensor(ys, device=DEV)).item()) for xs, ys in batches]
    static_x = vt.tensor(batches[0][0], device=DEV)
    static_y = vt.tensor(batches[0][1], device=DEV)
    losses = []
    s = vt.cuda.Stream()
    s.wait_stream(vt.cuda.current_stream())
    with vt.cuda.stream(s):
        for xs, ys in batches[:2]:
            static_x.copy_(vt.tensor(xs, device=DEV))
            static_y.copy_(vt.tensor(ys, device=DEV))
            losses.append(float(step(models[1], opts[1], static_x, static_y).item()))
    vt.cuda.current_stream().wait_stream(s)
    g = vt.cuda.CUDAGraph()
    opts[1].zero_grad(set_to_none=True)
    with vt.cuda.graph(g):
        static_loss = step(models[1], opts[1], static_x, static_y)
    for xs, ys in batches[2:]:
        static_x.copy_(vt.tensor(xs, device=DEV))
        static_y.copy_(vt.tensor(ys, device=DEV))
        g.replay()
        losses.append(float(static_loss.item()))
    np.testing.assert_allclose(losses, eager, rtol=2e-2, atol=1e-3)


class _LSTMLM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb, self.lstm, self.head = nn.Embedding(20, 16), nn.LSTM(16, 32), nn.Linear(32, 20)

    def forward(self, tokens):
        out, _ = self.lstm(self.emb(tokens))
        return self.head(out).reshape(-1, 20)


def test_lstm_training_step_replays_like_eager():
    # the fused LSTM joins one array per time step: during a capture that must not go
    # through CuPy's pinned-memory table of addresses
    rng = np.random.default_rng(0)
    data = [(rng.integers(0, 20, (12, 4)), rng.integers(0, 20, (48,))) for _ in range(6)]
    vt.manual_seed(0)
    eager = _LSTMLM().to(DEV)
    vt.manual_seed(0)
    graphed = _LSTMLM().to(DEV)
    got, want = _eager_and_graphed(eager, graphed, lambda ps: vt.optim.SGD(ps, lr=0.1),
                                   data, warm=2)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
