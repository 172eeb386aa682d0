"""Convolution kernels of the CPU backend: im2col + GEMM per sample, over chunks of the
batch spread across the backend's threads (``parallel.py``).

Columns are laid out per sample, ``(N, C*kh*kw, L)``, so one batched matmul gives the
output in NCHW order and each chunk's columns stay in cache between their copy and their
GEMM. With a unit row stride the columns are *split*: built in two copies. The first makes
``kw`` column-shifted copies of every padded row (``(C, kw, Hp, Wo)``: short runs, but
only ``kw * Hp`` of them per channel); in those, each tap's window is one contiguous run of
``Ho * Wo``, so the second copy moves long runs (~2x faster than copying ``Ho`` rows per
tap for LeNet's shapes). Strided rows take the plain window copy.

The input gradient's col2im uses *wide* columns for a stride-1 convolution: every output
row is computed at the padded width ``Wp`` (the ``Wo`` real outputs, then ``Wp - Wo``
wrapped-around ones that get a zero gradient), so each tap's columns line up with one
contiguous run of the flattened padded image and one strided sum adds them all up (vs one
strided pass per tap). Each padded image gets spare zero rows so the wrapped-around reads
of its last row stay inside it. The zero gradient is only exact against finite weights
(``0 * inf`` is NaN), so a non-finite weight takes the exact columns there.

A forward that keeps its columns for the backward lays them out *merged*, ``(C*kh*kw,
N*L)``, where a sample's column matrix has more rows than columns (small images, many
channels): each chunk's weight gradient is then one GEMM over all its samples' positions.

Chunk sizes depend on the shapes only, and per-chunk weight gradients are summed in chunk
order, so results are the same on any thread count.
"""

from __future__ import annotations

import threading
from typing import Any, NamedTuple

import numpy as np

from volta_core.ops import nn as generic

from .parallel import batch_chunk, chunks, parallel_for

# the input gradient uses wide columns when the padded width is at most this many times
# the output width (the wide GEMM's waste is (Wp - Wo) / Wp)
_WIDE_MAX = 2.0
# a thread keeps a col2im buffer (zero gaps) of a shape for reuse up to this size
_SCRATCH_BYTES = 16 << 20
# keep a forward's columns for its backward's weight gradient up to this many elements
_KEEP_COLS = 1 << 22


_local = threading.local()  # per-thread scratch buffers


class _Geom(NamedTuple):
    n: int
    c: int
    h: int
    w: int
    o: int
    cg: int
    kh: int
    kw: int
    groups: int
    stride: tuple
    dilation: tuple
    pads: tuple
    ho: int
    wo: int
    rows: int  # rows of one padded image in the buffer (spare rows included)
    wp: int  # padded width
    wide: bool  # the input gradient's wide columns (never built by im2col)
    split: bool  # columns built through kw column-shifted copies of the rows

    @property
    def length(self) -> int:  # columns per sample
        return self.ho * (self.wp if self.wide else self.wo)

    @property
    def taps(self) -> int:  # rows of the column matrix per group
        return self.cg * self.kh * self.kw

    @property
    def identity(self) -> bool:  # 1x1, stride 1, no padding: the columns are x itself
        return self.kh == self.kw == 1 and self.stride == (1, 1) and self.rows == self.h \
            and self.wp == self.w

    def chunk(self) -> int:
        """Samples per chunk (sized by the columns, the largest array of a chunk)."""
        return batch_chunk(self.n, self.c * self.kh * self.kw * self.length)


