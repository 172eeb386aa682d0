"""bfloat16 and float16 end to end on cpu: ops forward and backward against PyTorch,
every optimizer keeping parameter and state in the parameter's dtype (as PyTorch does),
and bit-exact bfloat16 checkpoints through safetensors."""

from __future__ import annotations

import numpy as np
import pytest

import volta_core as vt
from tests.torch_ref import compare

torch = pytest.importorskip("torch")
ml_dtypes = pytest.importorskip("ml_dtypes")

rng = np.random.default_rng(2)
A = rng.standard_normal((4, 6)).astype(np.float32)
Bm = rng.standard_normal((6, 5)).astype(np.float32)
V = rng.standard_normal(6).astype(np.float32)
IMG = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
CW = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
G = np.ones(6, np.float32)

OPS = {
    "matmul": (lambda m, a, b: a @ b, (A, Bm)),
    "linear": (lambda m, a, b: (torch.nn.functional if m is torch
                                else vt.nn.functional).linear(a, b.T), (A, Bm)),
    "add_mul": (lambda m, a, v: a * v + v * 0.5, (A, V)),
    "exp_log": (lambda m, a: (a.exp() + 1).log(), (A,)),
    "softmax": (lambda m, a: a.softmax(-1), (A,)),
    "log_softmax": (lambda m, a: a.log_softmax(-1), (A,)),
    "sum_mean": (lambda m, a: a.sum(0) + a.mean(1).sum(), (A,)),
    "tanh_sigmoid": (lambda m, a: a.tanh() * a.sigmoid(), (A,)),
    "gelu_relu": (lambda m, a: (torch.nn.functional if m is torch
                                else vt.nn.functional).gelu(a).relu(), (A,)),
    "layer_norm": (lambda m, a, g: (torch.nn.functional if m is torch
                                    else vt.nn.functional).layer_norm(a, (6,), g, g), (A, G)),
    "conv2d": (lambda m, x, w: (torch.nn.functional if m is torch
                                else vt.nn.functional).conv2d(x, w, padding=1), (IMG, CW)),
    "reshape_transpose_cat": (lambda m, a: m.cat([a.reshape(6, 4).T, a], 1), (A,)),
    "pow_sqrt": (lambda m, a: (a.pow(2) + 1).sqrt(), (A,)),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_op_forward_backward_matches_torch(name, dtype):
    fn, arrays = OPS[name]
    tol = (3e-2, 3e-2) if dtype == "bfloat16" else (5e-3, 5e-3)
    compare(fn, *arrays, dtype=dtype, tol=tol, grad_tol=(6e-2, 6e-2))


OPTIMIZERS = {
    "SGD": dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "Adam": dict(lr=0.01, weight_decay=0.01),
    "AdamW": dict(lr=0.01, amsgrad=True),
    "RMSprop": dict(lr=0.01, momentum=0.5, centered=True),
    "Adagrad": dict(lr=0.1),
    "Adadelta": dict(lr=1.0),
    "Adamax": dict(lr=0.01),
    "NAdam": dict(lr=0.01),
    "RAdam": dict(lr=0.01),
}


def _train(m, name, dtype):
    w = (torch.tensor(A[:3, :5]).to(getattr(torch, dtype)) if m is torch
         else vt.tensor(A[:3, :5]).to(dtype)).requires_grad_(True)
    opt = getattr(m.optim, name)([w], **OPTIMIZERS[name])
    x = torch.tensor(Bm[:4]).to(w.dtype) if m is torch else vt.tensor(Bm[:4]).to(dtype)
    for _ in range(5):
        opt.zero_grad()
        (x[:, :5] @ w.T).pow(2).sum().backward()
        opt.step()
    state = {k: v for k, v in opt.state[w].items() if k not in ("step", "mu_product")}
    return w, state


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_keeps_parameter_dtype_like_torch(name, dtype):
    w_v, s_v = _train(vt, name, dtype)
    w_t, s_t = _train(torch, name, dtype)
    assert w_v.dtype.name == dtype
    assert {k: v.dtype.name for k, v in s_v.items()} == \
        {k: str(v.dtype).removeprefix("torch.") for k, v in s_t.items()}
    want = w_t.detach().float().numpy()
    np.testing.assert_allclose(w_v.detach().float().numpy(), want, rtol=2e-2,
                               atol=2e-2 * np.abs(want).max())


@pytest.mark.parametrize("name", ["Lion", "Muon"])
def test_volta_only_optimizers_keep_bfloat16(name):
    w = vt.tensor(A[:3, :5]).to("bfloat16").requires_grad_(True)
    opt = getattr(vt.optim, name)([w], lr=0.01)
    for _ in range(3):
        opt.zero_grad()
        (w.float() ** 2).sum().backward()
        opt.step()
    assert w.dtype is vt.bfloat16
    assert all(v.dtype is vt.bfloat16 for v in opt.state[w].values()
               if isinstance(v, vt.Tensor))


def test_bfloat16_checkpoint_round_trip_is_bit_exact(tmp_path):
    net = vt.nn.Sequential(vt.nn.Linear(6, 5), vt.nn.LayerNorm(5), vt.nn.Linear(5, 3))
    net = net.to(vt.bfloat16)
    opt = vt.optim.AdamW(net.parameters(), lr=1e-2)
    for _ in range(2):
        opt.zero_grad()
        net(vt.tensor(A).to("bfloat16")).float().pow(2).sum().backward()
        opt.step()
    path = tmp_path / "bf16.safetensors"
    vt.io.save_state_dict(net.state_dict(), path)
    back = vt.io.load_state_dict(path)
    for k, v in net.state_dict().items():
        assert back[k].dtype is vt.bfloat16
        assert back[k].numpy().view(np.uint16).tobytes() == v.numpy().view(np.uint16).tobytes()
    ckpt = tmp_path / "ckpt.vt"
    vt.save({"model": net.state_dict(), "opt": opt.state_dict()}, ckpt)
    again = vt.load(ckpt)
    for k, v in net.state_dict().items():
        assert again["model"][k].numpy().view(np.uint16).tobytes() == \
            v.numpy().view(np.uint16).tobytes()
    st = again["opt"]["state"][0]["exp_avg"]
    assert st.dtype is vt.bfloat16


def test_bfloat16_safetensors_read_by_torch(tmp_path):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    t = vt.tensor(A).to("bfloat16")
    path = tmp_path / "t.safetensors"
    vt.io.save_state_dict({"t": t}, path)
    got = safetensors_torch.load_file(str(path))["t"]
    assert got.dtype == torch.bfloat16
    assert got.view(torch.int16).numpy().tobytes() == t.numpy().view(np.int16).tobytes()
