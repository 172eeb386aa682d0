"""Property tests (hypothesis): broadcasting, reshape/permute round trips and indexing with
random shapes, empty and 0-d tensors included, compared against NumPy."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from vt_helpers import assert_close, to_np

import volta_core as vt

SETTINGS = settings(max_examples=25, deadline=None)
shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)


def values(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


@st.composite
def broadcastable_pair(draw):
    """Two shapes that broadcast together, and their broadcast shape."""
    out = draw(st.lists(st.integers(0, 3), min_size=0, max_size=4))
    a, b = [], []
    for n in out:
        a.append(draw(st.sampled_from([n, 1])))
        b.append(draw(st.sampled_from([n, 1])))
    a = a[draw(st.integers(0, len(a))):]
    b = b[draw(st.integers(0, len(b))):]
    return tuple(a), tuple(b)


@SETTINGS
@given(broadcastable_pair())
def test_broadcasting_matches_numpy(pair):
    sa, sb = pair
    a, b = values(sa), values(sb, 1)
    ta = vt.tensor(a, requires_grad=True)
    tb = vt.tensor(b, requires_grad=True)
    out = ta * 2 + tb
    assert_close(out, a * 2 + b)
    shape = np.broadcast_shapes(sa, sb)
    assert_close(vt.broadcast_tensors(ta, tb)[0], np.broadcast_to(a, shape))
    assert_close(ta.expand(shape), np.broadcast_to(a, shape))
    out.sum().backward()  # the gradient sums over the broadcast dims
    assert ta.grad.shape == sa and tb.grad.shape == sb
    assert_close(ta.grad, np.broadcast_to(2.0, shape).sum() / max(a.size, 1) * np.ones(sa)
                 if a.size else np.zeros(sa))


@SETTINGS
@given(shapes, st.randoms(use_true_random=False))
def test_reshape_and_permute_round_trip(shape, rnd):
    a = values(shape)
    x = vt.tensor(a)
    perm = list(range(len(shape)))
    rnd.shuffle(perm)
    p = x.permute(*perm) if perm else x
    assert_close(p, np.transpose(a, perm))
    inverse = np.argsort(perm).tolist()
    assert_close(p.permute(*inverse) if perm else p, a)
    flat = x.reshape(-1) if a.size else x.reshape(0)
    assert_close(flat, a.reshape(-1))
    assert_close(flat.reshape(shape), a)
    assert_close(x.flatten(), a.reshape(-1) if shape else a.reshape(1))
    assert_close(x.unsqueeze(0).squeeze(0), a)
    if len(shape) >= 2:
        assert_close(x.movedim(0, -1).movedim(-1, 0), a)


@st.composite
def basic_key(draw, shape):
    """A random NumPy-style key of ints, positive-step slices, None and Ellipsis."""
    key, dims = [], list(shape)
    used_ellipsis = False
    while dims:
        n = dims.pop(0)
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis", "stop"]))
        if kind == "int" and n:
            key.append(draw(st.integers(-n, n - 1)))
        elif kind == "none":
            key.append(None)
            dims.insert(0, n)
        elif kind == "ellipsis" and not used_ellipsis:
            key.append(Ellipsis)
            used_ellipsis = True
            break
        elif kind == "stop":
            break
        else:
            start = draw(st.one_of(st.none(), st.integers(-n - 2, n + 2)))
            stop = draw(st.one_of(st.none(), st.integers(-n - 2, n + 2)))
            key.append(slice(start, stop, draw(st.one_of(st.none(), st.integers(1, 3)))))
    if draw(st.booleans()):
        key.append(None)
    return tuple(key)


@SETTINGS
@given(st.data(), shapes)
def test_basic_indexing_matches_numpy(data, shape):
    a = values(shape)
    key = data.draw(basic_key(shape))
    x = vt.tensor(a, requires_grad=True)
    out = x[key]
    assert_close(out, a[key])
    out.sum().backward()
    mask = np.zeros(shape)
    np.add.at(mask, key, 1.0) if a.size else None
    assert_close(x.grad, mask)


@SETTINGS
@given(st.data(), shapes.filter(lambda s: len(s) >= 1))
def test_integer_and_mask_indexing_matches_numpy(data, shape):
    a = values(shape)
    x = vt.tensor(a, requires_grad=True)
    n = shape[0]
    idx = data.draw(st.lists(st.integers(-n, n - 1), max_size=5)) if n else []
    idx = np.asarray(idx, dtype=np.int64)
    out = x[vt.tensor(idx)]
    assert_close(out, a[idx])
    out.sum().backward()
    grad = np.zeros(shape)
    np.add.at(grad, idx, 1.0)
    assert_close(x.grad, grad)
    mask = values(shape, 2) > 0
    assert_close(x.detach()[vt.tensor(mask)], a[mask])
    if len(shape) >= 2 and shape[1]:
        cols = np.asarray(data.draw(st.lists(st.integers(0, shape[1] - 1), min_size=len(idx),
                                             max_size=len(idx))), dtype=np.int64)
        assert_close(x.detach()[vt.tensor(idx), vt.tensor(cols)], a[idx, cols])
        assert_close(x.detach()[:, vt.tensor(cols)], a[:, cols])


@SETTINGS
@given(st.data(), shapes)
def test_setitem_matches_numpy(data, shape):
    a = values(shape)
    key = data.draw(basic_key(shape))
    x = vt.tensor(a)
    ref = a.copy()
    x[key] = 7.0
    ref[key] = 7.0
    assert_close(x, ref)
    if shape and shape[0]:
        mask = values(shape, 3) > 0
        x[vt.tensor(mask)] = -1.0
        ref[mask] = -1.0
        assert_close(x, ref)


@SETTINGS
@given(shapes, st.integers(0, 3))
def test_zero_d_and_empty_movement(shape, k):
    a = values(shape)
    x = vt.tensor(a)
    assert_close(x.clone(), a)
    if shape:
        d = k % len(shape)
        assert_close(x.flip(d), np.flip(a, d))
        assert_close(x.roll(k, d), np.roll(a, k, d))
        assert_close(vt.cat([x, x], d), np.concatenate([a, a], d))
        assert_close(vt.stack([x, x], d), np.stack([a, a], d))
        assert_close(x.cumsum(d), np.cumsum(a, d))
        parts = x.split(max(k, 1), d)
        assert_close(vt.cat(list(parts), d) if parts else x, a)
    assert_close(x.repeat([2] * len(shape)), np.tile(a, [2] * len(shape)))  # () for 0-d
    assert to_np(x.reshape(shape)).shape == shape