def _geometry(x_shape: tuple, w_shape: tuple, stride: tuple, pads: tuple, dilation: tuple,
              groups: int, wide: bool = False) -> _Geom:
    """A convolution's column layout: split (unit row stride) or plain; ``wide`` asks for
    the input gradient's wide columns where they apply (stride 1, padding not too wide)."""
    n, c, h, w = x_shape
    o, cg, kh, kw = w_shape
    ho, wo = generic.conv_out_hw((h, w), (kh, kw), stride, pads, dilation)
    hp, wp = h + pads[0] + pads[1], w + pads[2] + pads[3]
    wide = wide and stride == (1, 1) and wp <= _WIDE_MAX * wo
    split = not wide and stride[0] == 1 and kw > 1
    spare = -(-(dilation[1] * (kw - 1)) // wp) if wide else 0
    return _Geom(n, c, h, w, o, cg, kh, kw, groups, stride, dilation, pads, ho, wo,
                 hp + spare, wp, wide, split)


def _padded(x: np.ndarray, g: _Geom) -> np.ndarray:
    """``x`` (a chunk of the batch) in a zeroed ``(nb, C, Hp, Wp)`` buffer."""
    pt, _, pl, _ = g.pads
    if g.rows == g.h and g.wp == g.w:
        return x
    buf = np.zeros((x.shape[0], g.c, g.rows, g.wp), dtype=x.dtype)
    buf[:, :, pt:pt + g.h, pl:pl + g.w] = x
    return buf


def _windows(buf: np.ndarray, g: _Geom) -> np.ndarray:
    """View ``(nb, C, kh, kw, Ho, Wo)`` of the windows of a C-contiguous padded chunk
    (``np.ndarray`` over the buffer: a few times cheaper to make than ``as_strided``)."""
    s0, s1, s2, s3 = buf.strides
    (dh, dw), (sh, sw) = g.dilation, g.stride
    return np.ndarray((buf.shape[0], g.c, g.kh, g.kw, g.ho, g.wo), buf.dtype, buf, 0,
                      (s0, s1, s2 * dh, s3 * dw, s2 * sh, s3 * sw))


def _col_windows(x: np.ndarray, g: _Geom) -> np.ndarray:
    """The im2col source of a chunk ``x``: a view ``(nb, C, kh, kw, ...)`` of its padded
    (and, split, row-shifted) copy, the last axes the ``L`` output positions."""
    buf = np.ascontiguousarray(_padded(x, g))
    if not g.split:
        return _windows(buf, g)
    buf = _shifted_rows(buf, g)
    t0, t1, t2, t3, _ = buf.strides
    return np.ndarray((buf.shape[0], g.c, g.kh, g.kw, g.ho * g.wo), buf.dtype, buf, 0,
                      (t0, t1, t3 * g.dilation[0], t2, buf.itemsize))


def _cols_into(out: np.ndarray, x: np.ndarray, g: _Geom) -> np.ndarray:
    """im2col of a chunk ``x`` into ``out`` ``(nb, C*kh*kw, L)``; returns ``out``."""
    win = _col_windows(x, g)
    np.copyto(out.reshape(win.shape), win)
    return out


def _merged(g: _Geom) -> bool:
    """Columns laid out ``(C*kh*kw, N*L)`` (all samples side by side) for a kept im2col:
    the weight gradient is then one GEMM per chunk whose inner dimension runs over the
    chunk's samples and positions, where per-sample GEMMs have only ``L`` and write a
    ``(C*kh*kw, O)`` partial per sample (3x slower for the digits CNN's 32->64 3x3 conv
    on 8x8). Pays where a sample's column matrix has more rows than columns."""
    return g.groups == 1 and g.c * g.kh * g.kw > g.length


def _merged_cols_into(cols: np.ndarray, x: np.ndarray, lo: int, g: _Geom) -> np.ndarray:
    """im2col of the chunk ``x`` (samples ``lo...``) into merged columns ``cols``
    ``(C*kh*kw, N*L)``; returns the chunk's ``(C*kh*kw, nb*L)`` block."""
    win = _col_windows(x, g)
    nb, rest = x.shape[0], win.shape[4:]
    dest = cols.reshape(g.c, g.kh, g.kw, g.n, *rest)[:, :, :, lo:lo + nb]
    np.copyto(dest.transpose(3, 0, 1, 2, *range(4, win.ndim)), win)
    return cols[:, lo * g.length:(lo + nb) * g.length]


def _shifted_rows(buf: np.ndarray, g: _Geom) -> np.ndarray:
    """Split columns' first copy: ``(nb, C, kw, Hp, Wo)``, the padded rows as seen by each
    of the ``kw`` column taps (a tap's window is then rows ``i*dh .. i*dh + Ho``, one
    contiguous run)."""
    s0, s1, s2, s3 = buf.strides
    nb, _, hp, _ = buf.shape
    out = np.empty((nb, g.c, g.kw, hp, g.wo), buf.dtype)
    np.copyto(out, np.ndarray(out.shape, buf.dtype, buf, 0,
                              (s0, s1, s3 * g.dilation[1], s2, s3 * g.stride[1])))
    return out


def _cols(x: np.ndarray, g: _Geom) -> np.ndarray:
    """im2col of a chunk; a 1x1 stride-1 unpadded kernel's is ``x`` itself (no copy)."""
    if g.identity:
        return x.reshape(x.shape[0], g.c, g.h * g.w)
    return _cols_into(np.empty((x.shape[0], g.c * g.kh * g.kw, g.length), x.dtype), x, g)


def _grouped(a: np.ndarray, g: _Geom, rows: int) -> np.ndarray:
    """``(nb, G * rows, L)`` as ``(nb, G, rows, L)``."""
    return a.reshape(a.shape[0], g.groups, rows, a.shape[-1])


def conv2d(xp: Any, x: Any, w: Any, bias: Any = None, *, stride=(1, 1), pads=(0, 0, 0, 0),
           dilation=(1, 1), groups: int = 1, algo: str = "auto",
           keep: list | None = None) -> np.ndarray:
    """The generic ``conv2d`` as per-sample im2col + batched GEMM over chunks of the batch.

    With ``keep`` (a list; see ``keeps_cols``), the column matrix of a small enough input
    is appended to it, for :func:`conv2d_backward`'s ``cols`` (no second im2col)."""
    if algo == "direct":
        return generic.conv2d(xp, x, w, bias, stride=stride, pads=pads, dilation=dilation,
                              groups=groups, algo="direct")
    g = _geometry(x.shape, w.shape, tuple(stride), tuple(pads), tuple(dilation), groups)
    og = g.o // groups
    wg = w.reshape(groups, og, g.taps)
    dtype = np.result_type(x, w)
    y = np.empty((g.n, g.o, g.length), dtype=dtype)
    cols = None
    merged = False
    if g.identity:
        cols = _cols(x, g)
    elif keep is not None and g.n * g.c * g.kh * g.kw * g.length <= _KEEP_COLS:
        merged = _merged(g)
        shape = (g.c * g.kh * g.kw, g.n * g.length) if merged else \
            (g.n, g.c * g.kh * g.kw, g.length)
        cols = np.empty(shape, dtype=x.dtype)
    if keep is not None and cols is not None:
        keep.append(cols)
    b = None if bias is None else bias.reshape(g.o, 1)

    def run(lo: int, hi: int) -> None:
        if merged:  # one GEMM over the chunk, its (O, nb*L) result moved to NCHW order
            yc = np.matmul(w.reshape(g.o, -1), _merged_cols_into(cols, x[lo:hi], lo, g))
            if b is not None:
                yc += b
            np.copyto(y[lo:hi], yc.reshape(g.o, hi - lo, g.length).transpose(1, 0, 2))
            return
        if cols is None:
            c = _cols(x[lo:hi], g)
        else:
            c = cols[lo:hi] if g.identity else _cols_into(cols[lo:hi], x[lo:hi], g)
        out = y[lo:hi]
        np.matmul(wg, _grouped(c, g, g.taps), out=_grouped(out, g, og))
        if b is not None:
            out += b

    parallel_for(run, chunks(g.n, g.chunk()))
    return y.reshape(g.n, g.o, g.ho, g.wo)


def _widened(grad: np.ndarray, g: _Geom) -> np.ndarray:
    """A chunk of the output gradient as ``(nb, O, L)``, zero in the wide columns."""
    nb = grad.shape[0]
    if not g.wide:
        return np.ascontiguousarray(grad).reshape(nb, g.o, g.length)
    out = np.zeros((nb, g.o, g.ho, g.wp), dtype=grad.dtype)
    out[..., :g.wo] = grad
    return out.reshape(nb, g.o, g.length)


def _gapped(nb: int, g: _Geom, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """Column buffer for a wide col2im: each of the ``nb * C * kh * kw`` rows of ``L``
    columns is preceded by ``gap`` zeros, and ``gap`` more end the buffer. Returns the
    flat buffer and the ``(nb, C*kh*kw, L)`` view of its rows (for the GEMM to fill).
    The buffer is kept per thread and shape, so its gaps are zeroed only once."""
    taps, length, gap = g.c * g.kh * g.kw, g.length, _gap(g)
    seg = gap + length
    key = (taps, length, gap, np.dtype(dtype))
    cache = getattr(_local, "gapped", None)
    if cache is None:
        cache = _local.gapped = {}
    flat = cache.get(key)
    need = nb * taps * seg + gap
    if flat is None or flat.size < need:
        flat = np.zeros(need, dtype)
        if flat.nbytes <= _SCRATCH_BYTES:
            if len(cache) >= 4:  # a few layers' shapes per thread
                cache.pop(next(iter(cache)))
            cache[key] = flat
    it = flat.itemsize
    rows = np.ndarray((nb, taps, length), flat.dtype, flat, gap * it,
                      (taps * seg * it, seg * it, it))
    return flat, rows


def _gap(g: _Geom) -> int:
    """Largest offset of a tap in a wide padded image (flattened)."""
    return (g.kh - 1) * g.dilation[0] * g.wp + (g.kw - 1) * g.dilation[1]


def _col2im_wide(flat: np.ndarray, nb: int, g: _Geom, out: np.ndarray) -> None:
    """Wide col2im from a :func:`_gapped` buffer in one reduction: as every tap's offset
    in the flattened padded image is linear in the tap's (i, j), one strided view lines
    up each tap's column row with its image positions (reading the zero gaps where a tap
    does not reach), and a sum over the taps gives the image ``out`` ``(nb, C, Hp*Wp)``;
    each image row stays in cache over all the taps (vs one full pass per tap)."""
    (dh, dw), gap, it = g.dilation, _gap(g), flat.itemsize
    seg = gap + g.length
    taps = g.kh * g.kw
    view = np.ndarray((nb, g.c, g.kh, g.kw, out.shape[-1]), flat.dtype, flat, gap * it,
                      (g.c * taps * seg * it, taps * seg * it, (g.kw * seg - dh * g.wp) * it,
                       (seg - dw) * it, it))
    np.einsum("ncijl->ncl", view, out=out)  # ~20% faster than np.sum's strided reduction


def _col2im_into(out: np.ndarray, dcols: np.ndarray, g: _Geom) -> None:
    """Sum the columns ``(nb, C*kh*kw, Ho*Wo)`` of a chunk back into its zeroed padded
    images ``out`` ``(nb, C, Hp, Wp)`` (the adjoint of im2col), one strided add per tap."""
    nb = out.shape[0]
    (dh, dw), (sh, sw) = g.dilation, g.stride
    d = dcols.reshape(nb, g.c, g.kh, g.kw, g.ho, g.wo)
    for i in range(g.kh):
        for j in range(g.kw):
            out[:, :, i * dh:i * dh + sh * (g.ho - 1) + 1:sh,
                j * dw:j * dw + sw * (g.wo - 1) + 1:sw] += d[:, :, i, j]


def conv2d_backward(xp: Any, grad: Any, x: Any, w: Any, *, x_shape: tuple,
                    w_shape: tuple | None = None, needs=(True, True), stride=(1, 1),
                    pads=(0, 0, 0, 0), dilation=(1, 1), groups: int = 1,
                    cols: Any = None) -> tuple:
    """Input gradient by GEMM + col2im, weight gradient by a GEMM over the columns
    (``cols`` when the forward kept them), both per sample over chunks of the batch."""
    w_shape = tuple(w_shape or w.shape)
    base = _geometry(tuple(x_shape), w_shape, tuple(stride), tuple(pads), tuple(dilation),
                     groups)
    og = base.o // groups
    gx = gw = None
    if needs[0]:
        gx_geom = _geometry(tuple(x_shape), w_shape, tuple(stride), tuple(pads),
                            tuple(dilation), groups, wide=True)
        if gx_geom.wide and not np.isfinite(w).all():
            gx_geom = base
        wt = w.reshape(groups, og, base.taps).swapaxes(-1, -2)
        hp = base.h + pads[0] + pads[1]
        buf = np.empty((base.n, base.c, hp, base.wp), dtype=np.result_type(grad, w))
        pt, pl = pads[0], pads[2]
        gx = buf[:, :, pt:pt + base.h, pl:pl + base.w]
    pieces = chunks(base.n, base.chunk())
    parts = [None] * len(pieces)

    def run(lo: int, hi: int) -> None:
        nb, g = hi - lo, grad[lo:hi]
        if needs[0]:
            out = buf[lo:hi]
            gg = _grouped(_widened(g, gx_geom), gx_geom, og)
            if gx_geom.wide:
                flat, rows = _gapped(nb, gx_geom, out.dtype)
                np.matmul(wt, gg, out=_grouped(rows, gx_geom, gx_geom.taps))
                _col2im_wide(flat, nb, gx_geom, out.reshape(nb, gx_geom.c, -1))
            else:
                out.fill(0)
                _col2im_into(out, np.matmul(wt, gg), gx_geom)
        if needs[1] and cols is not None and cols.ndim == 2:  # merged columns
            length = base.length
            gc = np.ascontiguousarray(
                g.reshape(nb, base.o, length).transpose(1, 0, 2)).reshape(base.o, -1)
            part = np.matmul(gc, cols[:, lo * length:hi * length].T)
            parts[lo // base.chunk()] = part.reshape(1, base.o, -1).swapaxes(-1, -2)
        elif needs[1]:
            c = cols[lo:hi] if cols is not None else _cols(x[lo:hi], base)
            # as columns @ gradient^T (BLAS runs this order ~1.7x faster than the other);
            # with 16+ channels a transposed copy of the gradient, so the GEMM reads both
            # operands along rows (~1.6x faster again; a copy with shorter channel runs
            # costs more than it saves)
            if og >= 16:
                gt = np.ascontiguousarray(g.transpose(0, 2, 3, 1))
                gt = gt.reshape(nb, base.length, groups, og).transpose(0, 2, 1, 3)
            else:
                gt = _grouped(_widened(g, base), base, og).swapaxes(-1, -2)
            part = np.matmul(_grouped(c, base, base.taps), gt)
            parts[lo // base.chunk()] = part.sum(axis=0)

    parallel_for(run, pieces)
    if needs[1] and not parts:  # an empty batch
        gw = np.zeros(w_shape, dtype=np.result_type(grad, w))
    elif needs[1]:
        total = parts[0].copy()
        for p in parts[1:]:
            total += p
        gw = total.swapaxes(-1, -2).reshape(w_shape)
    return gx, gw


# these two take ``keep=`` and ``cols=``: the forward's im2col reused by the backward
conv2d.keeps_cols = True
conv2d_backward.keeps_cols = True
