"""The fused LSTM, GRU and Elman RNN layers (``nn.fused_rnn``) against PyTorch: outputs,
final states, every gradient, and double backward (``create_graph``), in float64 so they
agree to ~1e-14."""

from __future__ import annotations

import numpy as np
import pytest

import volta_core as vt

torch = pytest.importorskip("torch")


def _pair(layers: int, bidir: bool, bias: bool, batch_first: bool, mode: str = "LSTM",
          **kw):
    torch.manual_seed(0)
    tm = getattr(torch.nn, mode)(5, 7, layers, bias=bias, batch_first=batch_first,
                                 bidirectional=bidir, **kw).double()
    vm = getattr(vt.nn, mode)(5, 7, layers, bias=bias, batch_first=batch_first,
                              bidirectional=bidir, **kw).double()
    vm.load_state_dict({k: vt.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, vm


def _np(t) -> np.ndarray:
    return t.detach().numpy()


@pytest.mark.parametrize("layers,bidir,bias,batch_first", [
    (1, False, True, False), (2, True, True, False), (1, True, False, True),
    (3, False, True, True)])
def test_outputs_states_and_gradients_match_torch(layers, bidir, bias, batch_first):
    tm, vm = _pair(layers, bidir, bias, batch_first)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 6, 5) if batch_first else (6, 3, 5))
    n = layers * (2 if bidir else 1)
    h0, c0 = rng.standard_normal((n, 3, 7)), rng.standard_normal((n, 3, 7))
    tx, th, tc = (torch.tensor(a, requires_grad=True) for a in (x, h0, c0))
    vx, vh, vc = (vt.tensor(a, requires_grad=True) for a in (x, h0, c0))
    to, (thn, tcn) = tm(tx, (th, tc))
    vo, (vhn, vcn) = vm(vx, (vh, vc))
    (to.sin().sum() + thn.cos().sum() + (tcn ** 2).sum()).backward()
    (vo.sin().sum() + vhn.cos().sum() + (vcn ** 2).sum()).backward()
    pairs = [(to, vo), (thn, vhn), (tcn, vcn), (tx.grad, vx.grad), (th.grad, vh.grad),
             (tc.grad, vc.grad)]
    pairs += [(p.grad, q.grad) for p, q in zip(tm.parameters(), vm.parameters())]
    for a, b in pairs:
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("steps,batch", [(1, 1), (1, 4), (7, 1), (7, 3)])
@pytest.mark.parametrize("mode,kw", [("LSTM", {}), ("RNN", {}),
                                     ("RNN", {"nonlinearity": "relu"})])
def test_cpu_backward_in_pieces_matches_torch(steps, batch, mode, kw, monkeypatch):
    """The CPU backward with its steps cut into pieces (forced here at any size: each
    piece's weight gradients trail the loop), against PyTorch: single steps, single
    sequences, two bidirectional layers, float64."""
    rnn = pytest.importorskip("volta_numpy.rnn")
    monkeypatch.setattr(rnn, "PIECE_MACS", 1)
    monkeypatch.setattr(rnn, "PIECES", 3)
    tm, vm = _pair(2, True, True, False, mode, **kw)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((steps, batch, 5))
    tx, vx = torch.tensor(x, requires_grad=True), vt.tensor(x, requires_grad=True)
    to, th = tm(tx)
    vo, vh = vm(vx)
    if mode == "LSTM":
        th, vh = th[0] + th[1].cos(), vh[0] + vh[1].cos()
    (to.sin().sum() + th.cos().sum()).backward()
    (vo.sin().sum() + vh.cos().sum()).backward()
    pairs = [(to, vo), (th, vh), (tx.grad, vx.grad)]
    pairs += [(p.grad, q.grad) for p, q in zip(tm.parameters(), vm.parameters())]
    for a, b in pairs:
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("layers,bidir,bias,batch_first", [
    (1, False, True, False), (2, True, True, False), (1, True, False, True)])
@pytest.mark.parametrize("mode,kw", [("GRU", {}), ("RNN", {}),
                                     ("RNN", {"nonlinearity": "relu"})])
