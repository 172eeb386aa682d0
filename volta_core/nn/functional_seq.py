"""Functional forms of the sequence, attention and upsampling layers.

``scaled_dot_product_attention``, ``pixel_shuffle``, ``pixel_unshuffle`` and
``interpolate`` (re-exported by ``volta_core.nn.functional``), plus small private
helpers (``_softmax``, ``_dropout``, ``_float_mask``, ...) that the layers in ``rnn.py``,
``attention.py``, ``transformer.py`` and ``upsampling.py`` share.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..amp.dispatch import autocast_call
from ..amp.state import state as _autocast_state
from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..backend.kernels import fallback, get_kernel
from ..dtypes import bfloat16
from ..errors import DTypeError, ShapeError
from ..ops._util import broadcast_shapes
from ..ops.activation import gelu
from ..ops.elementwise import where
from ..ops.indexing import index_select, triu
from ..ops.movement import sum_to
from ..ops.softmax import softmax
from ..tensor import Tensor

# -- private helpers shared by the sequence layers -------------------------------------------


def _along(x: Tensor, dim: int, matrix: Tensor) -> Tensor:
    """Apply ``matrix`` (out, in) to dimension ``dim`` of ``x`` (size in -> out)."""
    moved = x.transpose(dim, -1)
    return (moved @ matrix.t()).transpose(dim, -1)


def _softmax(x: Tensor, dim: int) -> Tensor:
    """Softmax along ``dim`` (NaN for rows that are all -inf, as in PyTorch)."""
    return softmax(x, dim)


def _dropout(x: Tensor, p: float, training: bool = True) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``."""
    if not training or p == 0.0:
        return x
    from .dropout import dropout

    return dropout(x, p, training)


def _gelu(x: Tensor) -> Tensor:
    """GELU with the exact (erf) form, as PyTorch's default."""
    return gelu(x)


def _float_mask(mask: Tensor, like: Tensor, allow_is_true: bool) -> Tensor:
    """A float mask to add to scores: bool masks become 0 / -inf."""
    if mask.dtype.name == "bool":
        blocked = mask if not allow_is_true else mask == False  # noqa: E712
        zeros = like.new_zeros(())
        return where(blocked, float("-inf"), zeros)
    if not mask.dtype.is_floating_point:
        raise DTypeError(f"attention mask must be bool or floating point, got {mask.dtype.name}")
    return mask if mask.dtype is like.dtype else mask.to(like.dtype)


def _causal_mask(l: int, s: int, like: Tensor) -> Tensor:
    """A float (l, s) mask that is -inf above the diagonal (top-left aligned)."""
    above = triu(like.new_ones(l, s), 1) > 0
    return where(above, float("-inf"), like.new_zeros(()))


