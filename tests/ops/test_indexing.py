"""Indexing, gather/scatter, sorting and cumulative ops against NumPy, with gradchecks.

The last section runs the scatter kernels and a set of movement/indexing ops on an
array-api-strict device (a throwaway backend) to catch NumPy-only behaviour.
"""

import numpy as np
import pytest
from vt_helpers import assert_close, check_grad, rand, strict_backend, t64, to_np

import volta_core as vt

T = vt.tensor


# -- x[key] -------------------------------------------------------------------------------

BASIC_KEYS = [
    1, -1, (0, 2), (slice(None), 1), slice(1, None), slice(None, None, 2), (Ellipsis, 0),
    (None, 1), (1, None, slice(1, 3)), (slice(0, 10), Ellipsis, None), (Ellipsis,),
    (slice(5, 1),), (-2, slice(None, None, 3), None, 0),
]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=[repr(k) for k in BASIC_KEYS])
def test_getitem_basic_matches_numpy(key):
    a = rand(3, 4, 2)
    assert_close(t64(a)[key], a[key])


ADV_KEYS = [
    [0, 2], [[0, 1], [2, 2]], [-1, 0, -1], ([0, 2], [1, 3]), (slice(None), [3, 0, 0]),
    ([0, 1], slice(None), [1, 0]), (1, slice(None), [1, 0]), (slice(1, 3), [0, 0], [1, 1]),
    (Ellipsis, [1]), (None, [2, 0]), ([], ), ([[0], [2]], [1, 2]),
]


@pytest.mark.parametrize("key", ADV_KEYS, ids=[repr(k) for k in ADV_KEYS])
def test_getitem_advanced_matches_numpy(key):
    a = rand(3, 4, 2)
    np_key = tuple(np.asarray(k, dtype=np.int64) if isinstance(k, list) else k
                   for k in (key if isinstance(key, tuple) else (key,)))
    expected = a[np_key]
    if isinstance(key, tuple) and isinstance(key[0], int):  # PyTorch applies ints first
        expected = a[key[0]][np_key[1:]]
    assert_close(t64(a)[key], expected)


def test_getitem_tensor_and_mask_indices():
    a = rand(3, 4)
    x = t64(a)
    assert_close(x[T([2, 0])], a[[2, 0]])
    assert_close(x[T(1)], a[1])
    mask = a > 0
    assert_close(x[T(mask)], a[mask])
    assert_close(x[:, T(mask[0])], a[:, mask[0]])
    assert_close(x[T(mask[:, 0])], a[mask[:, 0]])
    assert x[True].shape == (1, 3, 4) and x[False].shape == (0, 3, 4)
    assert_close(x[np.array([1, 1])], a[[1, 1]])
    s = T(5.0)
    assert s[None].shape == (1,) and s[...].item() == 5.0 and s[T(True)].shape == (1,)


