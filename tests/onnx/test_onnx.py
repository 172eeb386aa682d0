"""ONNX export (checked by onnx.checker and ONNX Runtime) and import (vt.onnx.load).

Every examples/ model and a GPT-style decoder: exported with dynamic batch (and sequence)
axes, run by ONNX Runtime at two sizes, imported back into Volta (outputs and gradients),
and models exported by PyTorch's own exporter imported into Volta.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

import volta_core as vt
from volta_core import nn
from volta_core.autograd.function import tracing
from volta_core.onnx import OnnxExportError, OnnxImportError

from .models import CASES, GPT, make

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _tensors(out):
    if isinstance(out, vt.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    return []


def _close(got, want, rel: float) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(float(np.abs(want).max()) if want.size else 0.0, 1.0)
    err = float(np.abs(got.astype(np.float64) - want).max()) if want.size else 0.0
    assert err <= rel * scale, f"max difference {err:.3g} > {rel} * {scale:.3g}"


def _export(model, inputs, case) -> bytes:
    buf = io.BytesIO()
    vt.onnx.export(model, inputs, buf, input_names=case.names, dynamic_axes=case.dynamic)
    return buf.getvalue()


def _ort_matches(data: bytes, model, case, device: str) -> None:
    onnx.checker.check_model(onnx.load_from_string(data), full_check=True)
    session = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    for size in case.sizes:
        inputs = tuple(t.to(device) for t in case.inputs(*size))
        got = session.run(None, {n: t.cpu().numpy() for n, t in zip(case.names, inputs)})
        want = _tensors(model(*inputs))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w.detach().cpu().numpy(), 1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_export_runs_in_onnxruntime(name: str) -> None:
    model, case = make(name)
    with vt.no_grad():
        data = _export(model, case.inputs(*case.sizes[0]), case)
        _ort_matches(data, model, case, "cpu")
    assert tracing.hook is None


@pytest.mark.parametrize("opset", [18, 21])
@pytest.mark.parametrize("name", ["gpt", "char_lstm", "dcgan_generator"])
def test_newer_opsets(name: str, opset: int) -> None:
    model, case = make(name)
    buf = io.BytesIO()
    with vt.no_grad():
        proto = vt.onnx.export(model, case.inputs(*case.sizes[0]), buf, input_names=case.names,
                               dynamic_axes=case.dynamic, opset_version=opset)
        assert proto.opset_import[0].version == opset
        _ort_matches(buf.getvalue(), model, case, "cpu")


def _wgpu_reason() -> str | None:
    try:
        import wgpu  # noqa: F401
        from volta_wgpu.engine import get_engine

        get_engine(0)
    except Exception as exc:  # no wgpu, no adapter
        return f"wgpu unavailable ({exc})"
    return None


@pytest.mark.skipif(_wgpu_reason() is not None, reason=str(_wgpu_reason()))
@pytest.mark.parametrize("name", sorted(CASES))
def test_export_on_wgpu(name: str) -> None:
    model, case = make(name, "wgpu")
    with vt.no_grad():
        inputs = tuple(t.to("wgpu") for t in case.inputs(*case.sizes[0]))
        data = _export(model, inputs, case)
        _ort_matches(data, model, case, "wgpu")


@pytest.mark.parametrize("name", sorted(CASES))
def test_round_trip_outputs_and_gradients(name: str) -> None:
    model, case = make(name)
    data = _export(model, case.inputs(*case.sizes[0]), case)
    loaded = vt.onnx.load(data).eval()
    for size in case.sizes:
        inputs = case.inputs(*size)
        for t in inputs:
            if t.dtype.is_floating_point:
                t.requires_grad_(True)
        results = []
        for m in (model, loaded):
            m.zero_grad()
            outs = _tensors(m(*inputs))
            loss = sum((o * (vt.arange(o.numel()).reshape(o.shape) % 7 - 3)).sum()
                       for o in outs)
            grads = vt.autograd.grad(loss, [t for t in inputs if t.requires_grad]
                                     + [p for _, p in m.named_parameters()], allow_unused=True)
            results.append((outs, dict(zip(
                [f"input{i}" for i, t in enumerate(inputs) if t.requires_grad]
                + [n for n, _ in m.named_parameters()], grads))))
        (o1, g1), (o2, g2) = results
        # 4e-6: an exported GELU is Erf arithmetic, and the CPU backend's fused GELU rounds
        # its erf differently (exp - 1 for expm1): an ulp of erf, a few ulps downstream
        for a, b in zip(o1, o2):
            _close(b.detach().numpy(), a.detach().numpy(), 4e-6)
        assert set(g1) == set(g2), "the imported module's parameters are named as the model's"
        for key, a in g1.items():
            b = g2[key]
            if a is None:
                assert b is None or float(b.abs().max()) == 0.0
                continue
            _close(b.numpy(), a.numpy(), 4e-6)


def test_vae_with_its_sampling_step() -> None:
    """The full VAE forward: randn_like becomes RandomNormalLike (Volta's generator on
    import, so a seeded run of the imported model repeats the original's)."""
    import vae_digits

    vt.manual_seed(0)
    model = vae_digits.VAE(64).eval()
    buf = io.BytesIO()
    vt.onnx.export(model, (vt.rand(2, 1, 8, 8),), buf, input_names=["x"],
                   dynamic_axes={"x": {0: "batch"}})
    ops = {n.op_type for n in onnx.load_from_string(buf.getvalue()).graph.node}
    assert "RandomNormalLike" in ops
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    x = vt.rand(5, 1, 8, 8)
    recon, mu, logvar = session.run(None, {"x": x.numpy()})
    with vt.no_grad():
        want = model(x)
    assert recon.shape == tuple(want[0].shape) and np.isfinite(recon).all()
    _close(mu, want[1].numpy(), 1e-5)
    _close(logvar, want[2].numpy(), 1e-5)
    loaded = vt.onnx.load(buf.getvalue())
    with vt.no_grad():
        vt.manual_seed(3)
        a = model(x)
        vt.manual_seed(3)
        b = loaded(x)
    for got, w in zip(b, a):
        _close(got.numpy(), w.numpy(), 1e-6)


@pytest.mark.skipif(_wgpu_reason() is not None, reason=str(_wgpu_reason()))
def test_import_onto_wgpu() -> None:
    model, case = make("gpt")
    data = _export(model, case.inputs(*case.sizes[0]), case)
    loaded = vt.onnx.load(data, device="wgpu")
    assert all(p.device.type == "wgpu" for p in loaded.parameters())
    idx = case.inputs(*case.sizes[1])[0]
    with vt.no_grad():
        want = model(idx).numpy()
        got = loaded(idx.to("wgpu")).cpu().numpy()
    _close(got, want, 1e-5)


def test_imported_cnn_trains_like_the_original() -> None:
    import train_digits

    def steps(model: nn.Module) -> list[float]:
        vt.manual_seed(1)
        opt = vt.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        model.train()
        losses = []
        x, y = vt.randn(16, 1, 8, 8), vt.randint(0, 10, (16,))
        for _ in range(5):
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    vt.manual_seed(0)
    model = train_digits.make_model()
    data = _export(model, (vt.randn(2, 1, 8, 8),), CASES["cnn"])
    loaded = vt.onnx.load(data)
    assert {n for n, _ in loaded.named_parameters()} == {n for n, _ in model.named_parameters()}
    model.eval()  # dropout: the exported graph is the eval graph
    want = steps(_NoDropout(model))
    got = steps(loaded)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert got[-1] < got[0]


class _NoDropout(nn.Module):
    """The model with its dropout off (as in the exported graph) but in training mode."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model
        for m in model.modules():
            if isinstance(m, nn.Dropout):
                m.p = 0.0

    def forward(self, x):
        return self.model(x)


# -- PyTorch's exporter -----------------------------------------------------------------------
torch = pytest.importorskip("torch")


def _torch_export(model, x, dynamic) -> bytes:
    import warnings

    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), buf, input_names=["x"], output_names=["y"],
                          dynamic_axes=dynamic, opset_version=17, dynamo=False)
    return buf.getvalue()


def test_imports_a_pytorch_cnn() -> None:
    torch.manual_seed(0)
    t = torch.nn
    model = t.Sequential(t.Conv2d(1, 8, 3, padding=1), t.BatchNorm2d(8), t.ReLU(),
                         t.MaxPool2d(2), t.Conv2d(8, 16, 3, stride=2, padding=1), t.ReLU(),
                         t.AvgPool2d(2), t.Flatten(), t.Linear(16 * 2 * 2, 32), t.GELU(),
                         t.Dropout(0.2), t.Linear(32, 10), t.LogSoftmax(-1)).eval()
    with torch.no_grad():
        model[1].running_mean.normal_()
        model[1].running_var.uniform_(0.5, 1.5)
    data = _torch_export(model, torch.randn(2, 1, 16, 16), {"x": {0: "b"}})
    loaded = vt.onnx.load(data)
    for b in (2, 5):
        x = torch.randn(b, 1, 16, 16)
        with torch.no_grad():
            want = model(x).numpy()
        _close(loaded(vt.tensor(x.numpy())).detach().numpy(), want, 1e-5)


def test_imports_a_pytorch_transformer() -> None:
    torch.manual_seed(0)
    t = torch.nn

    class Tiny(t.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = t.Embedding(20, 32)
            self.pos = t.Parameter(torch.randn(1, 16, 32) * 0.1)
            layer = t.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
            self.enc = t.TransformerEncoder(layer, 2)
            self.norm = t.LayerNorm(32)
            self.head = t.Linear(32, 20)

        def forward(self, idx):
            h = self.emb(idx) + self.pos[:, :idx.shape[1]]
            return self.head(self.norm(self.enc(h)))

    model = Tiny().eval()
    x = torch.randint(0, 20, (2, 7))
    data = _torch_export(model, x, None)  # PyTorch's tracer freezes the attention shapes
    loaded = vt.onnx.load(data)
    for _ in range(2):
        x = torch.randint(0, 20, (2, 7))
        with torch.no_grad():
            want = model(x).numpy()
        _close(loaded(vt.tensor(x.numpy())).detach().numpy(), want, 1e-5)
    names = {n for n, _ in loaded.named_parameters()}
    assert "emb.weight" in names and "enc.layers.0.self_attn.in_proj_bias" in names


# -- errors -----------------------------------------------------------------------------------
class _Sorts(nn.Module):
    def forward(self, x):
        return vt.cumprod(x, 1)


class _Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = _Sorts()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.attn(self.lin(x))


class _Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([_Layer()])

    def forward(self, x):
        return self.layers[0](x)


def test_unexportable_op_is_named_with_its_module_path() -> None:
    model = nn.Sequential()
    model.encoder = _Encoder()
    with pytest.raises(OnnxExportError, match=r"Cumprod.*encoder\.layers\.0\.attn"):
        vt.onnx.export(model, (vt.randn(2, 4),), None)
    assert tracing.hook is None  # the trace is torn down after an error


def test_size_that_is_frozen_into_a_constant_is_reported() -> None:
    class Positions(nn.Module):
        def forward(self, x):
            return x + vt.tensor([float(i) for i in range(x.shape[1])])

    with pytest.raises(OnnxExportError, match="dynamic axes"):
        vt.onnx.export(Positions(), (vt.randn(2, 5),), None, input_names=["x"],
                       dynamic_axes={"x": {1: "seq"}})


def test_in_place_ops_in_forward() -> None:
    class InPlace(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            y = self.lin(x)
            y += 1
            y.mul_(2)
            y[:, 0] = 0.5
            y[:, 1:3].add_(10)  # through a view: written into y
            z = y.clone()
            z.clamp_(0, 15)
            return y, z

    vt.manual_seed(0)
    model = InPlace().eval()
    buf = io.BytesIO()
    vt.onnx.export(model, (vt.randn(3, 4),), buf, input_names=["x"])
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    loaded = vt.onnx.load(buf.getvalue())
    x = vt.randn(3, 4)
    with vt.no_grad():
        want = [t.numpy() for t in model(x)]
        back = [t.numpy() for t in loaded(x)]
    for got, b, w in zip(session.run(None, {"x": x.numpy()}), back, want):
        _close(got, w, 1e-6)
        _close(b, w, 1e-6)


def test_unsupported_onnx_op_is_named_on_import() -> None:
    from onnx import TensorProto, helper

    node = helper.make_node("Det", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [3, 3])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(OnnxImportError, match="Det"):
        vt.onnx.load(model)


def test_gpt_exports_with_a_longer_sequence_than_traced() -> None:
    vt.manual_seed(0)
    model = GPT().eval()
    buf = io.BytesIO()
    vt.onnx.export(model, (vt.randint(0, 40, (1, 4)),), buf, input_names=["idx"],
                   output_names=["logits"], dynamic_axes={"idx": {0: "batch", 1: "seq"},
                                                          "logits": {0: "batch", 1: "seq"}})
    proto = onnx.load_from_string(buf.getvalue())
    dims = [d.dim_param or d.dim_value for d in proto.graph.output[0].type.tensor_type.shape.dim]
    assert dims == ["batch", "seq", 40]
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    idx = vt.randint(0, 40, (3, 32))
    (got,) = session.run(None, {"idx": idx.numpy()})
    with vt.no_grad():
        _close(got, model(idx).numpy(), 1e-5)
