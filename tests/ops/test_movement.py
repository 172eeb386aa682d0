"""Movement ops against NumPy: views, padding, reordering, joining/splitting, gradchecks."""

import numpy as np
import pytest
from vt_helpers import assert_close, check_grad, rand, t64, to_np

import volta_core as vt

T = vt.tensor


# -- views --------------------------------------------------------------------------------

def test_reshape_view_values_and_grad():
    a = rand(2, 3, 4)
    assert_close(t64(a).reshape(4, -1), a.reshape(4, -1))
    assert_close(t64(a).view((3, 8)), a.reshape(3, 8))
    assert_close(t64(a).view_as(t64(a.reshape(24))), a.reshape(24))
    check_grad(lambda x: x.reshape(6, 4) * 2, a)
    with pytest.raises(vt.ShapeError, match="invalid for input of size 24"):
        t64(a).reshape(5, -1)
    with pytest.raises(vt.ShapeError, match="only one dimension can be -1"):
        t64(a).reshape(-1, -1)


def test_permute_transpose_movedim():
    a = rand(2, 3, 4)
    x = t64(a)
    assert_close(x.permute(2, 0, 1), a.transpose(2, 0, 1))
    assert_close(x.transpose(0, 2), a.swapaxes(0, 2))
    assert_close(x.swapdims(1, 2), a.swapaxes(1, 2))
    assert_close(x.mT, a.swapaxes(-1, -2))
    assert_close(x.movedim(0, -1), np.moveaxis(a, 0, -1))
    assert_close(vt.movedim(x, (0, 1), (2, 0)), np.moveaxis(a, (0, 1), (2, 0)))
    check_grad(lambda x: x.permute(1, 2, 0), a)
    check_grad(lambda x: x.movedim(2, 0), a)
    with pytest.raises(vt.ShapeError, match="repeat a dimension"):
        x.permute(0, 0, 1)
    with pytest.raises(vt.IndexOutOfRangeError, match="out of range"):
        x.movedim(3, 0)
    with pytest.raises(vt.ShapeError, match="same number"):
        x.movedim((0, 1), 2)


def test_expand_broadcast():
    a = rand(3, 1)
    assert_close(t64(a).expand(2, 3, 4), np.broadcast_to(a, (2, 3, 4)))
    assert_close(t64(a).expand(-1, 5), np.broadcast_to(a, (3, 5)))
    assert_close(t64(a).broadcast_to((3, 2)), np.broadcast_to(a, (3, 2)))
    p, q = vt.broadcast_tensors(t64(a), t64(rand(1, 4)))
    assert p.shape == q.shape == (3, 4)
    check_grad(lambda x: x.expand(2, 3, 4), a)
    with pytest.raises(vt.ShapeError, match="cannot be"):
        t64(a).expand(3, 2, 2)


def test_squeeze_unsqueeze_flatten_unflatten():
    a = rand(2, 1, 3, 1)
    x = t64(a)
    assert_close(x.squeeze(), a.squeeze())
    assert_close(x.squeeze(1), a.squeeze(1))
    assert_close(x.squeeze((1, 3)), a.squeeze((1, 3)))
    assert_close(x.squeeze(0), a)
    assert_close(x.unsqueeze(-1), a[..., None])
    assert_close(x.flatten(), a.reshape(-1))
    assert_close(x.flatten(1, 2), a.reshape(2, 3, 1))
    assert_close(t64(rand(2, 6)).unflatten(1, (3, -1)), rand(2, 6).reshape(2, 3, 2))
    assert vt.tensor(3.0).flatten().shape == (1,)
    check_grad(lambda x: x.squeeze().unsqueeze(0).flatten(), a)
    with pytest.raises(vt.ShapeError, match="don't multiply"):
        t64(rand(2, 6)).unflatten(1, (4, 2))
    with pytest.raises(vt.ShapeError, match="after end_dim"):
        x.flatten(2, 1)


