"""``nn.utils.rnn`` (packed and padded sequences) and packed input to RNN/LSTM/GRU,
against PyTorch: values, dtypes, gradients of inputs and weights, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_ref import compare

import volta_core as vt

TR = torch.nn.utils.rnn
VR = vt.nn.utils.rnn


def _utils(m):
    return m.nn.utils.rnn


def _np(t) -> np.ndarray:
    return np.asarray(t.detach().numpy())


def test_names_exist_like_torch() -> None:
    for name in ("PackedSequence", "pack_padded_sequence", "pad_packed_sequence",
                 "pack_sequence", "unpack_sequence", "pad_sequence", "unpad_sequence"):
        assert hasattr(VR, name), name
    assert vt.nn.utils.rnn is VR


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first: bool, side: str) -> None:
    rng = np.random.default_rng(0)
    a, b, c = rng.standard_normal((4, 3)), rng.standard_normal((2, 3)), rng.standard_normal((5, 3))
    compare(lambda m, x, y, z: _utils(m).pad_sequence([x, y, z], batch_first, -1.5, side),
            a, b, c)


@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_pad_round_trip(enforce_sorted: bool, batch_first: bool) -> None:
    lengths = [5, 3, 2] if enforce_sorted else [2, 5, 3]
    x = np.random.default_rng(1).standard_normal((3, 5, 4) if batch_first else (5, 3, 4))

    def fn(m, t):
        u = _utils(m)
        p = u.pack_padded_sequence(t, lengths, batch_first, enforce_sorted)
        padded, lens = u.pad_packed_sequence(p, batch_first, padding_value=0.5,
                                             total_length=6)
        return p.data, p.batch_sizes, padded, lens

    compare(fn, x)
    tp = TR.pack_padded_sequence(torch.tensor(x), lengths, batch_first, enforce_sorted)
    vp = VR.pack_padded_sequence(vt.tensor(x), lengths, batch_first, enforce_sorted)
    for got, want in ((vp.sorted_indices, tp.sorted_indices),
                      (vp.unsorted_indices, tp.unsorted_indices)):
        assert (got is None) == (want is None)
        if want is not None:
            assert got.tolist() == want.tolist()


def test_pack_sequence_unpack_and_unpad() -> None:
    rng = np.random.default_rng(2)
    seqs = [rng.standard_normal((n, 2)) for n in (3, 6, 1)]

    def fn(m, a, b, c):
        u = _utils(m)
        p = u.pack_sequence([a, b, c], enforce_sorted=False)
        padded = u.pad_sequence([a, b, c], batch_first=True)
        return (p.data, *u.unpack_sequence(p),
                *u.unpad_sequence(padded, m.tensor([3, 6, 1]), batch_first=True))

    compare(fn, *seqs)


def test_errors_like_torch() -> None:
    x = np.zeros((4, 3, 2))
    for lengths, kwargs in (([2, 4, 3], {}), ([4, 0, 3], {"enforce_sorted": False})):
        with pytest.raises(RuntimeError):
            TR.pack_padded_sequence(torch.tensor(x), lengths, **kwargs)
        with pytest.raises(RuntimeError):
            VR.pack_padded_sequence(vt.tensor(x), lengths, **kwargs)
    p = VR.pack_padded_sequence(vt.tensor(x), [4, 3, 2])
    with pytest.raises(ValueError, match="total_length"):
        VR.pad_packed_sequence(p, total_length=2)


def _pair(kind: str, bidirectional: bool, layers: int, batch_first: bool = False):
    kw = dict(num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)
    t = getattr(torch.nn, kind)(3, 5, **kw).double()
    v = getattr(vt.nn, kind)(3, 5, dtype="float64", **kw)
    v.load_state_dict({k: vt.tensor(a.detach().numpy()) for k, a in t.state_dict().items()})
    return t, v


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("with_hx", [False, True])
def test_recurrent_layers_take_packed_sequences(kind: str, bidirectional: bool,
                                                enforce_sorted: bool, with_hx: bool) -> None:
    layers, batch = 2, 4
    lengths = [6, 4, 4, 1] if enforce_sorted else [4, 6, 1, 4]
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, batch, 3))
    d = 2 if bidirectional else 1
    h0 = rng.standard_normal((layers * d, batch, 5))
    c0 = rng.standard_normal((layers * d, batch, 5))
    t_mod, v_mod = _pair(kind, bidirectional, layers)

    def run(m, mod, xs, h, c):
        u = _utils(m)
        p = u.pack_padded_sequence(xs, lengths, enforce_sorted=enforce_sorted)
        hx = None if not with_hx else ((h, c) if kind == "LSTM" else h)
        out, h_n = mod(p)if hx is None else mod(p, hx)
        assert isinstance(out, u.PackedSequence)
        padded, lens = u.pad_packed_sequence(out, batch_first=True)
        h_n = h_n if kind == "LSTM" else (h_n,)
        return padded, lens, *h_n

    tl = [torch.tensor(a, requires_grad=True) for a in (x, h0, c0)]
    vl = [vt.tensor(a, requires_grad=True) for a in (x, h0, c0)]
    tout, vout = run(torch, t_mod, *tl), run(vt, v_mod, *vl)
    for a, b in zip(vout, tout):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)
    assert vout[1].dtype.name == "int64"
    ups = [rng.standard_normal(tuple(o.shape)) for o in tout if o.requires_grad]
    torch.autograd.backward([o for o in tout if o.requires_grad],
                            [torch.tensor(u) for u in ups])
    vt.autograd.backward([o for o in vout if o.requires_grad], [vt.tensor(u) for u in ups])
    for a, b in zip(vl, tl):
        if b.grad is not None:
            np.testing.assert_allclose(_np(a.grad), _np(b.grad), rtol=1e-9, atol=1e-12)
    for (name, pt), pv in zip(t_mod.named_parameters(), v_mod.parameters()):
        np.testing.assert_allclose(_np(pv.grad), _np(pt.grad), rtol=1e-9, atol=1e-12,
                                   err_msg=name)


def test_h_n_is_each_sequences_state_at_its_own_end() -> None:
    """A packed batch gives each sequence the final state it gets when run alone."""
    t_mod, v_mod = _pair("GRU", False, 1)
    rng = np.random.default_rng(4)
    seqs = [rng.standard_normal((n, 3)) for n in (2, 5, 3)]
    _, h_n = v_mod(VR.pack_sequence([vt.tensor(s) for s in seqs], enforce_sorted=False))
    for i, s in enumerate(seqs):
        _, h_alone = v_mod(vt.tensor(s))
        np.testing.assert_allclose(_np(h_n[:, i]), _np(h_alone), rtol=1e-12)


def test_batch_first_module_with_packed_input() -> None:
    t_mod, v_mod = _pair("LSTM", True, 1, batch_first=True)
    x = np.random.default_rng(5).standard_normal((3, 4, 3))

    def fn(m, t):
        mod = v_mod if m is vt else t_mod
        u = _utils(m)
        out, (h, c) = mod(u.pack_padded_sequence(t, [2, 4, 3], batch_first=True,
                                                 enforce_sorted=False))
        return u.pad_packed_sequence(out, batch_first=True)[0], h, c

    compare(fn, x, dtype="float64")


def test_flatten_parameters_is_a_no_op() -> None:
    mod = vt.nn.LSTM(3, 4)
    before = [p for p in mod.parameters()]
    assert mod.flatten_parameters() is None
    assert [p for p in mod.parameters()] == before
    assert hasattr(vt.nn.GRU(2, 2), "flatten_parameters")
