"""Fused elementwise kernels on CUDA: optimizer steps, dropout mask, erf.

Each optimizer step is ONE ElementwiseKernel that reads the gradient and updates the
parameter and its state arrays in place (float16 state is updated through float32
arithmetic). The functions keep the fallbacks' contract from
``volta_core.optim.kernels``: they return ``(param, *state)``, here the very arrays
they were given (the optimizer rebinds them) plus any state created on this step.
Hyper-parameters and bias corrections are Python numbers passed as kernel scalars, so
nothing is read back from the device and nothing is recompiled between steps.
"""

from __future__ import annotations

import math
from typing import Any

import cupy
import numpy as np

from volta_core.ops import elementwise as generic_elementwise
from volta_core.ops import math as generic_math
from volta_core.ops import nn as generic
from volta_core.optim import kernels as generic_optim

from ._util import acc_type, contiguous_flag, elementwise, is_float
from .launch import mapped, pointwise, pointwise_ok, run

_GRAD = """
A gv = (A)g;
if (maximize) gv = -gv;
A pv = (A)p;
"""


def _same(param: Any, *arrays: Any) -> bool:
    """Whether the fused path applies: one floating dtype, matching shapes."""
    return is_float(param, *arrays) and all(
        a is None or a.shape == param.shape for a in arrays)


# -- SGD ----------------------------------------------------------------------------------

_SGD = _GRAD + """
if (wd != 0) gv += wd * pv;
MOMENTUM
p = (T)(pv - lr * gv);
"""
_SGD_MOMENTUM = """
const A bv = first ? gv : mom * (A)buf + ((A)1 - damp) * gv;
buf = (T)bv;
gv = nesterov ? gv + mom * bv : bv;
"""


def sgd_step(xp: Any, param: Any, grad: Any, momentum_buffer: Any, *, lr: float,
             momentum: float, dampening: float, weight_decay: float, nesterov: bool,
             maximize: bool) -> tuple:
    """Same contract as ``volta_core.optim.kernels.sgd_step`` (updates in place)."""
    if not _same(param, grad, momentum_buffer):
        return generic_optim.sgd_step(xp, param, grad, momentum_buffer, lr=lr,
                                      momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize)
    acc = acc_type(param.dtype)
    if momentum == 0:
        kern = elementwise("sgd", acc, "T g, F lr, F wd, int32 maximize", "T p",
                           _SGD.replace("MOMENTUM", ""))
        kern(grad, lr, weight_decay, int(maximize), param)
        return param, None
    first = momentum_buffer is None
    buf = cupy.empty_like(param) if first else momentum_buffer
    kern = elementwise("sgd_momentum", acc,
                       "T g, F lr, F wd, F mom, F damp, int32 nesterov, int32 maximize, "
                       "int32 first", "T p, T buf", _SGD.replace("MOMENTUM", _SGD_MOMENTUM))
    kern(grad, lr, weight_decay, momentum, dampening, int(nesterov), int(maximize),
         int(first), param, buf)
    return param, buf


# -- Adam / AdamW -------------------------------------------------------------------------

_ADAM = _GRAD + """
if (wd != 0) {
    if (decoupled) pv = pv * ((A)1 - lr * wd);
    else gv += wd * pv;
}
const A mv = (A)m + ((A)1 - b1) * (gv - (A)m);
A vv = b2 * (A)v + ((A)1 - b2) * (gv * gv);
m = (T)mv;
v = (T)vv;
AMSGRAD
p = (T)(pv - step_size * (mv / (sqrt(vv) / bc2 + eps)));
"""
_AMSGRAD = """
A vm = (A)vmax;
vm = (vm > vv || vm != vm) ? vm : vv;
vmax = (T)vm;
vv = vm;
"""
# bias corrections from the step count on the GPU (capturable: nothing comes from the host)
_ADAM_STEP = """
const A step_size = lr / ((A)1 - pow(b1, (A)st));
const A bc2 = sqrt((A)1 - pow(b2, (A)st));
"""
_ADAM_IN = ("T g, F lr, F b1, F b2, F eps, F wd, F step_size, F bc2, int32 maximize, "
            "int32 decoupled")


