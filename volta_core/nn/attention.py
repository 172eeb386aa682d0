"""Attention: ``scaled_dot_product_attention`` and ``MultiheadAttention``.

``MultiheadAttention``'s parameter names and layouts follow PyTorch (``in_proj_weight``
``(3E, E)`` holding the query, key and value projections stacked, ``in_proj_bias``,
``out_proj.weight``, ``out_proj.bias``; ``q_proj_weight``/``k_proj_weight``/``v_proj_weight``
when ``kdim`` or ``vdim`` differ from ``embed_dim``), so PyTorch state dicts load unchanged.
"""

from __future__ import annotations

import math
from typing import Any

from ..amp.dispatch import autocast_call
from ..amp.state import state as _autocast_state
from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..backend.kernels import fallback, get_kernel
from ..creation import rand, randn
from ..dtypes import bfloat16
from ..errors import AutogradError, DTypeError, ShapeError
from ..ops._util import broadcast_shapes
from ..ops.elementwise import where
from ..ops.indexing import triu
from ..ops.movement import cat, narrow, sum_to
from ..ops.softmax import softmax
from ..tensor import Tensor
from .dropout import _dropout, _mask_to_save, _saved_mask
from .module import Module
from .parameter import Parameter

# -- masks ----------------------------------------------------------------------------------


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
@fallback("zero_masked_rows")
def zero_masked_rows(xp: Any, scores: Any, p: Any) -> Any:
    """``p`` (the softmax of ``scores`` along the last dim) with 0 in every row whose
    scores are all -inf (a fully masked row attends to nothing, as in PyTorch)."""
    if math.prod(p.shape) == 0:  # nothing to zero (no keys: no row maximum either)
        return p
    blocked = xp.max(scores, axis=-1, keepdims=True) == -math.inf
    return xp.where(blocked, xp.zeros_like(p), p)


class _Attention(Function):
    """``dropout(softmax(q @ k^T * scale + mask)) @ v`` as one node.

    ``q``/``k``/``v`` are ``(..., L|S, E)`` with equal batch dims; ``mask`` (a float
    Tensor broadcastable to the scores, or None) is added; ``keep`` is a constant scaled
    dropout mask of the scores' shape (a raw array) or None. The softmax runs on the
    ``softmax`` kernel; a plain backward works on raw arrays (GEMMs, the
    ``softmax_backward`` kernel), a ``create_graph`` one recomputes with Tensor ops.
    """

    def forward(ctx, q, k=None, v=None, mask=None, keep=None, scale=1.0, keep_scale=0.0):
        xp = ctx.xp
        ctx.scale = scale
        ctx.packed = k is None  # q holds (q, k, v) stacked along a leading dim of 3
        inputs = (q, k, v, mask)
        if ctx.packed:
            q, k, v = q[0, ...], q[1, ...], q[2, ...]
        ctx.mask_shape = None if mask is None else tuple(mask.shape)
        qs = xp.multiply(q, scale)  # xp's: keeps a bfloat16 q bfloat16 on every backend
        s = xp.matmul(qs, xp.matrix_transpose(k))
        if mask is not None:
            s = s + mask
        p = get_kernel(ctx.device.backend, "softmax")(xp, s, -1)
        if mask is not None:  # a fully masked row attends to nothing: 0, as in PyTorch
            p = get_kernel(ctx.device.backend, "zero_masked_rows")(xp, s, p)
        # backward rebuilds q * scale rather than keeping it, and keeps of the scaled
        # dropout mask what dropout's backward keeps
        kept = None
        if keep is not None and any(ctx.needs_input_grad[:4]):
            kept = _mask_to_save(ctx, keep, keep_scale)
        ctx.save_for_backward(*inputs, p, kept, k, v)
        return xp.matmul(p if keep is None else p * keep, v)

    def backward(ctx, g):
        qi, ki, vi, mask, p, kept, k, v = ctx.saved_tensors
        keep = None if kept is None else _saved_mask(ctx, kept)
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
            gq = xp.multiply(xp.matmul(gs, k.array), ctx.scale) if nq else None
            if nk:
                qa = qi.array[0, ...] if ctx.packed else qi.array
                gk = xp.matmul(xp.matrix_transpose(gs), xp.multiply(qa, ctx.scale))
            else:
                gk = None
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
        p = softmax(sc, -1) if mask is None else _masked_softmax(sc)
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
    if mask is None and q.ndim == 4 + int(k is None):
        # the backend's fused attention (cuDNN flash on CUDA) where it takes the inputs
        # (with dropout where it draws the mask itself: wgpu's), packed or not
        out = _flash_attention(q, k, v, False, scale, dropout_p)
        if out is not None:
            return out
    if dropout_p > 0.0:
        shape = (*q.shape[int(k is None):-1], (q if k is None else k).shape[-2])
        if dropout_p >= 1.0:
            keep = q.new_zeros(*shape).array
        else:
            from .dropout import _mask

            keep = _mask(q, shape, dropout_p).array
    keep_scale = 1.0 / (1.0 - dropout_p) if 0.0 < dropout_p < 1.0 else 0.0
    return _Attention.apply(q, k, v, mask, keep, scale=scale, keep_scale=keep_scale)


