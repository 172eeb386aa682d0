"""The CUDA LSTM, GRU and RNN time loops (``volta_cupy.rnn``) against the generic loops on
the same GPU arrays, and the layers on CUDA against the CPU (values and every gradient).

Skipped, with the reason, where CUDA is unavailable.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import volta_core as vt
from volta_core import nn

DEV = "cuda"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reverse", [False, True])
def test_loops_match_generic(dtype, reverse):
    import cupy
    from volta_cupy import rnn

    from volta_core.nn import fused_rnn as generic

    xp = vt.device(DEV).xp
    rng = np.random.default_rng(0)
    steps, batch, hid = 7, 3, 5

    def arr(*shape):
        return cupy.asarray(rng.standard_normal(shape).astype(dtype))

    xw, h0, c0, w_t = arr(steps, batch, 4 * hid), arr(batch, hid), arr(batch, hid), \
        arr(hid, 4 * hid)
    got = rnn.lstm_steps(xp, xw, h0, c0, w_t, reverse=reverse)
    want = generic.lstm_steps(xp, xw, h0, c0, w_t, reverse=reverse)
    tol = 1e-6 if dtype == "float32" else 1e-13
    for a, b in zip(got, want):
        np.testing.assert_allclose(cupy.asnumpy(a), cupy.asnumpy(b), rtol=tol, atol=tol)
    g, c_prev = arr(steps, batch, 2 * hid), arr(steps, batch, hid)
    acts = [xp.asarray(a) for a in want[1:]]  # sigs, tanh(g), tanh(c)
    w = arr(4 * hid, hid)
    seen = []
    got = rnn.lstm_steps_backward(xp, g, *acts, c_prev, w, reverse=reverse,
                                  then=lambda lo, hi, dg: seen.append((lo, hi)))
    want = generic.lstm_steps_backward(xp, g, *acts, c_prev, w, reverse=reverse)
    assert seen == [(0, steps)]
    # random weights grow the gradients over the steps (to ~7), and the products' rounding
    # differs (cuBLASLt here, CuPy's call there)
    tol = 2e-4 if dtype == "float32" else 1e-12
    for a, b in zip(got, want):
        np.testing.assert_allclose(cupy.asnumpy(a), cupy.asnumpy(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [vt.float32, vt.float64])
@pytest.mark.parametrize("bidirectional,layers,batch_first", [(False, 1, False),
                                                              (True, 2, True)])
def test_lstm_matches_cpu(dtype, bidirectional, layers, batch_first):
    vt.manual_seed(0)
    cpu = nn.LSTM(6, 8, layers, batch_first=batch_first, bidirectional=bidirectional,
                  dtype=dtype)
    gpu = copy.deepcopy(cpu).to(DEV)
    dirs = 2 if bidirectional else 1
    shape = (4, 9, 6) if batch_first else (9, 4, 6)
    xs = [vt.randn(*shape, dtype=dtype), vt.randn(layers * dirs, 4, 8, dtype=dtype),
          vt.randn(layers * dirs, 4, 8, dtype=dtype)]
    results = []
    for m, dev in ((cpu, "cpu"), (gpu, DEV)):
        x, h0, c0 = (t.detach().to(dev).requires_grad_() for t in xs)
        out, (h, c) = m(x, (h0, c0))
        (out.square().sum() + h.sum() + 2 * c.sum()).backward()
        results.append([out, h, c, x.grad, h0.grad, c0.grad,
                        *(p.grad for p in m.parameters())])
    tol = 1e-5 if dtype == vt.float32 else 1e-11
    for a, b in zip(*results):
        np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(), rtol=tol,
                                   atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_gru_and_rnn_loops_match_generic(dtype, reverse, bias):
    import cupy
    from volta_cupy import rnn

    from volta_core.nn import fused_rnn as generic

    xp = vt.device(DEV).xp
    rng = np.random.default_rng(1)
    steps, batch, hid = 6, 3, 5

    def arr(*shape, scale=1.0):
        return cupy.asarray((rng.standard_normal(shape) * scale).astype(dtype))

    def same(got, want, tol):
        for a, b in zip(got, want):
            np.testing.assert_allclose(cupy.asnumpy(a), cupy.asnumpy(b), rtol=tol, atol=tol)

    tol = 1e-5 if dtype == "float32" else 1e-12
    xw, h0, w_t = arr(steps, batch, 3 * hid), arr(batch, hid), arr(hid, 3 * hid, scale=0.3)
    b_hh = arr(3 * hid) if bias else None
    fwd = rnn.gru_steps(xp, xw, h0, w_t, b_hh, reverse=reverse)
    same(fwd, generic.gru_steps(xp, xw, h0, w_t, b_hh, reverse=reverse), tol)
    g, w = arr(steps, batch, hid), arr(3 * hid, hid, scale=0.3)
    same(rnn.gru_steps_backward(xp, g, fwd[0], h0, *fwd[1:], w, reverse=reverse),
         generic.gru_steps_backward(xp, g, fwd[0], h0, *fwd[1:], w, reverse=reverse), tol)
    for relu in (False, True):
        xw, w_t, w = arr(steps, batch, hid), arr(hid, hid, scale=0.3), arr(hid, hid, scale=0.3)
        out = rnn.rnn_steps(xp, xw, h0, w_t, relu=relu, reverse=reverse)
        same([out], [generic.rnn_steps(xp, xw, h0, w_t, relu=relu, reverse=reverse)], tol)
        same(rnn.rnn_steps_backward(xp, g, out, w, relu=relu, reverse=reverse),
             generic.rnn_steps_backward(xp, g, out, w, relu=relu, reverse=reverse), tol)


@pytest.mark.parametrize("mode", ["GRU", "RNN"])
def test_gru_and_rnn_match_cpu(mode):
    vt.manual_seed(0)
    cpu = getattr(nn, mode)(6, 8, 2, bidirectional=True)
    gpu = copy.deepcopy(cpu).to(DEV)
    xs = [vt.randn(9, 4, 6), vt.randn(4, 4, 8)]
    results = []
    for m, dev in ((cpu, "cpu"), (gpu, DEV)):
        x, h0 = (t.detach().to(dev).requires_grad_() for t in xs)
        out, h = m(x, h0)
        (out.square().sum() + h.sum()).backward()
        results.append([out, h, x.grad, h0.grad, *(p.grad for p in m.parameters())])
    for a, b in zip(*results):
        np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(), rtol=1e-5,
                                   atol=1e-5)