def test_views_share_version_counter_and_memory():
    x = T(np.zeros((2, 3)))
    for v in (x.reshape(6), x.permute(1, 0), x[0], x[:, 1:], x.unsqueeze(0), x.narrow(1, 0, 2),
              x.expand(4, 2, 3), x.detach()):
        assert v._version is x._version
    v = x.view(6)
    v[1] = 5.0
    assert to_np(x)[0, 1] == 5.0
    assert x._version[0] == 1


def test_contiguous_and_clone():
    x = t64(rand(2, 3))
    assert x.is_contiguous() and x.contiguous() is x
    xt = x.permute(1, 0)
    assert not xt.is_contiguous() and xt.stride() == (1, 3)
    c = xt.contiguous()  # a copy, not a view: writing to it leaves x alone
    assert c is not xt and c.is_contiguous() and c._base is None
    c.add_(100)
    assert_close(x.permute(1, 0), to_np(c - 100))
    w = t64(rand(3)).requires_grad_()
    c = w.clone()
    assert c.grad_fn is not None and c.array is not w.array
    check_grad(lambda w: w.clone() * 3, rand(3))
    b = T([True, False]).clone()
    assert b.dtype == vt.bool and b.tolist() == [True, False]
    d = T([1.0, 2.0])
    e = vt.clone(d)
    e[0] = 9.0
    assert d.tolist() == [1.0, 2.0]


# -- slicing ops --------------------------------------------------------------------------

def test_narrow_select_shrink_stride():
    a = rand(4, 5)
    x = t64(a)
    assert_close(x.narrow(1, 1, 3), a[:, 1:4])
    assert_close(x.narrow(0, -2, 2), a[2:])
    assert_close(x.select(1, -1), a[:, -1])
    assert_close(vt.shrink(x, ((1, 3), None)), a[1:3])
    assert_close(vt.stride(x, (2, 3)), a[::2, ::3])
    check_grad(lambda x: x.narrow(1, 1, 3), a)
    check_grad(lambda x: x.select(0, 2), a)
    check_grad(lambda x: vt.shrink(x, ((0, 2), (1, 4))), a)
    check_grad(lambda x: vt.stride(x, (3, 2)), a)
    with pytest.raises(vt.ShapeError, match="exceeds dimension"):
        x.narrow(1, 3, 3)
    with pytest.raises(vt.IndexOutOfRangeError, match="index 4 is out of range"):
        x.select(0, 4)
    with pytest.raises(vt.ShapeError, match="range"):
        vt.shrink(x, ((3, 2), None))
    with pytest.raises(vt.ShapeError, match="positive step"):
        vt.stride(x, (0, 1))


# -- padding ------------------------------------------------------------------------------

