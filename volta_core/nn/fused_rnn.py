"""A whole LSTM, GRU or Elman RNN layer as one autograd op: the time loop runs on backend
arrays.

``LSTMLayer`` (and ``GRULayer`` and ``RNNLayer`` alike) does one GEMM for the input
projection of every time step, then a tight per-step loop (one GEMM and a few elementwise
kernels per step) with no autograd recording inside; its backward is the matching
backpropagation through time, with the weight gradients summed over all steps in one GEMM
each. A step-by-step
graph of Tensor ops (``rnn._rnn_step``) records about 20 ops per step; this records one
per layer.

``backward`` under ``create_graph`` rebuilds the step-by-step graph from the saved inputs
and differentiates that, so double backward stays exact.
"""

from __future__ import annotations

import threading
from typing import Any

from ..autograd.function import Function
from ..autograd.grad_mode import state as _grad_state
from ..backend.kernels import fallback, get_kernel
from ..ops.elementwise import relu_backward_kernel, relu_kernel
from ..tensor import Tensor


def _sigmoid(xp: Any, x: Any) -> Any:
    e = xp.exp(-xp.abs(x))  # as ops.elementwise.Sigmoid: exp of a non-positive number only
    d = 1.0 + e
    return xp.where(x >= 0, 1.0 / d, e / d)


def _gates_ifog(xp: Any, w: Any, hid: int) -> Any:
    """The ``(4H, ...)`` gate rows of PyTorch's order ``i, f, g, o`` as ``i, f, o, g`` (the
    three sigmoid gates side by side); the same swap maps back."""
    return xp.concat([w[:2 * hid, ...], w[3 * hid:, ...], w[2 * hid:3 * hid, ...]], axis=0)


def _before_each_step(xp: Any, first: Any, seq: Any, reverse: bool) -> Any:
    """The state going into every step of ``seq (T, ...)`` in input time order: ``first``
    then ``seq`` shifted by one step (the other way for a reversed pass)."""
    if reverse:
        return xp.concat([seq[1:, ...], first[None, ...]], axis=0)
    return xp.concat([first[None, ...], seq[:-1, ...]], axis=0)


@fallback("lstm_steps")
def lstm_steps(xp: Any, xw: Any, h0: Any, c0: Any, w_hh_t: Any, *,
               reverse: bool = False) -> tuple[Any, Any, Any, Any]:
    """The time loop of an LSTM layer's forward, gates ordered ``i, f, o, g``.

    ``xw (T, B, 4H)`` is the input projection of every step (bias included), ``w_hh_t``
    ``(H, 4H)`` the recurrent weights. Returns ``out (T, B, 2H)`` (``h_t`` then ``c_t``)
    and, for the backward, the sigmoid gates ``(T, B, 3H)``, ``tanh(g)`` and ``tanh(c_t)``
    ``(T, B, H)``, all in input time order.
    """
    steps = xw.shape[0]
    hid = h0.shape[-1]
    h, c = h0, c0
    hs, cs, sigs, ggs, tcs = ([None] * steps for _ in range(5))
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        g = xw[t, ...] + xp.matmul(h, w_hh_t)
        sig = 1.0 / (1.0 + xp.exp(-g[:, :3 * hid]))  # i, f, o
        gg = xp.tanh(g[:, 3 * hid:])
        c = sig[:, hid:2 * hid] * c + sig[:, :hid] * gg
        tc = xp.tanh(c)
        h = sig[:, 2 * hid:] * tc
        hs[t], cs[t], sigs[t], ggs[t], tcs[t] = h, c, sig, gg, tc
    out = xp.concat([xp.stack(hs, axis=0), xp.stack(cs, axis=0)], axis=-1)
    return out, *(xp.stack(a, axis=0) for a in (sigs, ggs, tcs))


def lstm_gate_factors(xp: Any, sigs: Any, ggs: Any, tcs: Any,
                      c_prev: Any) -> tuple[Any, Any, Any]:
    """What an LSTM backward step multiplies the incoming gradients by, for every step at
    once: ``dtc = o * (1 - tanh(c)^2)`` ``(T, B, H)`` (``dc += dh * dtc``), the gates'
    derivatives ``fac (T, B, 4H)`` (the gates' gradients are ``(dc, dc, dh, dc) * fac``)
    and the forget gates ``f`` (``dc_prev = dc * f``)."""
    hid = ggs.shape[-1]
    i, f, o = sigs[..., :hid], sigs[..., hid:2 * hid], sigs[..., 2 * hid:]
    dtc = o * (1.0 - tcs * tcs)
    fac = xp.concat([ggs * i * (1.0 - i), c_prev * f * (1.0 - f), tcs * o * (1.0 - o),
                     i * (1.0 - ggs * ggs)], axis=-1)
    return dtc, fac, f


