"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their single-step cells.

Parameter names, shapes, gate order and initialisation follow PyTorch, so its state
dicts load unchanged: ``weight_ih_l{k}`` is ``(gates*hidden_size, input)``, gates are
``i, f, g, o`` for the LSTM and ``r, z, n`` for the GRU, and the reverse direction of a
bidirectional layer has the suffix ``_reverse``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from ..amp.state import state as _autocast_state
from ..creation import rand
from ..errors import DTypeError, ShapeError
from ..ops.movement import cat, narrow, select, stack
from ..tensor import Tensor
from .dropout import _dropout
from .fused_rnn import GRULayer, LSTMLayer, RNNLayer
from .module import Module
from .parameter import Parameter

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _linear(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    out = x @ weight.t()
    return out if bias is None else out + bias


def _rnn_step(mode: str, x: Tensor, state: Any, w_ih: Tensor, w_hh: Tensor,
              b_ih: Tensor | None, b_hh: Tensor | None, w_hr: Tensor | None = None) -> Any:
    """One time step of a cell: returns ``h'`` (or ``(h', c')`` for the LSTM)."""
    if mode == "LSTM":
        h, c = state
        gates = _linear(x, w_ih, b_ih) + _linear(h, w_hh, b_hh)
        n = gates.shape[-1] // 4
        i, f, g, o = (narrow(gates, -1, k * n, n) for k in range(4))
        c_next = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h_next = o.sigmoid() * c_next.tanh()
        if w_hr is not None:
            h_next = h_next @ w_hr.t()
        return h_next, c_next
    if mode == "GRU":
        gi = _linear(x, w_ih, b_ih)
        gh = _linear(state, w_hh, b_hh)
        n = gi.shape[-1] // 3
        r = (narrow(gi, -1, 0, n) + narrow(gh, -1, 0, n)).sigmoid()
        z = (narrow(gi, -1, n, n) + narrow(gh, -1, n, n)).sigmoid()
        cand = (narrow(gi, -1, 2 * n, n) + r * narrow(gh, -1, 2 * n, n)).tanh()
        return cand + z * (state - cand)  # (1 - z) * n + z * h
    pre = _linear(x, w_ih, b_ih) + _linear(state, w_hh, b_hh)
    return pre.tanh() if mode == "RNN_TANH" else pre.relu()


def _uniform_(params: list[Tensor], hidden_size: int) -> None:
    k = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0.0
    for p in params:
        p.data = rand(*p.shape, dtype=p.dtype, device=p.device) * (2 * k) - k


def _nonlinearity_mode(name: str, nonlinearity: str) -> str:
    """The mode (``'RNN_TANH'`` or ``'RNN_RELU'``) of an Elman RNN's ``nonlinearity``."""
    modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
    if nonlinearity not in modes:
        raise ValueError(f"{name}: unknown nonlinearity {nonlinearity!r}; use 'tanh' or 'relu'")
    return modes[nonlinearity]


def _check_float(name: str, x: Tensor) -> None:
    if not x.dtype.is_floating_point:
        raise DTypeError(f"{name}: expected a floating point input, got {x.dtype.name}; "
                         "convert it with .float()")


# -- multi-layer recurrent networks ----------------------------------------------------------


class RNNBase(Module):
    """Shared machinery of :class:`RNN`, :class:`LSTM` and :class:`GRU`."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        name = type(self).__name__
        if not 0.0 <= float(dropout) <= 1.0:
            raise ValueError(f"{name}: dropout must be a probability in [0, 1], got {dropout}")
        if hidden_size <= 0 or num_layers <= 0:
            raise ValueError(f"{name}: hidden_size and num_layers must be positive, got "
                             f"hidden_size={hidden_size}, num_layers={num_layers}")
        if proj_size < 0 or (proj_size and (mode != "LSTM" or proj_size >= hidden_size)):
            raise ValueError(f"{name}: proj_size must be in [0, hidden_size) and is only "
                             f"supported by LSTM, got proj_size={proj_size}")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"{name}: dropout={dropout} has no effect with num_layers=1 "
                          "(it applies between layers)", stacklevel=2)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size or hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        from ..creation import empty

        for layer in range(num_layers):
            layer_in = input_size if layer == 0 else real_hidden * directions
            for d in range(directions):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                shapes = [("weight_ih", (gate_size, layer_in)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for pname, shape in shapes:
                    setattr(self, pname + sfx,
                            Parameter(empty(*shape, dtype=dtype, device=device)))
                    self._flat_weights_names.append(pname + sfx)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every weight and bias from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        _uniform_(list(self.parameters()), self.hidden_size)

    @property
    def all_weights(self) -> list[list[Tensor]]:
        """The parameters grouped per layer and direction, in PyTorch's order."""
        per = len(self._flat_weights_names) // (self.num_layers * self._directions)
        flat = [getattr(self, n) for n in self._flat_weights_names]
        return [flat[i:i + per] for i in range(0, len(flat), per)]

    @property
    def _directions(self) -> int:
        return 2 if self.bidirectional else 1

    def _weights(self, layer: int, direction: int) -> tuple:
        sfx = f"_l{layer}" + ("_reverse" if direction else "")
        get = self._parameters.get
        return (get("weight_ih" + sfx), get("weight_hh" + sfx), get("bias_ih" + sfx),
                get("bias_hh" + sfx), get("weight_hr" + sfx))

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.mode == "RNN_RELU":
            s += ", nonlinearity='relu'"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s

    # -- forward -----------------------------------------------------------------------------
    def _check_input(self, input: Tensor) -> bool:
        name = type(self).__name__
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}: expected a Tensor or a PackedSequence input, got "
                            f"{type(input).__name__}")
        if input.ndim not in (2, 3):
            raise ShapeError(f"{name}: expected a 2-D (unbatched) or 3-D input, got shape "
                             f"{input.shape}; layout is (L, N, H_in), or (N, L, H_in) with "
                             "batch_first=True")
        _check_float(name, input)
        if input.shape[-1] != self.input_size:
            raise ShapeError(f"{name}: expected input with {self.input_size} features in its "
                             f"last dim (input_size), got shape {input.shape}")
        if input.shape[1 if input.ndim == 3 and self.batch_first else 0] == 0:
            raise ShapeError(f"{name}: expected a sequence length larger than 0, got input "
                             f"of shape {input.shape} (as PyTorch refuses it)")
        return input.ndim == 3

    def _check_state(self, what: str, h: Tensor, expected: tuple, batched: bool) -> Tensor:
        name = type(self).__name__
        want = expected if batched else (expected[0], expected[2])
        if tuple(h.shape) != want:
            kind = "batched 3-D" if batched else "unbatched 2-D"
            raise ShapeError(f"{name}: expected {what} of shape {want} for a {kind} input "
                             f"(num_layers * num_directions, batch, size), got {h.shape}")
        return h if batched else h.unsqueeze(1)

    def flatten_parameters(self) -> None:
        """A no-op kept for PyTorch compatibility: cuDNN's packed weight buffer does not
        exist here (every backend reads the parameters as they are)."""

    def _initial_state(self, x: Tensor, hx: Any, batched: bool, batch: int) -> Any:
        n_states = self.num_layers * self._directions
        real_hidden = self.proj_size or self.hidden_size
        if hx is None:
            zeros_h = x.new_zeros(n_states, batch, real_hidden)
            if self.mode == "LSTM":
                return zeros_h, x.new_zeros(n_states, batch, self.hidden_size)
            return zeros_h
        if self.mode == "LSTM":
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError("LSTM: hx must be a tuple (h_0, c_0) of tensors")
            return (self._check_state("h_0", hx[0], (n_states, batch, real_hidden), batched),
                    self._check_state("c_0", hx[1], (n_states, batch, self.hidden_size),
                                      batched))
        return self._check_state("h_0", hx, (n_states, batch, real_hidden), batched)

    def _layers(self, seq: list[Tensor], sizes: list[int], hx: Any) -> tuple[list, list]:
        """Run every layer and direction over the steps ``seq``.

        Step ``t`` holds the first ``sizes[t]`` rows of the batch (all of them unless the
        input was packed): only those rows step, the others keep their state, so each
        sequence's final state is the one at its own last step, and a reversed pass
        starts every sequence from ``h_0`` at its own last step.
        """
        lstm = self.mode == "LSTM"
        directions = self._directions
        batch = hx[0].shape[1] if lstm else hx.shape[1]
        finals = []
        for layer in range(self.num_layers):
            outs = []
            for d in range(directions):
                k = layer * directions + d
                state = ((select(hx[0], 0, k), select(hx[1], 0, k)) if lstm
                         else select(hx, 0, k))
                w = self._weights(layer, d)
                out_d = [None] * len(seq)
                for t in (range(len(seq) - 1, -1, -1) if d else range(len(seq))):
                    bs = sizes[t]
                    if bs == batch:
                        state = _rnn_step(self.mode, seq[t], state, *w)
                        out_d[t] = state[0] if lstm else state
                        continue
                    parts = state if lstm else (state,)
                    new = _rnn_step(self.mode, seq[t],
                                    tuple(narrow(s, 0, 0, bs) for s in parts) if lstm
                                    else narrow(state, 0, 0, bs), *w)
                    news = new if lstm else (new,)
                    merged = tuple(cat([n, narrow(s, 0, bs, batch - bs)], 0)
                                   for n, s in zip(news, parts))
                    state = merged if lstm else merged[0]
                    out_d[t] = news[0]
                outs.append(out_d)
                finals.append(state)
            seq = outs[0] if directions == 1 else [cat(p, -1) for p in zip(*outs)]
            if self.dropout and self.training and layer < self.num_layers - 1:
                seq = [_dropout(s, self.dropout) for s in seq]
        return seq, finals

    def _fused_lstm(self, x: Tensor, hx: Any) -> tuple[Tensor, list]:
        """Every layer and direction as one :class:`LSTMLayer` op (time loop on arrays)."""
        steps = x.shape[0]
        hid = self.hidden_size
        directions = self._directions
        finals = []
        for layer in range(self.num_layers):
            outs = []
            for d in range(directions):
                k = layer * directions + d
                w_ih, w_hh, b_ih, b_hh, _ = self._weights(layer, d)
                bias = None if b_ih is None else b_ih + b_hh
                y = LSTMLayer.apply(x, select(hx[0], 0, k), select(hx[1], 0, k), w_ih, w_hh,
                                    bias, reverse=bool(d))
                h_seq = narrow(y, -1, 0, hid)
                last = 0 if d else steps - 1  # a reversed pass ends at the first step
                finals.append((select(h_seq, 0, last), select(narrow(y, -1, hid, hid), 0, last)))
                outs.append(h_seq)
            x = outs[0] if directions == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = _dropout(x, self.dropout)
        return x, finals

    def _fused_one_state(self, x: Tensor, hx: Tensor) -> tuple[Tensor, list]:
        """Every layer and direction of a GRU or Elman RNN as one :class:`GRULayer` or
        :class:`RNNLayer` op (time loop on arrays)."""
        steps = x.shape[0]
        directions = self._directions
        finals = []
        for layer in range(self.num_layers):
            outs = []
            for d in range(directions):
                w_ih, w_hh, b_ih, b_hh, _ = self._weights(layer, d)
                h0 = select(hx, 0, layer * directions + d)
                if self.mode == "GRU":
                    y = GRULayer.apply(x, h0, w_ih, w_hh, b_ih, b_hh, reverse=bool(d))
                else:
                    bias = None if b_ih is None else b_ih + b_hh
                    y = RNNLayer.apply(x, h0, w_ih, w_hh, bias, relu=self.mode == "RNN_RELU",
                                       reverse=bool(d))
                finals.append(select(y, 0, 0 if d else steps - 1))
                outs.append(y)
            x = outs[0] if directions == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = _dropout(x, self.dropout)
        return x, finals

    def _final(self, finals: list) -> Any:
        if self.mode == "LSTM":
            return stack([s[0] for s in finals], 0), stack([s[1] for s in finals], 0)
        return stack(finals, 0)

    def _run(self, input: Any, hx: Any) -> tuple[Any, Any]:
        from .utils.rnn import PackedSequence

        if isinstance(input, PackedSequence):
            return self._run_packed(input, hx)
        batched = self._check_input(input)
        x = input
        if not batched:
            x = x.unsqueeze(1)
        elif self.batch_first:
            x = x.transpose(0, 1)
        steps, batch = x.shape[0], x.shape[1]
        lstm = self.mode == "LSTM"
        hx = self._initial_state(x, hx, batched, batch)
        # the fused layers take no autocast casts and no mixed dtypes: those step by step
        fused = not _autocast_state.active and all(
            p.dtype is x.dtype for p in (*self._parameters.values(),
                                         *(hx if lstm else (hx,))) if p is not None)
        if fused and lstm and not self.proj_size:
            output, finals = self._fused_lstm(x, hx)
        elif fused and not lstm:
            output, finals = self._fused_one_state(x, hx)
        else:
            seq, finals = self._layers([select(x, 0, t) for t in range(steps)],
                                       [batch] * steps, hx)
            output = stack(seq, 0)
        h_n = self._final(finals)
        if not batched:
            output = output.squeeze(1)
            h_n = (h_n[0].squeeze(1), h_n[1].squeeze(1)) if lstm else h_n.squeeze(1)
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, h_n

    def _run_packed(self, packed: Any, hx: Any) -> tuple[Any, Any]:
        """Run over a PackedSequence; returns a PackedSequence output and ``h_n`` in the
        caller's batch order (as PyTorch: ``hx`` is taken in that order too)."""
        from ..ops.indexing import index_select
        from .utils.rnn import PackedSequence

        data = packed.data
        self._check_input(data.unsqueeze(0))
        sizes = [int(v) for v in packed.batch_sizes.tolist()]
        batch = sizes[0]
        if hx is not None and packed.sorted_indices is not None:
            order = packed.sorted_indices
            hx = (tuple(index_select(h, 1, order) for h in hx) if self.mode == "LSTM"
                  else index_select(hx, 1, order))
        hx = self._initial_state(data, hx, True, batch)
        offsets = [sum(sizes[:t]) for t in range(len(sizes))]
        seq = [narrow(data, 0, o, n) for o, n in zip(offsets, sizes)]
        seq, finals = self._layers(seq, sizes, hx)
        h_n = self._final(finals)
        if packed.unsorted_indices is not None:
            undo = packed.unsorted_indices
            h_n = (tuple(index_select(h, 1, undo) for h in h_n) if self.mode == "LSTM"
                   else index_select(h_n, 1, undo))
        out = PackedSequence(cat(seq, 0), packed.batch_sizes, packed.sorted_indices,
                             packed.unsorted_indices)
        return out, h_n