# -- attention ------------------------------------------------------------------------------
class _Attention(Function):
    """``dropout(softmax(q @ k^T * scale + mask)) @ v`` as one node.

    ``q``/``k``/``v`` are ``(..., L|S, E)`` with equal batch dims; ``mask`` (a float
    Tensor broadcastable to the scores, or None) is added; ``keep`` is a constant scaled
    dropout mask of the scores' shape (a raw array) or None. The softmax runs on the
    ``softmax`` kernel; a plain backward works on raw arrays (GEMMs, the
    ``softmax_backward`` kernel), a ``create_graph`` one recomputes with Tensor ops.
    """

    def forward(ctx, q, k=None, v=None, mask=None, keep=None, scale=1.0):
        xp = ctx.xp
        ctx.scale = scale
        ctx.packed = k is None  # q holds (q, k, v) stacked along a leading dim of 3
        inputs = (q, k, v, mask)
        if ctx.packed:
            q, k, v = q[0, ...], q[1, ...], q[2, ...]
        ctx.mask_shape = None if mask is None else tuple(mask.shape)
        qs = q * scale
        s = xp.matmul(qs, xp.matrix_transpose(k))
        if mask is not None:
            s = s + mask
        p = get_kernel(ctx.device.backend, "softmax")(xp, s, -1)
        if mask is not None:  # a fully masked row attends to nothing: 0, as in PyTorch
            blocked = xp.max(s, axis=-1, keepdims=True) == -math.inf
            p = xp.where(blocked, xp.zeros_like(p), p)
        ctx.save_for_backward(*inputs, p, keep, qs, k, v)
        return xp.matmul(p if keep is None else p * keep, v)

    def backward(ctx, g):
        qi, ki, vi, mask, p, keep, qs, k, v = ctx.saved_tensors
        nq, nk, nv, nm = ctx.needs_input_grad[:4]
        if ctx.packed:
            nq = nk = nv = True
        if not _grad_state.enabled:
            xp, dev = ctx.xp, ctx.device
            ga, pa = g.array, p.array
            ka = None if keep is None else keep.array
            pd = pa if ka is None else pa * ka
            gv = xp.matmul(xp.matrix_transpose(pd), ga) if nv else None
            gp = xp.matmul(ga, xp.matrix_transpose(v.array))
            if ka is not None:
                gp = gp * ka
            gs = get_kernel(dev.backend, "softmax_backward")(xp, gp, pa, -1)
            gq = xp.matmul(gs, k.array) * ctx.scale if nq else None
            gk = xp.matmul(xp.matrix_transpose(gs), qs.array) if nk else None
            gm = sum_to(Tensor._make(gs, dev), ctx.mask_shape) if nm else None
            if ctx.packed:
                return Tensor._make(xp.stack([gq, gk, gv]), dev), None, None, gm
            gq, gk, gv = (None if a is None else Tensor._make(a, dev) for a in (gq, gk, gv))
            return gq, gk, gv, gm
        # create_graph: recompute the forward with Tensor ops, so the result is
        # differentiable again
        q, k, v = (qi[0], qi[1], qi[2]) if ctx.packed else (qi, ki, vi)
        qs = q * ctx.scale
        sc = qs @ k.mT
        if mask is not None:
            sc = sc + mask
        p = _softmax(sc, -1) if mask is None else _masked_softmax(sc)
        pd = p if keep is None else p * keep
        gv = pd.mT @ g if nv else None
        gp = g @ v.mT
        if keep is not None:
            gp = gp * keep
        gy = gp * p
        gs = gy - p * gy.sum(-1, keepdim=True)
        gq = (gs @ k) * ctx.scale if nq else None
        gk = gs.mT @ qs if nk else None
        gm = sum_to(gs, ctx.mask_shape) if nm else None
        if ctx.packed:
            from ..ops.joining import stack

            return stack([gq, gk, gv]), None, None, gm
        return gq, gk, gv, gm


def _attention(q: Tensor, k: Tensor | None, v: Tensor | None, mask: Tensor | None,
               dropout_p: float, scale: float) -> Tensor:
    """Fused attention over equal batch dims (see :class:`_Attention`).

    With ``k`` and ``v`` None, ``q`` is ``(3, ..., L, E)``: queries, keys and values
    stacked (self-attention from one packed projection).
    """
    keep = None
    if mask is None and dropout_p == 0.0 and q.ndim == 4 + int(k is None):
        # the backend's fused attention (cuDNN flash on CUDA) where it takes the inputs
        qq, kk, vv = (q[0], q[1], q[2]) if k is None else (q, k, v)
        out = _flash_attention(qq, kk, vv, False, scale)
        if out is not None:
            return out
    if dropout_p > 0.0:
        shape = (*q.shape[int(k is None):-1], (q if k is None else k).shape[-2])
        if dropout_p >= 1.0:
            keep = q.new_zeros(*shape).array
        else:
            from .dropout import _mask

            keep = _mask(q, shape, dropout_p).array
    return _Attention.apply(q, k, v, mask, keep, scale=scale)


