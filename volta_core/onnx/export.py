"""``vt.onnx.export``: trace a module's forward and write it as an ONNX model."""

from __future__ import annotations

import os
import threading
from typing import IO, Any

import onnx
from onnx import helper

from .. import nn
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .errors import OnnxExportError
from .export_layers import LAYERS
from .export_ops import OPS, Call
from .graph import ONNX_DTYPES, Graph, host
from .symbolic import Sym, resolve, solve
from .trace import Event, Tracer, tensors_in

DEFAULT_OPSET = 17
# a trace swaps a few module attributes (creation functions) for its recorders: one at a time
_TRACE_LOCK = threading.Lock()


def export(model: nn.Module, args: Any, f: str | os.PathLike | IO[bytes] | None,
           input_names: list[str] | None = None, output_names: list[str] | None = None,
           dynamic_axes: dict[str, Any] | None = None, opset_version: int | None = None,
           export_params: bool = True, check: bool = True) -> onnx.ModelProto:
    """Trace ``model(*args)`` and write it to ``f`` as an ONNX model.

    As ``torch.onnx.export``: the model runs once (in eval mode, without gradients) on the
    example inputs, the ops it runs become ONNX nodes, and its parameters and buffers
    become initializers named as in ``state_dict()``. Layers with an ONNX counterpart
    (``Linear``, ``Conv*``, pooling, norms, ``Embedding``, ``LSTM``/``GRU``/``RNN``,
    ``Upsample``, ``PixelShuffle``, ...) are written as one node each; the rest is written
    op by op. Python control flow is frozen at the path the example took.

    Args:
        model: the module to export (on any device).
        args: the example inputs: a Tensor, or a tuple of them (a trailing dict is passed
            as keyword arguments).
        f: a path or a binary file object to write to (None: only return the model).
        input_names: names of the graph inputs, in order (default ``input``,
            ``input_1``, ...).
        output_names: names of the graph outputs (default ``output``, ``output_1``, ...).
        dynamic_axes: which axes may change size: ``{name: {axis: axis_name}}`` or
            ``{name: [axis, ...]}`` for inputs and outputs. The model is traced a second
            time with those axes resized, and every size that follows them is computed
            from the input's shape in the graph.
        opset_version: the ONNX opset (default 17; 17 to 21 are supported).
        export_params: store the parameters in the file (else they become graph inputs).
        check: run ``onnx.checker`` (with shape inference) on the result.

    Returns:
        The ``onnx.ModelProto`` written.

    Raises:
        OnnxExportError: naming the op or layer, and the module path where it ran, when
            something has no ONNX export.
    """
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not 17 <= opset <= 21:
        raise OnnxExportError(f"vt.onnx.export: opset_version must be in 17..21, got {opset}")
    if not isinstance(model, nn.Module):
        raise TypeError(f"vt.onnx.export: expected an nn.Module, got {type(model).__name__}")
    args, kwargs = _split_args(args)
    inputs = list(tensors_in((args, kwargs)))
    in_names = _names(input_names, len(inputs), "input")
    dyn = _dynamic(dynamic_axes, in_names, output_names)

    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        events, out = _trace(model, args, kwargs)
        sizes: dict[str, tuple[int, int]] = {}
        events2 = out2 = None
        symbols = _symbols(dyn, in_names, inputs)
        if symbols:
            args2, kwargs2, sizes = _resized(args, kwargs, inputs, in_names, dyn, symbols)
            events2, out2 = _trace(model, args2, kwargs2)
    finally:
        for m, training in modes.items():
            m.training = training

    g = Graph(opset)
    for name, (i, axis) in symbols.items():
        g.dims[name] = (in_names[i], axis)
    writer = _Writer(g, model, export_params, sizes)
    graph_inputs = []
    for name, t in zip(in_names, inputs):
        g.used.add(name)
        g.values[id(t)] = name
        writer.arrays[id(t._data)] = name
        axes = {axis % t.ndim: s for axis, s in dyn.get(name, {}).items()}
        graph_inputs.append(_value_info(name, t, axes))
    writer.write(events, events2)

    outs = list(tensors_in(out))
    outs2 = list(tensors_in(out2)) if out2 is not None else None
    out_names = _names(output_names, len(outs), "output")
    graph_outputs = []
    writer.cur = events[-1].arrays
    for k, (name, t) in enumerate(zip(out_names, outs)):
        src = writer.name_of(t)
        g.used.add(name)
        g.path = ""
        g.nodes.append(helper.make_node("Identity", [src], [name], name=g.fresh("output")))
        axes = dict(dyn.get(name, {}))
        if outs2 is not None:
            for d, (a, b) in enumerate(zip(t.shape, outs2[k].shape)):
                if a != b and d not in axes:
                    s = solve(a, b, sizes)
                    simple = s is not None and len(s.dims) == 1 and s.coef == 1 and not s.offset
                    axes[d] = s.dims[0] if simple else f"{name}_dim{d}"
        graph_outputs.append(_value_info(name, t, axes))
    _prune(g, out_names)
    if not export_params:
        graph_inputs += [_value_info(i.name, None, {}, i) for i in g.initializers]
    graph = helper.make_graph(g.nodes, "volta", graph_inputs, graph_outputs,
                              g.initializers if export_params else [])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="volta", ir_version=min(onnx.IR_VERSION, 10))
    if check:
        onnx.checker.check_model(proto, full_check=True)
    if f is not None:
        onnx.save_model(proto, f)
    return proto


