"""Fused optimizer steps: one elementwise kernel per update, float32 parameters.

Each step reads the parameter, its gradient and the state arrays once and writes the
new parameter and state in one dispatch (the core's fallbacks in
``volta_core.optim.kernels`` take 5-15 ops). Hyper-parameters are metadata words, so a
changing learning rate does not recompile; the options that change the algorithm
(momentum on/off, nesterov, amsgrad, ...) pick the pipeline.
"""

from __future__ import annotations

import math
import struct

from .. import codegen as cg
from .. import dtypes as D
from ..array import Array, new_array
from ..engine import groups_for


def _src(n_in: int, n_out: int, n_sc: int, body: str) -> tuple[str, int, int, int]:
    # meta: n, in offsets[n_in], scalars[n_sc] (f32 bits)
    words = 1 + n_in + n_sc
    f = D.float32
    lines = [f"  if (gi >= {cg.word(0)}) {{ return; }}"]
    lines += [f"  let i{k} = in{k}[{cg.word(1 + k)} + gi];" for k in range(n_in)]
    lines += [f"  let s{k} = bitcast<f32>({cg.word(1 + n_in + k)});" for k in range(n_sc)]
    lines += [f"  var o{k} = 0.0;" for k in range(n_out)]
    lines.append(body)
    lines += [f"  out{k}[gi] = o{k};" for k in range(n_out)]
    src = cg.header([f], words, [(f"out{k}", f) for k in range(n_out)],
                    [(f"in{k}", f) for k in range(n_in)]) + cg.main_1d("\n".join(lines))
    return src, words, n_out, n_in


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
    body = [_grad(maximize, weight_decay)]
    inputs = [param, grad]
    if momentum != 0:
        if buf is None:
            body.append("  let b = g;")
        else:
            inputs.append(buf)
            body.append("  let b = s2 * i2 + s3 * g;")
        body.append("  g = g + s2 * b;" if nesterov else "  g = b;")
        body.append("  o1 = b;")
    body.append("  o0 = i0 - s0 * g;")
    n_out = 2 if momentum != 0 else 1
    key = ("sgd", maximize, weight_decay != 0, momentum != 0, buf is None, nesterov)
    outs = fused(key, inputs, n_out, [lr, weight_decay, momentum, 1.0 - dampening],
                 "\n".join(body))
    return outs[0], (outs[1] if momentum != 0 else None)


def adam_step(param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array,
              max_sq: Array | None, *, step: int, lr: float, beta1: float, beta2: float,
              eps: float, weight_decay: float, amsgrad: bool, maximize: bool,
              decoupled: bool) -> tuple[Array, Array, Array, Array | None]:
    """Adam / AdamW: ``(param, exp_avg, exp_avg_sq, max_exp_avg_sq)``."""
    wd = weight_decay != 0
    body = ["  var p = i0;", _grad(maximize, weight_decay if wd and not decoupled else 0)]
    if wd and decoupled:
        body.append("  p = p * s0;")
    body.append("  let m = i2 + s2 * (g - i2);")
    body.append("  let v = s3 * i3 + s4 * (g * g);")
    inputs = [param, grad, exp_avg, exp_avg_sq]
    if amsgrad:
        inputs.append(max_sq)
        body.append("  let mx = max(i4, v); o3 = mx;")
        body.append("  let denom = sqrt(mx) / s5 + s6;")
    else:
        body.append("  let denom = sqrt(v) / s5 + s6;")
    body.append("  o0 = p - s7 * (m / denom); o1 = m; o2 = v;")
    bias1 = 1.0 - beta1 ** step
    scalars = [1.0 - lr * weight_decay, weight_decay, 1.0 - beta1, beta2, 1.0 - beta2,
               math.sqrt(1.0 - beta2 ** step), eps, lr / bias1]
    key = ("adam", maximize, wd, decoupled, amsgrad)
    outs = fused(key, inputs, 4 if amsgrad else 3, scalars, "\n".join(body))
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
    clr = lr / (1.0 + (step - 1) * lr_decay)
    body = (_grad(maximize, weight_decay) + "\n  let ss = i2 + g * g; o1 = ss;\n"
            "  o0 = i0 - s0 * (g / (sqrt(ss) + s2));")
    outs = fused(("adagrad", maximize, weight_decay != 0), [param, grad, state_sum], 2,
                 [clr, weight_decay, eps], body)
    return outs[0], outs[1]
