"""cuDNN through NVIDIA's ``nvidia-cudnn-frontend`` (import name ``cudnn``).

Convolution forward, data gradient and weight gradient, and fused (flash) attention
forward and backward, each one cuDNN graph built once per shape, dtype and flag set and
cached. Every entry returns None when cuDNN cannot take the case (package missing,
``vt.backends.cudnn.enabled`` off, an unsupported dtype or layout, or a graph cuDNN
refuses to build), and the caller runs the CuPy kernels instead.

The flags of ``vt.backends.cudnn`` arrive through :func:`set_flags`: ``allow_tf32``
(float32 convolutions may use TF32 tensor cores; when off, engines marked
``TENSOR_CORE`` are removed for float32), ``deterministic`` (engines marked
``NONDETERMINISTIC`` are removed), ``benchmark`` (every plan is built and the first call
of each graph times them all and keeps the fastest; otherwise the plan is the first of
cuDNN's heuristics that builds).
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

import cupy

from ._util import contiguous_flag

FLAGS = {"enabled": True, "cudnn_tf32": True, "deterministic": False, "benchmark": False,
         "matmul_tf32": False}
_graphs: dict[tuple, Any] = {}  # key -> (graph, tensors) or None when cuDNN refused it
_handles: dict[int, list] = {}  # device -> [handle, the stream it was last set to]
_workspace: dict[int, int] = {}  # id(graph) -> workspace bytes (graphs live in _graphs)
_ready: dict[tuple, tuple] = {}  # full key -> (raw-pointer launcher, workspace bytes)
_tuned: dict[int, int] = {}  # id(graph) -> the plan cudnn.benchmark chose
_module: list = []  # [cudnn module or None], resolved once


def set_flags(flags: dict) -> None:
    """Take ``vt.backends.cudnn``'s flags (see the module doc)."""
    FLAGS.update(enabled=flags["cudnn_enabled"], cudnn_tf32=flags["cudnn_tf32"],
                 deterministic=flags["cudnn_deterministic"],
                 benchmark=flags["cudnn_benchmark"], matmul_tf32=flags["matmul_tf32"])


@contextlib.contextmanager
def conv_math(dtype: Any):
    """Run the CuPy convolution's GEMMs under ``vt.backends.cudnn.allow_tf32`` (float32)
    instead of the matmul flag, as PyTorch's two flags mean."""
    if dtype != cupy.float32 or FLAGS["cudnn_tf32"] == FLAGS["matmul_tf32"]:
        yield
        return
    set_matmul_tf32(FLAGS["cudnn_tf32"])
    try:
        yield
    finally:
        set_matmul_tf32(FLAGS["matmul_tf32"])


def set_matmul_tf32(allow: bool) -> None:
    """CuPy's compute type of float32 GEMMs: TF32 tensor cores or full float32."""
    from cupy._core import _routines_linalg as linalg

    mode = linalg.COMPUTE_TYPE_TF32 if allow else linalg.COMPUTE_TYPE_DEFAULT
    linalg.set_compute_type(cupy.float32, mode)


def _cudnn() -> Any:
    if not _module:
        try:
            import cudnn
        except Exception:  # not installed, or its cuDNN library fails to load
            cudnn = None
        _module.append(cudnn)
    return _module[0]


def version() -> int | None:
    """cuDNN's version number (``91900`` for 9.19.0), or None without the frontend."""
    cudnn = _cudnn()
    if cudnn is None:
        return None
    try:
        return int(cudnn.backend_version())
    except Exception:
        return None


def usable() -> bool:
    """Whether cuDNN is installed and ``vt.backends.cudnn.enabled`` is on."""
    return FLAGS["enabled"] and _cudnn() is not None


@functools.cache
def _data_type(dtype: Any) -> Any:
    cudnn = _cudnn()
    name = cupy.dtype(dtype).name
    return {"float16": cudnn.data_type.HALF, "bfloat16": cudnn.data_type.BFLOAT16,
            "float32": cudnn.data_type.FLOAT}.get(name)