def _prune(g: Graph, outputs: list[str]) -> None:
    """Drop the nodes and initializers no output depends on."""
    needed = set(outputs)
    kept = []
    for node in reversed(g.nodes):
        if any(o in needed for o in node.output):
            kept.append(node)
            needed.update(node.input)
    g.nodes[:] = kept[::-1]
    g.initializers[:] = [i for i in g.initializers if i.name in needed]


def _split_args(args: Any) -> tuple[tuple, dict]:
    if isinstance(args, Tensor):
        return (args,), {}
    args = tuple(args)
    if args and isinstance(args[-1], dict):
        return args[:-1], dict(args[-1])
    return args, {}


def _names(given: list[str] | None, n: int, base: str) -> list[str]:
    names = list(given or [])
    if len(names) > n:
        raise OnnxExportError(f"vt.onnx.export: {len(names)} {base} names for {n} {base}s")
    return names + [base if i == 0 else f"{base}_{i}" for i in range(len(names), n)]


def _dynamic(dynamic_axes: dict | None, in_names: list[str], out_names: list[str] | None
             ) -> dict[str, dict[int, str]]:
    dyn: dict[str, dict[int, str]] = {}
    known = set(in_names) | set(out_names or [])
    for name, axes in (dynamic_axes or {}).items():
        if name not in known and out_names is not None:
            raise OnnxExportError(f"vt.onnx.export: dynamic_axes names {name!r}, which is "
                                  f"neither an input {in_names} nor an output {out_names}")
        if isinstance(axes, dict):
            dyn[name] = {int(a): str(s) for a, s in axes.items()}
        else:
            dyn[name] = {int(a): f"{name}_dynamic_axes_{k + 1}" for k, a in enumerate(axes)}
    return dyn


def _symbols(dyn: dict, in_names: list[str], inputs: list[Tensor]) -> dict[str, tuple]:
    """Each dynamic axis name -> (input index, axis) of its first appearance."""
    symbols: dict[str, tuple[int, int]] = {}
    for i, name in enumerate(in_names):
        for axis, s in sorted(dyn.get(name, {}).items()):
            nd = inputs[i].ndim
            if not -nd <= axis < nd:
                raise OnnxExportError(f"vt.onnx.export: dynamic axis {axis} of input {name!r} "
                                      f"is out of range for its shape {inputs[i].shape}")
            symbols.setdefault(s, (i, axis % nd))
    return symbols