def test_gru_and_rnn_outputs_state_and_gradients_match_torch(layers, bidir, bias,
                                                             batch_first, mode, kw):
    tm, vm = _pair(layers, bidir, bias, batch_first, mode, **kw)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 6, 5) if batch_first else (6, 3, 5))
    h0 = rng.standard_normal((layers * (2 if bidir else 1), 3, 7))
    tx, th = (torch.tensor(a, requires_grad=True) for a in (x, h0))
    vx, vh = (vt.tensor(a, requires_grad=True) for a in (x, h0))
    to, thn = tm(tx, th)
    vo, vhn = vm(vx, vh)
    (to.sin().sum() + thn.cos().sum()).backward()
    (vo.sin().sum() + vhn.cos().sum()).backward()
    pairs = [(to, vo), (thn, vhn), (tx.grad, vx.grad), (th.grad, vh.grad)]
    pairs += [(p.grad, q.grad) for p, q in zip(tm.parameters(), vm.parameters())]
    for a, b in pairs:
        np.testing.assert_allclose(_np(b), _np(a), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bidir", [False, True])
def test_double_backward_matches_torch(bidir, mode):
    tm, vm = _pair(1, bidir, True, False, mode)
    x = np.random.default_rng(2).standard_normal((4, 2, 5))
    tx, vx = torch.tensor(x, requires_grad=True), vt.tensor(x, requires_grad=True)
    (tg,) = torch.autograd.grad((tm(tx)[0] ** 2).sum(), tx, create_graph=True)
    (vg,) = vt.autograd.grad((vm(vx)[0] ** 2).sum(), vx, create_graph=True)
    np.testing.assert_allclose(_np(vg), _np(tg), rtol=1e-10, atol=1e-12)
    tg.sin().sum().backward()
    vg.sin().sum().backward()
    np.testing.assert_allclose(_np(vx.grad), _np(tx.grad), rtol=1e-10, atol=1e-12)
    for p, q in zip(tm.parameters(), vm.parameters()):
        np.testing.assert_allclose(_np(q.grad), _np(p.grad), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_one_op_per_layer_and_direction(mode):
    """The whole time loop records one node: the graph does not grow with the sequence."""
    vm = getattr(vt.nn, mode)(4, 3, 2, bidirectional=True)
    out, _ = vm(vt.randn(50, 2, 4))
    seen, todo = {}, [out.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen or isinstance(node, vt.Tensor):
            continue
        seen[id(node)] = type(node).__name__
        todo.extend(node.parents)
    assert list(seen.values()).count(f"{mode}Layer") == 4
    assert len(seen) < 40


def _device_param(device_type: str):
    from volta_core.backend.registry import backends

    rows = [b for b in backends() if b.device_type == device_type]
    reason = rows[0].reason if rows else f"no backend serves {device_type!r}"
    return pytest.param(device_type, marks=pytest.mark.skipif(
        reason is not None, reason=f"{device_type} unavailable: {reason}"))


@pytest.mark.parametrize("device", [_device_param("wgpu"), _device_param("cuda")])
@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_other_devices_match_cpu(device, mode):
    vt.manual_seed(0)
    m = getattr(vt.nn, mode)(5, 7, 2, bidirectional=True)
    md = getattr(vt.nn, mode)(5, 7, 2, bidirectional=True).to(device)
    md.load_state_dict(m.state_dict())
    x = np.random.default_rng(3).standard_normal((4, 3, 5)).astype(np.float32)
    xc, xd = vt.tensor(x, requires_grad=True), vt.tensor(x, device=device, requires_grad=True)
    oc, hc = m(xc)
    od, hd = md(xd)
    oc.sum().backward()
    od.sum().backward()
    np.testing.assert_allclose(od.detach().cpu().numpy(), _np(oc), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(xd.grad.cpu().numpy(), xc.grad.numpy(), rtol=1e-4, atol=1e-5)
    for p, q in zip(m.parameters(), md.parameters()):
        np.testing.assert_allclose(q.grad.cpu().numpy(), p.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_inplace_change_of_output_is_caught(mode):
    m = getattr(vt.nn, mode)(4, 3)
    out, _ = m(vt.randn(5, 2, 4, requires_grad=True))
    out.mul_(2.0)
    with pytest.raises(vt.AutogradError, match="modified by an in-place operation"):
        out.sum().backward()


def _record_pieces():
    """A ``then`` for the ``*_steps_backward`` kernels that records the pieces it gets and
    copies their gradients (as the layers' ``_StepGrads`` reads them)."""
    seen = []

    def then(lo, hi, *grads):
        seen.append((lo, hi, [np.array(a[lo:hi]) for a in grads]))

    return seen, then


def _assert_pieces_cover(seen, steps, grads):
    """The pieces cover ``[0, steps)`` once each, and each saw its steps' final gradients."""
    assert sorted(lo for lo, _, _ in seen) == sorted({lo for lo, _, _ in seen})
    assert sum(hi - lo for lo, hi, _ in seen) == steps
    for lo, hi, got in seen:
        for a, b in zip(got, grads):
            np.testing.assert_array_equal(a, b[lo:hi])


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("threads_n", [1, 2])
def test_numpy_lstm_loops_give_the_generic_loops_bits(threads_n, reverse, threads):
    """The CPU backend's in-place ``lstm_steps``/``lstm_steps_backward`` (its gate factors
    computed step by step) equal the generic loops bit for bit (float32, a batch big
    enough to split GEMMs and to cut the backward into pieces)."""
    from volta_numpy import rnn

    from volta_core.nn import fused_rnn as generic

    threads(threads_n)
    xp = vt.device("cpu").xp  # the backend's products, as the layers call them
    rng = np.random.default_rng(3)
    steps, batch, hid = 9, 70, 160

    def arr(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    xw, h0, c0 = arr(steps, batch, 4 * hid), arr(batch, hid), arr(batch, hid)
    w = arr(4 * hid, hid, scale=0.1)
    w_t = np.ascontiguousarray(w.T)
    got = rnn.lstm_steps(xp, xw, h0, c0, w_t, reverse=reverse)
    want = generic.lstm_steps(xp, xw, h0, c0, w_t, reverse=reverse)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    out, *acts = want
    c_prev = generic._before_each_step(xp, c0, out[..., hid:], reverse)
    g = arr(steps, batch, 2 * hid)
    seen, then = _record_pieces()
    got = rnn.lstm_steps_backward(xp, g, *acts, c_prev, w, reverse=reverse, then=then)
    want = generic.lstm_steps_backward(xp, g, *acts, c_prev, w, reverse=reverse)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert len(seen) > 1  # the shapes are big enough for pieces
    _assert_pieces_cover(seen, steps, got[:1])


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("threads_n", [1, 2])
def test_numpy_rnn_loops_give_the_generic_loops_bits(threads_n, reverse, relu, threads):
    """The CPU backend's in-place ``rnn_steps``/``rnn_steps_backward`` equal the generic
    loops bit for bit (float32, inputs at 0 included)."""
    from volta_numpy import rnn

    from volta_core.nn import fused_rnn as generic

    threads(threads_n)
    xp = vt.device("cpu").xp
    rng = np.random.default_rng(4)
    steps, batch, hid = 9, 70, 160
    xw = rng.standard_normal((steps, batch, hid)).astype(np.float32)
    xw[4, 5, :] = 0.0
    h0 = rng.standard_normal((batch, hid)).astype(np.float32)
    w = (rng.standard_normal((hid, hid)) * 0.1).astype(np.float32)
    w_t = np.ascontiguousarray(w.T)
    out = rnn.rnn_steps(xp, xw, h0, w_t, relu=relu, reverse=reverse)
    np.testing.assert_array_equal(
        out, generic.rnn_steps(xp, xw, h0, w_t, relu=relu, reverse=reverse))
    g = rng.standard_normal(out.shape).astype(np.float32)
    seen, then = _record_pieces()
    got = rnn.rnn_steps_backward(xp, g, out, w, relu=relu, reverse=reverse, then=then)
    want = generic.rnn_steps_backward(xp, g, out, w, relu=relu, reverse=reverse)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    assert len(seen) > 1
    _assert_pieces_cover(seen, steps, got[:1])


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_numpy_layers_match_the_generic_kernels(mode, threads, monkeypatch):
    """Whole layers on the CPU backend (the LSTM's and RNN's backward cut into pieces whose
    weight gradients are summed in step order) against the generic kernels (one piece);
    the pieces' values do not depend on the thread count (the GRU's loop is the generic
    one, whose whole-layer products are cut by thread count)."""
    from volta_core.backend import kernels as registry
    from volta_core.nn import fused_rnn

    rng = np.random.default_rng(5)
    x0 = rng.standard_normal((9, 70, 24)).astype(np.float32)

    def run():
        vt.manual_seed(0)
        m = getattr(vt.nn, mode)(24, 160, 1, bidirectional=True)
        x = vt.tensor(x0, requires_grad=True)
        out, h = m(x)
        h = h if mode != "LSTM" else h[0] + h[1].cos()
        (out.sin().sum() + h.sum()).backward()
        return [a.detach().numpy() for a in (out, h, x.grad, *(p.grad for p in
                                                                m.parameters()))]

    threads(1)
    one = run()
    threads(2)
    two = run()
    if mode != "GRU":
        for a, b in zip(one, two):
            np.testing.assert_array_equal(a, b)
    for name in (f"{mode.lower()}_steps", f"{mode.lower()}_steps_backward"):
        monkeypatch.setitem(registry._cache, ("numpy", name), getattr(fused_rnn, name))
    for a, b in zip(two, run()):  # float32 sums of 630 rows, in another order
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=3e-6 * max(1.0, np.abs(b).max()))