def adam_step(xp: Any, param: Any, grad: Any, exp_avg: Any, exp_avg_sq: Any,
              max_exp_avg_sq: Any, *, step: int, lr: float, beta1: float, beta2: float,
              eps: float, weight_decay: float, amsgrad: bool, maximize: bool,
              decoupled: bool) -> tuple:
    """Same contract as ``volta_core.optim.kernels.adam_step`` (updates in place)."""
    vmax = max_exp_avg_sq if amsgrad else None
    if not _same(param, grad, exp_avg, exp_avg_sq, vmax) or (amsgrad and vmax is None):
        if not isinstance(step, int):
            from volta_core.errors import DTypeError

            raise DTypeError("Adam(capturable=True) on cuda needs a floating parameter with "
                             "state of its dtype and shape; got parameter "
                             f"{param.dtype}{tuple(param.shape)}, gradient "
                             f"{grad.dtype}{tuple(grad.shape)}")
        return generic_optim.adam_step(xp, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq,
                                       step=step, lr=lr, beta1=beta1, beta2=beta2, eps=eps,
                                       weight_decay=weight_decay, amsgrad=amsgrad,
                                       maximize=maximize, decoupled=decoupled)
    acc = acc_type(param.dtype)
    if not isinstance(step, int):  # capturable: the step count is a 0-d array on the GPU
        outs = "T p, T m, T v" + (", T vmax" if amsgrad else "")
        kern = elementwise("adam_capturable" + ("_amsgrad" if amsgrad else ""), acc,
                           "T g, float32 st, F lr, F b1, F b2, F eps, F wd, int32 maximize, "
                           "int32 decoupled", outs,
                           _ADAM_STEP + _ADAM.replace("AMSGRAD", _AMSGRAD if amsgrad else ""))
        kern(grad, step, lr, beta1, beta2, eps, weight_decay, int(maximize), int(decoupled),
             param, exp_avg, exp_avg_sq, *((vmax,) if amsgrad else ()))
        return param, exp_avg, exp_avg_sq, max_exp_avg_sq
    bias1 = 1.0 - beta1 ** step
    bias2_sqrt = math.sqrt(1.0 - beta2 ** step)
    args = (grad, lr, beta1, beta2, eps, weight_decay, lr / bias1, bias2_sqrt, int(maximize),
            int(decoupled))
    if amsgrad:
        kern = elementwise("adam_amsgrad", acc, _ADAM_IN, "T p, T m, T v, T vmax",
                           _ADAM.replace("AMSGRAD", _AMSGRAD))
        kern(*args, param, exp_avg, exp_avg_sq, vmax)
    else:
        kern = elementwise("adam", acc, _ADAM_IN, "T p, T m, T v",
                           _ADAM.replace("AMSGRAD", ""))
        kern(*args, param, exp_avg, exp_avg_sq)
    return param, exp_avg, exp_avg_sq, max_exp_avg_sq


# -- RMSprop ------------------------------------------------------------------------------

_RMSPROP = _GRAD + """
if (wd != 0) gv += wd * pv;
const A sq = alpha * (A)sqa + ((A)1 - alpha) * (gv * gv);
sqa = (T)sq;
AVG
UPDATE
"""
_RMS_PLAIN = "const A avg = sqrt(sq) + eps;"
_RMS_CENTERED = """
const A gav = (A)ga + ((A)1 - alpha) * (gv - (A)ga);
ga = (T)gav;
const A avg = sqrt(sq - gav * gav) + eps;
"""
_RMS_STEP = "p = (T)(pv - lr * (gv / avg));"
_RMS_MOMENTUM = """
const A bv = mom * (A)buf + gv / avg;
buf = (T)bv;
p = (T)(pv - lr * bv);
"""