class _FlashAttention(Function):
    """Fused attention of a backend's ``sdpa_flash`` kernels (cuDNN on CUDA): the scores
    never reach memory; backward recomputes them from the saved log-sum-exp ``stats``."""

    def forward(ctx, q, k, v, kernels=None, causal=False, scale=1.0):
        out = kernels.forward(q, k, v, scale=scale, causal=causal)
        if out is None:
            raise _FlashRefused
        o, stats = out
        ctx.kernels, ctx.causal, ctx.scale = kernels, causal, scale
        ctx.save_for_backward(q, k, v, o, stats)
        return o

    def backward(ctx, g):
        q, k, v, o, stats = ctx.saved_tensors
        if _grad_state.enabled:  # create_graph: differentiable Tensor ops, in float32
            return _attention_grads_graph(q, k, v, g, ctx.scale, ctx.causal)
        xp, dev = ctx.xp, ctx.device
        grads = ctx.kernels.backward(q.array, k.array, v.array, o.array, g.array,
                                     stats.array, scale=ctx.scale, causal=ctx.causal)
        if grads is None:  # the kernel refused the backward: the plain math, in float32
            grads = _attention_grads(xp, q.array, k.array, v.array, g.array, ctx.scale,
                                     ctx.causal)
        return tuple(Tensor._make(a, dev) for a in grads)


class _FlashRefused(Exception):
    """Raised inside ``_FlashAttention.forward`` when the kernel declines the case."""


class _NoFlash:
    """The generic ``sdpa_flash`` kernels: none (``supported`` is always False)."""

    @staticmethod
    def supported(q: Any, k: Any, v: Any) -> bool:
        return False


fallback("sdpa_flash")(_NoFlash)


def _attention_grads_graph(q: Tensor, k: Tensor, v: Tensor, g: Tensor, scale: float,
                           causal: bool) -> tuple:
    """``(dq, dk, dv)`` as :func:`_attention_grads`, with Tensor ops (double backward)."""
    qf, kf, vf, gf = q.float(), k.float(), v.float(), g.float()
    s = (qf @ kf.transpose(-2, -1)) * scale
    if causal:
        s = s + _causal_mask(s.shape[-2], s.shape[-1], s)
    p = _softmax(s, -1)
    dp = gf @ vf.transpose(-2, -1)
    ds = p * (dp - (dp * p).sum(-1, keepdim=True))
    dq = (ds @ kf) * scale
    dk = (ds.transpose(-2, -1) @ qf) * scale
    dv = p.transpose(-2, -1) @ gf
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)


def _attention_grads(xp: Any, q: Any, k: Any, v: Any, g: Any, scale: float,
                     causal: bool) -> tuple:
    """``(dq, dk, dv)`` of ``softmax(q k^T scale) v`` on raw arrays, computed in float32."""
    dt = q.dtype
    q, k, v, g = (xp.astype(a, xp.float32) for a in (q, k, v, g))
    s = xp.matmul(q, xp.matrix_transpose(k)) * scale
    if causal:
        rows = xp.arange(s.shape[-2])[:, None]
        cols = xp.arange(s.shape[-1])[None, :]
        s = xp.where(cols > rows, xp.full_like(s, -math.inf), s)
    s = s - xp.max(s, axis=-1, keepdims=True)
    p = xp.exp(s)
    p = p / xp.sum(p, axis=-1, keepdims=True)
    dv = xp.matmul(xp.matrix_transpose(p), g)
    dp = xp.matmul(g, xp.matrix_transpose(v))
    ds = p * (dp - xp.sum(dp * p, axis=-1, keepdims=True))
    dq = xp.matmul(ds, k) * scale
    dk = xp.matmul(xp.matrix_transpose(ds), q) * scale
    return tuple(xp.astype(a, dt) for a in (dq, dk, dv))


