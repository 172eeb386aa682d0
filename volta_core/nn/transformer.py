"""Transformer layers: encoder/decoder layers, their stacks, and the full ``Transformer``.

Submodule names follow PyTorch (``self_attn``, ``multihead_attn``, ``linear1``,
``linear2``, ``norm1``..``norm3``, ``dropout``, ``dropout1``..``dropout3``, stacks under
``layers.{i}``), so PyTorch state dicts load unchanged.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

from ..creation import rand
from ..errors import ShapeError
from ..ops.activation import gelu
from ..ops.elementwise import relu
from ..tensor import Tensor
from .attention import MultiheadAttention, _causal_mask
from .module import Module
from .parameter import Buffer, Parameter


def _activation(name: str, activation: str | Callable[[Tensor], Tensor]) -> Callable:
    if callable(activation):
        return activation
    table = {"relu": relu, "gelu": gelu}
    if activation not in table:
        raise ValueError(f"{name}: activation should be 'relu', 'gelu' or a callable, not "
                         f"{activation!r}")
    return table[activation]


def _clone(module: Module, n: int) -> list[Module]:
    """``n`` deep copies of ``module`` with fresh parameters and buffers of equal values."""
    copies = []
    for _ in range(n):
        memo: dict[int, Any] = {}
        for p in module.parameters():
            memo[id(p)] = Parameter(p.detach().clone(), requires_grad=p.requires_grad)
        for b in module.buffers():
            memo[id(b)] = Buffer(b.detach().clone())
        copies.append(copy.deepcopy(module, memo))
    return copies


def _check(name: str, what: str, x: Tensor, d_model: int) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: {what} must be a Tensor, got {type(x).__name__}")
    if x.ndim not in (2, 3) or x.shape[-1] != d_model:
        raise ShapeError(f"{name}: expected {what} of shape (S, N, {d_model}), "
                         f"(N, S, {d_model}) with batch_first=True, or unbatched "
                         f"(S, {d_model}) where d_model={d_model}; got {x.shape}")


class _LayerBase(Module):
    def _common(self, d_model: int, nhead: int, dim_feedforward: int, dropout: float,
                activation: Any, layer_norm_eps: float, batch_first: bool, norm_first: bool,
                bias: bool, factory: dict, n_norms: int) -> None:
        from .dropout import Dropout
        from .linear import Linear
        from .normalization import LayerNorm

        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **factory)
        if n_norms == 3:
            self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                     bias=bias, batch_first=batch_first,
                                                     **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        norm_kw = dict(factory) if bias else dict(factory, bias=False)
        for i in range(1, n_norms + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, **norm_kw))
        for i in range(1, n_norms + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.d_model = d_model
        self.batch_first = batch_first
        self.activation = _activation(type(self).__name__, activation)

    def _sa_block(self, x: Tensor, mask: Tensor | None, kpm: Tensor | None,
                  is_causal: bool) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=kpm, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor, out_dropout: Module) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return out_dropout(x)


class TransformerEncoderLayer(_LayerBase):
    """Self-attention followed by a feed-forward network, each with residual and LayerNorm.

    Args:
        d_model: the number of expected features of the input.
        nhead: the number of attention heads.
        dim_feedforward: the hidden size of the feed-forward network.
        dropout: the dropout probability.
        activation: ``'relu'``, ``'gelu'`` or a callable for the feed-forward network.
        layer_norm_eps: the ``eps`` of the layer norms.
        batch_first: inputs and outputs are ``(N, S, E)`` instead of ``(S, N, E)``.
        norm_first: apply the layer norms before attention / feed-forward (pre-norm).
        bias: whether the linear layers and layer norms have biases.

    Shape:
        - src: ``(S, N, E)``, ``(N, S, E)`` with ``batch_first``, or ``(S, E)``.
        - src_mask: ``(S, S)`` or ``(N * nhead, S, S)``; src_key_padding_mask: ``(N, S)``.
        - Output: the shape of ``src``.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self._common(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                     batch_first, norm_first, bias, {"device": device, "dtype": dtype}, 2)

    def forward(self, src: Tensor, src_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None, is_causal: bool = False) -> Tensor:
        _check(type(self).__name__, "src", src, self.d_model)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x), self.dropout2)
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x, self.dropout2))
        return x


