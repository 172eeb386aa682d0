"""Module, Parameter, containers: registration, state dicts, modes, hooks, conversion."""

from __future__ import annotations

import warnings
from collections import OrderedDict

import numpy as np
import pytest
from vt_helpers import assert_close, to_np

import volta_core as vt
from volta_core import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 3)
        self.bn = nn.BatchNorm1d(3)
        self.fc2 = nn.Linear(3, 2, bias=False)
        self.register_buffer("scratch", vt.zeros(2), persistent=False)

    def forward(self, x):
        return self.fc2(self.bn(self.fc1(x)).relu())


def test_parameter_is_a_plain_tensor_that_requires_grad():
    p = nn.Parameter(vt.randn(2, 3))
    assert type(p) is vt.Tensor and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf
    assert not isinstance(vt.randn(2), nn.Parameter)
    assert not isinstance(p.detach(), nn.Parameter)
    assert not nn.Parameter(vt.zeros(1), requires_grad=False).requires_grad
    with pytest.raises(TypeError, match="Parameter"):
        nn.Parameter([1.0, 2.0])


def test_registration_and_iteration_order():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "fc2.weight"]
    assert [n for n, _ in net.named_buffers()] == [
        "scratch", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    assert [n for n, _ in net.named_children()] == ["fc1", "bn", "fc2"]
    assert [n for n, _ in net.named_modules()] == ["", "fc1", "bn", "fc2"]
    assert len(list(net.parameters())) == 5 and len(list(net.modules())) == 4
    assert len(list(net.parameters(recurse=False))) == 0
    assert net.get_submodule("fc1") is net.fc1
    assert net.get_parameter("fc1.weight") is net.fc1.weight


def test_state_dict_keys_values_and_non_persistent_buffers():
    net = Net()
    sd = net.state_dict()
    assert list(sd) == ["fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "bn.running_mean",
                        "bn.running_var", "bn.num_batches_tracked", "fc2.weight"]
    assert not sd["fc1.weight"].requires_grad
    assert sd["bn.num_batches_tracked"].dtype.name == "int64"
    assert net.state_dict(keep_vars=True)["fc1.weight"] is net.fc1.weight


def test_load_state_dict_round_trip_keeps_parameter_identity():
    a, b = Net(), Net()
    w = b.fc1.weight
    b.load_state_dict(a.state_dict())
    assert b.fc1.weight is w
    for (_, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        np.testing.assert_array_equal(to_np(x), to_np(y))
    # a copy, not an alias
    a.fc1.weight.data = a.fc1.weight.detach() * 0 + 5
    assert to_np(b.fc1.weight).max() != 5


def test_load_state_dict_reports_every_problem_at_once():
    net = Net()
    sd = net.state_dict()
    del sd["fc1.bias"], sd["bn.running_var"]
    sd["extra.weight"] = vt.zeros(1)
    sd["fc2.weight"] = vt.zeros(5, 5)
    with pytest.raises(RuntimeError) as info:
        net.load_state_dict(sd)
    msg = str(info.value)
    for key in ("fc1.bias", "bn.running_var", "extra.weight", "fc2.weight", "(5, 5)", "(2, 3)"):
        assert key in msg
    assert "Net" in msg


def test_load_state_dict_non_strict_returns_keys_but_still_checks_shapes():
    net = Net()
    sd = net.state_dict()
    del sd["fc1.bias"]
    sd["other"] = vt.zeros(1)
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["fc1.bias"] and result.unexpected_keys == ["other"]
    sd["fc2.weight"] = vt.zeros(1)
    with pytest.raises(RuntimeError, match="size mismatch for fc2.weight"):
        net.load_state_dict(sd, strict=False)


def test_load_state_dict_casts_dtype_and_accepts_arrays():
    net = nn.Linear(2, 2)
    net.load_state_dict({"weight": np.eye(2), "bias": vt.tensor([1.0, 2.0], dtype="float64")})
    assert net.weight.dtype.name == "float32"
    assert_close(net.bias, [1.0, 2.0])


def test_setattr_rules():
    m = nn.Module()
    m.w = nn.Parameter(vt.zeros(2))
    assert "w" in m._parameters
    with pytest.raises(TypeError, match="nn.Parameter"):
        m.w = vt.zeros(2)
    m.w = None
    assert m.w is None and "w" in m._parameters
    m.b = nn.Buffer(vt.ones(2))
    assert "b" in m._buffers
    m.sub = nn.Linear(1, 1)
    assert "sub" in m._modules
    del m.sub
    assert not hasattr(m, "sub")
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = m.nothing

    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(vt.zeros(1))

    with pytest.raises(AttributeError, match="super"):
        Bad()


def test_train_eval_requires_grad_and_zero_grad():
    net = Net()
    assert net.training and net.bn.training
    net.eval()
    assert not net.training and not net.bn.training
    net.train()
    assert net.bn.training
    net(vt.randn(5, 4)).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0 for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_to_dtype_keeps_identity_and_integer_buffers():
    net = Net()
    w = net.fc1.weight
    net.to(vt.float64)
    assert net.fc1.weight is w and w.dtype.name == "float64" and w.requires_grad
    assert isinstance(w, nn.Parameter)
    assert net.bn.running_mean.dtype.name == "float64"
    assert net.bn.num_batches_tracked.dtype.name == "int64"
    out = net(vt.randn(3, 4, dtype="float64"))
    assert out.dtype.name == "float64"
    assert net.float().fc1.weight.dtype.name == "float32"
    assert net.cpu() is net and net.to("cpu") is net
    with pytest.raises(TypeError):
        net.to("int64")


def test_apply_and_forward_hooks():
    net = Net()
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Linear", "Net"]
    calls = []
    h1 = net.fc1.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    h2 = net.fc1.register_forward_hook(lambda m, args, out: calls.append(out.shape) or out + 1)
    out = net.fc1(vt.ones(2, 4))
    assert calls == [(2, 3)]
    assert_close(out, np.broadcast_to(to_np(net.fc1.bias) + 1, (2, 3)), rtol=1e-6)
    h1.remove()
    h2.remove()
    net.fc1(vt.ones(2, 4))
    assert calls == [(2, 3)]


def test_nested_repr():
    text = repr(Net())
    assert text.startswith("Net(\n  (fc1): Linear(in_features=4, out_features=3, bias=True)")
    assert "(bn): BatchNorm1d(3, eps=1e-05, momentum=0.1" in text
    assert repr(nn.Sequential(nn.Sequential(nn.ReLU()))) == (
        "Sequential(\n  (0): Sequential(\n    (0): ReLU()\n  )\n)")


def test_shared_parameters_counted_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, lin)
    assert len(list(seq.parameters())) == 2
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "1.weight", "1.bias"]