def _trace(model: nn.Module, args: tuple, kwargs: dict) -> tuple[list[Event], Any]:
    with _TRACE_LOCK, no_grad(), Tracer(model, lambda m: type(m) in LAYERS) as tracer:
        out = model(*args, **kwargs)
    tracer.keep.append(out)
    tracer.events.append(Event("output", "output", None, (), {}, out, ""))
    return tracer.events, out


def _resized(args: tuple, kwargs: dict, inputs: list[Tensor], in_names: list[str],
             dyn: dict, symbols: dict) -> tuple[tuple, dict, dict[str, tuple[int, int]]]:
    """The example inputs with every dynamic axis resized by its own amount."""
    from ..ops.joining import cat

    sizes: dict[str, tuple[int, int]] = {}
    for k, (s, (i, axis)) in enumerate(sorted(symbols.items())):
        n = inputs[i].shape[axis]
        sizes[s] = (n, n - (k + 1) if n - (k + 1) >= 2 else n + k + 1)
    swap = {}
    for name, t in zip(in_names, inputs):
        x = t.detach()
        for axis, s in dyn.get(name, {}).items():
            x = _resize(x, axis % t.ndim, sizes[s][1], cat)
        swap[id(t)] = x
    return _replace(args, swap), _replace(kwargs, swap), sizes


def _resize(x: Tensor, axis: int, new: int, cat: Any) -> Tensor:
    n = x.shape[axis]
    if new <= n:
        return x.narrow(axis, 0, new).clone()
    parts, have = [x], n
    while have < new:
        take = min(n, new - have)
        parts.append(x.narrow(axis, 0, take))
        have += take
    return cat(parts, axis)


def _replace(obj: Any, swap: dict) -> Any:
    if type(obj) is Tensor:
        return swap.get(id(obj), obj)
    if isinstance(obj, (tuple, list)):
        return type(obj)(_replace(o, swap) for o in obj)
    if isinstance(obj, dict):
        return {k: _replace(v, swap) for k, v in obj.items()}
    return obj


def _value_info(name: str, t: Tensor | None, axes: dict[int, str],
                init: onnx.TensorProto | None = None) -> onnx.ValueInfoProto:
    if init is not None:
        return helper.make_tensor_value_info(name, init.data_type, list(init.dims))
    shape = [axes.get(d, n) for d, n in enumerate(t.shape)]
    return helper.make_tensor_value_info(name, ONNX_DTYPES[t.dtype.name], shape)