class TransformerDecoderLayer(_LayerBase):
    """Self-attention, cross-attention over ``memory``, then a feed-forward network.

    Args:
        d_model: the number of expected features of the input.
        nhead: the number of attention heads.
        dim_feedforward: the hidden size of the feed-forward network.
        dropout: the dropout probability.
        activation: ``'relu'``, ``'gelu'`` or a callable for the feed-forward network.
        layer_norm_eps: the ``eps`` of the layer norms.
        batch_first: inputs and outputs are ``(N, T, E)`` instead of ``(T, N, E)``.
        norm_first: apply the layer norms before each block (pre-norm).
        bias: whether the linear layers and layer norms have biases.

    Shape:
        - tgt: ``(T, N, E)`` (batch first or unbatched alike); memory: ``(S, N, E)``.
        - tgt_mask: ``(T, T)``; memory_mask: ``(T, S)``; key padding masks ``(N, T)`` and
          ``(N, S)``.
        - Output: the shape of ``tgt``.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = "relu",
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self._common(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                     batch_first, norm_first, bias, {"device": device, "dtype": dtype}, 3)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        name = type(self).__name__
        _check(name, "tgt", tgt, self.d_model)
        _check(name, "memory", memory, self.d_model)
        if tgt.ndim != memory.ndim:
            raise ShapeError(f"{name}: tgt {tgt.shape} and memory {memory.shape} must both be "
                             "batched (3-D) or both unbatched (2-D)")
        b = 0 if self.batch_first else 1
        if tgt.ndim == 3 and tgt.shape[b] != memory.shape[b]:
            raise ShapeError(f"{name}: tgt {tgt.shape} and memory {memory.shape} have "
                             f"different batch sizes (dim {b})")
        x = tgt
        args = (memory, memory_mask, memory_key_padding_mask, memory_is_causal)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), *args)
            x = x + self._ff_block(self.norm3(x), self.dropout3)
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, *args))
            x = self.norm3(x + self._ff_block(x, self.dropout3))
        return x

    def _mha_block(self, x: Tensor, mem: Tensor, mask: Tensor | None, kpm: Tensor | None,
                   is_causal: bool) -> Tensor:
        x = self.multihead_attn(x, mem, mem, attn_mask=mask, key_padding_mask=kpm,
                                need_weights=False, is_causal=is_causal)[0]
        return self.dropout2(x)


class TransformerEncoder(Module):
    """A stack of ``num_layers`` copies of an encoder layer, with an optional final norm.

    Args:
        encoder_layer: the layer to copy (its parameters are copied, not shared).
        num_layers: the number of layers.
        norm: an optional module applied to the output (such as a LayerNorm).
        enable_nested_tensor: accepted for compatibility; has no effect.
        mask_check: accepted for compatibility; has no effect.

    Shape:
        - src, mask, src_key_padding_mask: as for :class:`TransformerEncoderLayer`.
        - Output: the shape of ``src``.
    """

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        from .containers import ModuleList

        self.layers = ModuleList(_clone(encoder_layer, num_layers))
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src: Tensor, mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        return self.norm(x) if self.norm is not None else x


class TransformerDecoder(Module):
    """A stack of ``num_layers`` copies of a decoder layer, with an optional final norm.

    Args:
        decoder_layer: the layer to copy (its parameters are copied, not shared).
        num_layers: the number of layers.
        norm: an optional module applied to the output.

    Shape:
        - tgt, memory and masks: as for :class:`TransformerDecoderLayer`.
        - Output: the shape of ``tgt``.
    """

    def __init__(self, decoder_layer: Module, num_layers: int,
                 norm: Module | None = None) -> None:
        super().__init__()
        from .containers import ModuleList

        self.layers = ModuleList(_clone(decoder_layer, num_layers))
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask,
                      tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    """An encoder-decoder transformer ("Attention Is All You Need").

    Args:
        d_model: the number of expected features of the inputs.
        nhead: the number of attention heads.
        num_encoder_layers: the number of encoder layers.
        num_decoder_layers: the number of decoder layers.
        dim_feedforward: the hidden size of the feed-forward networks.
        dropout: the dropout probability.
        activation: ``'relu'``, ``'gelu'`` or a callable.
        custom_encoder: a module to use instead of the default encoder.
        custom_decoder: a module to use instead of the default decoder.
        layer_norm_eps: the ``eps`` of the layer norms.
        batch_first: inputs and outputs are ``(N, S, E)`` instead of ``(S, N, E)``.
        norm_first: pre-norm layers.
        bias: whether the linear layers and layer norms have biases.

    Shape:
        - src: ``(S, N, E)``; tgt: ``(T, N, E)`` (batch first or unbatched alike).
        - Output: ``(T, N, E)``.
    """

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation: str | Callable[[Tensor], Tensor] = "relu",
                 custom_encoder: Module | None = None, custom_decoder: Module | None = None,
                 layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        from .normalization import LayerNorm

        kw = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                  layer_norm_eps=layer_norm_eps, batch_first=batch_first,
                  norm_first=norm_first, bias=bias, device=device, dtype=dtype)
        norm_kw = {"device": device, "dtype": dtype} if bias else {"device": device,
                                                                   "dtype": dtype,
                                                                   "bias": False}
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(d_model, nhead, **kw), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, **norm_kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(d_model, nhead, **kw), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, **norm_kw))
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        for p in self.parameters():
            if p.ndim > 1:
                bound = math.sqrt(6.0 / (p.shape[0] + p.shape[1]))
                p.data = rand(*p.shape, dtype=p.dtype, device=p.device) * (2 * bound) - bound

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None,
                memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        b = 0 if self.batch_first else 1
        if src.ndim == 3 and tgt.ndim == 3 and src.shape[b] != tgt.shape[b]:
            raise ShapeError(f"Transformer: src {src.shape} and tgt {tgt.shape} have different "
                             f"batch sizes (dim {b})")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None,
                                        dtype: Any = None) -> Tensor:
        """A float ``(sz, sz)`` mask: ``-inf`` above the diagonal, 0 elsewhere."""
        from ..creation import zeros

        return _causal_mask(sz, sz, zeros(0, device=device, dtype=dtype))


__all__ = ["TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerDecoder", "Transformer"]
