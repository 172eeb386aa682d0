"""``vt.onnx.load``: run an ONNX graph as a Volta module.

The graph's floating-point initializers become trainable :class:`~volta_core.nn.Parameter`
objects, named by their ONNX names (a dotted name such as ``features.0.weight`` becomes
nested submodules, so the state dict of an exported Volta model matches the original's);
integer initializers and batch-norm statistics become buffers. ``forward`` runs the nodes in
order with Volta's ops, so it works on any device and autograd follows it.
"""

from __future__ import annotations

import os
from typing import IO, Any

import onnx
from onnx import numpy_helper

from ..nn.module import Module
from ..nn.parameter import Parameter
from ..tensor import Tensor
from .errors import OnnxImportError
from .import_ops import IMPORTS, Node


class _Holder(Module):
    """A plain container for the parameters under one dotted-name prefix."""


class OnnxModule(Module):
    """A Volta module running an ONNX graph (made by :func:`load`).

    ``forward`` takes the graph's inputs positionally (or by name as keywords) and returns
    its output, or a tuple of outputs when the graph has several.

    Attributes:
        input_names: the graph's inputs, in order.
        output_names: the graph's outputs, in order.
        opset: the default-domain opset version of the model.
    """

    def __init__(self, model: onnx.ModelProto, device: Any = None) -> None:
        super().__init__()
        from ..creation import tensor as make_tensor

        graph = model.graph
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                          17)
        inits = {i.name: i for i in graph.initializer}
        self.input_names = [i.name for i in graph.input if i.name not in inits]
        self.output_names = [o.name for o in graph.output]
        self._nodes = [Node(n) for n in graph.node]
        unknown = sorted({n.op_type for n in graph.node if n.domain not in ("", "ai.onnx")
                          or n.op_type not in IMPORTS})
        if unknown:
            raise OnnxImportError(f"vt.onnx.load: the graph uses ONNX ops Volta cannot run: "
                                  f"{', '.join(unknown)} (see docs/onnx.md for the op table)")
        stats = set()
        for n in graph.node:
            if n.op_type == "BatchNormalization":
                stats.update(n.input[3:5])
        self._where: dict[str, tuple[Module, str]] = {}
        taken: set[str] = set()
        for name, init in inits.items():
            arr = numpy_helper.to_array(init)
            t = make_tensor(arr.copy(), device=device)
            owner, attr = self._slot(name, taken)
            if t.dtype.is_floating_point and name not in stats:
                setattr(owner, attr, Parameter(t))
            else:
                owner.register_buffer(attr, t)
            self._where[name] = (owner, attr)

    def _slot(self, name: str, taken: set[str]) -> tuple[Module, str]:
        """Where initializer ``name`` lives: nested holders for a clean dotted name."""
        parts = name.split(".")
        clean = all(p.isidentifier() or p.isdigit() for p in parts) and len(parts) > 0
        if not clean:
            flat = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
            if not flat or flat[0].isdigit():
                flat = "_" + flat
            base, i = flat, 1
            while flat in taken or hasattr(type(self), flat):
                flat, i = f"{base}_{i}", i + 1
            taken.add(flat)
            return self, flat
        owner: Module = self
        for p in parts[:-1]:
            child = owner._modules.get(p)
            if child is None:
                child = _Holder()
                setattr(owner, p, child)
            owner = child
        return owner, parts[-1]

    def extra_repr(self) -> str:
        return (f"inputs={self.input_names}, outputs={self.output_names}, "
                f"nodes={len(self._nodes)}, opset={self.opset}")

    def initializer(self, name: str) -> Tensor:
        """The parameter or buffer holding the ONNX initializer ``name``."""
        owner, attr = self._where[name]
        return getattr(owner, attr)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) + len(kwargs) != len(self.input_names):
            raise TypeError(f"OnnxModule: expected {len(self.input_names)} inputs "
                            f"{self.input_names}, got {len(args) + len(kwargs)}")
        env: dict[str, Any] = dict(zip(self.input_names, args))
        env.update(kwargs)
        # constants are made where the inputs are (a graph may have no initializers)
        self._device = next((v.device for v in env.values() if isinstance(v, Tensor)), None)
        for name in self._where:
            env[name] = self.initializer(name)
        for node in self._nodes:
            ins = [env[i] if i else None for i in node.inputs]
            try:
                out = IMPORTS[node.op_type](self, node, ins)
            except OnnxImportError:
                raise
            except Exception as err:
                raise type(err)(f"{err} (in ONNX node {node.name or node.op_type} "
                                f"[{node.op_type}])") from err
            if not isinstance(out, (tuple, list)):
                out = (out,)
            for name, value in zip(node.outputs, out):
                if name:
                    env[name] = value
        outs = tuple(env[n] for n in self.output_names)
        return outs[0] if len(outs) == 1 else outs


def load(f: str | os.PathLike | IO[bytes] | onnx.ModelProto | bytes, device: Any = None
         ) -> OnnxModule:
    """Build a Volta module that runs the ONNX model ``f``.

    Args:
        f: a path, a binary file object, the model's bytes, or an ``onnx.ModelProto``.
        device: where the parameters live (the default device when None).

    Returns:
        An :class:`OnnxModule` whose floating-point initializers are trainable parameters.

    Raises:
        OnnxImportError: naming the ONNX ops the graph uses that Volta cannot run.
    """
    if isinstance(f, onnx.ModelProto):
        model = f
    elif isinstance(f, (bytes, bytearray)):
        model = onnx.load_model_from_string(bytes(f))
    else:
        model = onnx.load_model(f)
    return OnnxModule(model, device)


__all__ = ["load", "OnnxModule"]