class RNN(RNNBase):
    """An Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` per layer.

    Args:
        input_size: the number of features of the input ``x``.
        hidden_size: the number of features of the hidden state ``h``.
        num_layers: the number of stacked recurrent layers.
        nonlinearity: ``'tanh'`` or ``'relu'``.
        bias: whether the layers have the biases ``b_ih`` and ``b_hh``.
        batch_first: inputs and outputs are ``(N, L, H)`` instead of ``(L, N, H)``.
        dropout: dropout probability on the outputs of every layer but the last.
        bidirectional: run a second, reversed pass per layer and concatenate the outputs.

    Shape:
        - Input: ``(L, N, H_in)``, ``(N, L, H_in)`` with ``batch_first``, or ``(L, H_in)``.
        - h_0: ``(D * num_layers, N, H_out)`` or ``(D * num_layers, H_out)``; zeros if None.
        - Output: ``(L, N, D * H_out)`` (batch first if set) and
          ``h_n`` of the shape of ``h_0``, where ``D`` is 2 if bidirectional else 1.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        mode = _nonlinearity_mode("RNN", nonlinearity)
        self.nonlinearity = nonlinearity
        super().__init__(mode, input_size, hidden_size, num_layers, bias,
                         batch_first, dropout, bidirectional, 0, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return self._run(input, hx)


class LSTM(RNNBase):
    """A multi-layer long short-term memory network (gates ``i, f, g, o``).

    Per step: ``c_t = f * c_{t-1} + i * g`` and ``h_t = o * tanh(c_t)`` (projected by
    ``weight_hr`` when ``proj_size > 0``).

    Args:
        input_size: the number of features of the input ``x``.
        hidden_size: the number of features of the cell state ``c``.
        num_layers: the number of stacked layers.
        bias: whether the layers have the biases ``b_ih`` and ``b_hh``.
        batch_first: inputs and outputs are ``(N, L, H)`` instead of ``(L, N, H)``.
        dropout: dropout probability on the outputs of every layer but the last.
        bidirectional: run a second, reversed pass per layer and concatenate the outputs.
        proj_size: if > 0, project ``h`` to this size.

    Shape:
        - Input: ``(L, N, H_in)``, ``(N, L, H_in)`` with ``batch_first``, or ``(L, H_in)``.
        - (h_0, c_0): ``(D * num_layers, N, H_out)`` and ``(D * num_layers, N, H_cell)``
          (without ``N`` for unbatched input); zeros if None.
        - Output: ``(L, N, D * H_out)`` and ``(h_n, c_n)`` shaped as ``(h_0, c_0)``.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        return self._run(input, hx)


