"""2-d convolution on CUDA: cuDNN first (``cudnn_ops``), else an im2col kernel, one cuBLAS
GEMM and a fused NCHW write.

Columns are laid out ``(C*kh*kw, N*Ho*Wo)`` so the forward is the 2-d GEMM
``W (O, C*K) @ cols``, the weight gradient ``g (O, N*L) @ cols.T`` and the input
gradient ``W.T @ g`` -- every transposed operand is an F-contiguous view that cuBLAS
reads directly (CuPy's 2-d ``matmul`` copies nothing). ``col2im`` gathers per input
pixel, so it needs no atomics and is deterministic. Large batches are processed in
chunks so the column buffer stays under :data:`COLS_BYTES`.
"""

from __future__ import annotations

from typing import Any

import cupy

from volta_core.ops import nn as generic

from . import blas, cudnn_ops
from ._util import BFLOAT16, acc_type, contiguous, elementwise, is_float
from .raw_arith import convert

COLS_BYTES = 1 << 30
"""Largest im2col buffer (bytes) before the batch is split into chunks."""

_IM2COL = """
IDX r = (IDX)i;
const int ow = r % wout; r /= wout;
const int oh = r % hout; r /= hout;
const IDX n = r % (IDX)nb; r /= (IDX)nb;
const int kj = r % kw; r /= kw;
const int ki = r % kh;
const IDX c = r / kh;
const int h = oh * sh - pt + ki * dh;
const int w = ow * sw - pl + kj * dw;
cols = (h >= 0 && h < hin && w >= 0 && w < win)
    ? x[((n * cin + c) * hin + h) * win + w] : (T)0;
"""

_COL2IM = """
IDX r = (IDX)i;
const int w = r % win; r /= win;
const int h = r % hin; r /= hin;
const IDX c = r % cin;
const IDX n = r / cin;
const IDX plane = (IDX)hout * wout;
A acc = 0;
for (int ki = 0; ki < kh; ++ki) {
    const int hp = h + pt - ki * dh;
    if (hp < 0 || hp % sh != 0) continue;
    const int oh = hp / sh;
    if (oh >= hout) continue;
    for (int kj = 0; kj < kw; ++kj) {
        const int wp = w + pl - kj * dw;
        if (wp < 0 || wp % sw != 0) continue;
        const int ow = wp / sw;
        if (ow >= wout) continue;
        acc += (A)dcols[(((c * kh + ki) * kw + kj) * nb + n) * plane + oh * wout + ow];
    }
}
gx = (T)acc;
"""

_TO_NCHW = """
IDX r = (IDX)i;
const IDX p = r % (IDX)plane; r /= (IDX)plane;
const IDX o = r % (IDX)cout;
const IDX n = r / (IDX)cout;
y = (T)((A)y2[(o * nb + n) * plane + p] BIAS);
"""


def _idx(size: int) -> tuple[str, str]:
    """Kernel-name suffix and C type of the index arithmetic for ``size`` elements.

    Unsigned 32-bit division is several times cheaper than 64-bit on the GPU.
    """
    return ("_i32", "unsigned int") if size < 2**31 else ("", "long long")


_GEOM_NAMES = ("cin", "hin", "win", "hout", "wout", "kh", "kw", "sh", "sw", "pt", "pl", "dh",
               "dw")


def _baked(body: str, nb: int, geom: tuple, idx: str) -> str:
    """``body`` with the geometry as compile-time constants (divisions become shifts and
    multiplies instead of the GPU's slow integer division)."""
    consts = "".join(f"const int {k} = {int(v)};\n" for k, v in zip(_GEOM_NAMES, geom))
    return consts + f"const {idx} nb = {int(nb)};\n" + body.replace("IDX", idx)


def _im2col_kernel(dtype, size: int, nb: int, geom: tuple) -> cupy.ElementwiseKernel:
    sfx, t = _idx(size)
    return elementwise("im2col" + sfx, acc_type(dtype), "raw T x", "T cols",
                       _baked(_IM2COL, nb, geom, t))


def _col2im_kernel(dtype, size: int, nb: int, geom: tuple) -> cupy.ElementwiseKernel:
    sfx, t = _idx(size)
    return elementwise("col2im" + sfx, acc_type(dtype), "raw T dcols", "T gx",
                       _baked(_COL2IM, nb, geom, t))


def _to_nchw_kernel(dtype, bias: bool, size: int = 0) -> cupy.ElementwiseKernel:
    sfx, t = _idx(size)
    ins = "raw T y2, int64 nb, int64 cout, int64 plane" + (", raw T b" if bias else "")
    body = _TO_NCHW.replace("BIAS", "+ (A)b[o]" if bias else "").replace("IDX", t)
    return elementwise(("to_nchw_b" if bias else "to_nchw") + sfx, acc_type(dtype), ins,
                       "T y", body)


def _geometry(x_shape: tuple, kernel: tuple, out_hw: tuple, stride: tuple, pads: tuple,
              dilation: tuple) -> tuple:
    _, c, h, w = x_shape
    return (c, h, w, out_hw[0], out_hw[1], kernel[0], kernel[1], stride[0], stride[1],
            pads[0], pads[2], dilation[0], dilation[1])