@fallback("lstm_steps_backward")
def lstm_steps_backward(xp: Any, g: Any, sigs: Any, ggs: Any, tcs: Any, c_prev: Any,
                        w_hh: Any, *, reverse: bool = False,
                        then: Any = None) -> tuple[Any, Any, Any]:
    """The time loop of an LSTM layer's backward (backpropagation through time).

    ``g (T, B, 2H)`` is the output's gradient; ``sigs``, ``ggs`` and ``tcs`` are what
    :func:`lstm_steps` returned, ``c_prev (T, B, H)`` the cell state going into each step,
    ``w_hh`` ``(4H, H)``. Returns the gates' gradients ``(T, B, 4H)`` and the gradients of
    ``h0`` and ``c0``. ``then(lo, hi, dgates)``, if given, is called once per piece
    ``[lo, hi)`` of the steps (pieces covering ``[0, T)``) when those steps' gradients are
    final (see :class:`_StepGrads`): here once, after the loop; a backend may cut the
    steps into pieces and run them beside its loop.
    """
    steps = g.shape[0]
    hid = ggs.shape[-1]
    dtc, fac, f = lstm_gate_factors(xp, sigs, ggs, tcs, c_prev)
    dgates = [None] * steps
    dh_next = dc_next = None
    for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
        dh = g[t, :, :hid]
        dc = g[t, :, hid:]
        if dh_next is not None:
            dh = dh + dh_next
            dc = dc + dc_next
        dc = dc + dh * dtc[t, ...]
        d = xp.concat([dc, dc, dh, dc], axis=-1) * fac[t, ...]
        dgates[t] = d
        dc_next = dc * f[t, ...]
        dh_next = xp.matmul(d, w_hh)
    dg = xp.stack(dgates, axis=0)
    if then is not None:
        then(0, steps, dg)
    return dg, dh_next, dc_next


@fallback("gru_steps")
def gru_steps(xp: Any, xw: Any, h0: Any, w_hh_t: Any, b_hh: Any, *,
              reverse: bool = False) -> tuple[Any, Any, Any, Any]:
    """The time loop of a GRU layer's forward, gates ``r, z, n``.

    ``xw (T, B, 3H)`` is the input projection of every step (``b_ih`` included),
    ``w_hh_t (H, 3H)`` the recurrent weights, ``b_hh (3H,)`` or None. Returns the hidden
    states ``(T, B, H)`` and, for the backward, ``r, z`` ``(T, B, 2H)``, ``n`` and
    ``h W_hn + b_hn`` ``(T, B, H)``, all in input time order.
    """
    steps = xw.shape[0]
    hid = h0.shape[-1]
    h = h0
    hs, rzs, ns, hns = ([None] * steps for _ in range(4))
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        gh = xp.matmul(h, w_hh_t)
        if b_hh is not None:
            gh = gh + b_hh
        gi = xw[t, ...]
        rz = _sigmoid(xp, gi[:, :2 * hid] + gh[:, :2 * hid])
        hn = gh[:, 2 * hid:]
        n = xp.tanh(gi[:, 2 * hid:] + rz[:, :hid] * hn)
        h = n + rz[:, hid:] * (h - n)
        hs[t], rzs[t], ns[t], hns[t] = h, rz, n, hn
    return tuple(xp.stack(a, axis=0) for a in (hs, rzs, ns, hns))


