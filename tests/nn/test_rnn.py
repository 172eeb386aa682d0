"""RNN, LSTM, GRU and their cells against a NumPy reference, gradcheck and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from vt_helpers import assert_close, rand

import volta_core as vt
from volta_core import nn

# -- NumPy reference -------------------------------------------------------------------------


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def np_step(mode, x, state, p, sfx):
    w_ih, w_hh = p["weight_ih" + sfx], p["weight_hh" + sfx]
    b_ih = p.get("bias_ih" + sfx, 0.0)
    b_hh = p.get("bias_hh" + sfx, 0.0)
    if mode == "LSTM":
        h, c = state
        gates = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh
        i, f, g, o = np.split(gates, 4, axis=-1)
        c = _sig(f) * c + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        if "weight_hr" + sfx in p:
            h = h @ p["weight_hr" + sfx].T
        return h, c
    if mode == "GRU":
        gi = x @ w_ih.T + b_ih
        gh = state @ w_hh.T + b_hh
        ir, iz, in_ = np.split(gi, 3, axis=-1)
        hr, hz, hn = np.split(gh, 3, axis=-1)
        r, z = _sig(ir + hr), _sig(iz + hz)
        n = np.tanh(in_ + r * hn)
        return (1 - z) * n + z * state
    pre = x @ w_ih.T + b_ih + state @ w_hh.T + b_hh
    return np.tanh(pre) if mode == "RNN_TANH" else np.maximum(pre, 0)


def np_rnn(mode, x, p, num_layers, bidirectional, h0=None, c0=None):
    """Time-major (L, N, H_in) reference; returns output, h_n (and c_n for LSTM)."""
    dirs = 2 if bidirectional else 1
    seq = x
    hs, cs = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            h = h0[k]
            state = (h, c0[k]) if mode == "LSTM" else h
            out = [None] * len(seq)
            order = range(len(seq) - 1, -1, -1) if d else range(len(seq))
            for t in order:
                state = np_step(mode, seq[t], state, p, sfx)
                out[t] = state[0] if mode == "LSTM" else state
            outs.append(np.stack(out))
            if mode == "LSTM":
                hs.append(state[0])
                cs.append(state[1])
            else:
                hs.append(state)
        seq = np.concatenate(outs, axis=-1)
    return seq, np.stack(hs), (np.stack(cs) if cs else None)


def params_np(m):
    return {k: v.numpy() for k, v in m.state_dict().items()}


CLASSES = {"RNN_TANH": lambda *a, **k: nn.RNN(*a, **k),
           "RNN_RELU": lambda *a, **k: nn.RNN(*a, nonlinearity="relu", **k),
           "LSTM": nn.LSTM, "GRU": nn.GRU}


# -- forward against the reference -----------------------------------------------------------


@pytest.mark.parametrize("mode", list(CLASSES))
@pytest.mark.parametrize("layers,bidir,batch_first,bias", [
    (1, False, False, True), (2, True, False, True), (2, False, True, False),
    (3, True, True, True)])
def test_forward_matches_reference(mode, layers, bidir, batch_first, bias):
    vt.manual_seed(0)
    m = CLASSES[mode](3, 4, num_layers=layers, bidirectional=bidir, batch_first=batch_first,
                      bias=bias, dtype=vt.float64)
    x = rand(5, 2, 3, seed=1)
    dirs = 2 if bidir else 1
    h0 = rand(layers * dirs, 2, 4, seed=2)
    c0 = rand(layers * dirs, 2, 4, seed=3)
    xin = np.swapaxes(x, 0, 1) if batch_first else x
    hx = (vt.tensor(h0), vt.tensor(c0)) if mode == "LSTM" else vt.tensor(h0)
    out, hn = m(vt.tensor(xin), hx)
    ref, ref_h, ref_c = np_rnn(mode, x, params_np(m), layers, bidir, h0, c0)
    assert_close(out, np.swapaxes(ref, 0, 1) if batch_first else ref, 1e-10, 1e-10)
    if mode == "LSTM":
        assert_close(hn[0], ref_h, 1e-10, 1e-10)
        assert_close(hn[1], ref_c, 1e-10, 1e-10)
    else:
        assert_close(hn, ref_h, 1e-10, 1e-10)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH"])
def test_default_state_is_zero_and_float32(mode):
    m = CLASSES[mode](3, 5, num_layers=2)
    x = rand(4, 3, 3, seed=4).astype(np.float32)
    out, hn = m(vt.tensor(x))
    z = np.zeros((2, 3, 5))
    ref, ref_h, ref_c = np_rnn(mode, x.astype(np.float64), params_np(m), 2, False, z, z)
    assert out.dtype is vt.float32 and out.shape == (4, 3, 5)
    assert_close(out, ref, 1e-5, 1e-5)
    assert_close(hn[0] if mode == "LSTM" else hn, ref_h, 1e-5, 1e-5)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_RELU"])
def test_unbatched_input(mode):
    m = CLASSES[mode](3, 4, num_layers=2, bidirectional=True, dtype=vt.float64)
    x = rand(5, 3, seed=5)
    h0, c0 = rand(4, 4, seed=6), rand(4, 4, seed=7)
    hx = (vt.tensor(h0), vt.tensor(c0)) if mode == "LSTM" else vt.tensor(h0)
    out, hn = m(vt.tensor(x), hx)
    ref, ref_h, ref_c = np_rnn(mode, x[:, None], params_np(m), 2, True,
                               h0[:, None], c0[:, None])
    assert_close(out, ref[:, 0], 1e-10, 1e-10)
    if mode == "LSTM":
        assert_close(hn[0], ref_h[:, 0], 1e-10, 1e-10)
        assert_close(hn[1], ref_c[:, 0], 1e-10, 1e-10)
    else:
        assert_close(hn, ref_h[:, 0], 1e-10, 1e-10)


def test_lstm_proj_size():
    m = nn.LSTM(3, 5, num_layers=2, proj_size=2, bidirectional=True, dtype=vt.float64)
    assert m.weight_hr_l1_reverse.shape == (2, 5)
    assert m.weight_hh_l0.shape == (20, 2) and m.weight_ih_l1.shape == (20, 4)
    x = rand(4, 2, 3, seed=8)
    h0, c0 = rand(4, 2, 2, seed=9), rand(4, 2, 5, seed=10)
    out, (hn, cn) = m(vt.tensor(x), (vt.tensor(h0), vt.tensor(c0)))
    ref, ref_h, ref_c = np_rnn("LSTM", x, params_np(m), 2, True, h0, c0)
    assert out.shape == (4, 2, 4)
    assert_close(out, ref, 1e-10, 1e-10)
    assert_close(hn, ref_h, 1e-10, 1e-10)
    assert_close(cn, ref_c, 1e-10, 1e-10)


@pytest.mark.parametrize("cls,mode", [(nn.RNNCell, "RNN_TANH"), (nn.LSTMCell, "LSTM"),
                                      (nn.GRUCell, "GRU")])
def test_cells_match_reference(cls, mode):
    cell = cls(3, 4, dtype=vt.float64)
    p = params_np(cell)
    x, h, c = rand(2, 3, seed=11), rand(2, 4, seed=12), rand(2, 4, seed=13)
    if mode == "LSTM":
        h1, c1 = cell(vt.tensor(x), (vt.tensor(h), vt.tensor(c)))
        rh, rc = np_step(mode, x, (h, c), p, "")
        assert_close(h1, rh, 1e-10, 1e-10)
        assert_close(c1, rc, 1e-10, 1e-10)
        uh, uc = cell(vt.tensor(x[0]))  # unbatched, zero state
        rh, rc = np_step(mode, x[:1], (0 * h[:1], 0 * c[:1]), p, "")
        assert_close(uh, rh[0], 1e-10, 1e-10)
        assert_close(uc, rc[0], 1e-10, 1e-10)
    else:
        assert_close(cell(vt.tensor(x), vt.tensor(h)), np_step(mode, x, h, p, ""),
                     1e-10, 1e-10)
        assert_close(cell(vt.tensor(x[1]), vt.tensor(h[1])),
                     np_step(mode, x[1:], h[1:], p, "")[0], 1e-10, 1e-10)


def test_relu_cell_and_no_bias():
    cell = nn.RNNCell(3, 2, bias=False, nonlinearity="relu", dtype=vt.float64)
    assert cell.bias_ih is None and set(cell.state_dict()) == {"weight_ih", "weight_hh"}
    x, h = rand(2, 3, seed=14), rand(2, 2, seed=15)
    assert_close(cell(vt.tensor(x), vt.tensor(h)),
                 np_step("RNN_RELU", x, h, params_np(cell), ""), 1e-10, 1e-10)


# -- parameters, init, state dicts -----------------------------------------------------------


def test_parameter_names_shapes_and_init():
    m = nn.GRU(3, 4, num_layers=2, bidirectional=True)
    sd = m.state_dict()
    assert list(sd)[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                            "weight_ih_l0_reverse"]
    assert len(sd) == 16
    assert sd["weight_ih_l0"].shape == (12, 3) and sd["weight_ih_l1"].shape == (12, 8)
    assert sd["bias_hh_l1_reverse"].shape == (12,)
    k = 1 / math.sqrt(4)
    for v in sd.values():
        arr = v.numpy()
        assert np.all(np.abs(arr) <= k) and arr.std() > 0
    assert len(m.all_weights) == 4 and len(m.all_weights[0]) == 4
    lstm = nn.LSTM(3, 4)
    assert lstm.weight_ih_l0.shape == (16, 3)
    assert repr(lstm) == "LSTM(3, 4)"


def test_state_dict_round_trip():
    a, b = nn.LSTM(3, 4, num_layers=2), nn.LSTM(3, 4, num_layers=2)
    b.load_state_dict(a.state_dict())
    x = vt.randn(3, 2, 3)
    assert_close(b(x)[0], a(x)[0].detach().numpy())


def test_module_double_converts_parameters():
    m = nn.GRU(3, 4).double()
    assert all(p.dtype is vt.float64 for p in m.parameters())
    out, h = m(vt.tensor(rand(2, 1, 3, seed=23)))
    assert out.dtype is vt.float64 and h.shape == (1, 1, 4)


def test_dropout_between_layers():
    m = nn.GRU(3, 4, num_layers=2, dropout=1.0, dtype=vt.float64)
    x = rand(4, 2, 3, seed=16)
    p = params_np(m)
    z = np.zeros((2, 2, 4))
    m.eval()
    ref, _, _ = np_rnn("GRU", x, p, 2, False, z, z)
    assert_close(m(vt.tensor(x))[0], ref, 1e-10, 1e-10)
    m.train()
    # with p=1 the second layer only sees zeros
    p1 = {k.replace("_l1", "_l0"): v for k, v in p.items() if "_l1" in k}
    ref1, _, _ = np_rnn("GRU", np.zeros((4, 2, 4)), p1, 1, False, z[:1], z[:1])
    assert_close(m(vt.tensor(x))[0], ref1, 1e-10, 1e-10)


def test_dropout_warning_single_layer():
    with pytest.warns(UserWarning, match="num_layers=1"):
        nn.LSTM(2, 2, dropout=0.5)


# -- gradients -------------------------------------------------------------------------------


def _functional(m, names):
    def fn(x, *params):
        for n, p in zip(names, params):
            m._parameters[n] = p
        out = m(x)
        return out[0], (out[1] if not isinstance(out[1], tuple) else out[1][1])

    return fn


@pytest.mark.parametrize("mode,bidir", [("LSTM", True), ("GRU", False), ("RNN_TANH", True)])
def test_gradcheck_inputs_and_parameters(mode, bidir):
    m = CLASSES[mode](2, 2, num_layers=2, bidirectional=bidir, batch_first=True,
                      dtype=vt.float64)
    names = list(m._flat_weights_names)
    params = [m._parameters[n].detach().numpy().copy() for n in names]
    assert vt.autograd.gradcheck(
        _functional(m, names),
        [vt.tensor(rand(2, 3, 2, seed=17), requires_grad=True)]
        + [vt.tensor(p, requires_grad=True) for p in params], atol=1e-6, rtol=1e-4)


def test_gradcheck_initial_state():
    m = nn.LSTM(2, 2, dtype=vt.float64)

    def fn(x, h, c):
        out, (hn, cn) = m(x, (h, c))
        return out, cn

    assert vt.autograd.gradcheck(
        fn, [vt.tensor(rand(3, 1, 2, seed=s), requires_grad=True) if s == 18 else
             vt.tensor(rand(1, 1, 2, seed=s), requires_grad=True) for s in (18, 19, 20)])


@pytest.mark.parametrize("cls", [nn.RNNCell, nn.LSTMCell, nn.GRUCell])
def test_gradcheck_cells(cls):
    cell = cls(2, 3, dtype=vt.float64)
    names = list(cell._parameters)

    def fn(x, h, *params):
        for n, p in zip(names, params):
            cell._parameters[n] = p
        out = cell(x, (h, h * 0.5) if cls is nn.LSTMCell else h)
        return out

    params = [cell._parameters[n].detach().numpy().copy() for n in names]
    assert vt.autograd.gradcheck(
        fn, [vt.tensor(rand(2, 2, seed=21), requires_grad=True),
             vt.tensor(rand(2, 3, seed=22), requires_grad=True)]
        + [vt.tensor(p, requires_grad=True) for p in params])


def test_backward_accumulates_parameter_grads():
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    out, (h, c) = m(vt.randn(5, 2, 3))
    (out.sum() + c.sum()).backward()
    assert all(p.grad is not None and p.grad.shape == p.shape for p in m.parameters())


# -- errors ----------------------------------------------------------------------------------


def test_error_wrong_input_size():
    with pytest.raises(vt.ShapeError, match=r"LSTM.*input_size.*\(5, 2, 7\)"):
        nn.LSTM(3, 4)(vt.randn(5, 2, 7))


def test_error_wrong_rank():
    with pytest.raises(vt.ShapeError, match="GRU.*2-D.*3-D.*"):
        nn.GRU(3, 4)(vt.randn(2, 5, 2, 3))
    with pytest.raises(vt.ShapeError, match="RNNCell.*1-D.*2-D"):
        nn.RNNCell(3, 4)(vt.randn(1, 2, 3))


def test_error_mismatched_hidden_state():
    with pytest.raises(vt.ShapeError, match=r"RNN.*h_0.*\(1, 2, 4\).*\(1, 3, 4\)"):
        nn.RNN(3, 4)(vt.randn(5, 2, 3), vt.zeros(1, 3, 4))
    with pytest.raises(vt.ShapeError, match=r"LSTM.*c_0.*\(2, 2, 4\)"):
        nn.LSTM(3, 4, bidirectional=True)(vt.randn(5, 2, 3), (vt.zeros(2, 2, 4),
                                                               vt.zeros(2, 2, 5)))
    with pytest.raises(vt.ShapeError, match="unbatched"):
        nn.GRU(3, 4)(vt.randn(5, 3), vt.zeros(1, 1, 4))
    with pytest.raises(vt.ShapeError, match="GRUCell.*hidden state"):
        nn.GRUCell(3, 4)(vt.randn(2, 3), vt.zeros(3, 4))
    with pytest.raises(TypeError, match="LSTM.*tuple"):
        nn.LSTM(3, 4)(vt.randn(5, 2, 3), vt.zeros(1, 2, 4))


def test_error_bad_arguments():
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="proj_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="dropout"):
        nn.GRU(3, 4, dropout=1.5)
    with pytest.raises(vt.DTypeError, match="LSTM"):
        nn.LSTM(3, 4)(vt.zeros(2, 1, 3, dtype=vt.int64))