def _chunk(n: int, rows: int, length: int, itemsize: int) -> int:
    """Samples per chunk so that a ``(rows, chunk * length)`` buffer fits COLS_BYTES."""
    per = max(1, rows * length * itemsize)
    return max(1, min(n, COLS_BYTES // per))


def im2col(x: Any, geom: tuple) -> Any:
    """Columns ``(C*kh*kw, N*Ho*Wo)`` of a contiguous NCHW batch (padding read as 0)."""
    nb = x.shape[0]
    c, kh, kw = geom[0], geom[5], geom[6]
    cols = cupy.empty((c * kh * kw, nb * geom[3] * geom[4]), dtype=x.dtype)
    _im2col_kernel(x.dtype, max(cols.size, x.size), nb, tuple(geom))(x, cols)
    return cols


def conv2d(xp: Any, x: Any, w: Any, bias: Any = None, *, stride=(1, 1), pads=(0, 0, 0, 0),
           dilation=(1, 1), groups: int = 1, algo: str = "auto") -> Any:
    """Same contract as ``volta_core.ops.nn.conv2d``; ``algo`` is ignored on CUDA.

    cuDNN serves it when available (see ``cudnn_ops``), the CuPy kernels otherwise.
    """
    if x.ndim == 4 and w.ndim == 4 and 0 not in x.shape and 0 not in w.shape:
        out_hw = generic.conv_out_hw(x.shape[2:], w.shape[2:], stride, pads, dilation)
        y = cudnn_ops.conv_fprop(contiguous(x), contiguous(w), bias, stride=stride,
                                 pads=pads, dilation=dilation, groups=groups, out_hw=out_hw)
        if y is not None:
            return y
    with cudnn_ops.conv_math(x.dtype):
        return _conv2d(xp, x, w, bias, stride=stride, pads=pads, dilation=dilation,
                       groups=groups, algo=algo)


def _conv2d(xp: Any, x: Any, w: Any, bias: Any = None, *, stride=(1, 1), pads=(0, 0, 0, 0),
            dilation=(1, 1), groups: int = 1, algo: str = "auto") -> Any:
    if BFLOAT16 is not None and x.dtype == BFLOAT16:  # im2col in float32, rounded once
        y = _conv2d(xp, *_f32(x, w, bias), stride=stride, pads=pads, dilation=dilation,
                    groups=groups, algo=algo)
        return convert(y, BFLOAT16)
    if not is_float(x, w, bias) or x.ndim != 4 or 0 in x.shape or 0 in w.shape:
        return generic.conv2d(xp, x, w, bias, stride=stride, pads=pads, dilation=dilation,
                              groups=groups, algo=algo)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    out_hw = generic.conv_out_hw((h, wd), (kh, kw), stride, pads, dilation)
    length = out_hw[0] * out_hw[1]
    x = contiguous(x)
    w2 = contiguous(w).reshape(o, cg * kh * kw)
    if (groups == 1 and kh == kw == 1 and tuple(stride) == (1, 1) and not any(pads)
            and length >= 64):
        # 1x1 fast path: one batched GEMM straight from NCHW memory, no im2col
        y = blas.matmul(w2, x.reshape(n, c, length))
        if bias is not None:
            y += bias.reshape(1, o, 1)
        return y.reshape(n, o, *out_hw)
    geom = _geometry(x.shape, (kh, kw), out_hw, stride, pads, dilation)
    y = cupy.empty((n, o, *out_hw), dtype=x.dtype)
    step = _chunk(n, c * kh * kw, length, x.dtype.itemsize)
    og, ck = o // groups, cg * kh * kw
    to_nchw = _to_nchw_kernel(x.dtype, bias is not None, y.size)
    extra = () if bias is None else (contiguous(bias),)
    for n0 in range(0, n, step):
        nb = min(step, n - n0)
        cols = im2col(x[n0:n0 + nb], geom)
        if groups == 1:
            y2 = blas.matmul(w2, cols)
        else:
            y2 = blas.matmul(w2.reshape(groups, og, ck), cols.reshape(groups, ck, nb * length))
        to_nchw(y2, nb, o, length, *extra, y[n0:n0 + nb])
    return y


def _f32(*arrays: Any) -> tuple:
    return tuple(None if a is None else convert(a, cupy.float32) for a in arrays)


def _input_grad(w: Any, g2: Any, groups: int) -> Any:
    """``dcols = W.T @ g`` per group: ``(C*K, nb*L)``."""
    o, ck = w.shape[0], w.shape[1] * w.shape[2] * w.shape[3]
    w2 = contiguous(w).reshape(o, ck)
    if groups == 1:
        return blas.matmul(w2.T, g2)
    og = o // groups
    w3 = w2.reshape(groups, og, ck).transpose(0, 2, 1)
    return blas.matmul(w3, g2.reshape(groups, og, -1)).reshape(groups * ck, -1)


def _weight_grad(g2: Any, cols: Any, groups: int, out: Any, accumulate: bool) -> None:
    """``out (O, Cg*K) (+)= g (O, nb*L) @ cols.T`` per group."""
    o = g2.shape[0]
    og, ck = o // groups, cols.shape[0] // groups
    if groups == 1 or groups > 16:
        if groups == 1 and not accumulate:
            blas.matmul(g2, cols.T, out=out)
            return
        if groups == 1:
            part = blas.matmul(g2, cols.T)
        else:  # many small groups: one batched GEMM (CuPy copies the transposed cols)
            part = blas.matmul(g2.reshape(groups, og, -1),
                               cols.reshape(groups, ck, -1).transpose(0, 2, 1))
            part = part.reshape(o, ck)
        if accumulate:
            out += part
        else:
            out[...] = part
        return
    for gi in range(groups):
        part = blas.matmul(g2[gi * og:(gi + 1) * og], cols[gi * ck:(gi + 1) * ck].T)
        if accumulate:
            out[gi * og:(gi + 1) * og] += part
        else:
            out[gi * og:(gi + 1) * og] = part


def conv2d_backward(xp: Any, grad: Any, x: Any, w: Any, *, x_shape: tuple,
                    w_shape: tuple | None = None, needs=(True, True), stride=(1, 1),
                    pads=(0, 0, 0, 0), dilation=(1, 1), groups: int = 1) -> tuple:
    """Same contract as ``volta_core.ops.nn.conv2d_backward`` (cuDNN first, as conv2d)."""
    if grad.ndim == 4 and 0 not in grad.shape and 0 not in x_shape:
        w_shape = tuple(w_shape or w.shape)
        geom = dict(stride=stride, pads=pads, dilation=dilation, groups=groups)
        g = contiguous(grad)
        gx = cudnn_ops.conv_dgrad(g, contiguous(w), x_shape=x_shape, **geom) \
            if needs[0] else None
        gw = cudnn_ops.conv_wgrad(g, contiguous(x), w_shape=w_shape, **geom) \
            if needs[1] else None
        if (gx is not None or not needs[0]) and (gw is not None or not needs[1]):
            return gx, gw
    with cudnn_ops.conv_math(grad.dtype):
        return _conv2d_backward(xp, grad, x, w, x_shape=x_shape, w_shape=w_shape,
                                needs=needs, stride=stride, pads=pads, dilation=dilation,
                                groups=groups)


def _conv2d_backward(xp: Any, grad: Any, x: Any, w: Any, *, x_shape: tuple,
                     w_shape: tuple | None = None, needs=(True, True), stride=(1, 1),
                     pads=(0, 0, 0, 0), dilation=(1, 1), groups: int = 1) -> tuple:
    if BFLOAT16 is not None and grad.dtype == BFLOAT16:  # in float32, as the forward
        g32, x32, w32 = _f32(grad, x, w)
        out = _conv2d_backward(xp, g32, x32, w32, x_shape=x_shape, w_shape=w_shape,
                               needs=needs, stride=stride, pads=pads, dilation=dilation,
                               groups=groups)
        return tuple(None if a is None else convert(a, BFLOAT16) for a in out)
    if not is_float(grad, x, w) or grad.ndim != 4 or 0 in grad.shape or 0 in x_shape:
        return generic.conv2d_backward(xp, grad, x, w, x_shape=x_shape, w_shape=w_shape,
                                       needs=needs, stride=stride, pads=pads,
                                       dilation=dilation, groups=groups)
    n, c, h, wd = x_shape
    o, cg, kh, kw = w_shape or w.shape
    ho, wo = grad.shape[2:]
    length = ho * wo
    dtype = grad.dtype
    geom = _geometry(tuple(x_shape), (kh, kw), (ho, wo), stride, pads, dilation)
    grad = contiguous(grad)
    if x is not None:
        x = contiguous(x)
    gx = cupy.empty(tuple(x_shape), dtype=dtype) if needs[0] else None
    gw = cupy.empty((o, cg * kh * kw), dtype=dtype) if needs[1] else None
    step = _chunk(n, max(c * kh * kw, o), length, dtype.itemsize)
    big = max(n * c * kh * kw * length, n * o * length, n * c * h * wd)
    for n0 in range(0, n, step):
        nb = min(step, n - n0)
        # (nb, O, L) -> (O, nb*L): one transposed copy of the output gradient
        g2 = grad[n0:n0 + nb].reshape(nb, o, length).transpose(1, 0, 2)
        g2 = cupy.ascontiguousarray(g2).reshape(o, nb * length)
        if needs[0]:
            dcols = _input_grad(w, g2, groups)
            _col2im_kernel(dtype, big, nb, tuple(geom))(dcols, gx[n0:n0 + nb])
        if needs[1]:
            cols = im2col(x[n0:n0 + nb], geom)
            _weight_grad(g2, cols, groups, gw, accumulate=n0 > 0)
    if gw is not None:
        gw = gw.reshape(o, cg, kh, kw)
    return gx, gw