@fallback("gru_steps_backward")
def gru_steps_backward(xp: Any, g: Any, out: Any, h0: Any, rz: Any, n: Any, hn: Any,
                       w_hh: Any, *, reverse: bool = False,
                       then: Any = None) -> tuple[Any, Any, Any]:
    """The time loop of a GRU layer's backward: ``g (T, B, H)`` is the output's gradient,
    ``out`` the hidden states and ``rz, n, hn`` what :func:`gru_steps` returned, ``w_hh``
    ``(3H, H)``. Returns the gradients of the input and hidden projections ``(T, B, 3H)``
    and of ``h0``; ``then(lo, hi, dgi, dgh)`` as :func:`lstm_steps_backward`'s."""
    steps = g.shape[0]
    hid = h0.shape[-1]
    order = list(range(steps - 1, -1, -1) if reverse else range(steps))
    dgi, dgh = [None] * steps, [None] * steps
    dh_next = None
    for k in range(steps - 1, -1, -1):
        t = order[k]
        r, z = rz[t, :, :hid], rz[t, :, hid:]
        nt, hnt = n[t, ...], hn[t, ...]
        h_prev = h0 if k == 0 else out[order[k - 1], ...]
        dh = g[t, ...] if dh_next is None else g[t, ...] + dh_next
        dn = dh * (1.0 - z)
        dz = dh * (h_prev - nt)
        dn_pre = dn * (1.0 - nt * nt)
        dr = dn_pre * hnt
        drz_pre = xp.concat([dr * r * (1.0 - r), dz * z * (1.0 - z)], axis=-1)
        dgi[t] = xp.concat([drz_pre, dn_pre], axis=-1)
        dgh[t] = xp.concat([drz_pre, dn_pre * r], axis=-1)
        dh_next = dh * z + xp.matmul(dgh[t], w_hh)
    dgi, dgh = xp.stack(dgi, axis=0), xp.stack(dgh, axis=0)
    if then is not None:
        then(0, steps, dgi, dgh)
    return dgi, dgh, dh_next


@fallback("rnn_steps")
def rnn_steps(xp: Any, xw: Any, h0: Any, w_hh_t: Any, *, relu: bool = False,
              reverse: bool = False) -> Any:
    """The time loop of an Elman RNN layer's forward: ``h_t = act(xw[t] + h_{t-1} @ w_hh_t)``
    with ``act`` tanh (or relu), ``xw (T, B, H)`` the input projection of every step (bias
    included), ``w_hh_t (H, H)``. Returns the hidden states ``(T, B, H)`` in input time
    order."""
    steps = xw.shape[0]
    h = h0
    hs = [None] * steps
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        pre = xw[t, ...] + xp.matmul(h, w_hh_t)
        h = hs[t] = relu_kernel(xp, pre) if relu else xp.tanh(pre)
    return xp.stack(hs, axis=0)


@fallback("rnn_steps_backward")
def rnn_steps_backward(xp: Any, g: Any, out: Any, w_hh: Any, *, relu: bool = False,
                       reverse: bool = False, then: Any = None) -> tuple[Any, Any]:
    """The time loop of an Elman RNN layer's backward: ``g (T, B, H)`` is the output's
    gradient, ``out`` the forward's hidden states, ``w_hh (H, H)``. Returns the gradients
    of the pre-activations ``(T, B, H)`` and of ``h0``; ``then(lo, hi, dpre)`` as
    :func:`lstm_steps_backward`'s."""
    steps = g.shape[0]
    dpre = [None] * steps
    dh_next = None
    for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
        dh = g[t, ...] if dh_next is None else g[t, ...] + dh_next
        y = out[t, ...]
        d = dpre[t] = relu_backward_kernel(xp, dh, y) if relu else dh * (1.0 - y * y)
        dh_next = xp.matmul(d, w_hh)
    dp = xp.stack(dpre, axis=0)
    if then is not None:
        then(0, steps, dp)
    return dp, dh_next