class GRU(RNNBase):
    """A multi-layer gated recurrent unit network (gates ``r, z, n``).

    Per step: ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))`` and
    ``h' = (1 - z) * n + z * h``.

    Args:
        input_size: the number of features of the input ``x``.
        hidden_size: the number of features of the hidden state ``h``.
        num_layers: the number of stacked layers.
        bias: whether the layers have the biases ``b_ih`` and ``b_hh``.
        batch_first: inputs and outputs are ``(N, L, H)`` instead of ``(L, N, H)``.
        dropout: dropout probability on the outputs of every layer but the last.
        bidirectional: run a second, reversed pass per layer and concatenate the outputs.

    Shape:
        - Input: ``(L, N, H_in)``, ``(N, L, H_in)`` with ``batch_first``, or ``(L, H_in)``.
        - h_0: ``(D * num_layers, N, H_out)`` or ``(D * num_layers, H_out)``; zeros if None.
        - Output: ``(L, N, D * H_out)`` and ``h_n`` shaped as ``h_0``.
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return self._run(input, hx)


# -- single-step cells -----------------------------------------------------------------------


class RNNCellBase(Module):
    """Shared machinery of :class:`RNNCell`, :class:`LSTMCell` and :class:`GRUCell`."""

    _mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        from ..creation import empty

        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gate_size = _GATES[self._mode] * hidden_size
        self.weight_ih = Parameter(empty(gate_size, input_size, dtype=dtype, device=device))
        self.weight_hh = Parameter(empty(gate_size, hidden_size, dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(empty(gate_size, dtype=dtype, device=device))
            self.bias_hh = Parameter(empty(gate_size, dtype=dtype, device=device))
        else:
            self.bias_ih = None
            self.bias_hh = None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw every weight and bias from ``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``."""
        _uniform_(list(self.parameters()), self.hidden_size)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity!r}"
        return s

    def _prepare(self, input: Tensor, states: list[Tensor | None]) -> tuple[Tensor, list, bool]:
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ShapeError(f"{name}: expected a 1-D (unbatched) or 2-D (N, input_size) "
                             f"input, got shape {input.shape}")
        _check_float(name, input)
        if input.shape[-1] != self.input_size:
            raise ShapeError(f"{name}: expected input with {self.input_size} features in its "
                             f"last dim (input_size), got shape {input.shape}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        want = (x.shape[0], self.hidden_size)
        out = []
        for s in states:
            if s is None:
                out.append(x.new_zeros(*want))
                continue
            if tuple(s.shape) != (want if batched else want[1:]):
                raise ShapeError(f"{name}: expected a hidden state of shape "
                                 f"{want if batched else want[1:]} for input {input.shape}, "
                                 f"got {s.shape}")
            out.append(s if batched else s.unsqueeze(0))
        return x, out, batched

    def _step(self, x: Tensor, state: Any) -> Any:
        return _rnn_step(self._mode, x, state, self.weight_ih, self.weight_hh, self.bias_ih,
                         self.bias_hh)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)``.

    Args:
        input_size: the number of features of the input ``x``.
        hidden_size: the number of features of the hidden state ``h``.
        bias: whether the cell has the biases ``b_ih`` and ``b_hh``.
        nonlinearity: ``'tanh'`` or ``'relu'``.

    Shape:
        - Input: ``(N, H_in)`` or ``(H_in,)``; hidden: ``(N, H_out)`` or ``(H_out,)``
          (zeros if None).
        - Output: ``h'`` of the shape of the hidden state.
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        self._mode = _nonlinearity_mode("RNNCell", nonlinearity)
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, (h,), batched = self._prepare(input, [hx])
        out = self._step(x, h)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One step of an LSTM (gates ``i, f, g, o``): returns ``(h', c')``.

    Args:
        input_size: the number of features of the input ``x``.
        hidden_size: the number of features of ``h`` and ``c``.
        bias: whether the cell has the biases ``b_ih`` and ``b_hh``.

    Shape:
        - Input: ``(N, H_in)`` or ``(H_in,)``; ``(h, c)``: each ``(N, H)`` or ``(H,)``
          (zeros if None).
        - Output: ``(h', c')`` shaped as ``(h, c)``.
    """

    _mode = "LSTM"

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, Tensor]:
        h0, c0 = (None, None) if hx is None else hx
        x, (h, c), batched = self._prepare(input, [h0, c0])
        h1, c1 = self._step(x, (h, c))
        return (h1, c1) if batched else (h1.squeeze(0), c1.squeeze(0))


class GRUCell(RNNCellBase):
    """One step of a GRU (gates ``r, z, n``): ``h' = (1 - z) * n + z * h``.

    Args:
        input_size: the number of features of the input ``x``.
        hidden_size: the number of features of the hidden state ``h``.
        bias: whether the cell has the biases ``b_ih`` and ``b_hh``.

    Shape:
        - Input: ``(N, H_in)`` or ``(H_in,)``; hidden: ``(N, H_out)`` or ``(H_out,)``
          (zeros if None).
        - Output: ``h'`` of the shape of the hidden state.
    """

    _mode = "GRU"

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, (h,), batched = self._prepare(input, [hx])
        out = self._step(x, h)
        return out if batched else out.squeeze(0)


__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
