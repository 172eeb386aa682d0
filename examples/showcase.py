"""A tour of Volta's core features, each section printing what it shows.

1. tensors and broadcasting; 2. autograd, including a second derivative with
``create_graph=True``; 3. tensor and module hooks; 4. ``no_grad`` and ``detach``;
5. a custom ``vt.autograd.Function`` (checked with ``gradcheck``); 6. devices and
``vt.backends()``; 7. a module's ``state_dict`` saved to safetensors and loaded back;
8. the autograd graph of a small network drawn with ``to_dot`` + ``render_dot`` to
``runs/showcase/graph.svg`` (a ``.dot`` file when Graphviz's ``dot`` is missing).
Criterion: every section's check holds.

Usage: python examples/showcase.py [--device cpu|cuda|wgpu|auto] [--smoke]
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import _common

import volta_core as vt
from volta_core import nn


def section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def close(a: vt.Tensor | float, b: vt.Tensor | float, tol: float = 1e-5) -> bool:
    """Whether two tensors (or numbers) agree within ``tol``."""
    diff = a - b
    if isinstance(diff, vt.Tensor):
        return diff.abs().max().item() <= tol
    return abs(diff) <= tol


def tensors(dev: vt.Device) -> bool:
    section("1. tensors and broadcasting")
    col = vt.arange(3, dtype=vt.float32, device=dev).reshape(3, 1)   # (3, 1)
    row = vt.tensor([10.0, 20.0, 30.0, 40.0], device=dev)            # (4,)
    table = col + row                                                # (3, 4)
    print(f"(3, 1) + (4,) -> {tuple(table.shape)}:\n{table}")
    m = vt.randn(2, 3, device=dev)
    print(f"matmul (2, 3) @ (3, 4) -> {tuple((m @ table[:, :4]).shape)}; "
          f"sum over rows {table.sum(dim=0).tolist()}, mean {table.mean().item():.2f}")
    return table[2, 3].item() == 42.0 and table.sum(dim=0).tolist() == [33, 63, 93, 123]


def autograd(dev: vt.Device) -> bool:
    section("2. autograd and a second derivative")
    x = vt.tensor(0.5, device=dev, requires_grad=True)
    y = vt.sin(x) * x ** 2                                # y = x^2 sin x
    (dy,) = vt.autograd.grad(y, x, create_graph=True)     # dy is itself differentiable
    (d2y,) = vt.autograd.grad(dy, x)
    xv = 0.5
    want1 = 2 * xv * math.sin(xv) + xv ** 2 * math.cos(xv)
    want2 = (2 - xv ** 2) * math.sin(xv) + 4 * xv * math.cos(xv)
    print(f"y = x^2 sin(x) at x = {xv}: dy/dx = {dy.item():.6f} (exact {want1:.6f}), "
          f"d2y/dx2 = {d2y.item():.6f} (exact {want2:.6f})")
    w = vt.randn(3, device=dev, requires_grad=True)
    (w * w).sum().backward()
    print(f"d/dw sum(w*w) = 2w: {close(w.grad, 2 * w.detach())}")
    return close(dy.item(), want1) and close(d2y.item(), want2) and close(w.grad, 2 * w.detach())


def hooks(dev: vt.Device) -> bool:
    section("3. hooks")
    x = vt.ones(3, device=dev, requires_grad=True)
    seen: list[list[float]] = []
    handle = x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)  # scale the grad
    (3 * x).sum().backward()
    print(f"tensor hook saw grad {seen[0]}, and its return value replaced it: {x.grad.tolist()}")
    # PyTorch returns a handle with .remove(); Volta (0.1) returns the remover itself
    getattr(handle, "remove", handle)()
    layer = nn.Linear(4, 2).to(dev)
    shapes: list[tuple[int, ...]] = []
    fh = layer.register_forward_hook(lambda mod, inp, out: shapes.append(tuple(out.shape)))
    layer(vt.randn(5, 4, device=dev))
    fh.remove()
    layer(vt.randn(5, 4, device=dev))
    print(f"forward hook on Linear saw outputs {shapes} (removed after the first call)")
    return seen == [[3.0] * 3] and x.grad.tolist() == [30.0] * 3 and shapes == [(5, 2)]


def grad_modes(dev: vt.Device) -> bool:
    section("4. no_grad and detach")
    w = vt.randn(3, device=dev, requires_grad=True)
    with vt.no_grad():
        y = w * 2
    z = (w * 2).detach()
    print(f"under no_grad: requires_grad={y.requires_grad}, grad_fn={y.grad_fn}; "
          f"detach(): requires_grad={z.requires_grad}; is_grad_enabled={vt.is_grad_enabled()}")
    return not y.requires_grad and not z.requires_grad and vt.is_grad_enabled()


class Softsign(vt.autograd.Function):
    """softsign(x) = x / (1 + |x|), with derivative 1 / (1 + |x|)^2."""

    def forward(ctx, x: Any) -> Any:
        xp = ctx.xp
        ctx.save_for_backward(x)
        return x / (1 + xp.abs(x))

    def backward(ctx, grad: vt.Tensor) -> vt.Tensor:
        (x,) = ctx.saved_tensors
        return grad / (1 + x.abs()) ** 2


def custom_function(dev: vt.Device) -> bool:
    section("5. a custom autograd Function")
    x = vt.tensor([-2.0, 0.0, 3.0], device=dev, requires_grad=True)
    y = Softsign.apply(x)
    y.sum().backward()
    print(f"softsign({x.detach().tolist()}) = {[round(v, 4) for v in y.tolist()]}, "
          f"grad {[round(v, 4) for v in x.grad.tolist()]}")
    x64 = vt.randn(4, dtype=vt.float64, device="cpu", requires_grad=True)
    ok = vt.autograd.gradcheck(Softsign.apply, (x64,))
    print(f"gradcheck against finite differences (float64, cpu): {ok}")
    return ok and close(x.grad, vt.tensor([1 / 9, 1.0, 1 / 16], device=dev))


def devices(dev: vt.Device) -> bool:
    section("6. devices and backends")
    for info in vt.backends():
        state = "available" if info.available else f"unavailable: {info.reason}"
        print(f"  {info.name:8s} serves {info.device_type!r:9s} {state} {list(info.devices)}")
    print(f"vt.device('auto') -> {vt.device('auto')}; this run uses {dev}")
    a = vt.ones(2, device="cpu")
    b = a.to(dev)
    print(f"a on {a.device}, a.to({dev}) on {b.device}; back on the host: {b.tolist()}")
    if dev.type != "cpu":
        try:
            a + b
        except vt.DeviceError as err:
            print(f"mixing devices raises DeviceError: {str(err).splitlines()[0]}")
    return b.tolist() == [1.0, 1.0] and any(i.name == "numpy" for i in vt.backends())


class TinyNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(3, 4)
        self.norm = nn.LayerNorm(4)
        self.out = nn.Linear(4, 1)

    def forward(self, x: vt.Tensor) -> vt.Tensor:
        return self.out(self.norm(self.hidden(x).tanh()))


def state_dict_round_trip(dev: vt.Device, out: Path) -> bool:
    section("7. state_dict save / load round trip")
    net = TinyNet().to(dev)
    path = out / "tinynet.safetensors"
    vt.save(net.state_dict(), path)
    print(f"saved {list(net.state_dict())} to {path}")
    twin = TinyNet().to(dev)
    x = vt.randn(2, 3, device=dev)
    before = close(twin(x), net(x))
    result = twin.load_state_dict(vt.load(path, map_location=dev))
    after = close(twin(x), net(x))
    print(f"fresh twin matches before loading: {before}; after loading: {after} ({result})")
    return after and not before


def graph(dev: vt.Device, out: Path) -> bool:
    section("8. the autograd graph")
    net = TinyNet().to(dev)
    loss = nn.functional.mse_loss(net(vt.randn(8, 3, device=dev)), vt.zeros(8, 1, device=dev))
    dot = vt.autograd.to_dot(loss, dict(net.named_parameters()))
    path = vt.autograd.render_dot(dot, out / "graph.svg")
    kind = "SVG" if path.suffix == ".svg" else "DOT source (install Graphviz for an SVG)"
    print(f"{dot.count('->')} edges, {dot.count('label=')} nodes; wrote {kind}: {path}")
    return path.exists() and "hidden.weight" in dot


def main(argv: list[str] | None = None) -> None:
    parser = _common.make_parser(__doc__, "runs/showcase")
    args = parser.parse_args(argv)
    dev, out = _common.setup(args)
    results = {
        "tensors": tensors(dev), "autograd": autograd(dev), "hooks": hooks(dev),
        "no_grad": grad_modes(dev), "custom Function": custom_function(dev),
        "devices": devices(dev), "state_dict": state_dict_round_trip(dev, out),
        "graph": graph(dev, out),
    }
    print()
    failed = [name for name, ok in results.items() if not ok]
    _common.check(not failed, f"{len(results) - len(failed)}/{len(results)} showcase "
                  f"sections behave as documented" + (f" (failed: {failed})" if failed else ""))


if __name__ == "__main__":
    main()