class _StepGrads:
    """The input and weight gradients of a layer's backward, from its gates' gradients:
    ``dx = dgi W_ih``, ``dW_ih = dgi^T x``, ``dW_hh = dgh^T h_prev`` (``dgh`` is ``dgi``
    but for the GRU's).

    The ``*_steps_backward`` kernels call it per piece of the steps as their loop finishes
    them (a backend may run the pieces on another core beside its loop). Each piece's
    weight gradients are added to the running sums as soon as the pieces before it in
    the loop's order (from the last step down; up for a ``reverse`` layer) are in, by
    whichever thread finished it: the sums are made while the loop still runs, and their
    order, so the values, depends on the pieces alone.
    """

    def __init__(self, xp: Any, x: Any, prev: Any, w_ih: Any, needs: tuple,
                 reverse: bool) -> None:
        self.xp, self.x, self.prev, self.w_ih = xp, x, prev, w_ih
        self.needs = needs  # dx, dW_ih, dW_hh
        self.reverse = reverse
        self.dx: dict[int, Any] = {}  # piece start -> its rows of dx
        self.waiting: dict[int, tuple] = {}  # the piece's edge the loop reaches first
        self.edge = 0 if reverse else x.shape[0]  # where the next piece to add starts
        self.dwi = self.dwh = None
        self.lock = threading.Lock()

    def __call__(self, lo: int, hi: int, dgi: Any, dgh: Any = None) -> None:
        xp, (_, batch, n_in) = self.xp, self.x.shape
        rows = (hi - lo) * batch
        di = xp.reshape(dgi[lo:hi, ...], (rows, dgi.shape[-1]))
        dh = di if dgh is None else xp.reshape(dgh[lo:hi, ...], (rows, dgh.shape[-1]))
        want_x, want_ih, want_hh = self.needs
        dx = xp.matmul(di, self.w_ih) if want_x else None
        dwi = (xp.matmul(xp.matrix_transpose(di), xp.reshape(self.x[lo:hi, ...], (rows, n_in)))
               if want_ih else None)
        dwh = (xp.matmul(xp.matrix_transpose(dh),
                         xp.reshape(self.prev[lo:hi, ...], (rows, self.prev.shape[-1])))
               if want_hh else None)
        with self.lock:
            self.dx[lo] = dx
            self.waiting[lo if self.reverse else hi] = (lo, hi, dwi, dwh)
            while self.edge in self.waiting:  # add the pieces that are next, in order
                lo, hi, dwi, dwh = self.waiting.pop(self.edge)
                self.dwi = _plus(self.dwi, dwi)
                self.dwh = _plus(self.dwh, dwh)
                self.edge = hi if self.reverse else lo

    def result(self) -> tuple[Any, Any, Any]:
        """``dx (T, B, I)``, ``dW_ih``, ``dW_hh`` (None where not wanted)."""
        xp = self.xp
        if self.waiting:
            raise RuntimeError("LSTM/RNN backward: the steps' pieces do not join up")
        dx = None
        if self.needs[0]:
            parts = [self.dx[lo] for lo in sorted(self.dx)]
            dx = parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)
            dx = xp.reshape(dx, self.x.shape)
        return dx, self.dwi, self.dwh


def _plus(total: Any, part: Any) -> Any:
    """``total + part`` in place where ``total`` is one (a product of ours), else ``part``."""
    if total is None:
        return part
    total += part
    return total


class LSTMLayer(Function):
    """One direction of one LSTM layer over a whole ``(T, B, I)`` sequence.

    Inputs: ``x (T, B, I)``, ``h0 (B, H)``, ``c0 (B, H)``, ``w_ih (4H, I)``,
    ``w_hh (4H, H)``, ``bias (4H,)`` (``b_ih + b_hh``) or None. The output is
    ``(T, B, 2H)``: ``h_t`` then ``c_t`` of every step, in input time order.

    Inside, the gates are ordered ``i, f, o, g``, so one sigmoid covers three of them.
    The backward computes every factor that does not depend on the incoming gradient
    for all steps at once (a few large kernels), so each step of the time loop is one
    GEMM and a handful of small kernels.
    """

    def forward(ctx, x, h0, c0, w_ih, w_hh, bias=None, reverse=False):
        xp = ctx.xp
        steps, batch, n_in = x.shape
        hid = h0.shape[-1]
        ctx.reverse = reverse
        xw = xp.matmul(xp.reshape(x, (steps * batch, n_in)),
                       xp.matrix_transpose(_gates_ifog(xp, w_ih, hid)))
        if bias is not None:
            xw = xw + _gates_ifog(xp, bias, hid)
        xw = xp.reshape(xw, (steps, batch, 4 * hid))
        # a row-major copy of the transpose: the per-step GEMM with a (B, H) left operand
        # runs ~1.7x faster on it than on the transposed view (same values)
        w_hh_t = xp.reshape(xp.matrix_transpose(_gates_ifog(xp, w_hh, hid)),
                            (w_hh.shape[1], w_hh.shape[0]), copy=True)
        out, *ctx.acts = get_kernel(ctx.device.backend, "lstm_steps")(
            xp, xw, h0, c0, w_hh_t, reverse=reverse)
        # the output too: an in-place change of it is then caught, as PyTorch does
        ctx.save_for_backward(x, h0, c0, w_ih, w_hh, bias, out)
        return out

    def backward(ctx, grad):
        saved = ctx.saved_tensors
        if _grad_state.enabled:  # create_graph: differentiate the step-by-step graph
            return _backward_by_graph(ctx, grad, saved)
        x, h0, c0, w_ih, w_hh, bias, out = (None if s is None else s.array for s in saved)
        xp, dev, needs = ctx.xp, ctx.device, ctx.needs_input_grad
        g = grad.array
        steps, batch, n_in = x.shape
        hid = h0.shape[-1]
        c_prev = _before_each_step(xp, c0, out[..., hid:], ctx.reverse)
        prev = _before_each_step(xp, h0, out[:, :, :hid], ctx.reverse) if needs[4] else None
        rest = _StepGrads(xp, x, prev, _gates_ifog(xp, w_ih, hid), (needs[0], needs[3], needs[4]),
                          ctx.reverse)
        dg, dh_next, dc_next = get_kernel(dev.backend, "lstm_steps_backward")(
            xp, g, *ctx.acts, c_prev, _gates_ifog(xp, w_hh, hid), reverse=ctx.reverse,
            then=rest)
        grads: list[Any] = [None] * 6
        grads[0], dwi, dwh = rest.result()
        grads[1], grads[2] = (dh_next if needs[1] else None), (dc_next if needs[2] else None)
        if needs[3]:
            grads[3] = _gates_ifog(xp, dwi, hid)
        if needs[4]:
            grads[4] = _gates_ifog(xp, dwh, hid)
        if bias is not None and needs[5]:
            grads[5] = _gates_ifog(xp, xp.sum(xp.reshape(dg, (steps * batch, 4 * hid)), axis=0),
                                   hid)
        return tuple(None if a is None else Tensor._make(a, dev) for a in grads)