def _handle() -> Any:
    """The current GPU's handle, on CuPy's current stream (set only when it changed: the
    frontend's ``set_stream`` costs several microseconds)."""
    dev = cupy.cuda.runtime.getDevice()
    entry = _handles.get(dev)
    if entry is None:
        entry = _handles[dev] = [_cudnn().create_handle(), None]
    stream = cupy.cuda.get_current_stream().ptr
    if entry[1] != stream:
        _cudnn().set_stream(handle=entry[0], stream=stream)
        entry[1] = stream
    return entry[0]


def _strides(a: Any) -> list[int]:
    return [s // a.itemsize for s in a.strides]


def _finish(graph: Any, float32: bool) -> None:
    """Plans for ``graph``, filtered by the flags, built (raises when none is usable)."""
    cudnn = _cudnn()
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    notes = []
    if float32 and not FLAGS["cudnn_tf32"]:
        notes.append(cudnn.numerical_note.TENSOR_CORE)
    if FLAGS["deterministic"]:
        notes.append(cudnn.numerical_note.NONDETERMINISTIC)
    if notes:
        graph.deselect_numeric_notes(notes)
    graph.check_support()
    if FLAGS["benchmark"]:  # every plan, for _autotune to time on the first call
        graph.build_plans(cudnn.build_plan_policy.ALL)
    else:
        graph.build_plans()


def _execute(key: tuple, build, arrays: dict) -> bool:
    """Run the graph of ``key`` on ``arrays`` (``{name: array}``, the names ``build``
    gave its tensors); ``build()`` makes the graph on first use. False when cuDNN refused
    the case (the caller's CuPy kernels serve it from then on).

    After a graph's first call, later calls of the same key take a ready launcher (the
    raw-pointer path and the workspace size): this is the per-convolution cost of every
    training step, so nothing is looked up or checked twice there."""
    full = (*key, cupy.cuda.runtime.getDevice(), FLAGS["cudnn_tf32"], FLAGS["deterministic"],
            FLAGS["benchmark"])
    ready = _ready.get(full)
    if ready is not None:
        launch, size = ready
        workspace = cupy.empty(size, dtype=cupy.uint8) if size else None
        launch(arrays, 0 if workspace is None else workspace.data.ptr, _handle())
        return True
    if full in _graphs:
        entry = _graphs[full]
    else:
        try:
            entry = build()
        except Exception:  # an unsupported case: the CuPy kernels serve it from now on
            entry = None
        _graphs[full] = entry
    if entry is None:
        return False
    graph, tensors = entry
    pack = {tensors[k]: v for k, v in arrays.items()}
    if id(graph) in _workspace:  # no raw launcher in this frontend: the public path
        size = _workspace[id(graph)]
        graph.execute(pack, cupy.empty(max(size, 1), dtype=cupy.uint8), handle=_handle())
        return True
    if FLAGS["benchmark"]:
        _autotune(graph, pack)
    # asked once per graph (the frontend's query is not free); the first call goes
    # through the public API, which finishes any lazy build
    size = _workspace[id(graph)] = graph.get_workspace_size()
    graph.execute(pack, cupy.empty(max(size, 1), dtype=cupy.uint8), handle=_handle())
    launch = _raw_launcher(graph, tensors)
    if launch is not None:
        _ready[full] = (launch, size)
    return True


def _autotune(graph: Any, pack: dict) -> None:
    """``cudnn.benchmark``: run every built plan of ``graph`` on the first call's arrays
    and keep the fastest (outside CUDA graph captures, where nothing can be timed)."""
    from . import graphs

    count = graph.get_execution_plan_count()
    if count < 2 or graphs.is_capturing():
        return
    handle, best = _handle(), None
    for index in range(count):
        try:
            size = max(graph.get_workspace_size_plan_at_index(index), 1)
            workspace = cupy.empty(size, dtype=cupy.uint8)
            graph.execute_plan_at_index(pack, workspace, index, handle=handle)  # warm-up
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            for _ in range(3):
                graph.execute_plan_at_index(pack, workspace, index, handle=handle)
            end.record()
            end.synchronize()
        except Exception:  # a plan that did not build, or fails on these arrays
            continue
        took = cupy.cuda.get_elapsed_time(start, end)
        if best is None or took < best[0]:
            best = (took, index)
    if best is not None:
        graph.select_plan(best[1])
        graph.build_plans()
        _tuned[id(graph)] = best[1]


def _raw_launcher(graph: Any, tensors: dict) -> Any:
    """A launcher that hands device pointers straight to the graph's C++ plan, or None.

    The frontend's public ``execute`` inspects every buffer in Python on every call (about
    50-90 us per convolution, as much as the convolution itself for small layers); the
    compiled graph underneath takes ``{uid: pointer}``. This reaches a private part of the
    frontend, so any mismatch (another frontend version, a Python-side engine, a graph
    with values bound at build time) keeps the public path.
    """
    try:
        from cudnn._handle import to_backend_handle

        if graph.selected_engine is not None or graph._data_bindings:
            return None
        plan = graph._materialize_backend_plan(graph._plan_index).cpp_index
        lowered = graph._lowered_graph
        uids = {k: t.uid for k, t in tensors.items()}
    except Exception:
        return None

    def launch(arrays: dict, workspace: int, handle: Any) -> None:
        pack = {uids[k]: a.data.ptr for k, a in arrays.items()}
        h = to_backend_handle(handle)
        if plan is None:
            lowered._execute(pack, workspace, h, None, None, None)
        else:
            lowered._execute_plan_at_index(pack, workspace, plan, h, None, None, None)

    return launch


def _graph(io_dtype: Any) -> Any:
    cudnn = _cudnn()
    return cudnn.pygraph(io_data_type=_data_type(io_dtype),
                         intermediate_data_type=cudnn.data_type.FLOAT,
                         compute_data_type=cudnn.data_type.FLOAT, handle=_handle())


def _conv_ok(a: Any, b: Any, pads: tuple, groups: int) -> bool:
    """Whether cuDNN may take a convolution of the 4-d operands ``a`` and ``b``."""
    dtype = a.dtype
    return (a.ndim == 4 and b.ndim == 4 and b.dtype == dtype and contiguous_flag(a)
            and contiguous_flag(b) and pads[0] == pads[1] and pads[2] == pads[3]
            and groups >= 1 and usable() and _data_type(dtype) is not None)


def _geometry(pads: tuple, stride: tuple, dilation: tuple) -> dict:
    return dict(padding=[pads[0], pads[2]], stride=list(stride), dilation=list(dilation))


def conv_fprop(x: Any, w: Any, bias: Any = None, *, stride: tuple, pads: tuple,
               dilation: tuple, groups: int, out_hw: tuple) -> Any:
    """``conv2d(x, w, bias)`` through cuDNN, or None when cuDNN cannot take it. The bias
    is added inside the convolution's graph where cuDNN has a fused engine for it (one
    launch, one rounding), else by a second kernel."""
    if not _conv_ok(x, w, pads, groups):
        return None
    y = cupy.empty((x.shape[0], w.shape[0], *out_hw), dtype=x.dtype)
    fuse = (bias is not None and bias.dtype == x.dtype and bias.shape == (w.shape[0],)
            and contiguous_flag(bias))

    def build(with_bias: bool):
        cudnn = _cudnn()
        g = _graph(x.dtype)
        tx = g.tensor(name="X", dim=list(x.shape), stride=_strides(x),
                      data_type=_data_type(x.dtype))
        tw = g.tensor(name="W", dim=list(w.shape), stride=_strides(w),
                      data_type=_data_type(w.dtype))
        ty = g.conv_fprop(image=tx, weight=tw, compute_data_type=cudnn.data_type.FLOAT,
                          **_geometry(pads, stride, dilation))
        tensors = {"x": tx, "w": tw}
        if with_bias:
            c = w.shape[0]
            tb = g.tensor(name="B", dim=[1, c, 1, 1], stride=[c, 1, 1, 1],
                          data_type=_data_type(x.dtype))
            ty = g.bias(input=ty, bias=tb, compute_data_type=cudnn.data_type.FLOAT)
            tensors["b"] = tb
        ty.set_output(True).set_dim(list(y.shape)).set_stride(_strides(y)).set_data_type(
            _data_type(y.dtype))
        _finish(g, x.dtype == cupy.float32)
        return g, {**tensors, "y": ty}

    key = ("fprop", x.shape, w.shape, x.dtype, stride, pads, dilation)
    if fuse and _execute((*key, "bias"), lambda: build(True),
                         {"x": x, "w": w, "b": bias, "y": y}):
        return y
    if not _execute(key, lambda: build(False), {"x": x, "w": w, "y": y}):
        return None
    if bias is not None:
        y += bias.reshape(1, -1, 1, 1)
    return y


def conv_dgrad(grad: Any, w: Any, *, x_shape: tuple, stride: tuple, pads: tuple,
               dilation: tuple, groups: int) -> Any:
    """The input gradient of ``conv2d`` through cuDNN, or None."""
    if not _conv_ok(grad, w, pads, groups):
        return None
    gx = cupy.empty(x_shape, dtype=grad.dtype)

    def build():
        cudnn = _cudnn()
        g = _graph(grad.dtype)
        tdy = g.tensor(name="DY", dim=list(grad.shape), stride=_strides(grad),
                       data_type=_data_type(grad.dtype))
        tw = g.tensor(name="W", dim=list(w.shape), stride=_strides(w),
                      data_type=_data_type(w.dtype))
        tdx = g.conv_dgrad(loss=tdy, filter=tw, compute_data_type=cudnn.data_type.FLOAT,
                           **_geometry(pads, stride, dilation))
        tdx.set_output(True).set_dim(list(gx.shape)).set_stride(_strides(gx)).set_data_type(
            _data_type(gx.dtype))
        _finish(g, grad.dtype == cupy.float32)
        return g, {"dy": tdy, "w": tw, "dx": tdx}

    key = ("dgrad", grad.shape, w.shape, x_shape, grad.dtype, stride, pads, dilation)
    return gx if _execute(key, build, {"dy": grad, "w": w, "dx": gx}) else None


def conv_wgrad(grad: Any, x: Any, *, w_shape: tuple, stride: tuple, pads: tuple,
               dilation: tuple, groups: int) -> Any:
    """The weight gradient of ``conv2d`` through cuDNN, or None."""
    if not _conv_ok(grad, x, pads, groups):
        return None
    gw = cupy.empty(w_shape, dtype=grad.dtype)

    def build():
        cudnn = _cudnn()
        g = _graph(grad.dtype)
        tdy = g.tensor(name="DY", dim=list(grad.shape), stride=_strides(grad),
                       data_type=_data_type(grad.dtype))
        tx = g.tensor(name="X", dim=list(x.shape), stride=_strides(x),
                      data_type=_data_type(x.dtype))
        tdw = g.conv_wgrad(image=tx, loss=tdy, compute_data_type=cudnn.data_type.FLOAT,
                           **_geometry(pads, stride, dilation))
        tdw.set_output(True).set_dim(list(gw.shape)).set_stride(_strides(gw)).set_data_type(
            _data_type(gw.dtype))
        _finish(g, grad.dtype == cupy.float32)
        return g, {"dy": tdy, "x": tx, "dw": tdw}

    key = ("wgrad", grad.shape, x.shape, w_shape, grad.dtype, stride, pads, dilation)
    return gw if _execute(key, build, {"dy": grad, "x": x, "dw": gw}) else None


# -- fused attention ----------------------------------------------------------------------

def sdpa_supported(q: Any, k: Any, v: Any) -> bool:
    """Whether cuDNN's flash attention takes ``(B, H, L, E)`` q, k, v of one low dtype."""
    return (usable() and q.ndim == 4 and k.ndim == 4 and v.ndim == 4
            and q.dtype == k.dtype == v.dtype and q.dtype.name in ("float16", "bfloat16")
            and q.shape[:2] == k.shape[:2] == v.shape[:2] and k.shape[2] == v.shape[2]
            and q.shape[3] == k.shape[3] and q.shape[3] % 8 == 0 and v.shape[3] % 8 == 0
            and max(q.shape[3], v.shape[3]) <= 256)


def _draw_seeds(q: Any) -> Any:
    """Two int64 words (Philox seed and offset of cuDNN's dropout) from the device's
    generator, on the device (a CUDA graph replay draws new ones)."""
    import volta_core as vt
    from volta_core.random import draw_from

    dev = vt.device(f"cuda:{q.device.id}")
    return draw_from("scaled_dot_product_attention", None, dev).integers(
        0, 2**62, (2,), cupy.int64)


def _pack_stats(b: int, h: int, lq: int, dropout: bool) -> tuple[Any, Any, Any]:
    """(buffer, stats, seeds): the float32 log-sum-exp ``(B, H, L, 1)`` and, with dropout,
    its two int64 seed words after it in one buffer (the backward gets one array)."""
    n = b * h * lq
    pad = n + (n & 1)  # the seed words start 8-byte aligned
    buf = cupy.empty(pad + 4 if dropout else n, dtype=cupy.float32)
    seeds = buf[pad:].view(cupy.int64) if dropout else None
    return buf, buf[:n].reshape(b, h, lq, 1), seeds


def _unpack_stats(buf: Any, q: Any) -> tuple[Any, Any]:
    """(stats, seeds or None) from what :func:`sdpa_forward` returned as its stats."""
    b, h, lq, _ = q.shape
    n = b * h * lq
    flat = buf.reshape(-1)
    seeds = flat[n + (n & 1):].view(cupy.int64) if flat.size > n else None
    return flat[:n].reshape(b, h, lq, 1), seeds


def _sdpa_operands(arrays: tuple) -> tuple:
    """The arrays as cuDNN reads them: strided views as they are (cuDNN takes any strides
    with a unit last one, so a head view of a packed projection needs no copy)."""
    return tuple(a if a.strides[-1] == a.itemsize else cupy.ascontiguousarray(a)
                 for a in arrays)


def _seed_tensors(g: Any) -> tuple:
    cudnn = _cudnn()
    return tuple(g.tensor(name=n, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1],
                          data_type=cudnn.data_type.INT64) for n in ("seed", "offset"))