class _FlashAttention(Function):
    """Fused attention of a backend's ``sdpa_flash`` kernels (cuDNN on CUDA): the scores
    never reach memory; backward recomputes them from the saved log-sum-exp ``stats``.
    With ``k`` and ``v`` None, ``q`` holds queries, keys and values stacked along a
    leading dim of 3 (its gradient comes back stacked, one array)."""

    def forward(ctx, q, k, v, kernels=None, causal=False, scale=1.0, dropout_p=0.0):
        # dropout (only for kernels that draw it, ``kernels.dropout``): ``stats`` holds
        # what the backward needs to draw the same mask again
        ctx.extra = {"dropout_p": dropout_p} if dropout_p else {}
        ctx.packed = k is None
        qa, ka, va = (q[0, ...], q[1, ...], q[2, ...]) if ctx.packed else (q, k, v)
        out = kernels.forward(qa, ka, va, scale=scale, causal=causal, **ctx.extra)
        if out is None:
            raise _FlashRefused
        o, stats = out
        ctx.kernels, ctx.causal, ctx.scale = kernels, causal, scale
        ctx.save_for_backward(q, k, v, o, stats)
        return o

    def backward(ctx, g):
        q, k, v, o, stats = ctx.saved_tensors
        if ctx.packed:
            q, k, v = q[0], q[1], q[2]
        if _grad_state.enabled:  # create_graph: differentiable Tensor ops, in float32
            if ctx.extra:
                raise AutogradError(
                    "scaled_dot_product_attention: the fused attention drew its dropout "
                    "mask inside the kernel, so create_graph=True cannot differentiate it "
                    "again; use dropout_p=0 (or model.eval()) for higher-order gradients, "
                    "or turn the fused kernel off (VOLTA_WGPU_FLASH=0 on wgpu)")
            grads = _attention_grads_graph(q, k, v, g, ctx.scale, ctx.causal)
            if ctx.packed:
                from ..ops.joining import stack

                return stack(list(grads)), None, None
            return grads
        xp, dev = ctx.xp, ctx.device
        grads = ctx.kernels.backward(q.array, k.array, v.array, o.array, g.array,
                                     stats.array, scale=ctx.scale, causal=ctx.causal,
                                     **ctx.extra)
        if grads is None and ctx.extra:
            raise AutogradError("scaled_dot_product_attention: the backend's fused "
                                "attention refused the backward of its own dropout")
        if grads is None:  # the kernel refused the backward: the plain math, in float32
            grads = _attention_grads(xp, q.array, k.array, v.array, g.array, ctx.scale,
                                     ctx.causal)
        if ctx.packed:
            return Tensor._make(xp.stack(list(grads)), dev), None, None
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
    p = softmax(s, -1)
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


def _flash_attention(q: Tensor, k: Tensor | None, v: Tensor | None, causal: bool,
                     scale: float | None, dropout_p: float = 0.0) -> Tensor | None:
    """The backend's fused attention when it has one for these inputs (and draws the
    dropout mask itself, where ``dropout_p > 0``), else None. With ``k`` and ``v`` None,
    ``q`` is ``(3, ..., L, E)``: queries, keys and values stacked."""
    kernels = get_kernel(q.device.backend, "sdpa_flash")
    if dropout_p and not (getattr(kernels, "dropout", False) and 0.0 < dropout_p < 1.0):
        return None
    if k is None and v is None:
        qa = q.array
        arrays = (qa[0, ...], qa[1, ...], qa[2, ...])
    elif type(k) is not Tensor or type(v) is not Tensor or not (q.device is k.device
                                                                 is v.device):
        return None
    else:
        arrays = (q.array, k.array, v.array)
    if not kernels.supported(*arrays):
        return None
    if causal and arrays[0].shape[-2] != arrays[1].shape[-2]:
        return None  # square causal masks only: both alignments agree there
    factor = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    try:
        return _FlashAttention.apply(q, k, v, kernels=kernels, causal=causal, scale=factor,
                                     dropout_p=dropout_p)
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
    if attn_mask is None:
        out = _flash_attention(query, key, value, is_causal, scale, dropout_p)
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
    weights = _masked_softmax(scores) if masked else softmax(scores, -1)
    return _dropout(weights, dropout_p) @ value