def test_sequential_forms_indexing_and_builder():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    seq = nn.Sequential(a, b, c)
    assert len(seq) == 3 and seq[0] is a and seq[-1] is c and list(seq) == [a, b, c]
    assert isinstance(seq[1:], nn.Sequential) and list(seq[1:]) == [b, c]
    x = vt.randn(4, 2)
    assert_close(seq(x), to_np(c(b(a(x)))))
    named = nn.Sequential(OrderedDict([("fc", a), ("act", b)]))
    assert named.fc is a and list(named.state_dict()) == ["fc.weight", "fc.bias"]
    seq.append(nn.Sigmoid())
    assert len(seq) == 4 and "3" in seq._modules
    with pytest.raises(IndexError, match="out of range"):
        seq[10]
    built = (nn.Sequential.builder().add_named("fc1", nn.Linear(2, 3)).add_unnamed(nn.ReLU())
             .add_named("fc2", nn.Linear(3, 1)).build())
    assert list(built.state_dict()) == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert isinstance(built.get_named("fc1"), nn.Linear) and isinstance(built[1], nn.ReLU)
    assert built(vt.randn(5, 2)).shape == (5, 1)
    with pytest.raises(KeyError, match="fc3"):
        built.get_named("fc3")
    with pytest.raises(KeyError, match="already"):
        nn.Sequential.builder().add_named("a", nn.ReLU()).add_named("a", nn.ReLU())


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Linear(1, 1), nn.Linear(1, 1)])
    ml.append(nn.Linear(1, 2))
    assert len(ml) == 3 and ml[-1].out_features == 2
    assert list(nn.Module.state_dict(ml))[:2] == ["0.weight", "0.bias"]
    del ml[0]
    assert list(ml._modules) == ["0", "1"]
    md = nn.ModuleDict({"a": nn.Linear(1, 1)})
    md["b"] = nn.ReLU()
    assert list(md.keys()) == ["a", "b"] and "a" in md and len(md) == 2
    assert [n for n, _ in md.named_parameters()] == ["a.weight", "a.bias"]
    with pytest.raises(KeyError, match="zz"):
        md["zz"]
    with pytest.raises(NotImplementedError):
        ml(1)


