"""vt.autocast on cpu against PyTorch CPU autocast: output dtypes per op, values within
bfloat16 tolerance, nesting, decorators, threads, gradients and the parameter cache."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import volta_core as vt
import volta_core.nn.functional as F

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 8)).astype(np.float32)
W = rng.standard_normal((8, 8)).astype(np.float32)
B = rng.standard_normal(8).astype(np.float32)
IMG = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
CW = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
T = np.array([1, 0, 7, 3])
P = (1 / (1 + np.exp(-W[:4]))).astype(np.float32)


def _nnf(m):
    return torch.nn.functional if m is torch else F


def _t(m, a, dtype="float32"):
    if m is torch:
        t = torch.tensor(a)
        return t.to(getattr(torch, dtype)) if a.dtype.kind == "f" else t
    t = vt.tensor(a)
    return t.to(dtype) if a.dtype.kind == "f" else t


def _args(m, low=False):
    """The inputs of every case: float32 (or bfloat16 when ``low``), and the targets."""
    d = "bfloat16" if low else "float32"
    return dict(x=_t(m, X, d), w=_t(m, W), b=_t(m, B), img=_t(m, IMG, d), cw=_t(m, CW),
                t=_t(m, T), p=_t(m, P), xf=_t(m, X), rm=_t(m, np.zeros(3, np.float32)),
                rv=_t(m, np.ones(3, np.float32)), g3=_t(m, np.ones(3, np.float32)))


CASES = {
    "matmul": lambda m, a: a["x"] @ a["w"],
    "mm": lambda m, a: m.mm(a["x"], a["w"]),
    "bmm": lambda m, a: m.bmm(a["x"][None], a["w"][None]),
    "addmm": lambda m, a: m.addmm(a["b"], a["x"], a["w"]),
    "baddbmm": lambda m, a: m.baddbmm(a["x"][None], a["x"][None], a["w"][None]),
    "linear": lambda m, a: _nnf(m).linear(a["x"], a["w"], a["b"]),
    "conv2d": lambda m, a: _nnf(m).conv2d(a["img"], a["cw"], padding=1),
    "conv1d": lambda m, a: _nnf(m).conv1d(a["x"][None], a["w"][:, :4, None]),
    "sdpa": lambda m, a: _nnf(m).scaled_dot_product_attention(a["x"][None], a["xf"][None],
                                                              a["xf"][None]),
    "softmax": lambda m, a: _nnf(m).softmax(a["x"], -1),
    "log_softmax": lambda m, a: _nnf(m).log_softmax(a["x"], -1),
    "layer_norm": lambda m, a: _nnf(m).layer_norm(a["x"], (8,), a["b"], a["b"]),
    "group_norm": lambda m, a: _nnf(m).group_norm(a["img"], 3, a["g3"], a["g3"]),
    "batch_norm": lambda m, a: _nnf(m).batch_norm(a["img"], a["rm"], a["rv"], a["g3"],
                                                  a["g3"], training=True),
    "exp": lambda m, a: a["x"].exp(),
    "sum": lambda m, a: a["x"].sum(),
    "prod": lambda m, a: (a["x"] * 0.1 + 1).prod(),
    "cumsum": lambda m, a: a["x"].cumsum(0),
    "relu": lambda m, a: _nnf(m).relu(a["x"]),
    "cross_entropy": lambda m, a: _nnf(m).cross_entropy(a["x"], a["t"]),
    "nll_loss": lambda m, a: _nnf(m).nll_loss(a["x"], a["t"]),
    "mse_loss": lambda m, a: _nnf(m).mse_loss(a["x"], a["w"][:4]),
    "l1_loss": lambda m, a: _nnf(m).l1_loss(a["x"], a["w"][:4]),
    "smooth_l1_loss": lambda m, a: _nnf(m).smooth_l1_loss(a["x"], a["w"][:4]),
    "huber_loss": lambda m, a: _nnf(m).huber_loss(a["x"], a["w"][:4]),
    "bce_with_logits": lambda m, a: _nnf(m).binary_cross_entropy_with_logits(a["x"], a["p"]),
    "bce": lambda m, a: _nnf(m).binary_cross_entropy(a["x"].sigmoid(), a["p"]),
    "kl_div": lambda m, a: _nnf(m).kl_div(a["x"], a["p"], reduction="batchmean"),
    "cat": lambda m, a: m.cat([a["x"], a["xf"]]),
    "stack": lambda m, a: m.stack([a["xf"], a["x"]]),
    "add_mixed": lambda m, a: a["x"] + a["xf"],
}


def _run(m, name, low):
    a = _args(m, low)
    ctx = torch.autocast("cpu") if m is torch else vt.autocast("cpu")
    with ctx:
        return CASES[name](m, a)


@pytest.mark.parametrize("low", [False, True], ids=["f32-inputs", "bf16-inputs"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_torch_cpu_autocast(name, low):
    ours, ref = _run(vt, name, low), _run(torch, name, low)
    assert ours.dtype.name == str(ref.dtype).removeprefix("torch."), name
    got = np.asarray(ours.float().detach().numpy(), np.float64)
    want = ref.float().detach().numpy().astype(np.float64)
    # bfloat16 keeps 8 bits: products of rounded inputs differ by a few of its ulps
    np.testing.assert_allclose(got, want, rtol=3e-2, atol=3e-2 * max(1, np.abs(want).max()))


def test_defaults_and_queries():
    assert vt.get_autocast_dtype("cpu") is vt.bfloat16
    assert vt.get_autocast_dtype("cuda") is vt.float16
    assert vt.get_autocast_dtype("wgpu") is vt.float16
    assert not vt.is_autocast_enabled("cpu")
    with vt.autocast("cpu", dtype=vt.float16):
        assert vt.is_autocast_enabled("cpu") and not vt.is_autocast_enabled("cuda")
        assert vt.get_autocast_dtype("cpu") is vt.float16
        assert (vt.ones(2, 2) @ vt.ones(2, 2)).dtype is vt.float16
    assert vt.get_autocast_dtype("cpu") is vt.bfloat16
    with pytest.raises(ValueError, match="device_type"):
        vt.autocast("tpu")
    with pytest.raises(TypeError, match="float16"):
        vt.autocast("wgpu", dtype=vt.bfloat16)
    assert vt.amp.autocast is vt.autocast
    with vt.cpu.amp.autocast():
        assert vt.is_autocast_enabled("cpu")
    with vt.cuda.amp.autocast():  # cuda autocast leaves cpu ops alone
        assert vt.is_autocast_enabled("cuda")
        assert (vt.ones(2, 2) @ vt.ones(2, 2)).dtype is vt.float32


def test_nesting_and_disable():
    a = vt.ones(2, 2)
    with vt.autocast("cpu"):
        with vt.autocast("cpu", enabled=False):
            assert not vt.is_autocast_enabled("cpu")
            assert (a @ a).dtype is vt.float32
        assert (a @ a).dtype is vt.bfloat16
    assert (a @ a).dtype is vt.float32


def test_float64_and_integers_are_not_cast():
    with vt.autocast("cpu"):
        assert (vt.ones(2, 2, dtype=vt.float64) @ vt.ones(2, 2, dtype=vt.float64)).dtype \
            is vt.float64
        assert (vt.ones(2, 2, dtype=vt.int64) @ vt.ones(2, 2, dtype=vt.int64)).dtype \
            is vt.int64


def test_decorator_and_generator():
    @vt.autocast("cpu")
    def f(a):
        return a @ a

    def g(a):
        yield a @ a
        yield a @ a

    g = vt.autocast("cpu")(g)
    a = vt.ones(2, 2)
    assert f(a).dtype is vt.bfloat16
    assert [y.dtype for y in g(a)] == [vt.bfloat16, vt.bfloat16]
    assert not vt.is_autocast_enabled("cpu")


def test_per_thread():
    seen = []
    inside, done = threading.Event(), threading.Event()

    def other():
        inside.wait()
        seen.append((vt.is_autocast_enabled("cpu"), (vt.ones(2, 2) @ vt.ones(2, 2)).dtype))
        done.set()

    th = threading.Thread(target=other)
    th.start()
    with vt.autocast("cpu"):
        inside.set()
        done.wait()
    th.join()
    assert seen == [(False, vt.float32)]


def test_gradients_keep_parameter_dtype_and_match_torch():
    lin_v = vt.nn.Linear(8, 4)
    lin_t = torch.nn.Linear(8, 4)
    with torch.no_grad():
        lin_t.weight.copy_(torch.tensor(lin_v.weight.detach().numpy()))
        lin_t.bias.copy_(torch.tensor(lin_v.bias.detach().numpy()))
    for m, lin in ((vt, lin_v), (torch, lin_t)):
        with (vt.autocast("cpu") if m is vt else torch.autocast("cpu")):
            out = lin(_t(m, X))
            loss = _nnf(m).cross_entropy(out, _t(m, T[:4] % 4))
        assert out.dtype.__str__().endswith("bfloat16") and str(loss.dtype).endswith("float32")
        loss.backward()
    assert lin_v.weight.grad.dtype is vt.float32
    np.testing.assert_allclose(lin_v.weight.grad.numpy(), lin_t.weight.grad.numpy(),
                               rtol=3e-2, atol=1e-2)
    np.testing.assert_allclose(lin_v.bias.grad.numpy(), lin_t.bias.grad.numpy(),
                               rtol=3e-2, atol=1e-2)


def test_backward_inside_the_block_is_not_autocast():
    w = vt.tensor(W, requires_grad=True)
    with vt.autocast("cpu"):
        y = (vt.tensor(X) @ w).float().sum()
        y.backward()
    assert w.grad.dtype is vt.float32


def test_parameter_cast_is_cached_within_the_outermost_block():
    w = vt.tensor(W, requires_grad=True)
    from volta_core.amp.state import state

    with vt.autocast("cpu"):
        vt.tensor(X) @ w
        first = state.cache[id(w)][3]
        with vt.autocast("cpu"):
            vt.tensor(X) @ w
            assert state.cache[id(w)][3] is first
    assert state.cache is None
    with vt.autocast("cpu", cache_enabled=False):
        vt.tensor(X) @ w
        assert state.cache is None


def test_transformer_layer_runs_under_autocast():
    layer = vt.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True,
                                          norm_first=True)
    x = vt.randn(2, 5, 16)
    with vt.autocast("cpu"):
        y = layer(x)
        loss = y.float().pow(2).mean()
    loss.backward()
    assert all(p.grad is not None and p.grad.dtype is vt.float32 for p in layer.parameters())


def test_cnn_with_batchnorm_runs_under_autocast():
    net = vt.nn.Sequential(vt.nn.Conv2d(3, 4, 3, padding=1), vt.nn.BatchNorm2d(4),
                           vt.nn.ReLU(), vt.nn.AdaptiveAvgPool2d(1), vt.nn.Flatten(),
                           vt.nn.Linear(4, 3))
    with vt.autocast("cpu"):
        out = net(vt.tensor(IMG))
        loss = F.cross_entropy(out, vt.tensor(np.array([0, 2])))
    assert out.dtype is vt.bfloat16 and loss.dtype is vt.float32
    loss.backward()
    assert net[1].running_mean.dtype is vt.float32
    assert all(p.grad.dtype is vt.float32 for p in net.parameters())