def test_getitem_errors():
    x = t64(rand(3, 4))
    with pytest.raises(vt.IndexOutOfRangeError, match="index 3 is out of bounds for dimension "
                                                      "0 with size 3"):
        x[3]
    with pytest.raises(vt.IndexOutOfRangeError, match="index -5 is out of bounds for "
                                                      "dimension 1 with size 4"):
        x[:, -5]
    with pytest.raises(vt.IndexOutOfRangeError, match="index 7 is out of bounds"):
        x[[0, 7]]
    with pytest.raises(vt.IndexOutOfRangeError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(vt.ShapeError, match="step must be positive"):
        x[::-1]
    with pytest.raises(vt.IndexOutOfRangeError, match="mask of shape"):
        x[T([True, False])]
    with pytest.raises(vt.DTypeError, match="integer tensor"):
        x[T([0.5])]
    with pytest.raises(vt.IndexOutOfRangeError, match="not a valid index"):
        x["a"]
    with pytest.raises(vt.IndexOutOfRangeError, match="single ellipsis"):
        x[..., ...]


def test_getitem_gradients():
    a = rand(3, 4)
    check_grad(lambda x: x[1:, ::2], a)
    check_grad(lambda x: x[None, 1, None], a)
    check_grad(lambda x: x[[0, 2, 0]], a)  # duplicates accumulate
    check_grad(lambda x: x[[0, 2], [1, 1]], a)
    check_grad(lambda x: x[[1, 0], :, None][:, [3, 3, 0]], a)
    check_grad(lambda x: x[x.detach() > 0], a)
    check_grad(lambda x: x[..., [-1]], a)


def test_getitem_double_backward():
    x = t64(rand(4)).requires_grad_()
    y = (x[[0, 0, 3]] ** 2).sum()
    (g,) = vt.autograd.grad(y, x, create_graph=True)
    assert_close(g, 2 * to_np(x) * np.array([2, 0, 0, 1]))
    (gg,) = vt.autograd.grad(g.sum(), x)
    assert_close(gg, [4.0, 0.0, 0.0, 2.0])


# -- x[key] = value -----------------------------------------------------------------------

def test_setitem_matches_numpy():
    a = rand(3, 4)
    cases = [(0, 1.5), ((slice(None), 1), T([1.0, 2.0, 3.0])), (slice(None, None, 2), 0.0),
             ((Ellipsis, 0), T(7.0)), (a > 0, -1.0),
             ([0, 2], T([9.0, 8.0, 7.0, 6.0]).double()),  # index_put: the same dtype
             (([0, 0], [1, 2]), T([4.0, 5.0]).double()), ((1, None), 3.0),
             ((slice(0, 2), [0, 3]), 2.0)]
    for key, value in cases:
        x, ref = t64(a), a.copy()
        np_key = T(key) if isinstance(key, np.ndarray) else key
        x[np_key] = value
        nv = to_np(value) if isinstance(value, vt.Tensor) else value
        ref_key = tuple(np.asarray(k) if isinstance(k, list) else k for k in key) \
            if isinstance(key, tuple) else (np.asarray(key) if isinstance(key, list) else key)
        ref[ref_key] = nv
        assert_close(x, ref)
        assert x._version[0] == 1


def test_setitem_dtype_broadcast_and_views():
    x = T([1, 2, 3])
    x[0] = 2.7  # cast to the tensor's dtype, as PyTorch does
    assert x.dtype == vt.int64 and x.tolist() == [2, 2, 3]
    y = T(np.zeros((2, 3)))
    y[:, :] = T([[1.0, 2.0, 3.0]])
    assert y.tolist() == [[1, 2, 3], [1, 2, 3]]
    y[0] = T([[5.0, 5.0, 5.0]])  # leading size-1 dims are dropped
    base = T(np.zeros((2, 3)))
    view = base[1]
    base[1, 2] = 4.0
    assert view.tolist() == [0.0, 0.0, 4.0]
    view[0] = 3.0
    assert base.tolist()[1] == [3.0, 0.0, 4.0]
    s = T(np.zeros(3)).sum()  # a backend scalar: rebinding instead of writing
    s[...] = 2.0
    assert s.item() == 2.0
    with pytest.raises(vt.ShapeError, match="cannot be broadcast"):
        y[0] = T([1.0, 2.0])


def test_setitem_autograd_rules():
    w = t64(rand(3)).requires_grad_()
    with pytest.raises(vt.AutogradError, match="a leaf Variable that requires grad is being "
                                               "used in an in-place operation"):
        w[0] = 1.0
    with vt.no_grad():
        w[0] = 1.0
    assert w.tolist()[0] == 1.0 and w.is_leaf

    def f(x, v):
        y = x * 2
        y[1:] = v * 3
        y[[0, 0]] = (y[2] + 1.0) * v[0]
        return y

    check_grad(f, rand(3), rand(2))
    buf = T(np.zeros(3))
    v = t64(rand(1)).requires_grad_()
    buf[1] = v[0]
    assert buf.grad_fn is not None
    buf.sum().backward()
    assert_close(v.grad, [1.0])


# -- gather / scatter ---------------------------------------------------------------------

def test_gather_take_along_dim():
    a = rand(3, 4)
    idx = np.array([[0, 3], [1, 1], [2, 0]])
    assert_close(t64(a).gather(1, T(idx)), np.take_along_axis(a, idx, 1))
    row = np.array([[2, 0, 1, 1]])
    assert_close(vt.gather(t64(a), 0, T(row)), np.take_along_axis(a, row, 0))
    assert_close(vt.gather(t64(a), 0, T([[2], [0]])), a[[2, 0], :1])  # index smaller than input
    assert_close(t64(a).take_along_dim(T(idx), 1), np.take_along_axis(a, idx, 1))
    assert_close(t64(a).take_along_dim(T([[1]]), 1), a[:, 1:2])  # broadcast indices
    assert_close(vt.take_along_dim(t64(a), T([5, 0])), a.reshape(-1)[[5, 0]])
    assert vt.gather(T(3.0), 0, T(0)).item() == 3.0
    check_grad(lambda x: x.gather(1, T(idx)), a)
    with pytest.raises(vt.IndexOutOfRangeError, match="gather: index 4 is out of bounds for "
                                                      "dimension 1 with size 4"):
        t64(a).gather(1, T([[4]]))
    with pytest.raises(vt.ShapeError, match="same number|as many dims"):
        t64(a).gather(1, T([1]))
    with pytest.raises(vt.DTypeError, match="integer tensor"):
        t64(a).gather(1, T([[1.0]]))


def test_scatter_add_and_scatter():
    a = rand(3, 4)
    idx = np.array([[0, 1, 2, 0], [2, 2, 1, 0]])
    src = rand(2, 4, seed=1)
    ref = a.copy()
    for i in range(2):
        for j in range(4):
            ref[idx[i, j], j] += src[i, j]
    assert_close(t64(a).scatter_add(0, T(idx), t64(src)), ref)
    ref2 = a.copy()
    for i in range(2):
        for j in range(4):
            ref2[idx[i, j], j] = src[i, j]  # the last write wins
    assert_close(t64(a).scatter(0, T(idx), t64(src)), ref2)
    assert_close(t64(a).scatter(1, T([[3], [0], [1]]), value=9.0),
                 np.where(np.eye(4)[[3, 0, 1]] == 1, 9.0, a))
    small = T([[1, 0]])  # index smaller than src: the rest of src has no effect
    assert_close(vt.scatter_add(t64(a), 1, small, t64(src)),
                 a + np.array([[src[0, 1], src[0, 0], 0, 0], [0] * 4, [0] * 4]))
    check_grad(lambda x, s: x.scatter_add(0, T(idx), s), a, src)
    check_grad(lambda x, s: x.scatter(0, T(idx[:1]), s), a, src)
    check_grad(lambda x, s: x.scatter_add(1, small, s), a, src)
    with pytest.raises(vt.IndexOutOfRangeError, match="scatter_add: index 3 is out of bounds "
                                                      "for dimension 0 with size 3"):
        t64(a).scatter_add(0, T([[3]]), t64(src))
    with pytest.raises(vt.ShapeError, match="larger than src"):
        t64(a).scatter_add(0, T(idx), t64(src[:1]))


def test_index_select_index_add():
    a = rand(4, 3)
    assert_close(t64(a).index_select(0, T([3, 0, 3])), a[[3, 0, 3]])
    assert_close(vt.index_select(t64(a), 1, T([2])), a[:, [2]])
    ref = a.copy()
    np.add.at(ref, [1, 1, 3], 2 * np.ones((3, 3)))
    assert_close(t64(a).index_add(0, T([1, 1, 3]), t64(np.ones((3, 3))), alpha=2), ref)
    check_grad(lambda x: x.index_select(1, T([0, 0, 2])), a)
    check_grad(lambda x, s: x.index_add(0, T([1, 1, 3]), s), a, rand(3, 3, seed=2))
    with pytest.raises(vt.IndexOutOfRangeError, match="index_select: index -1"):
        t64(a).index_select(0, T([-1]))
    with pytest.raises(vt.ShapeError, match="source of shape"):
        t64(a).index_add(0, T([1]), t64(np.ones((2, 3))))
    with pytest.raises(vt.ShapeError, match="1-D"):
        t64(a).index_select(0, T([[1]]))


def test_scatter_kernels_on_strict_namespace():
    xp = pytest.importorskip("array_api_strict")
    from volta_core.backend.kernels import get_fallback

    rng = np.random.default_rng(0)
    target = rng.normal(size=(4, 5))
    idx = rng.integers(0, 4, size=(6, 5))
    src = rng.normal(size=(6, 5))
    ref = target.copy()
    for i in range(6):
        for j in range(5):
            ref[idx[i, j], j] += src[i, j]
    out = get_fallback("scatter_add")(xp, xp.asarray(target), 0, xp.asarray(idx),
                                    xp.asarray(src))
    np.testing.assert_allclose(np.from_dlpack(out), ref)
    f32 = get_fallback("scatter_add")(xp, xp.asarray(target, dtype=xp.float32), 0,
                                    xp.asarray(idx), xp.asarray(src, dtype=xp.float32))
    assert f32.dtype == xp.float32
    ints = get_fallback("scatter_add")(xp, xp.zeros(3, dtype=xp.int32), 0,
                                     xp.asarray([0, 0, 2]), xp.asarray([1, 2, 3], dtype=xp.int32))
    assert np.from_dlpack(ints).tolist() == [3, 0, 3]
    last = get_fallback("scatter")(xp, xp.zeros(3), 0, xp.asarray([1, 1, 0]),
                                 xp.asarray([1.0, 2.0, 3.0]))
    assert np.from_dlpack(last).tolist() == [3.0, 2.0, 0.0]
    rows = get_fallback("index_add")(xp, xp.asarray(target), 1, xp.asarray([4, 0, 4]),
                                   xp.asarray(src[:4, :3]))
    ref = target.copy()
    np.add.at(ref, (slice(None), [4, 0, 4]), src[:4, :3])
    np.testing.assert_allclose(np.from_dlpack(rows), ref)
    none = get_fallback("index_add")(xp, xp.asarray(target), 0, xp.asarray([], dtype=xp.int64),
                                   xp.zeros((0, 5), dtype=xp.float64))
    np.testing.assert_allclose(np.from_dlpack(none), target)


# -- masks, one_hot, nonzero --------------------------------------------------------------

def test_masked_fill_and_select():
    a = rand(3, 4)
    m = a > 0
    assert_close(t64(a).masked_fill(T(m), 0.5), np.where(m, 0.5, a))
    assert_close(t64(a).masked_fill(T(m[0]), T(2.0)), np.where(m[0], 2.0, a))
    assert_close(T([1, 2]).masked_fill(T([True, False]), 1.9), [1, 2])
    assert_close(t64(a).masked_select(T(m)), a[m])
    check_grad(lambda x, v: x.masked_fill(T(m), v[0]), a, rand(1))
    with pytest.raises(vt.DTypeError, match="bool tensor"):
        t64(a).masked_fill(T([1, 0, 1, 0]), 1.0)
    assert t64(a[:1]).masked_fill(T(m), 1.0).shape == (3, 4)  # broadcast, as in PyTorch
    with pytest.raises(vt.ShapeError, match="broadcast"):
        t64(a[:2]).masked_fill(T(m), 1.0)
    with pytest.raises(vt.ShapeError):
        t64(a[:1]).masked_fill_(T(m), 1.0)
    with pytest.raises(vt.ShapeError, match="0-d"):
        t64(a).masked_fill(T(m), T([1.0]))


def test_one_hot_nonzero():
    oh = vt.one_hot(T([0, 2, 1]))
    assert oh.dtype == vt.int64 and oh.tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert vt.one_hot(T([[1]]), 4).shape == (1, 1, 4)
    with pytest.raises(vt.IndexOutOfRangeError, match="index 3 is out of bounds"):
        vt.one_hot(T([3]), 3)
    with pytest.raises(vt.ShapeError, match="empty"):
        vt.one_hot(T([], dtype=vt.int64))
    with pytest.raises(vt.DTypeError, match="integer"):
        vt.one_hot(T([1.0]))
    a = np.array([[0, 1.5, 0], [2, 0, 3]])
    assert_close(T(a).nonzero(), np.argwhere(a))
    rows, cols = vt.nonzero(T(a), as_tuple=True)
    assert_close(rows, np.nonzero(a)[0]) and assert_close(cols, np.nonzero(a)[1])
    assert T(3.0).nonzero().shape == (1, 0) and T(0.0).nonzero().shape == (0, 0)
    assert T(np.zeros((0, 2))).nonzero().shape == (0, 2)


# -- sorting ------------------------------------------------------------------------------

def test_sort_argsort_topk():
    a = np.array([[3.0, 1.0, 2.0, 1.0], [0.0, -1.0, 5.0, 5.0]])
    v, i = t64(a).sort()
    assert_close(v, np.sort(a, -1)) and assert_close(i, np.argsort(a, -1, kind="stable"))
    v, i = vt.sort(t64(a), dim=0, descending=True)
    assert_close(v, -np.sort(-a, 0))
    res = t64(a).sort(descending=True, stable=True)
    assert res.indices.tolist() == [[0, 2, 1, 3], [2, 3, 0, 1]]  # ties keep their order
    assert_close(t64(a).argsort(dim=1), np.argsort(a, 1, kind="stable"))
    top = t64(a).topk(2)
    assert top.values.tolist() == [[3.0, 2.0], [5.0, 5.0]] and top.indices.tolist() == [
        [0, 2], [2, 3]]
    low = vt.topk(t64(a), 1, dim=0, largest=False)
    assert_close(low.values, a.min(0, keepdims=True))
    assert T(2.0).sort().values.item() == 2.0
    b = rand(3, 4)
    check_grad(lambda x: x.sort(1).values * T(np.arange(4.0)), b)
    check_grad(lambda x: x.topk(2, 0).values, b)
    with pytest.raises(vt.IndexOutOfRangeError, match="k \\(5\\) is out of range"):
        t64(a).topk(5)


# -- cumulative ops and triangles ---------------------------------------------------------

def test_cumsum_cumprod():
    a = rand(3, 4)
    assert_close(t64(a).cumsum(1), np.cumsum(a, 1))
    assert_close(vt.cumsum(t64(a), dim=0), np.cumsum(a, 0))
    assert_close(t64(a).cumprod(-1), np.cumprod(a, -1))
    ci = T([1, 2, 3], dtype=vt.int32).cumsum(0)
    assert ci.dtype == vt.int64 and ci.tolist() == [1, 3, 6]
    assert T(2.0).cumsum(0).item() == 2.0
    check_grad(lambda x: x.cumsum(1), a)
    check_grad(lambda x: x.cumprod(0), a)
    with_zeros = np.array([[1.5, 0.0, 2.0, 0.5], [0.0, 0.0, 1.2, -0.7]])
    check_grad(lambda x: x.cumprod(1), with_zeros)
    x = t64(with_zeros).requires_grad_()
    (g,) = vt.autograd.grad(x.cumprod(1).sum(), x, create_graph=True)
    assert g.requires_grad


def test_tril_triu():
    a = rand(2, 3, 4)
    assert_close(t64(a).tril(), np.tril(a))
    assert_close(vt.triu(t64(a), 1), np.triu(a, 1))
    assert_close(t64(a).tril(-1), np.tril(a, -1))
    check_grad(lambda x: x.triu(-1), a)
    with pytest.raises(vt.ShapeError, match="at least 2 dims"):
        t64(rand(3)).tril()


# -- a strict Array-API backend -----------------------------------------------------------

@pytest.fixture(scope="module")
def strict():
    """A device 'strictix' whose namespace is array-api-strict (no NumPy extras)."""
    yield from strict_backend("strict_indexing_test", "strictix")


STRICT_CASES = [
    ("getitem_basic", lambda x: x[1:, None, ::2]),
    ("getitem_adv", lambda x: x[[0, 2], 1:]),
    ("getitem_two_adv", lambda x: x[[0, 2], [1, 1]]),
    ("getitem_mask", lambda x: x[x.detach() > 0]),
    ("pad_reflect", lambda x: vt.pad(x, (1, 2), mode="reflect")),
    ("pad_constant", lambda x: vt.pad(x, (1, -1, 0, 1), value=2.0)),
    ("cat_stack", lambda x: vt.cat([x, vt.stack([x[0], x[1]])], 0)),
    ("flip_roll", lambda x: x.flip(1).roll(1, 0)),
    ("repeat", lambda x: x.repeat(2, 1)),
    ("split", lambda x: x.split([1, 2], 1)[1]),
    ("gather", lambda x: x.gather(1, vt.tensor([[2, 0], [1, 1], [0, 0]], device=x.device))),
    ("sort", lambda x: x.sort(1).values),
    ("topk", lambda x: x.topk(2, 0).values),
    ("cumsum", lambda x: x.cumsum(0)),
    ("cumprod", lambda x: x.cumprod(1)),
    ("tril", lambda x: x.tril()),
]


@pytest.mark.parametrize("name,fn", STRICT_CASES, ids=[c[0] for c in STRICT_CASES])
def test_ops_on_strict_backend(strict, name, fn):
    a = rand(3, 3)
    ref_x = t64(a).requires_grad_()
    ref = fn(ref_x)
    ref.sum().backward()
    x = vt.tensor(a, dtype=vt.float64, device=strict, requires_grad=True)
    out = fn(x)
    assert out.device == vt.device(strict)
    assert_close(out, to_np(ref))
    out.sum().backward()
    assert_close(x.grad, to_np(ref_x.grad))


def test_setitem_and_inplace_on_strict_backend(strict):
    x = vt.tensor(np.zeros((2, 3)), device=strict)
    x[0] = 1.0
    x[:, 2] = vt.tensor([5.0, 6.0], dtype=vt.float64, device=strict)
    x[[1, 1], [0, 1]] = 7.0
    x[x > 6] = 8.0
    x.add_(1).mul_(2)
    assert x.tolist() == [[4.0, 4.0, 12.0], [18.0, 18.0, 14.0]]
    assert vt.one_hot(vt.tensor([1, 0], device=strict), 2).tolist() == [[0, 1], [1, 0]]
    assert vt.nonzero(x > 16).tolist() == [[1, 0], [1, 1]]


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_with_reduce_matches_pytorch(reduce):
    """``scatter(..., reduce=)`` (PyTorch's older form of ``scatter_reduce``), out of place
    and in place, with a tensor or a number as the source."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x, s = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    idx = rng.integers(0, 3, (2, 4))
    want = torch.tensor(x).scatter(0, torch.tensor(idx), torch.tensor(s), reduce=reduce)
    got = vt.tensor(x).scatter(0, vt.tensor(idx), vt.tensor(s), reduce=reduce)
    np.testing.assert_allclose(got.numpy(), want.numpy())
    t, v = torch.tensor(x), vt.tensor(x)
    t.scatter_(1, torch.tensor(idx % 4), 1.5, reduce=reduce)
    v.scatter_(1, vt.tensor(idx % 4), 1.5, reduce=reduce)
    np.testing.assert_allclose(v.numpy(), t.numpy())
    with pytest.raises(ValueError, match="add or multiply"):
        vt.tensor(x).scatter(0, vt.tensor(idx), vt.tensor(s), reduce="mean")


def test_0d_integer_tensor_index_writes_like_an_int():
    """PyTorch takes a 0-d integer tensor in a key as an int: ``x[i] += 2`` writes through
    the view it read and copies that view onto itself (allowed), and a value of another
    dtype is cast (no index_put dtype check)."""
    import torch

    for m in (torch, vt):
        x = m.zeros(3, 4)
        i = m.tensor(1)
        x[i] += 2
        x[m.tensor(2), m.tensor(-1)] = 5
        y = m.zeros(3, 4, dtype=m.float64)
        y[m.tensor(0)] = m.ones(4, dtype=m.float32)
        if m is torch:
            want = (x.numpy(), y.numpy())
        else:
            np.testing.assert_array_equal(x.numpy(), want[0])
            np.testing.assert_array_equal(y.numpy(), want[1])


def test_indices_broadcast_to_nothing_are_not_range_checked():
    import torch

    for shape, mask in (((0, 1), [False]), ((2, 3), [False, False, False])):
        want = torch.zeros(shape)[[5], torch.tensor(mask)]
        got = vt.zeros(shape)[[5], vt.tensor(mask)]
        assert tuple(got.shape) == tuple(want.shape) == (0,)
