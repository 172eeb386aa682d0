"""Custom Functions written as for PyTorch (static ``forward``/``backward`` on Tensors), run
side by side with ``torch.autograd.Function``: one and several outputs, non-differentiable
outputs, ``needs_input_grad``, ``set_materialize_grads``, ``setup_context``, double
backward, ``once_differentiable``, in-place checks and ``gradcheck``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import volta_core as vt
from volta_core.autograd.function import once_differentiable


def _make(m):
    class Cube(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale=1.0):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x * x * x * scale

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x * ctx.scale, None

    class SplitSum(m.autograd.Function):  # two differentiable outputs and an index
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            idx = a.argmax()
            ctx.mark_non_differentiable(idx)
            return a + b, a * b, idx

        @staticmethod
        def backward(ctx, g_sum, g_prod, g_idx):
            a, b = ctx.saved_tensors
            return (g_sum + g_prod * b if ctx.needs_input_grad[0] else None,
                    g_sum + g_prod * a if ctx.needs_input_grad[1] else None)

    class Lazy(m.autograd.Function):  # no materialized zeros: None for an unused output
        log: list = []  # per backward: which gradients were None

        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x.exp(), x.sin()

        @staticmethod
        def backward(ctx, g1, g2):
            Lazy.log.append((g1 is None, g2 is None))
            return (g1 * 2 if g1 is not None else 0) + (g2 * 3 if g2 is not None else 0)

    class Exp2(m.autograd.Function):  # PyTorch 2's form: setup_context, saves its output
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    return Cube, SplitSum, Lazy, Exp2


def _np(t):
    return None if t is None else t.detach().cpu().numpy()


def test_single_output_with_a_number_argument():
    for m in (torch, vt):
        Cube = _make(m)[0]
        x = m.tensor([1.0, -2.0, 0.5], requires_grad=True)
        y = Cube.apply(x, 2.0)
        y.sum().backward()
        if m is torch:
            want = (_np(y), _np(x.grad))
        else:
            np.testing.assert_allclose(_np(y), want[0])
            np.testing.assert_allclose(_np(x.grad), want[1])
            assert y.grad_fn is not None and y.requires_grad


def test_several_outputs_and_a_non_differentiable_index():
    res = {}
    for m in (torch, vt):
        SplitSum = _make(m)[1]
        a = m.tensor([1.0, 4.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, -1.0, 0.5], requires_grad=True)
        s, p, idx = SplitSum.apply(a, b)
        (s * 2 + p * p).sum().backward()
        res[m.__name__] = (_np(s), _np(p), int(idx), idx.requires_grad, _np(a.grad),
                           _np(b.grad))
    for want, got in zip(res["torch"], res["volta_core"]):
        if isinstance(want, np.ndarray):
            np.testing.assert_allclose(got, want, rtol=1e-6)
        else:
            assert got == want


def test_only_one_input_needs_grad():
    for m in (torch, vt):
        SplitSum = _make(m)[1]
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = m.tensor([3.0, 4.0])
        s, p, _ = SplitSum.apply(a, b)
        p.sum().backward()
        np.testing.assert_allclose(_np(a.grad), [3.0, 4.0])
        assert b.grad is None


def test_materialize_grads_off_passes_none():
    for m in (torch, vt):
        Lazy = _make(m)[2]
        x = m.tensor([0.5, 1.5], requires_grad=True)
        y1, y2 = Lazy.apply(x)
        y1.sum().backward(retain_graph=True)  # y2 got no gradient: None for it
        np.testing.assert_allclose(_np(x.grad), [2.0, 2.0])
        y2.sum().backward(retain_graph=True)
        (y1.sum() + y2.sum()).backward()
        np.testing.assert_allclose(_np(x.grad), [10.0, 10.0])
        assert Lazy.log == [(False, True), (True, False), (False, False)], m.__name__
        assert y1.grad_fn is not None


def test_setup_context_form_and_double_backward():
    res = {}
    for m in (torch, vt):
        Exp2 = _make(m)[3]
        x = m.tensor([0.3, -1.2], dtype=m.float64, requires_grad=True)
        (g,) = m.autograd.grad(Exp2.apply(x).sum(), x, create_graph=True)
        (h,) = m.autograd.grad((g * g).sum(), x)  # d/dx exp(x)^2 = 2 exp(2x)
        res[m.__name__] = (_np(g), _np(h))
    for a, b in zip(res["torch"], res["volta_core"]):
        np.testing.assert_allclose(b, a, rtol=1e-12)
    np.testing.assert_allclose(res["volta_core"][1], 2 * np.exp(2 * np.array([0.3, -1.2])),
                               rtol=1e-12)


def test_saved_tensor_modified_in_place_is_refused():
    Cube = _make(vt)[0]
    x = vt.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = Cube.apply(y)
    y.add_(1)
    with pytest.raises(vt.AutogradError, match="modified by an inplace operation"):
        z.sum().backward()


def test_once_differentiable_and_gradcheck():
    class Sq(vt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = vt.tensor(np.array([0.3, -0.7, 1.1]), requires_grad=True)
    assert vt.autograd.gradcheck(Sq.apply, (x,))
    (g,) = vt.autograd.grad(Sq.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad  # backward ran with gradients off


def test_no_grad_call_returns_plain_tensors():
    Cube = _make(vt)[0]
    with vt.no_grad():
        y = Cube.apply(vt.tensor([2.0], requires_grad=True))
    assert not y.requires_grad and y.grad_fn is None
    assert Cube.apply(vt.tensor([2.0])).tolist() == [8.0]


def test_returning_an_input_unchanged_makes_a_new_output():
    class Ident(vt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = vt.tensor([1.0, 2.0], requires_grad=True)
    y = Ident.apply(x)
    assert y is not x
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_mark_dirty_as_pytorch():
    """An input modified in place in ``forward`` and marked dirty is returned itself, its
    history now the Function's node (gradients flow through it); its version counts the
    write; a leaf that requires grad is refused; a tensor saved before sees the change."""

    def run(m):
        class MulInPlace(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                x.mul_(k)
                ctx.mark_dirty(x)
                ctx.k = k
                return x

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        class AddOne(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                x.add_(1)
                ctx.mark_dirty(x)
                return x, y * 2

            @staticmethod
            def backward(ctx, gx, gy):
                return gx, gy * 2

        out = []
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = a * 3
        c = MulInPlace.apply(b, 2.0)
        (c * c).sum().backward()
        version = b._version if m is torch else b._version[0]
        out += [c is b, _np(b).tolist(), version, _np(a.grad).tolist()]
        a = m.tensor([1.0, 2.0], requires_grad=True)
        y = m.tensor([3.0, 4.0], requires_grad=True)
        b = a * 1
        p, q = AddOne.apply(b, y)
        (p.sum() + q.sum()).backward()
        out += [p is b, _np(p).tolist(), _np(a.grad).tolist(), _np(y.grad).tolist()]
        with pytest.raises(RuntimeError):
            MulInPlace.apply(m.ones(2, requires_grad=True), 2.0)
        a = m.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1
        s = b.sin()  # saves b
        MulInPlace.apply(b, 2.0)
        with pytest.raises(RuntimeError):
            s.sum().backward()
        return out

    assert run(vt) == run(torch)