def rmsprop_step(xp: Any, param: Any, grad: Any, square_avg: Any, grad_avg: Any,
                 momentum_buffer: Any, *, lr: float, alpha: float, eps: float,
                 weight_decay: float, momentum: float, centered: bool,
                 maximize: bool) -> tuple:
    """Same contract as ``volta_core.optim.kernels.rmsprop_step`` (updates in place)."""
    has_mom = momentum > 0
    ga = grad_avg if centered else None
    buf = momentum_buffer if has_mom else None
    if (not _same(param, grad, square_avg, ga, buf) or (centered and ga is None)
            or (has_mom and buf is None)):
        return generic_optim.rmsprop_step(xp, param, grad, square_avg, grad_avg,
                                          momentum_buffer, lr=lr, alpha=alpha, eps=eps,
                                          weight_decay=weight_decay, momentum=momentum,
                                          centered=centered, maximize=maximize)
    body = _RMSPROP.replace("AVG", _RMS_CENTERED if centered else _RMS_PLAIN)
    body = body.replace("UPDATE", _RMS_MOMENTUM if has_mom else _RMS_STEP)
    outs = ["T p", "T sqa"] + (["T ga"] if centered else []) + (["T buf"] if has_mom else [])
    name = "rmsprop" + ("_centered" if centered else "") + ("_momentum" if has_mom else "")
    kern = elementwise(name, acc_type(param.dtype),
                       "T g, F lr, F alpha, F eps, F wd, F mom, int32 maximize",
                       ", ".join(outs), body)
    arrays = [param, square_avg] + ([ga] if centered else []) + ([buf] if has_mom else [])
    kern(grad, lr, alpha, eps, weight_decay, momentum, int(maximize), *arrays)
    return param, square_avg, grad_avg, momentum_buffer


# -- Adagrad ------------------------------------------------------------------------------

_ADAGRAD = _GRAD + """
if (wd != 0) gv += wd * pv;
const A s = (A)ssum + gv * gv;
ssum = (T)s;
p = (T)(pv - clr * (gv / (sqrt(s) + eps)));
"""


def adagrad_step(xp: Any, param: Any, grad: Any, state_sum: Any, *, step: int, lr: float,
                 lr_decay: float, weight_decay: float, eps: float, maximize: bool) -> tuple:
    """Same contract as ``volta_core.optim.kernels.adagrad_step`` (updates in place)."""
    if not _same(param, grad, state_sum):
        return generic_optim.adagrad_step(xp, param, grad, state_sum, step=step, lr=lr,
                                          lr_decay=lr_decay, weight_decay=weight_decay,
                                          eps=eps, maximize=maximize)
    clr = lr / (1.0 + (step - 1) * lr_decay)
    kern = elementwise("adagrad", acc_type(param.dtype),
                       "T g, F clr, F wd, F eps, int32 maximize", "T p, T ssum", _ADAGRAD)
    kern(grad, clr, weight_decay, eps, int(maximize), param, state_sum)
    return param, state_sum


# -- dropout, erf -------------------------------------------------------------------------

def dropout_mask(xp: Any, uniform: Any, *, p: float) -> Any:
    """Same contract as ``volta_core.ops.nn.dropout_mask``: ``(u >= p) / (1 - p)``."""
    if not is_float(uniform) or not p < 1.0:
        return generic.dropout_mask(xp, uniform, p=p)
    # p and the scale are rounded to the array's dtype first, as the fallback's weak
    # Python scalars are
    kern = elementwise("dropout_mask", acc_type(uniform.dtype), "T u, F p, F scale", "T out",
                       "out = ((A)u >= (A)(T)p) ? (T)scale : (T)0;")
    return kern(uniform, p, 1.0 / (1.0 - p))