def _flash_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool,
                     scale: float | None) -> Tensor | None:
    """The backend's fused attention when it has one for these inputs, else None."""
    kernels = get_kernel(q.device.backend, "sdpa_flash")
    if (type(k) is not Tensor or type(v) is not Tensor
            or not (q.device is k.device is v.device)
            or not kernels.supported(q.array, k.array, v.array)):
        return None
    if causal and q.shape[-2] != k.shape[-2]:
        return None  # square causal masks only: both alignments agree there
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    try:
        return _FlashAttention.apply(q, k, v, kernels=kernels, causal=causal, scale=factor)
    except _FlashRefused:
        return None


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None) -> Tensor:
    """Attention ``softmax(q @ k^T * scale + mask) @ v`` over the last two dims.

    Args:
        query: queries of shape ``(..., L, E)``.
        key: keys of shape ``(..., S, E)``.
        value: values of shape ``(..., S, Ev)``.
        attn_mask: a bool mask (True = may attend) or a float mask added to the scores,
            broadcastable to ``(..., L, S)``.
        dropout_p: dropout probability on the attention weights (always applied when > 0).
        is_causal: mask out keys after each query (a top-left aligned lower triangle).
        scale: the score scale; ``1 / sqrt(E)`` when None.

    Shape:
        - Output: ``(..., L, Ev)``.
    """
    if _autocast_state.active:  # the autocast hook: one thread-local read when off
        return autocast_call(
            "scaled_dot_product_attention", scaled_dot_product_attention, query, key, value,
            attn_mask, dropout_p, is_causal, scale)
    op = "scaled_dot_product_attention"
    if attn_mask is None and dropout_p == 0.0:
        out = _flash_attention(query, key, value, is_causal, scale)
        if out is not None:
            return out
    if query.dtype is key.dtype is value.dtype is bfloat16:  # in float32, as PyTorch does
        mask = attn_mask
        if mask is not None and mask.dtype is bfloat16:
            mask = mask.float()
        return scaled_dot_product_attention(query.float(), key.float(), value.float(), mask,
                                            dropout_p, is_causal, scale).to(bfloat16)
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.ndim < 2:
            raise ShapeError(f"{op}: {name} needs at least 2 dims (..., seq, features), "
                             f"got shape {t.shape}")
    if query.shape[-1] != key.shape[-1]:
        raise ShapeError(f"{op}: query {query.shape} and key {key.shape} must have the same "
                         "feature size (last dim)")
    if key.shape[-2] != value.shape[-2]:
        raise ShapeError(f"{op}: key {key.shape} and value {value.shape} must have the same "
                         "sequence length (dim -2)")
    if is_causal and attn_mask is not None:
        raise ValueError(f"{op}: pass either attn_mask or is_causal=True, not both")
    l, s = query.shape[-2], key.shape[-2]
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if (query.shape[:-2] == key.shape[:-2] == value.shape[:-2] and query.device is key.device
            and key.device is value.device and query.dtype is key.dtype is value.dtype
            and query.dtype.is_floating_point):
        mask = None
        if is_causal:
            mask = _causal_mask(l, s, query)
        elif attn_mask is not None:
            mask = _float_mask(attn_mask, query, allow_is_true=True)
            try:
                broadcast_shapes(op, mask.shape, (*query.shape[:-1], s))
            except ShapeError:
                raise ShapeError(f"{op}: attn_mask of shape {attn_mask.shape} does not "
                                 f"broadcast to the scores' shape {(*query.shape[:-1], s)} "
                                 "(..., L, S)") from None
        return _attention(query, key, value, mask, dropout_p, factor)
    scores = (query @ key.transpose(-2, -1)) * factor
    if is_causal:
        scores = scores + _causal_mask(l, s, scores)
    elif attn_mask is not None:
        try:
            scores = scores + _float_mask(attn_mask, scores, allow_is_true=True)
        except ShapeError:
            raise ShapeError(f"{op}: attn_mask of shape {attn_mask.shape} does not broadcast "
                             f"to the scores' shape {scores.shape} (..., L, S)") from None
    masked = is_causal or attn_mask is not None
    weights = _masked_softmax(scores) if masked else _softmax(scores, -1)
    return _dropout(weights, dropout_p) @ value


def _masked_softmax(scores: Tensor) -> Tensor:
    """Softmax over the last dim with 0 (not NaN) for rows whose scores are all -inf
    (fully masked), and a zero gradient there."""
    blocked = scores.detach().amax(-1, keepdim=True) == -math.inf
    return where(blocked, 0.0, _softmax(where(blocked, 0.0, scores), -1))


# -- pixel shuffle --------------------------------------------------------------------------