class GRULayer(Function):
    """One direction of one GRU layer over a whole ``(T, B, I)`` sequence.

    Inputs: ``x (T, B, I)``, ``h0 (B, H)``, ``w_ih (3H, I)``, ``w_hh (3H, H)``, ``b_ih``
    and ``b_hh`` ``(3H,)`` or None. The output is ``(T, B, H)``, ``h_t`` in time order.
    Gates ``r, z, n`` as PyTorch: ``n = tanh(x W_in + b_in + r * (h W_hn + b_hn))``,
    ``h' = n + z * (h - n)``.
    """

    def forward(ctx, x, h0, w_ih, w_hh, b_ih=None, b_hh=None, reverse=False):
        xp = ctx.xp
        steps, batch, n_in = x.shape
        hid = h0.shape[-1]
        ctx.reverse = reverse
        xw = xp.matmul(xp.reshape(x, (steps * batch, n_in)), xp.matrix_transpose(w_ih))
        if b_ih is not None:
            xw = xw + b_ih
        xw = xp.reshape(xw, (steps, batch, 3 * hid))
        # a row-major copy of the transpose: the per-step GEMM with a (B, H) left operand
        # runs ~1.7x faster on it than on the transposed view (same values)
        w_hh_t = xp.reshape(xp.matrix_transpose(w_hh), (w_hh.shape[1], w_hh.shape[0]),
                            copy=True)
        out, *ctx.acts = get_kernel(ctx.device.backend, "gru_steps")(
            xp, xw, h0, w_hh_t, b_hh, reverse=reverse)
        ctx.save_for_backward(x, h0, w_ih, w_hh, b_ih, b_hh, out)
        return out

    def backward(ctx, grad):
        saved = ctx.saved_tensors
        if _grad_state.enabled:  # create_graph: differentiate the step-by-step graph
            return _backward_by_graph(ctx, grad, saved)
        x, h0, w_ih, w_hh, b_ih, b_hh, out = (None if s is None else s.array for s in saved)
        xp, dev, needs = ctx.xp, ctx.device, ctx.needs_input_grad
        g = grad.array
        steps, batch, n_in = x.shape
        hid = h0.shape[-1]
        prev = _before_each_step(xp, h0, out, ctx.reverse) if needs[3] else None
        rest = _StepGrads(xp, x, prev, w_ih, (needs[0], needs[2], needs[3]), ctx.reverse)
        dgi, dgh, dh_next = get_kernel(dev.backend, "gru_steps_backward")(
            xp, g, out, h0, *ctx.acts, w_hh, reverse=ctx.reverse, then=rest)
        dgi_m = xp.reshape(dgi, (steps * batch, 3 * hid))
        dgh_m = xp.reshape(dgh, (steps * batch, 3 * hid))
        grads: list[Any] = [None] * 6
        grads[0], grads[2], grads[3] = rest.result()
        if needs[1]:
            grads[1] = dh_next
        if b_ih is not None and needs[4]:
            grads[4] = xp.sum(dgi_m, axis=0)
        if b_hh is not None and needs[5]:
            grads[5] = xp.sum(dgh_m, axis=0)
        return tuple(None if a is None else Tensor._make(a, dev) for a in grads)