@pytest.mark.parametrize("pads", [(1, 2), (0, 1, 2, 0), (2, 1, 1, 1, 1, 0)])
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_matches_numpy(mode, pads):
    # non-constant modes pad the last 3 dims of a 4-D or 5-D input only, as in PyTorch
    shape = (2, 3, 4) if len(pads) < 6 else (1, 2, 3, 4)
    a = rand(*shape)
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
               "circular": "wrap"}[mode]
    width = [(0, 0)] * len(shape)
    for i in range(len(pads) // 2):
        width[len(shape) - 1 - i] = (pads[2 * i], pads[2 * i + 1])
    assert_close(vt.pad(t64(a), pads, mode=mode), np.pad(a, width, mode=np_mode))
    check_grad(lambda x: vt.pad(x, pads, mode=mode), rand(*shape[:-1], 3))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_refuses_layouts_pytorch_refuses(mode):
    """Non-constant padding takes 2 amounts for 2-D/3-D inputs, 4 for 3-D/4-D, 6 for
    4-D/5-D (PyTorch's rule); other layouts are refused, naming the rule."""
    for shape, pads in [((5,), (1, 1)), ((2, 3, 4, 5), (1, 1)), ((2, 3), (1, 1, 1, 1)),
                        ((2, 3, 4), (1, 1, 1, 1, 1, 1))]:
        with pytest.raises(vt.ShapeError, match="non-constant padding takes 2 amounts"):
            vt.pad(t64(rand(*shape)), pads, mode=mode)
    assert vt.pad(t64(rand(2, 3)), (1, 1), mode=mode).shape == (2, 5)
    if mode != "circular":  # an empty W is refused for 1-d reflect/replicate padding
        with pytest.raises(vt.ShapeError, match="too small"):
            vt.pad(t64(rand(1, 2, 2)), (-1, -1), mode=mode)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_with_negative_amounts_as_pytorch(mode):
    """Negative amounts crop; circular then wraps what is left (PyTorch crops first),
    while reflect reflects about the original edges. Circular wrapped the whole dim."""
    torch = pytest.importorskip("torch")
    x = np.arange(5.0).reshape(1, 1, 5)
    for pads in [(-1, 2), (2, -1), (-2, 3), (-1, 4), (4, -1), (-3, 3), (-2, -1), (1, 1)]:
        try:
            want = torch.nn.functional.pad(torch.tensor(x), pads, mode=mode).numpy()
        except RuntimeError:
            with pytest.raises(vt.ShapeError):
                vt.pad(t64(x), pads, mode=mode)
            continue
        np.testing.assert_array_equal(vt.pad(t64(x), pads, mode=mode).numpy(), want)
    check_grad(lambda t: vt.pad(t, (2, -1), mode=mode), rand(1, 1, 5))


def test_pad_constant_value_negative_and_int():
    a = rand(3, 4)
    assert_close(vt.pad(t64(a), (1, 1), value=2.5), np.pad(a, ((0, 0), (1, 1)),
                                                            constant_values=2.5))
    assert_close(vt.pad(t64(a), (-1, 2, 0, -2)), np.pad(a[:1, 1:], ((0, 0), (0, 2))))
    check_grad(lambda x: vt.pad(x, (-1, 2, 1, -1)), a)
    ints = vt.pad(T([[1, 2]]), (1, 0), value=7)
    assert ints.dtype == vt.int64 and ints.tolist() == [[7, 1, 2]]
    assert vt.pad(T(np.zeros((0, 2))), (1, 1)).shape == (0, 4)


def test_pad_errors():
    x = t64(rand(2, 3))
    with pytest.raises(vt.ShapeError, match="even number"):
        vt.pad(x, (1,))
    with pytest.raises(vt.ShapeError, match="at most 2"):
        vt.pad(x, (1, 1, 1, 1, 1, 1))
    with pytest.raises(vt.ShapeError, match="reflect padding .* at most 2"):
        vt.pad(x, (3, 0), mode="reflect")
    with pytest.raises(vt.ShapeError, match="unknown mode"):
        vt.pad(x, (1, 1), mode="wrap")
    with pytest.raises(vt.ShapeError, match="doesn't take a value"):
        vt.pad(x, (1, 1), mode="replicate", value=1.0)
    with pytest.raises(vt.ShapeError, match="negative"):
        vt.pad(x, (-2, -2))


# -- reordering and repeating -------------------------------------------------------------

def test_flip_roll():
    a = rand(3, 4)
    x = t64(a)
    assert_close(x.flip(0), a[::-1])
    assert_close(x.flip((0, 1)), a[::-1, ::-1])
    assert_close(x.roll(1, 1), np.roll(a, 1, 1))
    assert_close(x.roll((1, -2), (0, 1)), np.roll(a, (1, -2), (0, 1)))
    assert_close(x.roll(5), np.roll(a, 5))
    check_grad(lambda x: x.flip(1) * T(np.arange(4.0)), a)
    check_grad(lambda x: x.roll((2, 1), (1, 0)) * T(np.arange(4.0)), a)
    check_grad(lambda x: x.roll(-3) * T(np.arange(4.0)), a)
    f = x.flip(0)
    f[0, 0] = 100.0  # flip copies, as in PyTorch
    assert to_np(x)[2, 0] == a[2, 0]
    with pytest.raises(vt.ShapeError, match="shifts"):
        x.roll((1, 2), 0)


def test_repeat_tile():
    a = rand(2, 3)
    x = t64(a)
    assert_close(x.repeat(2, 3), np.tile(a, (2, 3)))
    assert_close(x.repeat(2, 1, 2), np.tile(a, (2, 1, 2)))
    assert_close(x.tile((2,)), np.tile(a, (1, 2)))
    assert_close(x.repeat(0, 1), np.tile(a, (0, 1)))
    assert_close(T(5.0).repeat(3), [5.0, 5.0, 5.0])
    check_grad(lambda x: x.repeat(2, 1, 3) * T(np.arange(9.0)), a)
    with pytest.raises(vt.ShapeError, match="at least 2"):
        x.repeat(2)


# -- joining and splitting ----------------------------------------------------------------

def test_cat_stack():
    a, b = rand(2, 3), rand(2, 1, seed=1)
    assert_close(vt.cat([t64(a), t64(b)], 1), np.concatenate([a, b], 1))
    assert_close(vt.concat([t64(a), t64(a)], -2), np.concatenate([a, a], 0))
    assert_close(vt.cat([t64(a), T(np.zeros(0))], 0), a)  # legacy empty 1-D skipped
    mixed = vt.cat([T([1, 2]), T([0.5])])
    assert mixed.dtype == vt.float32 and mixed.tolist() == [1.0, 2.0, 0.5]
    assert_close(vt.stack([t64(a), t64(a)], 2), np.stack([a, a], 2))
    assert_close(vt.stack([T(1.0), T(2.0)]), [1.0, 2.0])
    check_grad(lambda p, q: vt.cat([p, q, p], 1), a, b)
    check_grad(lambda p, q: vt.stack([p, q], 1), a, rand(2, 3, seed=2))
    with pytest.raises(vt.ShapeError, match="must match except in dimension 1"):
        vt.cat([t64(a), t64(rand(3, 1))], 1)
    with pytest.raises(vt.ShapeError, match="non-empty"):
        vt.cat([])
    with pytest.raises(vt.ShapeError, match="equal size"):
        vt.stack([t64(a), t64(b)])
    with pytest.raises(vt.ShapeError, match="zero-dimensional"):
        vt.cat([T(1.0), T(2.0)])


def test_split_chunk_unbind():
    a = rand(5, 4)
    x = t64(a)
    parts = x.split(2)
    assert [p.shape for p in parts] == [(2, 4), (2, 4), (1, 4)]
    assert_close(parts[2], a[4:])
    parts = vt.split(x, [1, 4, 0], dim=0)
    assert [p.shape for p in parts] == [(1, 4), (4, 4), (0, 4)]
    assert [c.shape for c in x.chunk(3, 1)] == [(5, 2), (5, 2)]
    assert [c.shape for c in x.chunk(2)] == [(3, 4), (2, 4)]
    rows = x.unbind(1)
    assert len(rows) == 4 and all(r.shape == (5,) for r in rows)
    assert_close(rows[1], a[:, 1])
    assert T(np.zeros((0, 2))).split(2)[0].shape == (0, 2)
    check_grad(lambda x: x.split([1, 3], 1)[1] * 2, rand(2, 4))
    check_grad(lambda x: vt.stack(x.unbind(0)[::-1]), rand(3, 2))
    check_grad(lambda x: x.chunk(2, 1)[0], rand(2, 4))
    with pytest.raises(vt.ShapeError, match="sum to 5"):
        x.split([2, 2])
    with pytest.raises(vt.ShapeError, match="chunks must be positive"):
        x.chunk(0)


def test_zero_d_and_empty_cases():
    s = T(2.0)
    assert s.reshape(1, 1).shape == (1, 1)
    assert s.unsqueeze(0).shape == (1,)
    assert s.flip(0).item() == 2.0
    assert s.expand(3).tolist() == [2.0, 2.0, 2.0]
    e = T(np.zeros((0, 3)))
    assert e.permute(1, 0).shape == (3, 0)
    assert e.flip(0).shape == (0, 3)
    assert e.roll(1, 1).shape == (0, 3)
    assert vt.cat([e, e]).shape == (0, 3)
    assert vt.stack([e, e], 1).shape == (0, 2, 3)
    assert e.unbind(0) == ()