# one pointwise launch for contiguous arrays (the generic ElementwiseKernel's arithmetic
# below; a launch of it costs the host several times one of these)
_DROPOUT = ("const T* x, const A* u, T* y, bool* keep, const A p, const A scale",
            "const bool k = u[i] >= p; keep[i] = k; y[i] = (T)((A)x[i] * (k ? scale : (A)0));")


def dropout_forward(xp: Any, x: Any, uniform: Any, *, p: float) -> tuple:
    """Same contract as ``volta_core.ops.nn.dropout_forward``, in one kernel."""
    if not (is_float(x) and is_float(uniform) and uniform.shape == x.shape
            and uniform.dtype == (x.dtype if x.dtype.itemsize > 2 else cupy.float32)
            and p < 1.0):
        return generic.dropout_forward(xp, x, uniform, p=p)
    if pointwise_ok(x) and contiguous_flag(uniform):
        y = cupy.empty(x.shape, x.dtype)
        keep = cupy.empty(x.shape, cupy.bool_)
        run(pointwise("dropout_fwd", x.dtype.name, *_DROPOUT), x.size, (x, uniform, y, keep),
            (p, 1.0 / (1.0 - p)), x.dtype == np.float64)
        return y, keep
    kern = elementwise("dropout_fwd", acc_type(uniform.dtype), "T x, U u, U p, F scale",
                       "T y, bool keep",
                       "keep = u >= p; y = (T)((A)x * (keep ? (A)scale : (A)0));")
    return kern(x, uniform, uniform.dtype.type(p), 1.0 / (1.0 - p))


def dropout_backward(xp: Any, grad: Any, keep: Any, *, p: float) -> Any:
    """Same contract as ``volta_core.ops.nn.dropout_backward``, in one kernel."""
    if not (is_float(grad) and isinstance(keep, cupy.ndarray) and keep.dtype == bool
            and keep.shape == grad.shape and p < 1.0):
        return generic.dropout_backward(xp, grad, keep, p=p)
    scale = 1.0 / (1.0 - p)
    if pointwise_ok(grad) and contiguous_flag(keep):
        kern = pointwise("dropout_bwd", grad.dtype.name,
                         "const T* g, const bool* keep, T* out, const A scale",
                         "out[i] = (T)((A)g[i] * (keep[i] ? scale : (A)0));")
        out = cupy.empty(grad.shape, grad.dtype)
        run(kern, grad.size, (grad, keep, out), (scale,), grad.dtype == np.float64)
        return out
    kern = elementwise("dropout_bwd", acc_type(grad.dtype), "T g, bool keep, F scale",
                       "T gx", "gx = (T)((A)g * (keep ? (A)scale : (A)0));")
    return kern(grad, keep, scale)


def erf(xp: Any, x: Any) -> Any:
    """Same contract as the ``erf`` fallback: CUDA's ``erf``/``erff`` (a few ulp)."""
    if not is_float(x):
        return generic_math.erf_kernel(xp, x)
    acc = acc_type(x.dtype)
    fn = "erf" if acc == "double" else "erff"
    if pointwise_ok(x):
        return mapped("erf", f"out[i] = (T){fn}((A)a[i]);", x)
    kern = elementwise("erf", acc, "T x", "T y", f"y = (T){fn}((A)x);")
    return kern(x)


# GELU (erf form) in float32: Gelu's operations, each rounded to float32 as there
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU = ("const T* x, T* out, T* e, const A half_sqrt",
         "const A v = x[i]; const A ev = erff(v * half_sqrt); e[i] = ev;"
         " out[i] = ((A)0.5 * v) * ((A)1 + ev);")
_GELU_BACKWARD = ("const T* x, const T* e, const T* g, T* out, const A inv_sqrt_2pi",
                  "const A v = x[i]; A p = v * v; p = p * (A)-0.5; p = expf(p);"
                  " p = p * inv_sqrt_2pi; p = p * v; A o = (A)1 + e[i]; o = o * (A)0.5;"
                  " o = o + p; out[i] = o * g[i];")


