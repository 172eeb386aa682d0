"""Views share their base's values; in-place ops write through them; PyTorch's errors.

Every case of the views issue, on every available device, each checked against what
PyTorch 2.x CPU gives for the same program.
"""

import numpy as np
import pytest

import volta_core as vt

torch = pytest.importorskip("torch")

_AVAILABLE = {r.name for r in vt.backends() if r.available}
DEVICES = [pytest.param(d, marks=pytest.mark.skipif(
    b not in _AVAILABLE, reason=f"the {b} backend is not available here (no {d} device)"))
    for d, b in (("cpu", "numpy"), ("wgpu", "wgpu"), ("cuda", "cupy"))]


def T(values, dev, **kw):
    return vt.tensor(values, device=dev, **kw)


def same(t, expected) -> None:
    got = np.asarray(t.detach().cpu().tolist(), dtype=np.float64)
    np.testing.assert_allclose(got, np.asarray(expected, dtype=np.float64), rtol=1e-6)


@pytest.mark.parametrize("dev", DEVICES)
def test_in_place_on_a_view_writes_the_base_under_autograd(dev):
    w = T([1.0, 2.0, 3.0], dev, requires_grad=True)
    h = w * 1
    h[:2].mul_(10)
    same(h, [10, 20, 3])
    x = T([1.0, 2.0, 3.0], dev, requires_grad=True)
    y = x * 1
    y[0:1].fill_(5)
    y.sum().backward()
    same(y, [5, 2, 3])
    same(x.grad, [0, 1, 1])
    w2 = T([1.0, 2.0], dev, requires_grad=True)
    buf = vt.zeros(4, device=dev)
    buf[0:2].copy_(w2 * 2)
    same(buf, [2, 4, 0, 0])
    assert buf.requires_grad
    (buf * vt.tensor([1.0, 2.0, 3.0, 4.0], device=dev)).sum().backward()
    same(w2.grad, [2, 4])


@pytest.mark.parametrize("dev", DEVICES)
def test_in_place_on_a_view_without_autograd(dev):
    x = T([1.0, 2.0, 3.0], dev)
    x[1].mul_(10)
    x[2].zero_()
    same(x, [1, 20, 0])
    a = vt.zeros(3, 3, device=dev)
    a.diagonal().fill_(1)
    same(a, np.eye(3))
    m = T([[1.0, 2.0], [3.0, 4.0]], dev)
    c = m.t().contiguous()
    c.add_(100)
    same(m, [[1, 2], [3, 4]])
    same(c, [[101, 103], [102, 104]])
    y = T([1.0, 2.0, 3.0], dev)
    v = y[1:]  # taken before the write: still sees it
    y.mul_(10)
    same(v, [20, 30])


@pytest.mark.parametrize("dev", DEVICES)
def test_every_view_of_a_base_sees_a_write(dev):
    x = vt.zeros(2, 3, device=dev)
    row, flat, col, tr = x[1], x.view(6), x[:, 2], x.t()
    flat[1:3].fill_(7)
    same(x, [[0, 7, 7], [0, 0, 0]])
    same(tr, [[0, 0], [7, 0], [7, 0]])
    col.add_(1)
    same(row, [0, 0, 1])
    same(flat, [0, 7, 8, 0, 0, 1])
    a, b = x.split(1)
    b.mul_(3)
    same(row, [0, 0, 3])
    assert row._version is x._version and x._version[0] == 3


@pytest.mark.parametrize("dev", DEVICES)
def test_in_place_on_a_view_of_a_leaf_raises(dev):
    w = T([1.0, 2.0, 3.0, 4.0], dev, requires_grad=True)
    with pytest.raises(vt.AutogradError, match="view of a leaf Variable"):
        w[:1].add_(1)
    with pytest.raises(vt.AutogradError, match="leaf Variable"):
        w.view(2, 2).zero_()
    with vt.no_grad():  # how initialisers write: allowed
        w[0] = 0.0
    same(w, [0, 2, 3, 4])
    assert w.is_leaf and w.requires_grad


@pytest.mark.parametrize("dev", DEVICES)
def test_backward_saves_only_what_it_needs(dev):
    x = T([1.0, 2.0, 3.0], dev, requires_grad=True).clone()
    y = x * 2
    x.add_(1)
    y.sum().backward()  # x * 2 does not need x for its gradient
    z = x * x
    x.add_(1)
    with pytest.raises(vt.AutogradError, match="modified by an in-place operation"):
        z.sum().backward()


@pytest.mark.parametrize("dev", DEVICES)
def test_zero_dim_integer_tensor_index_is_an_int(dev):
    x = vt.zeros(2, 3, 4, device=dev)
    assert x[vt.tensor(1, device=dev), :, vt.tensor([0, 2], device=dev)].shape == (3, 2)
    assert x[vt.tensor(1, device=dev)].shape == (3, 4)


@pytest.mark.parametrize("dev", DEVICES)
def test_strides_contiguity_and_view_errors(dev):
    x = vt.zeros(2, 3, 4, device=dev)
    tx = torch.zeros(2, 3, 4)
    for f in (lambda t: t, lambda t: t.transpose(0, 2), lambda t: t[:, 1:, ::2],
              lambda t: t[1], lambda t: t.unsqueeze(1).expand(2, 5, 3, 4),
              lambda t: t.permute(1, 0, 2)[0], lambda t: t.diagonal(0, 1, 2),
              lambda t: t.unfold(2, 2, 1)):
        v, tv = f(x), f(tx)
        assert v.stride() == tv.stride() and v.storage_offset() == tv.storage_offset()
        assert v.is_contiguous() == tv.is_contiguous()
    with pytest.raises(vt.ShapeError, match="use .reshape"):
        x.transpose(0, 1).view(-1)
    r = x.transpose(0, 1).reshape(-1)  # a copy: not a view
    assert r._base is None
    assert x.view(6, 4)._base is x and x[0]._base is x and x[0][1]._base is x
    with pytest.raises(vt.ShapeError, match="single memory location"):
        vt.zeros(3, device=dev).expand(2, 3).add_(1)


def test_grad_mode_is_per_thread():
    import threading

    x = vt.ones(3, requires_grad=True)
    entered, done = threading.Event(), threading.Event()
    seen = {}

    def holder():
        with vt.no_grad():
            entered.set()
            done.wait(10)

    def worker():
        entered.wait(10)
        seen["records"] = (x * 2).requires_grad
        done.set()

    threads = [threading.Thread(target=holder), threading.Thread(target=worker)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen["records"] is True and vt.is_grad_enabled()


def test_grad_mode_decorators_wrap_generators():
    x = vt.ones(2, requires_grad=True)

    @vt.no_grad()
    def gen():
        for _ in range(3):
            yield (x * 2).requires_grad

    assert list(gen()) == [False, False, False]
    assert vt.is_grad_enabled()
    with vt.inference_mode():
        assert not vt.is_grad_enabled() and vt.is_inference_mode_enabled()
    assert vt.is_grad_enabled() and not vt.is_inference_mode_enabled()