def test_attribute_set_to_none_then_to_a_module_registers_it():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = None

    m = M()
    m.head = nn.Linear(2, 3)
    assert isinstance(m.head, nn.Linear)
    assert sorted(dict(m.named_parameters())) == ["head.bias", "head.weight"]


def test_backward_and_kwargs_hooks_as_pytorch():
    """Full backward hooks (and pre-hooks) see the gradients PyTorch's see, may replace
    grad_input, and fire at the outputs when no input requires grad; forward hooks take
    ``with_kwargs`` and ``prepend``."""
    torch = pytest.importorskip("torch")

    def run(lib):
        lin = lib.nn.Linear(3, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3) / 10, dtype=lib.float32))
            lin.bias.zero_()
        seen = []
        lin.register_full_backward_pre_hook(
            lambda m, go: seen.append(("pre", [g.tolist() for g in go])))

        def full(m, gi, go):
            seen.append(("full", [None if g is None else g.tolist() for g in gi],
                         [g.tolist() for g in go]))
            return tuple(None if g is None else g * 2 for g in gi)

        handle = lin.register_full_backward_hook(full)
        x = lib.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        (lin(x) * lib.tensor([[1.0, -1.0]])).sum().backward()
        seen.append(("x.grad", x.grad.tolist()))  # doubled by the hook
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch warns that it fires at the outputs
            lin(lib.tensor([[1.0, 2.0, 3.0]])).sum().backward()
        handle.remove()
        lin(x).sum().backward()
        order = []
        lin.register_forward_hook(lambda m, a, kw, out: order.append(("kw", sorted(kw))),
                                  with_kwargs=True)
        lin.register_forward_hook(lambda m, a, out: order.append("first"), prepend=True)
        lin.register_forward_pre_hook(lambda m, a, kw: (a, kw), with_kwargs=True)
        lin(x)
        return seen, order

    assert run(vt) == run(torch)

    def two_inputs(lib):  # grad_input per tensor argument: zeros where none is needed
        class Mul(lib.nn.Module):
            def forward(self, a, b):
                return a * b, a + b

        m, seen = Mul(), []
        m.register_full_backward_hook(
            lambda mod, gi, go: seen.append(([g.tolist() for g in gi], [g.tolist() for g in go])))
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        x, y = m(lib.tensor([1.0, 2.0]), b)
        (x.sum() + 2 * y.sum()).backward()
        return seen, b.grad.tolist()

    assert two_inputs(vt) == two_inputs(torch)


def test_always_call_forward_hooks_run_when_the_call_raises():
    """As PyTorch: a forward hook registered with ``always_call=True`` runs (output None)
    when ``forward`` raises, or once when a hook before it raises; others do not; its
    own exception there becomes a warning and the original error propagates."""
    torch = pytest.importorskip("torch")

    def run(lib):
        seen = []
        m = lib.nn.Linear(2, 2)
        m.register_forward_hook(lambda mod, a, out: seen.append(("plain", out)))
        m.register_forward_hook(lambda mod, a, out: seen.append(("always", out)),
                                always_call=True)
        m.register_forward_hook(lambda mod, a, kw, out: seen.append(("kw", out)),
                                always_call=True, with_kwargs=True)
        with pytest.raises((RuntimeError, vt.VoltaError)):
            m(lib.zeros(3, 5))  # wrong width: forward raises
        n = lib.nn.Linear(2, 2)
        n.register_forward_hook(lambda mod, a, out: seen.append(("first", out is None)),
                                always_call=True)

        def bad(mod, a, out):
            raise ValueError("hook")

        n.register_forward_hook(bad)
        n.register_forward_hook(lambda mod, a, out: seen.append(("after", out is None)),
                                always_call=True)
        with pytest.raises(ValueError):
            n(lib.zeros(1, 2))

        def noisy(mod, a, out):
            raise KeyError("noisy")

        k = lib.nn.Linear(2, 2)
        k.register_forward_hook(noisy, always_call=True)
        with pytest.warns(UserWarning, match="always_call"), \
                pytest.raises((RuntimeError, vt.VoltaError)):
            k(lib.zeros(3, 5))
        return seen

    assert run(vt) == run(torch)