class _Writer:
    """Turns the recorded events into nodes (and the tensors they use into values)."""

    def __init__(self, g: Graph, model: nn.Module, export_params: bool,
                 sizes: dict[str, tuple[int, int]]) -> None:
        self.g = g
        self.sizes = sizes
        self.params: dict[int, str] = {}
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            self.params.setdefault(id(t), name)
        self.export_params = export_params
        self.second: dict[int, Tensor] = {}  # id(trace-1 constant) -> its trace-2 twin
        self.arrays: dict[int, str] = {}  # id(backend array) -> value name
        self.cur: dict[int, Any] = {}  # id(tensor) -> its array in the step being written
        g.tensor = self.name_of

    def name_of(self, t: Tensor) -> str:
        g = self.g
        arr = self.cur.get(id(t))
        if arr is not None:
            name = self.arrays.get(id(arr))
            if name is not None:
                return name
        name = g.values.get(id(t))
        if name is not None:
            return name
        pname = self.params.get(id(t))
        if pname is not None:
            name = g.initializer(pname, t)
        else:
            twin = self.second.get(id(t))
            if twin is not None:
                self._check_constant(t, twin)
            name = g.tensor_const(t)
        g.values[id(t)] = name
        if arr is not None:
            self.arrays[id(arr)] = name
        return name

    def _check_constant(self, t: Tensor, twin: Tensor) -> None:
        where = f"{self.where}"
        if t.shape != twin.shape:
            raise OnnxExportError(
                f"vt.onnx.export: {where} uses a tensor of shape {t.shape} made outside the "
                f"ops the exporter records (shape {twin.shape} with the dynamic axes "
                "resized), such as vt.tensor(...) in forward or the positions of an in-place "
                "write into a slice; build it from the inputs with Volta ops, or export with "
                "static axes")
        a, b = host(t), host(twin)
        if a.tobytes() != b.tobytes():
            raise OnnxExportError(
                f"vt.onnx.export: {where} uses a tensor made outside the ops the exporter "
                "records whose values depend on the inputs; it would be frozen into the "
                "graph as a constant")

    def write(self, events: list[Event], events2: list[Event] | None) -> None:
        g = self.g
        if events2 is not None and [e.name for e in events] != [e.name for e in events2]:
            first = next((i for i, (a, b) in enumerate(zip(events, events2))
                          if a.name != b.name), min(len(events), len(events2)))
            raise OnnxExportError(
                "vt.onnx.export: the model ran different ops when the dynamic axes were "
                f"resized (step {first}: {events[first] if first < len(events) else 'end'} "
                f"vs {events2[first] if first < len(events2) else 'end'}); its control "
                "flow depends on the sizes of the dynamic axes")
        for i, ev in enumerate(events[:-1]):
            self.cur = ev.arrays
            self.where = f"{_what(ev)} (module '{ev.path or '<root>'}')"
            g.path = ev.path
            args, kw = ev.args, ev.kwargs
            if events2 is not None:
                ev2 = events2[i]
                for a, b in zip(tensors_in((ev.args, ev.kwargs)),
                                tensors_in((ev2.args, ev2.kwargs))):
                    self.second.setdefault(id(a), b)
                args = resolve(ev.args, ev2.args, self.sizes, self.where)
                kw = resolve(ev.kwargs, ev2.kwargs, self.sizes, self.where)
            try:
                result = self._write(ev, args, kw)
            except OnnxExportError as err:
                if "module '" in str(err):
                    raise
                raise OnnxExportError(f"{err} [in {self.where}]") from None
            self._bind(ev.out, result)

    def _write(self, ev: Event, args: tuple, kw: dict) -> Any:
        g = self.g
        if ev.kind == "create":
            return _CREATE[ev.name](g, ev, args, kw)
        if ev.kind == "module":
            fn = LAYERS[type(ev.target)]
        else:
            fn = OPS.get(ev.name)
            if fn is None:
                raise OnnxExportError(
                    f"vt.onnx.export: the op {ev.name} (in module '{ev.path or '<root>'}') "
                    "has no ONNX export; see docs/onnx.md for the ops that have one")
        ins = [self.name_of(a) if type(a) is Tensor else None for a in args]
        return fn(g, Call(ev.name, ev.target, args, kw, ins, ev.out, ev.path))

    def _bind(self, out: Any, result: Any) -> None:
        if type(out) is Tensor:
            self.g.values[id(out)] = result
            arr = self.cur.get(id(out))
            if arr is not None:
                self.arrays[id(arr)] = result
            return
        if isinstance(out, (tuple, list)):
            for o, r in zip(out, result):
                if o is not None:
                    self._bind(o, r)


def _what(ev: Event) -> str:
    return {"op": "the op ", "module": "the layer ", "create": ""}.get(ev.kind, "") + ev.name


# -- creation functions ----------------------------------------------------------------------
def _size_args(size: tuple) -> list:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return list(size[0])
    return list(size)


def _fill(g: Graph, out: Tensor, size: list, value: Any) -> str:
    from .export_ops import _one

    return g.node("ConstantOfShape", [g.ints(size)], value=_one(out.dtype.name, value))