def gelu_erf(xp: Any, x: Any) -> tuple | None:
    """Same contract as ``volta_core.ops.activation.gelu_erf`` (float32, one kernel)."""
    if not pointwise_ok(x) or x.dtype != np.float32 or not x.size:
        return None
    y, e = cupy.empty(x.shape, x.dtype), cupy.empty(x.shape, x.dtype)
    run(pointwise("gelu", "float32", *_GELU), x.size, (x, y, e), (_SQRT_HALF,))
    return y, e


def gelu_erf_backward(xp: Any, x: Any, e: Any, g: Any) -> Any:
    """Same contract as ``volta_core.ops.activation.gelu_erf_backward`` (float32, one
    kernel)."""
    if not pointwise_ok(x, e, g) or x.dtype != np.float32 or not x.size:
        return None
    out = cupy.empty(x.shape, x.dtype)
    run(pointwise("gelu_bwd", "float32", *_GELU_BACKWARD), x.size, (x, e, g, out),
        (_INV_SQRT_2PI,))
    return out


# -- relu -----------------------------------------------------------------------------------

def relu(xp: Any, x: Any) -> Any:
    """Same contract as the ``relu`` fallback: 0 where ``x < 0``, else ``x`` (NaN stays)."""
    if pointwise_ok(x):
        return mapped("relu", "out[i] = (A)a[i] < (A)0 ? (T)(A)0 : a[i];", x)
    if not is_float(x):
        return generic_elementwise.relu_kernel(xp, x)
    kern = elementwise("relu", acc_type(x.dtype), "T x", "T y", "y = x < (T)0 ? (T)0 : x;")
    return kern(x)


def relu_backward(xp: Any, grad: Any, y: Any) -> Any:
    """Same contract as the ``relu_backward`` fallback: 0 where ``y <= 0``, else ``grad``."""
    if pointwise_ok(grad, y):
        return mapped("relu_bwd", "out[i] = (A)b[i] <= (A)0 ? (T)(A)0 : a[i];", grad, y)
    if not is_float(grad, y):
        return generic_elementwise.relu_backward_kernel(xp, grad, y)
    kern = elementwise("relu_bwd", acc_type(y.dtype), "T g, T y", "T gx",
                       "gx = y <= (T)0 ? (T)0 : g;")
    return kern(grad, y)



# -- tanh, sigmoid backward -------------------------------------------------------------------

def tanh_backward(xp: Any, grad: Any, y: Any) -> Any:
    """Same contract as the ``tanh_backward`` fallback, in one kernel."""
    if pointwise_ok(grad, y):
        return mapped("tanh_bwd", "out[i] = (T)((A)a[i] * ((A)1 - (A)b[i] * (A)b[i]));",
                      grad, y)
    if not is_float(grad, y) or grad.shape != y.shape:
        return generic_elementwise.tanh_backward_kernel(xp, grad, y)
    kern = elementwise("tanh_bwd", acc_type(y.dtype), "T g, T y", "T gx",
                       "gx = (T)((A)g * ((A)1 - (A)y * (A)y));")
    return kern(grad, y)


def sigmoid_backward(xp: Any, grad: Any, y: Any) -> Any:
    """Same contract as the ``sigmoid_backward`` fallback, in one kernel."""
    if pointwise_ok(grad, y):
        return mapped("sigmoid_bwd", "out[i] = (T)((A)a[i] * (A)b[i] * ((A)1 - (A)b[i]));",
                      grad, y)
    if not is_float(grad, y) or grad.shape != y.shape:
        return generic_elementwise.sigmoid_backward_kernel(xp, grad, y)
    kern = elementwise("sigmoid_bwd", acc_type(y.dtype), "T g, T y", "T gx",
                       "gx = (T)((A)g * (A)y * ((A)1 - (A)y));")
    return kern(grad, y)
