"""The CUDA LSTM time loops (``volta_cupy.rnn``) against the generic loops on the same
GPU arrays, and ``nn.LSTM`` on CUDA against the CPU (values and every gradient).

Skipped, with the reason, where CUDA is unavailable.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import volta_core as vt
from volta_core import nn

_rows = {b.name: b for b in vt.backends()}
pytestmark = pytest.mark.skipif(
    not _rows["cupy"].available, reason=f"CUDA backend unavailable: {_rows['cupy'].reason}")

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
    g, dtc, fac = arr(steps, batch, 2 * hid), arr(steps, batch, hid), \
        arr(steps, batch, 4 * hid)
    sigs = arr(steps, batch, 3 * hid)
    f = sigs[..., hid:2 * hid]  # a strided view, as the layer passes it
    w = arr(4 * hid, hid)
    got = rnn.lstm_steps_backward(xp, g, dtc, fac, f, w, reverse=reverse)
    want = generic.lstm_steps_backward(xp, g, dtc, fac, f, w, reverse=reverse)
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