class RNNLayer(Function):
    """One direction of one Elman RNN layer (tanh, or relu) over a whole ``(T, B, I)``
    sequence.

    Inputs: ``x (T, B, I)``, ``h0 (B, H)``, ``w_ih (H, I)``, ``w_hh (H, H)``, ``bias (H,)``
    (``b_ih + b_hh``) or None. The output is ``(T, B, H)``, ``h_t`` in time order.
    """

    def forward(ctx, x, h0, w_ih, w_hh, bias=None, relu=False, reverse=False):
        xp = ctx.xp
        steps, batch, n_in = x.shape
        hid = h0.shape[-1]
        ctx.reverse, ctx.relu = reverse, relu
        xw = xp.matmul(xp.reshape(x, (steps * batch, n_in)), xp.matrix_transpose(w_ih))
        if bias is not None:
            xw = xw + bias
        xw = xp.reshape(xw, (steps, batch, hid))
        # a row-major copy of the transpose, as the LSTM's
        w_hh_t = xp.reshape(xp.matrix_transpose(w_hh), (hid, hid), copy=True)
        out = get_kernel(ctx.device.backend, "rnn_steps")(xp, xw, h0, w_hh_t, relu=relu,
                                                          reverse=reverse)
        ctx.save_for_backward(x, h0, w_ih, w_hh, bias, out)
        return out

    def backward(ctx, grad):
        saved = ctx.saved_tensors
        if _grad_state.enabled:  # create_graph: differentiate the step-by-step graph
            return _backward_by_graph(ctx, grad, saved)
        x, h0, w_ih, w_hh, bias, out = (None if s is None else s.array for s in saved)
        xp, dev, needs = ctx.xp, ctx.device, ctx.needs_input_grad
        steps, batch, n_in = x.shape
        hid = h0.shape[-1]
        prev = _before_each_step(xp, h0, out, ctx.reverse) if needs[3] else None
        rest = _StepGrads(xp, x, prev, w_ih, (needs[0], needs[2], needs[3]), ctx.reverse)
        dpre, dh0 = get_kernel(dev.backend, "rnn_steps_backward")(
            xp, grad.array, out, w_hh, relu=ctx.relu, reverse=ctx.reverse, then=rest)
        dp = xp.reshape(dpre, (steps * batch, hid))
        grads: list[Any] = [None] * 5
        grads[0], grads[2], grads[3] = rest.result()
        if needs[1]:
            grads[1] = dh0
        if bias is not None and needs[4]:
            grads[4] = xp.sum(dp, axis=0)
        return tuple(None if a is None else Tensor._make(a, dev) for a in grads)


def _backward_by_graph(ctx: Function, grad: Tensor, saved: tuple) -> tuple:
    """Gradients through the step-by-step Tensor graph (differentiable, for create_graph)."""
    from ..autograd.engine import grad as autograd_grad
    from ..ops.movement import cat, stack
    from .rnn import _rnn_step

    steps = saved[0].shape[0]
    order = range(steps - 1, -1, -1) if ctx.reverse else range(steps)
    n_inputs = 6
    if isinstance(ctx, (GRULayer, RNNLayer)):
        if isinstance(ctx, RNNLayer):
            n_inputs = 5
            (xi, state, wi, wh, bi), bh = saved[:5], None
            mode = "RNN_RELU" if ctx.relu else "RNN_TANH"
        else:
            xi, state, wi, wh, bi, bh = saved[:6]
            mode = "GRU"
        hs = [None] * steps
        for t in order:
            hs[t] = state = _rnn_step(mode, xi[t], state, wi, wh, bi, bh)
        out = stack(hs, 0)
    else:
        xi, hi, ci, wi, wh, bi = saved[:6]
        state = (hi, ci)
        hs, cs = [None] * steps, [None] * steps
        for t in order:
            state = _rnn_step("LSTM", xi[t], state, wi, wh, bi, None)
            hs[t], cs[t] = state
        out = cat([stack(hs, 0), stack(cs, 0)], -1)
    wanted = [(k, t) for k, t in enumerate(saved[:n_inputs])
              if t is not None and ctx.needs_input_grad[k] and t.requires_grad]
    got = autograd_grad(out, [t for _, t in wanted], grad, create_graph=True,
                        allow_unused=True)
    grads: list[Any] = [None] * n_inputs
    for (k, _), gk in zip(wanted, got):
        grads[k] = gk
    return tuple(grads)