def sdpa_forward(q: Any, k: Any, v: Any, *, scale: float, causal: bool,
                 dropout_p: float = 0.0) -> Any:
    """``(out, stats)`` of flash attention (stats: float32 log-sum-exp ``(B, H, L, 1)``
    for the backward, then with dropout the mask's seed words), or None when cuDNN
    refuses the case. With ``dropout_p`` cuDNN draws the mask inside the kernel."""
    out = _sdpa_forward(_sdpa_operands((q, k, v)), scale, causal, dropout_p)
    if out is None and any(not contiguous_flag(a) for a in (q, k, v)):
        out = _sdpa_forward(tuple(cupy.ascontiguousarray(a) for a in (q, k, v)), scale,
                            causal, dropout_p)
    return out


def _sdpa_forward(qkv: tuple, scale: float, causal: bool, dropout_p: float) -> Any:
    q, k, v = qkv
    b, h, lq, _ = q.shape
    o = cupy.empty((b, h, lq, v.shape[3]), dtype=q.dtype)
    buf, stats, seeds = _pack_stats(b, h, lq, dropout_p > 0)

    def build():
        cudnn = _cudnn()
        g = _graph(q.dtype)
        t = {n: g.tensor(name=n, dim=list(a.shape), stride=_strides(a),
                         data_type=_data_type(a.dtype))
             for n, a in (("q", q), ("k", k), ("v", v))}
        extra = {}
        if dropout_p > 0:
            t["seed"], t["offset"] = _seed_tensors(g)
            extra["dropout"] = (float(dropout_p), t["seed"], t["offset"])
        to, ts = g.sdpa(name="sdpa", q=t["q"], k=t["k"], v=t["v"], is_inference=False,
                        attn_scale=scale, use_causal_mask=causal, **extra)
        to.set_output(True).set_dim(list(o.shape)).set_stride(_strides(o))
        ts.set_output(True).set_dim(list(stats.shape)).set_stride(
            _strides(stats)).set_data_type(cudnn.data_type.FLOAT)
        _finish(g, False)
        return g, {**t, "o": to, "stats": ts}

    arrays = {"q": q, "k": k, "v": v, "o": o, "stats": stats}
    if seeds is not None:
        seeds[...] = _draw_seeds(q)
        arrays.update(seed=seeds[0:1], offset=seeds[1:2])
    key = ("sdpa", q.shape, k.shape, v.shape, q.strides, k.strides, v.strides, q.dtype,
           float(scale), bool(causal), float(dropout_p))
    if not _execute(key, build, arrays):
        return None
    return o, buf if seeds is not None else stats


