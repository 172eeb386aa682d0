"""Building an ONNX graph: unique names, nodes, constants and sizes from dynamic axes."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import onnx
from onnx import TensorProto, helper, numpy_helper

from ..tensor import Tensor
from .symbolic import Sym

# Volta dtype name -> ONNX element type
ONNX_DTYPES = {
    "float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE,
    "float16": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16,
    "int64": TensorProto.INT64, "int32": TensorProto.INT32, "int16": TensorProto.INT16,
    "int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "uint32": TensorProto.UINT32,
    "bool": TensorProto.BOOL,
}


def host(t: Tensor) -> Any:
    """The values of ``t`` as a host (NumPy) array."""
    return t.device.backend.to_host(t.detach().array)


class Graph:
    """Nodes, initializers and names of the graph being written."""

    def __init__(self, opset: int) -> None:
        self.opset = opset
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.used: set[str] = set()
        self.values: dict[int, str] = {}  # id(tensor) -> value name
        self.dims: dict[str, tuple[str, int]] = {}  # dynamic axis name -> (input, axis)
        self._dim_cache: dict[Any, str] = {}
        self._const_cache: dict[Any, str] = {}
        self.path = ""  # the module path of the event being written (node names)
        self.tensor: Callable[[Tensor], str] = _unbound  # a tensor's value name (the writer)

    def fresh(self, base: str) -> str:
        base = base or "v"
        name, i = base, 1
        while name in self.used:
            name = f"{base}_{i}"
            i += 1
        self.used.add(name)
        return name

    def node(self, op: str, inputs: list[str | None], n_out: int = 1, **attrs: Any) -> Any:
        """Add a node; returns its output name (or a list of names when ``n_out > 1``)."""
        outs = [self.fresh(f"{op}_out") for _ in range(n_out)]
        ins = ["" if i is None else i for i in inputs]
        while ins and ins[-1] == "":
            ins.pop()
        attrs = {k: v for k, v in attrs.items() if v is not None}
        name = self.fresh(f"{self.path}/{op}" if self.path else op)
        self.nodes.append(helper.make_node(op, ins, outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def initializer(self, name: str, t: Tensor) -> str:
        self.used.add(name)
        self.initializers.append(numpy_helper.from_array(host(t), name))
        return name

    def const(self, value: Any, dtype: str = "float32", shape: tuple | None = None) -> str:
        """A constant (a Python number or a flat list of numbers) as a Constant node."""
        vals = list(value) if isinstance(value, (list, tuple)) else [value]
        shp = tuple(shape) if shape is not None else (
            (len(vals),) if isinstance(value, (list, tuple)) else ())
        key = (dtype, shp, tuple(_key(v) for v in vals))
        name = self._const_cache.get(key)
        if name is None:
            if dtype == "bool":
                vals = [bool(v) for v in vals]
            elif dtype.startswith(("int", "uint")):
                vals = [int(v) for v in vals]
            else:
                vals = [float(v) for v in vals]
            tensor = helper.make_tensor("value", ONNX_DTYPES[dtype], shp, vals)
            name = self.fresh("const")
            self.nodes.append(helper.make_node("Constant", [], [name], value=tensor,
                                               name=self.fresh("Constant")))
            self._const_cache[key] = name
        return name

    def tensor_const(self, t: Tensor) -> str:
        """A constant tensor (values captured while tracing) as a Constant node."""
        name = self.fresh("const")
        self.nodes.append(helper.make_node(
            "Constant", [], [name], value=numpy_helper.from_array(host(t), "value"),
            name=self.fresh("Constant")))
        return name

    # -- sizes -----------------------------------------------------------------------------
    def dim(self, axis_name: str) -> str:
        """A 1-element int64 tensor holding the size of a dynamic axis."""
        name = self._dim_cache.get(axis_name)
        if name is None:
            src, axis = self.dims[axis_name]
            name = self.node("Shape", [src], start=axis, end=axis + 1)
            self._dim_cache[axis_name] = name
        return name

    def sym(self, s: Sym) -> str:
        """A 1-element int64 tensor holding ``s``."""
        key = ("sym", s.dims, s.coef, s.offset)
        name = self._dim_cache.get(key)
        if name is None:
            name = self.dim(s.dims[0])
            for d in s.dims[1:]:
                name = self.node("Mul", [name, self.dim(d)])
            if s.coef != 1:
                name = self.node("Mul", [name, self.const([s.coef], "int64")])
            if s.offset:
                name = self.node("Add", [name, self.const([s.offset], "int64")])
            self._dim_cache[key] = name
        return name

    def ints(self, values: Any) -> str:
        """A 1-D int64 tensor of ``values`` (ints and ``Sym`` sizes)."""
        values = list(values)
        if not any(isinstance(v, Sym) for v in values):
            return self.const([int(v) for v in values], "int64")
        parts, run = [], []
        for v in values:
            if isinstance(v, Sym):
                if run:
                    parts.append(self.const(run, "int64"))
                    run = []
                parts.append(self.sym(v))
            else:
                run.append(int(v))
        if run:
            parts.append(self.const(run, "int64"))
        return parts[0] if len(parts) == 1 else self.node("Concat", parts, axis=0)

    def scalar_int(self, v: Any) -> str:
        """A 0-d int64 tensor of ``v`` (an int or a ``Sym``)."""
        if isinstance(v, Sym):
            return self.node("Squeeze", [self.sym(v), self.const([0], "int64")])
        return self.const(int(v), "int64")


def _unbound(t: Tensor) -> str:
    raise RuntimeError("Graph.tensor is set by the exporter's writer")


def _key(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return (type(v).__name__, v)
