"""Fused optimizer steps: one elementwise kernel per update, float32 parameters.

Each step reads the parameter, its gradient and the state arrays once and writes the
new parameter and state in one dispatch (the core's fallbacks in
``volta_core.optim.kernels`` take 5-15 ops). Hyper-parameters are metadata words, so a
changing learning rate does not recompile; the options that change the algorithm
(momentum on/off, nesterov, amsgrad, ...) pick the pipeline.

The multi-tensor steps (``sgd_step_multi``, ``adam_step_multi``: a whole parameter group,
in place) read their hyper-parameters from a small uploaded buffer instead, one per
group and step. Recorded by ``vt.compile(mode="reduce-overhead")``, that upload is
*live*: each replay writes the values the optimizer's ``recompute`` gives (Adam's step
count and bias corrections, a scheduler's new learning rate, see
``volta_core.compiler.host_args``), so the recorded dispatches stay valid.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable

from .. import codegen as cg
from .. import dtypes as D
from ..array import Array, new_array
from ..engine import Engine, Storage, groups_for


def _src(n_in: int, n_out: int, n_sc: int, body: str,
         live: bool = False) -> tuple[str, int, int, int]:
    # meta: n, in offsets[n_in], then the scalars[n_sc] as f32 bits; with ``live`` the
    # scalars are read from a buffer ``sc`` bound after the inputs instead
    words = 1 + n_in + (0 if live else n_sc)
    f = D.float32
    lines = [f"  if (gi >= {cg.word(0)}) {{ return; }}"]
    lines += [f"  let i{k} = in{k}[{cg.word(1 + k)} + gi];" for k in range(n_in)]
    lines += [f"  let s{k} = sc[{k}];" if live else
              f"  let s{k} = bitcast<f32>({cg.word(1 + n_in + k)});" for k in range(n_sc)]
    lines += [f"  var o{k} = 0.0;" for k in range(n_out)]
    lines.append(body)
    lines += [f"  out{k}[gi] = o{k};" for k in range(n_out)]
    ins = [(f"in{k}", f) for k in range(n_in)] + ([("sc", f)] if live else [])
    src = cg.header([f], words, [(f"out{k}", f) for k in range(n_out)], ins)
    return src + cg.main_1d("\n".join(lines)), words, n_out, len(ins)


def _contig(a: Array) -> Array:
    if a.is_contiguous:
        return a
    from ..namespace.elementwise import contiguous_copy
    return contiguous_copy(a)


def _f32(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", float(v)))[0]


def fused(key: tuple, inputs: list[Array], n_out: int, scalars: list[float],
          body: str) -> list[Array]:
    """Run ``body`` (WGSL over ``i*``/``s*``, assigning ``o*``) elementwise.

    Args:
        key: identifies ``body`` in the pipeline cache.
        inputs: float32 arrays of one shape.
        n_out: number of float32 outputs (new arrays of that shape).
        scalars: float hyper-parameters, ``s0``, ``s1``, ... in ``body``.
    """
    inputs = [_contig(a) for a in inputs]
    x = inputs[0]
    eng = x.engine
    outs = [new_array(x.shape, D.float32, eng) for _ in range(n_out)]
    n = x.size
    if n == 0:
        return outs
    kern = eng.kernel(("fused_optim", key),
                      lambda: _src(len(inputs), n_out, len(scalars), body))
    words = [n] + [a.offset for a in inputs] + [_f32(s) for s in scalars]
    eng.dispatch(kern, struct.pack(f"<{len(words)}I", *words),
                 [o._st.buffer for o in outs] + [a._st.buffer for a in inputs],
                 groups_for(n))
    return outs


def fused_live(key: tuple, inputs: list[Array], n_out: int, scalars: list[float],
               body: str, again: Callable[..., list | None]) -> list[Array]:
    """:func:`fused` for a per-parameter optimizer step whose call runs inside
    ``volta_core.replay.host_args``: while ``vt.compile(mode="reduce-overhead")`` records,
    the scalars go in a live buffer (each replay writes ``again(**recompute())`` there,
    so a recorded step stays valid as the step count and the lr change); otherwise, or
    outside such a call, they are metadata as in :func:`fused`."""
    x = inputs[0]
    eng = x.engine
    if eng._tape is None or x.size == 0:
        return fused(key, inputs, n_out, scalars, body)
    live = _live_source()
    if live is None:
        return fused(key, inputs, n_out, scalars, body)
    inputs = [_contig(a) for a in inputs]
    outs = [new_array(x.shape, D.float32, eng) for _ in range(n_out)]
    n = x.size
    sc = _scalar_buffer(scalars, eng, live, again)
    kern = eng.kernel(("fused_optim_sc", key, len(scalars)),
                      lambda: _src(len(inputs), n_out, len(scalars), body, live=True))
    words = [n] + [a.offset for a in inputs]
    eng.dispatch(kern, struct.pack(f"<{len(words)}I", *words),
                 [o._st.buffer for o in outs] + [a._st.buffer for a in inputs] + [sc.buffer],
                 groups_for(n))
    return outs


def inplace(key: tuple, writes: list[Array], reads: list[Array], ids: tuple[int, ...],
            scalars: Storage, body: str) -> None:
    """Run ``body`` elementwise in place over float32 arrays of one shape (the writes
    contiguous): array ``k`` of ``writes + reads`` is ``i{ids[k]}`` in ``body``, the
    float32 values in ``scalars`` are ``s0, s1, ...``, and the ``o{j}`` it assigns go back
    into ``writes[j]``."""
    reads = [_contig(a) for a in reads]
    x = writes[0]
    n = x.size
    if n == 0:
        return
    eng = x.engine
    arrs = writes + reads

    def make() -> tuple[str, int, int, int]:
        words = 1 + len(arrs)
        f = D.float32
        names = [f"w{k}" for k in range(len(writes))] + [f"r{k}" for k in range(len(reads))]
        lines = [f"  if (gi >= {cg.word(0)}) {{ return; }}"]
        lines += [f"  let s{k} = sc[{k}];" for k in range(scalars.nbytes // 4)]
        # the element indices first: ``body`` may shadow the metadata ``m``
        lines += [f"  let at{k} = {cg.word(1 + k)} + gi;" for k in range(len(arrs))]
        lines += [f"  let i{i} = {nm}[at{k}];" for k, (i, nm) in enumerate(zip(ids, names))]
        lines += [f"  var o{k} = 0.0;" for k in range(len(writes))]
        lines.append(body)
        lines += [f"  w{k}[at{k}] = o{k};" for k in range(len(writes))]
        src = cg.header([f], words, [(f"w{k}", f) for k in range(len(writes))],
                        [(f"r{k}", f) for k in range(len(reads))] + [("sc", f)])
        return src + cg.main_1d("\n".join(lines)), words, len(writes), len(reads) + 1

    kern = eng.kernel(("inplace_optim", key, ids, scalars.nbytes), make)
    words = [n] + [a.offset for a in arrs]
    eng.dispatch(kern, struct.pack(f"<{len(words)}I", *words),
                 [a._st.buffer for a in arrs] + [scalars.buffer], groups_for(n))


def _scalar_buffer(values: list[float], eng: Engine, recompute: Callable | None,
                   again: Callable) -> Storage:
    """The float32 ``values`` in a new buffer; with ``recompute`` (a live host-argument
    source, see ``volta_core.compiler.host_args``), a recording of the call writes
    ``again(**recompute())`` there on each replay instead."""
    data = struct.pack(f"<{len(values)}f", *values)
    live = None
    if recompute is not None:
        def live() -> bytes | None:
            hp = recompute()
            vals = None if hp is None else again(**hp)
            return None if vals is None else struct.pack(f"<{len(vals)}f", *vals)
    return eng.upload(data, live=live)


def _multi_ok(*lists: list) -> bool:
    """Whether the lists (parameters, gradients, state) hold float32 wgpu arrays of one
    engine, as many in each list, each parameter's arrays of its shape and in buffers of
    their own."""
    first = lists[0]
    if not first or not supported(*(a for col in lists for a in col)):
        return False
    eng = first[0].engine
    if not (all(len(col) == len(first) and all(a.engine is eng for a in col) for col in lists)
            and all(a.shape == row[0].shape for row in zip(*lists) for a in row)):
        return False
    # one dispatch binds a parameter's arrays together: a buffer written there may be
    # bound once only (a gradient that is a view of the parameter: the per-parameter path)
    return all(len({id(a._st.buffer) for a in row}) == len(row) for row in zip(*lists))


def _live_source() -> Callable | None:
    from volta_core.replay import live_host_args
    return live_host_args()


def sgd_step_multi(params: list, grads: list, bufs: list, *, lr: float, momentum: float,
                   dampening: float, weight_decay: float, nesterov: bool,
                   maximize: bool) -> bool:
    """SGD over a group in place (``volta_core.optim.kernels.sgd_step_multi``'s contract):
    one dispatch per parameter, the hyper-parameters in one live buffer."""
    cols = [params, grads] + ([bufs] if momentum != 0 else [])
    if (momentum != 0 and any(b is None for b in bufs)) or not _multi_ok(*cols) or \
            not all(a.is_contiguous for col in cols[:1] + cols[2:] for a in col):
        return False
    flags = (maximize, weight_decay != 0, momentum != 0, nesterov)

    def scalars(lr: float, momentum: float, dampening: float, weight_decay: float,
                nesterov: bool, maximize: bool) -> list | None:
        if (maximize, weight_decay != 0, momentum != 0, nesterov) != flags:
            return None  # another pipeline: the recording does not apply
        return [lr, weight_decay, momentum, 1.0 - dampening]

    sc = _scalar_buffer(scalars(lr, momentum, dampening, weight_decay, nesterov, maximize),
                        params[0].engine, _live_source(), scalars)
    body = _sgd_body(maximize, weight_decay != 0, momentum != 0, False, nesterov)
    for k, p in enumerate(params):
        if momentum != 0:
            inplace(("sgd",) + flags, [p, bufs[k]], [grads[k]], (0, 2, 1), sc, body)
        else:
            inplace(("sgd",) + flags, [p], [grads[k]], (0, 1), sc, body)
    return True


def adam_step_multi(params: list, grads: list, exp_avgs: list, exp_avg_sqs: list, *,
                    step: int, lr: float, beta1: float, beta2: float, eps: float,
                    weight_decay: float, maximize: bool, decoupled: bool) -> bool:
    """Adam/AdamW over a group in place (``volta_core.optim.kernels.adam_step_multi``'s
    contract): one dispatch per parameter, the step-dependent scalars in one live buffer
    (computed on the host as ``adam_step`` does, so the results are the same bit for
    bit)."""
    cols = [params, grads, exp_avgs, exp_avg_sqs]
    if not _multi_ok(*cols) or not all(a.is_contiguous for col in (params, exp_avgs,
                                                                      exp_avg_sqs)
                                       for a in col):
        return False
    wd = weight_decay != 0
    flags = (maximize, wd, decoupled)

    def scalars(step: int, lr: float, beta1: float, beta2: float, eps: float,
                weight_decay: float, maximize: bool, decoupled: bool) -> list | None:
        if (maximize, weight_decay != 0, decoupled) != flags:
            return None
        return _adam_scalars(step, lr, beta1, beta2, eps, weight_decay)

    sc = _scalar_buffer(scalars(step, lr, beta1, beta2, eps, weight_decay, maximize,
                                decoupled), params[0].engine, _live_source(), scalars)
    body = _adam_body(maximize, wd, decoupled, amsgrad=False)
    for k, p in enumerate(params):
        inplace(("adam",) + flags, [p, exp_avgs[k], exp_avg_sqs[k]], [grads[k]], (0, 2, 3, 1),
                sc, body)
    return True


def _adam_scalars(step: int, lr: float, beta1: float, beta2: float, eps: float,
                  weight_decay: float) -> list[float]:
    """``s0..s7`` of the Adam kernels (see :func:`_adam_body`)."""
    bias1 = 1.0 - beta1 ** step
    return [1.0 - lr * weight_decay, weight_decay, 1.0 - beta1, beta2, 1.0 - beta2,
            math.sqrt(1.0 - beta2 ** step), eps, lr / bias1]


def _adam_body(maximize: bool, wd: bool, decoupled: bool, amsgrad: bool) -> str:
    """Adam's WGSL over ``i0`` param, ``i1`` grad, ``i2`` exp_avg, ``i3`` exp_avg_sq
    (``i4`` max_exp_avg_sq), assigning ``o0`` param, ``o1``, ``o2`` (``o3``)."""
    body = ["  var p = i0;", _grad(maximize, 1.0 if wd and not decoupled else 0)]
    if wd and decoupled:
        body.append("  p = p * s0;")
    body.append("  let m = i2 + s2 * (g - i2);")
    body.append("  let v = s3 * i3 + s4 * (g * g);")
    if amsgrad:
        body.append("  let mx = max(i4, v); o3 = mx;")
        body.append("  let denom = sqrt(mx) / s5 + s6;")
    else:
        body.append("  let denom = sqrt(v) / s5 + s6;")
    body.append("  o0 = p - s7 * (m / denom); o1 = m; o2 = v;")
    return "\n".join(body)


def supported(*arrays: object) -> bool:
    """Whether every given array (None skipped) is a float32 wgpu array."""
    return all(a is None or (isinstance(a, Array) and a.dtype is D.float32) for a in arrays)


def _grad(maximize: bool, weight_decay: float, wd_scalar: str = "s1") -> str:
    g = "  var g = " + ("-i1;" if maximize else "i1;")
    if weight_decay != 0:
        g += f" g = g + {wd_scalar} * i0;"
    return g


def sgd_step(param: Array, grad: Array, buf: Array | None, *, lr: float, momentum: float,
             dampening: float, weight_decay: float, nesterov: bool, maximize: bool
             ) -> tuple[Array, Array | None]:
    """SGD with optional momentum/nesterov/weight decay: ``(param, momentum_buffer)``."""
    inputs = [param, grad] + ([buf] if momentum != 0 and buf is not None else [])
    n_out = 2 if momentum != 0 else 1
    key = ("sgd", maximize, weight_decay != 0, momentum != 0, buf is None, nesterov)
    outs = fused(key, inputs, n_out, [lr, weight_decay, momentum, 1.0 - dampening],
                 _sgd_body(maximize, weight_decay != 0, momentum != 0, buf is None, nesterov))
    return outs[0], (outs[1] if momentum != 0 else None)


def _sgd_body(maximize: bool, wd: bool, momentum: bool, first: bool, nesterov: bool) -> str:
    """SGD's WGSL over ``i0`` param, ``i1`` grad, ``i2`` momentum buffer (not read on the
    ``first`` step), assigning ``o0`` param (and ``o1`` buffer)."""
    body = [_grad(maximize, 1.0 if wd else 0.0)]
    if momentum:
        body.append("  let b = g;" if first else "  let b = s2 * i2 + s3 * g;")
        body.append("  g = g + s2 * b;" if nesterov else "  g = b;")
        body.append("  o1 = b;")
    body.append("  o0 = i0 - s0 * g;")
    return "\n".join(body)


def adam_step(param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array,
              max_sq: Array | None, *, step: int, lr: float, beta1: float, beta2: float,
              eps: float, weight_decay: float, amsgrad: bool, maximize: bool,
              decoupled: bool) -> tuple[Array, Array, Array, Array | None]:
    """Adam / AdamW: ``(param, exp_avg, exp_avg_sq, max_exp_avg_sq)``."""
    wd = weight_decay != 0
    inputs = [param, grad, exp_avg, exp_avg_sq] + ([max_sq] if amsgrad else [])
    scalars = _adam_scalars(step, lr, beta1, beta2, eps, weight_decay)
    key = ("adam", maximize, wd, decoupled, amsgrad)

    def again(step: int, lr: float, beta1: float, beta2: float, eps: float,
              weight_decay: float, amsgrad: bool, maximize: bool, decoupled: bool
              ) -> list | None:
        if ("adam", maximize, weight_decay != 0, decoupled, amsgrad) != key:
            return None  # another pipeline: the recording does not apply
        return _adam_scalars(step, lr, beta1, beta2, eps, weight_decay)

    outs = fused_live(key, inputs, 4 if amsgrad else 3, scalars,
                      _adam_body(maximize, wd, decoupled, amsgrad), again)
    return outs[0], outs[1], outs[2], (outs[3] if amsgrad else None)


def rmsprop_step(param: Array, grad: Array, square_avg: Array, grad_avg: Array | None,
                 buf: Array | None, *, lr: float, alpha: float, eps: float,
                 weight_decay: float, momentum: float, centered: bool, maximize: bool
                 ) -> tuple[Array, Array, Array | None, Array | None]:
    """RMSprop: ``(param, square_avg, grad_avg, momentum_buffer)``."""
    body = [_grad(maximize, weight_decay), "  let sq = s2 * i2 + s3 * (g * g); o1 = sq;"]
    inputs = [param, grad, square_avg]
    outs_n = 2
    if centered:
        inputs.append(grad_avg)
        ga = f"i{len(inputs) - 1}"
        body.append(f"  let ga = {ga} + s3 * (g - {ga}); o{outs_n} = ga;")
        body.append("  let avg = sqrt(sq - ga * ga) + s4;")
        outs_n += 1
    else:
        body.append("  let avg = sqrt(sq) + s4;")
    if momentum > 0:
        inputs.append(buf)
        b = f"i{len(inputs) - 1}"
        body.append(f"  let b = s5 * {b} + g / avg; o{outs_n} = b; o0 = i0 - s0 * b;")
        outs_n += 1
    else:
        body.append("  o0 = i0 - s0 * (g / avg);")
    key = ("rmsprop", maximize, weight_decay != 0, centered, momentum > 0)
    outs = fused(key, inputs, outs_n, [lr, weight_decay, alpha, 1.0 - alpha, eps, momentum],
                 "\n".join(body))
    k = 2
    ga_out = b_out = None
    if centered:
        ga_out, k = outs[k], k + 1
    if momentum > 0:
        b_out = outs[k]
    return outs[0], outs[1], ga_out, b_out


def adagrad_step(param: Array, grad: Array, state_sum: Array, *, step: int, lr: float,
                 lr_decay: float, weight_decay: float, eps: float, maximize: bool
                 ) -> tuple[Array, Array]:
    """Adagrad: ``(param, state_sum)``."""
    key = ("adagrad", maximize, weight_decay != 0)

    def again(step: int, lr: float, lr_decay: float, weight_decay: float, eps: float,
              maximize: bool) -> list | None:
        if ("adagrad", maximize, weight_decay != 0) != key:
            return None
        return [lr / (1.0 + (step - 1) * lr_decay), weight_decay, eps]

    body = (_grad(maximize, weight_decay) + "\n  let ss = i2 + g * g; o1 = ss;\n"
            "  o0 = i0 - s0 * (g / (sqrt(ss) + s2));")
    outs = fused_live(key, [param, grad, state_sum], 2,
                      again(step, lr, lr_decay, weight_decay, eps, maximize), body, again)
    return outs[0], outs[1]


def adamax_step(param: Array, grad: Array, exp_avg: Array, exp_inf: Array, *, step: int,
                lr: float, beta1: float, beta2: float, eps: float, weight_decay: float,
                maximize: bool) -> tuple[Array, Array, Array]:
    """Adamax: ``(param, exp_avg, exp_inf)``."""
    key = ("adamax", maximize, weight_decay != 0)

    def again(step: int, lr: float, beta1: float, beta2: float, eps: float,
              weight_decay: float, maximize: bool) -> list | None:
        if ("adamax", maximize, weight_decay != 0) != key:
            return None
        return [lr / (1.0 - beta1 ** step), weight_decay, 1.0 - beta1, beta2, eps]

    body = (_grad(maximize, weight_decay) + "\n  let m = i2 + s2 * (g - i2);\n"
            "  let u = max(s3 * i3, abs(g) + s4);\n"
            "  o0 = i0 - s0 * (m / u); o1 = m; o2 = u;")
    outs = fused_live(key, [param, grad, exp_avg, exp_inf], 3,
                      again(step, lr, beta1, beta2, eps, weight_decay, maximize), body, again)
    return outs[0], outs[1], outs[2]


def _adam_like_head(maximize: bool, wd: bool, decoupled: bool) -> list[str]:
    """The common start of NAdam's and RAdam's bodies: ``p``, ``g`` (s0 ``1 - lr wd``, s1
    ``wd``), ``m`` (s2 ``1 - beta1``) and ``v`` (s3 ``beta2``, s4 ``1 - beta2``)."""
    body = ["  var p = i0;", _grad(maximize, 1.0 if wd and not decoupled else 0)]
    if wd and decoupled:
        body.append("  p = p * s0;")
    body.append("  let m = i2 + s2 * (g - i2); o1 = m;")
    body.append("  let v = s3 * i3 + s4 * (g * g); o2 = v;")
    return body


def radam_step(param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array, *, step: int,
               lr: float, beta1: float, beta2: float, eps: float, weight_decay: float,
               maximize: bool, decoupled: bool) -> tuple[Array, Array, Array]:
    """RAdam: ``(param, exp_avg, exp_avg_sq)``; whether the rectified adaptive term applies
    (``rho_t > 5``) is a scalar of the call, so one recorded step serves every step."""
    key = ("radam", maximize, weight_decay != 0, decoupled)

    def again(step: int, lr: float, beta1: float, beta2: float, eps: float,
              weight_decay: float, maximize: bool, decoupled: bool) -> list | None:
        if ("radam", maximize, weight_decay != 0, decoupled) != key:
            return None
        bias1, bias2 = 1.0 - beta1 ** step, 1.0 - beta2 ** step
        rho_inf = 2.0 / (1.0 - beta2) - 1.0
        rho_t = rho_inf - 2.0 * step * beta2 ** step / bias2
        rect = 0.0
        if rho_t > 5.0:
            rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                             / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        return [1.0 - lr * weight_decay, weight_decay, 1.0 - beta1, beta2, 1.0 - beta2, eps,
                math.sqrt(bias2), lr * rect / bias1, lr / bias1, 1.0 if rho_t > 5.0 else 0.0]

    body = _adam_like_head(maximize, weight_decay != 0, decoupled)
    body.append("  if (s9 != 0.0) { o0 = p - s7 * (m * (s6 / (sqrt(v) + s5))); }"
                " else { o0 = p - s8 * m; }")
    outs = fused_live(key, [param, grad, exp_avg, exp_avg_sq], 3,
                      again(step, lr, beta1, beta2, eps, weight_decay, maximize, decoupled),
                      "\n".join(body), again)
    return outs[0], outs[1], outs[2]


def nadam_step(param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array, *, step: int,
               lr: float, beta1: float, beta2: float, eps: float, weight_decay: float,
               mu: float, mu_next: float, mu_product: float, mu_product_next: float,
               maximize: bool, decoupled: bool) -> tuple[Array, Array, Array]:
    """NAdam: ``(param, exp_avg, exp_avg_sq)`` (the momentum schedule from the host)."""
    key = ("nadam", maximize, weight_decay != 0, decoupled)

    def again(step: int, lr: float, beta1: float, beta2: float, eps: float,
              weight_decay: float, mu: float, mu_next: float, mu_product: float,
              mu_product_next: float, maximize: bool, decoupled: bool) -> list | None:
        if ("nadam", maximize, weight_decay != 0, decoupled) != key:
            return None
        return [1.0 - lr * weight_decay, weight_decay, 1.0 - beta1, beta2, 1.0 - beta2,
                1.0 - beta2 ** step, eps, lr * (1.0 - mu) / (1.0 - mu_product),
                lr * mu_next / (1.0 - mu_product_next)]

    body = _adam_like_head(maximize, weight_decay != 0, decoupled)
    body.append("  let denom = sqrt(v / s5) + s6;")
    body.append("  p = p - s7 * (g / denom);")
    body.append("  o0 = p - s8 * (m / denom);")
    outs = fused_live(key, [param, grad, exp_avg, exp_avg_sq], 3,
                      again(step, lr, beta1, beta2, eps, weight_decay, mu, mu_next,
                            mu_product, mu_product_next, maximize, decoupled),
                      "\n".join(body), again)
    return outs[0], outs[1], outs[2]