def sdpa_backward(q: Any, k: Any, v: Any, o: Any, grad: Any, stats: Any, *, scale: float,
                  causal: bool, dropout_p: float = 0.0) -> Any:
    """``(dq, dk, dv)`` of flash attention, or None when cuDNN refuses the case."""
    stats, seeds = _unpack_stats(stats, q)
    if (seeds is None) != (dropout_p == 0):
        return None
    out = _sdpa_backward(_sdpa_operands((q, k, v, o, grad)), stats, seeds, scale, causal,
                         dropout_p)
    if out is None and any(not contiguous_flag(a) for a in (q, k, v, o, grad)):
        out = _sdpa_backward(tuple(cupy.ascontiguousarray(a) for a in (q, k, v, o, grad)),
                             stats, seeds, scale, causal, dropout_p)
    return out


def _sdpa_backward(arrays: tuple, stats: Any, seeds: Any, scale: float, causal: bool,
                   dropout_p: float) -> Any:
    q, k, v, o, grad = arrays
    dq, dk, dv = (cupy.empty(a.shape, dtype=a.dtype) for a in (q, k, v))

    def build():
        g = _graph(q.dtype)
        t = {n: g.tensor(name=n, dim=list(a.shape), stride=_strides(a),
                         data_type=_data_type(a.dtype))
             for n, a in (("q", q), ("k", k), ("v", v), ("o", o), ("do", grad),
                          ("stats", stats))}
        extra = {}
        if dropout_p > 0:
            t["seed"], t["offset"] = _seed_tensors(g)
            extra["dropout"] = (float(dropout_p), t["seed"], t["offset"])
        tdq, tdk, tdv = g.sdpa_backward(name="sdpa_backward", q=t["q"], k=t["k"], v=t["v"],
                                        o=t["o"], dO=t["do"], stats=t["stats"],
                                        attn_scale=scale, use_causal_mask=causal, **extra)
        for tt, a in ((tdq, dq), (tdk, dk), (tdv, dv)):
            tt.set_output(True).set_dim(list(a.shape)).set_stride(_strides(a))
        _finish(g, False)
        return g, {**t, "dq": tdq, "dk": tdk, "dv": tdv}

    pack = {"q": q, "k": k, "v": v, "o": o, "do": grad, "stats": stats, "dq": dq, "dk": dk,
            "dv": dv}
    if seeds is not None:
        pack.update(seed=seeds[0:1], offset=seeds[1:2])
    key = ("sdpa_bwd", *(a.shape for a in arrays), *(a.strides for a in arrays), q.dtype,
           float(scale), bool(causal), float(dropout_p))
    return (dq, dk, dv) if _execute(key, build, pack) else None