def _c_arange(g: Graph, ev: Event, args: tuple, kw: dict) -> str:
    vals = list(args) + [None] * 3
    start, end, step = vals[0], vals[1], vals[2]
    start = kw.get("start", start)
    end = kw.get("end", end)
    step = kw.get("step", step if step is not None else 1)
    if end is None:
        start, end = 0, start
    dt = ev.out.dtype.name

    def scalar(v: Any) -> str:
        if isinstance(v, Sym):
            s = g.scalar_int(v)
            return s if dt == "int64" else g.node("Cast", [s], to=ONNX_DTYPES[dt])
        return g.const(v, dt)

    return g.node("Range", [scalar(start), scalar(end), scalar(step)])


def _c_fill(value: Any) -> Any:
    def write(g: Graph, ev: Event, args: tuple, kw: dict) -> str:
        size = _size_args(args)
        return _fill(g, ev.out, size, value)

    return write


def _c_full(g: Graph, ev: Event, args: tuple, kw: dict) -> str:
    size = args[0] if args else kw["size"]
    value = args[1] if len(args) > 1 else kw["fill_value"]
    return _fill(g, ev.out, list(size), value)


def _c_new_fill(value: Any) -> Any:
    def write(g: Graph, ev: Event, args: tuple, kw: dict) -> str:
        return _fill(g, ev.out, _size_args(args[1:]), value)

    return write


def _c_new_full(g: Graph, ev: Event, args: tuple, kw: dict) -> str:
    size = args[1] if len(args) > 1 else kw["size"]
    value = args[2] if len(args) > 2 else kw["fill_value"]
    return _fill(g, ev.out, list(size), value)


def _c_like(value: Any) -> Any:
    def write(g: Graph, ev: Event, args: tuple, kw: dict) -> str:
        from .export_ops import _one

        shape = g.node("Shape", [g.tensor(args[0])])
        return g.node("ConstantOfShape", [shape], value=_one(ev.out.dtype.name, value))

    return write


def _c_full_like(g: Graph, ev: Event, args: tuple, kw: dict) -> str:
    value = args[1] if len(args) > 1 else kw["fill_value"]
    return _c_like(value)(g, ev, args, kw)


def _c_random_like(op: str) -> Any:
    def write(g: Graph, ev: Event, args: tuple, kw: dict) -> str:
        return g.node(op, [g.tensor(args[0])], dtype=ONNX_DTYPES[ev.out.dtype.name])

    return write


def _c_interpolate(g: Graph, ev: Event, args: tuple, kw: dict) -> str:
    from .export_layers import resize

    names = ("input", "size", "scale_factor", "mode", "align_corners",
             "recompute_scale_factor", "antialias")
    a = dict(zip(names, args))
    a.update(kw)
    if a.get("antialias"):
        raise OnnxExportError("interpolate with antialias=True has no ONNX export here")
    return resize(g, g.tensor(a["input"]), ev.out, a.get("size"), a.get("scale_factor"),
                  a.get("mode", "nearest"), a.get("align_corners"),
                  a.get("recompute_scale_factor"))


def _c_pixel_shuffle(g: Graph, ev: Event, args: tuple, kw: dict) -> str:
    r = args[1] if len(args) > 1 else kw["upscale_factor"]
    if args[0].ndim != 4:
        raise OnnxExportError("pixel_shuffle is exported for 4-D inputs (N, C, H, W)")
    return g.node("DepthToSpace", [g.tensor(args[0])], blocksize=int(r), mode="CRD")


_CREATE = {"arange": _c_arange, "zeros": _c_fill(0), "ones": _c_fill(1), "full": _c_full,
           "new_zeros": _c_new_fill(0), "new_ones": _c_new_fill(1), "new_full": _c_new_full,
           "zeros_like": _c_like(0), "ones_like": _c_like(1), "full_like": _c_full_like,
           "randn_like": _c_random_like("RandomNormalLike"),
           "rand_like": _c_random_like("RandomUniformLike"),
           "interpolate": _c_interpolate, "pixel_shuffle": _c_pixel_shuffle}