def _shuffle_factor(op: str, input: Tensor, factor: int, what: str) -> int:
    """Check the input rank and the factor shared by pixel_shuffle and pixel_unshuffle."""
    r = int(factor)
    if input.ndim < 3:
        raise ShapeError(f"{op}: expected an input with at least 3 dims (*, C, H, W), "
                         f"got shape {input.shape}")
    if r <= 0:
        raise ValueError(f"{op}: {what} must be positive, got {r}")
    return r


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Rearrange ``(*, C*r*r, H, W)`` into ``(*, C, H*r, W*r)``.

    Args:
        input: the tensor, with at least 3 dims.
        upscale_factor: the factor ``r`` by which to increase the spatial size.
    """
    r = _shuffle_factor("pixel_shuffle", input, upscale_factor, "upscale_factor")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise ShapeError(f"pixel_shuffle: the channel count {c} of input {input.shape} must be "
                         f"divisible by upscale_factor**2 = {r * r}")
    b = len(batch)
    x = input.reshape(*batch, c // (r * r), r, r, h, w)
    x = x.permute(*range(b), b, b + 3, b + 1, b + 4, b + 2)
    return x.reshape(*batch, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """Rearrange ``(*, C, H*r, W*r)`` into ``(*, C*r*r, H, W)`` (inverse of pixel_shuffle).

    Args:
        input: the tensor, with at least 3 dims.
        downscale_factor: the factor ``r`` by which to reduce the spatial size.
    """
    r = _shuffle_factor("pixel_unshuffle", input, downscale_factor, "downscale_factor")
    *batch, c, h, w = input.shape
    if h % r or w % r:
        raise ShapeError(f"pixel_unshuffle: the spatial size {(h, w)} of input {input.shape} "
                         f"must be divisible by downscale_factor = {r}")
    b = len(batch)
    x = input.reshape(*batch, c, h // r, r, w // r, r)
    x = x.permute(*range(b), b, b + 2, b + 4, b + 1, b + 3)
    return x.reshape(*batch, c * r * r, h // r, w // r)


# -- interpolate ----------------------------------------------------------------------------

_MODES = {"nearest": None, "nearest-exact": None, "area": None, "linear": 1, "bilinear": 2,
          "trilinear": 3, "bicubic": 2}


def _nearest_indices(n_in: int, n_out: int, scale: float, exact: bool) -> list[int]:
    off = 0.5 if exact else 0.0
    return [min(int(math.floor((i + off) * scale)), n_in - 1) for i in range(n_out)]


def _area_matrix(n_in: int, n_out: int) -> list[list[float]]:
    """Adaptive average pooling: output ``i`` averages its window of the input."""
    rows = []
    for i in range(n_out):
        start, end = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
        rows.append([1.0 / (end - start) if start <= j < end else 0.0 for j in range(n_in)])
    return rows


def _source(i: int, n_in: int, n_out: int, scale: float, align_corners: bool,
            cubic: bool) -> float:
    if align_corners:
        return i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    src = (i + 0.5) * scale - 0.5
    return src if cubic or src > 0 else 0.0


def _cubic_weights(t: float) -> list[float]:
    a = -0.75  # PyTorch's cubic convolution coefficient

    def near(x: float) -> float:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: float) -> float:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _interp_matrix(n_in: int, n_out: int, scale: float, align_corners: bool,
                   cubic: bool) -> list[list[float]]:
    rows = []
    for i in range(n_out):
        row = [0.0] * n_in
        src = _source(i, n_in, n_out, scale, align_corners, cubic)
        i0 = int(math.floor(src))
        t = src - i0
        if cubic:
            for k, wk in enumerate(_cubic_weights(t)):
                row[min(max(i0 - 1 + k, 0), n_in - 1)] += wk
        else:
            i1 = min(i0 + 1, n_in - 1)
            row[i0] += 1.0 - t
            row[i1] += t
        rows.append(row)
    return rows


def _out_sizes(op: str, spatial: tuple, size: Any, scale_factor: Any,
               recompute: bool | None) -> tuple[list[int], list[float | None]]:
    n = len(spatial)
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{op}: give exactly one of size and scale_factor")
    if size is not None:
        sizes = [int(size)] * n if isinstance(size, int) else [int(s) for s in size]
        if len(sizes) != n:
            raise ShapeError(f"{op}: size {size} has {len(sizes)} entries but the input has "
                             f"{n} spatial dims {spatial}")
        return sizes, [None] * n
    factors = ([float(scale_factor)] * n if isinstance(scale_factor, (int, float))
               else [float(f) for f in scale_factor])
    if len(factors) != n:
        raise ShapeError(f"{op}: scale_factor {scale_factor} has {len(factors)} entries but "
                         f"the input has {n} spatial dims {spatial}")
    sizes = [int(math.floor(s * f)) for s, f in zip(spatial, factors)]
    return sizes, [None] * n if recompute else factors


def interpolate(input: Tensor, size: int | Sequence[int] | None = None,
                scale_factor: float | Sequence[float] | None = None, mode: str = "nearest",
                align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize the spatial dims of ``input`` (up or down sampling).

    Args:
        input: a tensor of shape ``(N, C, *spatial)`` with 1 to 3 spatial dims.
        size: the output spatial size (an int for all dims, or one per dim).
        scale_factor: multiplier of the spatial size (instead of ``size``).
        mode: ``'nearest'``, ``'nearest-exact'``, ``'area'``, ``'linear'`` (3-D input),
            ``'bilinear'`` / ``'bicubic'`` (4-D) or ``'trilinear'`` (5-D).
        align_corners: for the linear and cubic modes, map the corner pixels' centres onto
            each other (True) or their edges (False, the default).
        recompute_scale_factor: compute the coordinate scale from the output size instead
            of using ``scale_factor`` directly.
        antialias: not supported; must be False.

    Shape:
        - Input: ``(N, C, *spatial_in)``.
        - Output: ``(N, C, *spatial_out)``.
    """
    op = "interpolate"
    if antialias:
        raise NotImplementedError(f"{op}: antialias=True is not supported yet")
    if mode not in _MODES:
        raise ValueError(f"{op}: unknown mode {mode!r}; expected one of {sorted(_MODES)}")
    if input.ndim not in (3, 4, 5):
        raise ShapeError(f"{op}: expected a 3-D, 4-D or 5-D input (N, C, *spatial), got shape "
                         f"{input.shape}")
    dims = _MODES[mode]
    if dims is not None and input.ndim - 2 != dims:
        raise ShapeError(f"{op}: mode {mode!r} expects {dims} spatial dim(s) "
                         f"(a {dims + 2}-D input), got shape {input.shape}")
    if dims is None and align_corners is not None:
        raise ValueError(f"{op}: align_corners only applies to the linear and cubic modes, "
                         f"not {mode!r}; leave it as None")
    if not input.dtype.is_floating_point:
        raise DTypeError(f"{op}: expected a floating point input, got {input.dtype.name}")
    spatial = input.shape[2:]
    sizes, factors = _out_sizes(op, spatial, size, scale_factor, recompute_scale_factor)
    if any(s <= 0 for s in sizes):
        raise ShapeError(f"{op}: output size {tuple(sizes)} must be positive (input {spatial})")
    out = input
    for d, (n_in, n_out, f) in enumerate(zip(spatial, sizes, factors)):
        if n_in == n_out and (f is None or f == 1.0):
            continue
        scale = 1.0 / f if f is not None else n_in / n_out
        if mode == "area":
            out = _along(out, d + 2, out.new_tensor(_area_matrix(n_in, n_out)))
        elif dims is None:
            idx = _nearest_indices(n_in, n_out, scale, mode == "nearest-exact")
            index = out.new_tensor(idx, dtype="int64")
            out = index_select(out, d + 2, index)
        else:
            rows = _interp_matrix(n_in, n_out, scale, bool(align_corners), mode == "bicubic")
            out = _along(out, d + 2, out.new_tensor(rows))
    return out


__all__ = ["scaled_dot_product_attention", "pixel_shuffle", "pixel_unshuffle", "interpolate"]