def _masked_softmax(scores: Tensor) -> Tensor:
    """Softmax over the last dim with 0 (not NaN) for rows whose scores are all -inf
    (fully masked), and a zero gradient there."""
    blocked = scores.detach().amax(-1, keepdim=True) == -math.inf
    return where(blocked, 0.0, softmax(where(blocked, 0.0, scores), -1))


# -- MultiheadAttention ------------------------------------------------------------------

_NAME = "MultiheadAttention"


def _linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    from .linear import linear

    return linear(x, weight, bias)


def _xavier_uniform_(p: Tensor) -> None:
    fan_out, fan_in = p.shape[0], p.shape[1]
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    p.data = rand(*p.shape, dtype=p.dtype, device=p.device) * (2 * bound) - bound


def _xavier_normal_(p: Tensor) -> None:
    # PyTorch computes the fans of a (1, 1, E) tensor as fan_in = fan_out = E
    fan = p.shape[-1]
    std = math.sqrt(2.0 / (fan + fan))
    p.data = randn(*p.shape, dtype=p.dtype, device=p.device) * std


class MultiheadAttention(Module):
    """Attention from queries to keys/values, split over ``num_heads`` heads.

    ``MultiHead(Q, K, V) = concat(head_1, ..., head_h) W_o`` with
    ``head_i = softmax(Q W_q_i (K W_k_i)^T / sqrt(d) + mask) V W_v_i``.

    Args:
        embed_dim: the model's feature size ``E`` (split evenly over the heads).
        num_heads: the number of heads; must divide ``embed_dim``.
        dropout: dropout probability on the attention weights (in training).
        bias: whether the input and output projections have biases.
        add_bias_kv: append learned ``bias_k``/``bias_v`` to the keys and values.
        add_zero_attn: append a zero key and value to every sequence.
        kdim: the feature size of ``key`` (``embed_dim`` when None).
        vdim: the feature size of ``value`` (``embed_dim`` when None).
        batch_first: inputs and outputs are ``(N, L, E)`` instead of ``(L, N, E)``.

    Shape:
        - query: ``(L, N, E)``, ``(N, L, E)`` with ``batch_first``, or ``(L, E)``.
        - key / value: ``(S, N, kdim)`` / ``(S, N, vdim)`` (batch first or unbatched alike).
        - key_padding_mask: ``(N, S)`` or ``(S,)``; True (or ``-inf``) marks ignored keys.
        - attn_mask: ``(L, S)`` or ``(N * num_heads, L, S)``; True (or ``-inf``) marks
          forbidden pairs, a float mask is added to the scores.
        - Output: ``(L, N, E)`` (as the query) and the weights ``(N, L, S)``, or
          ``(N, num_heads, L, S)`` with ``average_attn_weights=False`` (or None).
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"{_NAME}: embed_dim and num_heads must be positive, got "
                             f"embed_dim={embed_dim}, num_heads={num_heads}")
        if embed_dim % num_heads:
            raise ValueError(f"{_NAME}: embed_dim={embed_dim} must be divisible by "
                             f"num_heads={num_heads}")
        from ..creation import empty
        from .linear import Linear

        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = float(dropout)
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads

        def param(*shape: int) -> Tensor:
            return Parameter(empty(*shape, dtype=dtype, device=device))

        if self._qkv_same_embed_dim:
            self.in_proj_weight = param(3 * embed_dim, embed_dim)
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = param(embed_dim, embed_dim)
            self.k_proj_weight = param(embed_dim, self.kdim)
            self.v_proj_weight = param(embed_dim, self.vdim)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = param(3 * embed_dim)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        if add_bias_kv:
            self.bias_k = param(1, 1, embed_dim)
            self.bias_v = param(1, 1, embed_dim)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            _xavier_uniform_(self.in_proj_weight)
        else:
            for p in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                _xavier_uniform_(p)
        for b in (self.in_proj_bias, self.out_proj.bias):
            if b is not None:
                b.data = b.new_zeros(*b.shape)
        for b in (self.bias_k, self.bias_v):
            if b is not None:
                _xavier_normal_(b)

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """Attend from ``query`` to ``key``/``value``; returns ``(output, weights)``.

        Args:
            query: the queries.
            key: the keys.
            value: the values.
            key_padding_mask: marks keys to ignore per batch element (bool or float).
            need_weights: also return the attention weights (else None).
            attn_mask: marks forbidden query/key pairs (bool), or a float mask to add.
            average_attn_weights: average the returned weights over the heads.
            is_causal: forbid keys after each query (builds the mask if ``attn_mask`` is
                None).
        """
        batched = self._check_inputs(query, key, value)
        if (batched and not need_weights and query is key and key is value
                and self.in_proj_weight is not None and self.bias_k is None
                and not self.add_zero_attn):
            return self._self_attend(query, key_padding_mask, attn_mask, is_causal), None
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        out, weights = self._attend(query, key, value, key_padding_mask, need_weights,
                                    attn_mask, average_attn_weights, is_causal, batched)
        if not batched:
            out = out.squeeze(1)
            if weights is not None:
                weights = weights.squeeze(0)
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    # -- internals ---------------------------------------------------------------------------
    def _check_inputs(self, query: Tensor, key: Tensor, value: Tensor) -> bool:
        for name, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, Tensor):
                raise TypeError(f"{_NAME}: {name} must be a Tensor, got {type(t).__name__}")
            if not t.dtype.is_floating_point:
                raise DTypeError(f"{_NAME}: {name} must be floating point, got "
                                 f"{t.dtype.name}")
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise ShapeError(f"{_NAME}: expected query, key and value all 3-D (batched) or "
                             f"all 2-D (unbatched), got shapes {query.shape}, {key.shape}, "
                             f"{value.shape}")
        for name, t, size in (("query", query, self.embed_dim), ("key", key, self.kdim),
                              ("value", value, self.vdim)):
            if t.shape[-1] != size:
                arg = {"query": "embed_dim", "key": "kdim", "value": "vdim"}[name]
                raise ShapeError(f"{_NAME}: expected {name} with {size} features ({arg}) in "
                                 f"its last dim, got shape {t.shape}")
        if key.shape[:-1] != value.shape[:-1]:
            raise ShapeError(f"{_NAME}: key {key.shape} and value {value.shape} must agree "
                             "in all but the last dim")
        batched = query.ndim == 3
        bdim = 0 if self.batch_first else 1
        if batched and query.shape[bdim] != key.shape[bdim]:
            raise ShapeError(f"{_NAME}: query {query.shape} and key {key.shape} have "
                             f"different batch sizes (dim {bdim}"
                             f"{', batch_first=True' if self.batch_first else ''})")
        return batched

    def _projections(self) -> tuple:
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            ws = [narrow(w, 0, i * e, e) for i in range(3)]
        else:
            ws = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        b = self.in_proj_bias
        bs = [None] * 3 if b is None else [narrow(b, 0, i * e, e) for i in range(3)]
        return ws, bs

    def _mask(self, attn_mask: Tensor | None, kpm: Tensor | None, is_causal: bool,
              tgt: int, src: int, bsz: int, like: Tensor, batched: bool) -> Tensor | None:
        """Merge both masks into one float mask broadcastable to (N, H, L, S)."""
        h = self.num_heads
        mask = None
        if attn_mask is None and is_causal:
            mask = _causal_mask(tgt, src, like)
        elif attn_mask is not None:
            if attn_mask.ndim == 2:
                if tuple(attn_mask.shape) != (tgt, src):
                    raise ShapeError(f"{_NAME}: a 2-D attn_mask must have shape (L, S) = "
                                     f"{(tgt, src)}, got {attn_mask.shape}")
            elif attn_mask.ndim == 3:
                want = (bsz * h, tgt, src)
                if tuple(attn_mask.shape) != want:
                    raise ShapeError(f"{_NAME}: a 3-D attn_mask must have shape "
                                     f"(N * num_heads, L, S) = {want}, got {attn_mask.shape}")
                attn_mask = attn_mask.reshape(bsz, h, tgt, src)
            else:
                raise ShapeError(f"{_NAME}: attn_mask must be 2-D (L, S) or 3-D "
                                 f"(N * num_heads, L, S), got shape {attn_mask.shape}")
            mask = _float_mask(attn_mask, like, allow_is_true=False)
        if kpm is not None:
            if tuple(kpm.shape) != (bsz, src):
                want = (bsz, src) if batched else (src,)
                got = kpm.shape if batched else kpm.shape[1:]
                raise ShapeError(f"{_NAME}: key_padding_mask must have shape (N, S) = {want}, "
                                 f"got {got}")
            pad = _float_mask(kpm, like, allow_is_true=False).reshape(bsz, 1, 1, src)
            mask = pad if mask is None else mask + pad
        return mask

    def _self_attend(self, x: Tensor, kpm: Tensor | None, attn_mask: Tensor | None,
                     is_causal: bool) -> Tensor:
        """Batched self-attention: one packed QKV GEMM and the fused attention node."""
        h, hd, e = self.num_heads, self.head_dim, self.embed_dim
        if self.batch_first:
            bsz, seq = x.shape[0], x.shape[1]
            order, back = (2, 0, 3, 1, 4), (0, 2, 1, 3)
        else:
            seq, bsz = x.shape[0], x.shape[1]
            order, back = (2, 1, 3, 0, 4), (2, 0, 1, 3)
        qkv = _linear(x, self.in_proj_weight, self.in_proj_bias)
        qkv = qkv.reshape(*x.shape[:2], 3, h, hd).permute(*order)  # (3, N, H, L, hd)
        mask = self._mask(attn_mask, kpm, is_causal, seq, seq, bsz, x, True)
        p = self.dropout if self.training else 0.0
        out = _attention(qkv, None, None, mask, p, 1.0 / math.sqrt(hd))  # (N, H, L, hd)
        out = out.permute(*back).reshape(*x.shape[:2], e)
        return _linear(out, self.out_proj.weight, self.out_proj.bias)

    def _attend(self, query: Tensor, key: Tensor, value: Tensor, kpm: Tensor | None,
                need_weights: bool, attn_mask: Tensor | None, average: bool,
                is_causal: bool, batched: bool) -> tuple[Tensor, Tensor | None]:
        tgt, bsz, e = query.shape
        h, hd = self.num_heads, self.head_dim
        (wq, wk, wv), (bq, bk, bv) = self._projections()
        q, k, v = _linear(query, wq, bq), _linear(key, wk, bk), _linear(value, wv, bv)
        if self.bias_k is not None:
            k = cat([k, self.bias_k.expand(1, bsz, e)], 0)
            v = cat([v, self.bias_v.expand(1, bsz, e)], 0)
            attn_mask, kpm = _pad_masks(attn_mask, kpm)
        if self.add_zero_attn:
            k = cat([k, k.new_zeros(1, bsz, e)], 0)
            v = cat([v, v.new_zeros(1, bsz, e)], 0)
            attn_mask, kpm = _pad_masks(attn_mask, kpm)
        src = k.shape[0]
        # (seq, N, E) -> (N, H, seq, hd)
        q = q.reshape(tgt, bsz, h, hd).permute(1, 2, 0, 3)
        k = k.reshape(src, bsz, h, hd).permute(1, 2, 0, 3)
        v = v.reshape(src, bsz, h, hd).permute(1, 2, 0, 3)
        scores = (q * (1.0 / math.sqrt(hd))) @ k.transpose(-2, -1)
        mask = self._mask(attn_mask, kpm, is_causal, tgt, src, bsz, scores, batched)
        if mask is not None:
            scores = scores + mask
        weights = softmax(scores, -1)
        if self.training and self.dropout > 0:
            weights = _dropout(weights, self.dropout)
        out = (weights @ v).permute(2, 0, 1, 3).reshape(tgt, bsz, e)
        out = _linear(out, self.out_proj.weight, self.out_proj.bias)
        if not need_weights:
            return out, None
        return out, (weights.mean(1) if average else weights)


def _pad_masks(attn_mask: Tensor | None, kpm: Tensor | None) -> tuple:
    """Append one allowed key (a zero / False column) to both masks."""
    def pad(m: Tensor | None) -> Tensor | None:
        if m is None:
            return None
        return cat([m, m.new_zeros(*m.shape[:-1], 1)], -1)  # False / 0.0: allowed

    return pad(attn_mask), pad(kpm)


__all__ = ["MultiheadAttention", "scaled_dot_product_attention"]
