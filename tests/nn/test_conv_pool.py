"""Convolutions and pooling against NumPy references, gradchecks and errors."""

from __future__ import annotations

import numpy as np
import pytest
from vt_helpers import assert_close, check_grad, rand

import volta_core as vt
import volta_core.nn.functional as F
from volta_core import nn


def ref_conv2d(x, w, b=None, stride=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), groups=1):
    """Direct-loop NumPy cross-correlation (NCHW)."""
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    ho = (h - dil[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (wd - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, ho, wo))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(ho):
            for j in range(wo):
                patch = x[:, g * cg:(g + 1) * cg,
                          i * stride[0]:i * stride[0] + dil[0] * (kh - 1) + 1:dil[0],
                          j * stride[1]:j * stride[1] + dil[1] * (kw - 1) + 1:dil[1]]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return out if b is None else out + b.reshape(1, -1, 1, 1)


def ref_conv_transpose2d(x, w, b, stride, pad, out_pad, dil):
    n, c, h, wd = x.shape
    _, o, kh, kw = w.shape
    ho = (h - 1) * stride - 2 * pad + dil * (kh - 1) + out_pad + 1
    wo = (wd - 1) * stride - 2 * pad + dil * (kw - 1) + out_pad + 1
    full = np.zeros((n, o, ho + 2 * pad, wo + 2 * pad))
    for i in range(h):
        for j in range(wd):
            for a in range(kh):
                for bb in range(kw):
                    full[:, :, i * stride + a * dil, j * stride + bb * dil] += \
                        x[:, :, i, j] @ w[:, :, a, bb]
    return full[:, :, pad:pad + ho, pad:pad + wo] + b.reshape(1, -1, 1, 1)


def ref_pool(x, k, s, p, d=1, fn=np.max, fill=-np.inf, ceil=False):
    n, c, h, w = x.shape
    def size(L):
        span = L + 2 * p - d * (k - 1) - 1
        o = (-(-span // s) if ceil else span // s) + 1
        return o - 1 if ceil and (o - 1) * s >= L + p else o
    ho, wo = size(h), size(w)
    xp_ = np.full((n, c, h + 2 * p + k * d + s, w + 2 * p + k * d + s), fill)
    xp_[:, :, p:p + h, p:p + w] = x
    out = np.zeros((n, c, ho, wo))
    for i in range(ho):
        for j in range(wo):
            win = xp_[:, :, i * s:i * s + d * (k - 1) + 1:d, j * s:j * s + d * (k - 1) + 1:d]
            out[:, :, i, j] = fn(win, axis=(2, 3))
    return out


CONV_CASES = [
    dict(stride=1, padding=0, dilation=1, groups=1),
    dict(stride=2, padding=1, dilation=1, groups=1),
    dict(stride=1, padding=2, dilation=2, groups=1),
    dict(stride=(2, 1), padding=(1, 0), dilation=1, groups=2),
]


@pytest.mark.parametrize("algo", ["im2col", "direct"])
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_forward_matches_reference(case, algo):
    x, w, b = rand(2, 4, 7, 6), rand(6, 4 // case["groups"], 3, 3, seed=1), rand(6, seed=2)
    s = case["stride"] if isinstance(case["stride"], tuple) else (case["stride"],) * 2
    p = case["padding"] if isinstance(case["padding"], tuple) else (case["padding"],) * 2
    d = (case["dilation"],) * 2
    want = ref_conv2d(x, w, b, s, (p[0], p[0], p[1], p[1]), d, case["groups"])
    got = F.conv2d(vt.tensor(x), vt.tensor(w), vt.tensor(b), algo=algo, **case)
    assert_close(got, want, rtol=1e-10, atol=1e-10)


def test_conv2d_generic_fallback_matches_numpy_kernel():
    from volta_core.ops import nn as generic
    x, w = rand(2, 3, 6, 5).astype(np.float32), rand(4, 3, 3, 2, seed=1).astype(np.float32)
    import array_api_compat.numpy as xp
    import volta_numpy.kernels as fast
    kw = dict(stride=(2, 1), pads=(1, 0, 1, 1), dilation=(1, 2), groups=1)
    y1 = generic.conv2d(xp, x, w, **kw)
    y2 = fast.conv2d(xp, x, w, **kw)
    np.testing.assert_allclose(y1, y2, rtol=1e-5, atol=1e-5)
    g = rand(*y1.shape, seed=3).astype(np.float32)
    a = generic.conv2d_backward(xp, g, x, w, x_shape=x.shape, **kw)
    b = fast.conv2d_backward(xp, g, x, w, x_shape=x.shape, **kw)
    for u, v in zip(a, b):
        assert u.dtype == np.float32 and v.dtype == np.float32
        np.testing.assert_allclose(u, v, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_gradcheck(case):
    x, w, b = rand(1, 2, 5, 5), rand(2, 2 // case["groups"], 2, 3, seed=1), rand(2, seed=2)
    check_grad(lambda x, w, b: F.conv2d(x, w, b, **case), x, w, b)


def test_conv2d_double_backward():
    x, w = rand(1, 2, 4, 4), rand(3, 2, 2, 2, seed=1)

    def fn(x, w):
        if not x.requires_grad:  # the numerical pass feeds plain tensors
            x = x.detach().requires_grad_()
        with vt.enable_grad():  # the numerical pass runs under no_grad
            y = F.conv2d(x, w, stride=1, padding=1)
            (gx,) = vt.autograd.grad((y * y).sum(), x, create_graph=True)
        return gx

    check_grad(fn, x, w)


def test_conv2d_same_padding_and_module():
    m = nn.Conv2d(3, 4, (3, 4), padding="same", dtype=vt.float64)
    x = vt.tensor(rand(2, 3, 6, 7))
    assert m(x).shape == (2, 4, 6, 7)
    want = ref_conv2d(rand(2, 3, 6, 7), m.weight.detach().numpy(), m.bias.detach().numpy(),
                      pads=(1, 1, 1, 2))
    assert_close(m(x), want, rtol=1e-10, atol=1e-10)
    assert m(vt.tensor(rand(3, 6, 7))).shape == (4, 6, 7)  # unbatched
    assert "padding='same'" in repr(m)
    nobias = nn.Conv2d(3, 4, 3, bias=False)
    assert nobias.bias is None and [n for n, _ in nobias.named_parameters()] == ["weight"]
    assert "bias=False" in repr(nobias)


def test_conv2d_default_init_bounds():
    vt.manual_seed(0)
    m = nn.Conv2d(4, 8, 3)
    bound = 1 / np.sqrt(4 * 9)
    w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.abs(b).max() <= bound and m.weight.shape == (8, 4, 3, 3)


def test_conv1d_matches_reference_and_gradcheck():
    x, w, b = rand(2, 3, 9), rand(4, 3, 3, seed=1), rand(4, seed=2)
    got = F.conv1d(vt.tensor(x), vt.tensor(w), vt.tensor(b), stride=2, padding=1, dilation=2)
    want = ref_conv2d(x[:, :, None], w[:, :, None], b, (1, 2), (0, 0, 1, 1), (1, 2))[:, :, 0]
    assert_close(got, want, rtol=1e-10, atol=1e-10)
    check_grad(lambda x, w: F.conv1d(x, w, padding="same"), rand(1, 3, 5), rand(2, 3, 3))
    m = nn.Conv1d(3, 5, 2)
    assert m(vt.randn(4, 3, 8)).shape == (4, 5, 7) and m.weight.shape == (5, 3, 2)


@pytest.mark.parametrize("stride,pad,out_pad,dil", [(1, 0, 0, 1), (2, 1, 1, 1), (2, 0, 0, 2)])
def test_conv_transpose2d(stride, pad, out_pad, dil):
    m = nn.ConvTranspose2d(3, 2, 3, stride, pad, out_pad, dilation=dil, dtype=vt.float64)
    assert m.weight.shape == (3, 2, 3, 3)
    x = rand(2, 3, 4, 3)
    want = ref_conv_transpose2d(x, m.weight.detach().numpy(), m.bias.detach().numpy(),
                                stride, pad, out_pad, dil)
    assert_close(m(vt.tensor(x)), want, rtol=1e-10, atol=1e-10)
    check_grad(lambda x, w, b: F.conv_transpose2d(x, w, b, stride, pad, out_pad, 1, dil),
               rand(1, 3, 3, 2), rand(3, 2, 2, 2, seed=1), rand(2, seed=2))


def test_conv_errors_name_the_layer():
    m = nn.Conv2d(3, 4, 3)
    with pytest.raises(vt.ShapeError, match=r"conv2d: expected input with 3 channels"):
        m(vt.randn(1, 5, 8, 8))
    with pytest.raises(vt.ShapeError, match=r"conv2d: expected a 3-D or 4-D"):
        m(vt.randn(8, 8))
    with pytest.raises(vt.ShapeError, match="smaller than the dilated kernel"):
        m(vt.randn(1, 3, 2, 2))
    with pytest.raises(vt.DTypeError, match="conv2d"):
        m(vt.randn(1, 3, 8, 8, dtype="float64"))
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(3, 4, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2d(3, 4, 3, padding_mode="mirror")


@pytest.mark.parametrize("k,s,p,d,ceil", [(2, 2, 0, 1, False), (3, 2, 1, 1, False),
                                          (3, 1, 1, 2, False), (3, 2, 1, 1, True)])
def test_max_pool2d(k, s, p, d, ceil):
    x = rand(2, 3, 7, 6)
    got = F.max_pool2d(vt.tensor(x), k, s, p, d, ceil)
    assert_close(got, ref_pool(x, k, s, p, d, ceil=ceil))
    check_grad(lambda x: F.max_pool2d(x, k, s, p, d, ceil), rand(1, 2, 5, 5, seed=4))


def test_max_pool2d_indices_and_module():
    x = rand(1, 1, 4, 4)
    y, idx = F.max_pool2d(vt.tensor(x), 2, return_indices=True)
    flat = x.reshape(1, 1, 16)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(1, 1, 4),
                                                     2).reshape(1, 1, 2, 2), y.numpy())
    m = nn.MaxPool2d(2)
    assert m(vt.randn(3, 8, 8)).shape == (3, 4, 4)
    assert repr(m).startswith("MaxPool2d(kernel_size=2, stride=2")


def test_max_pool1d():
    x = rand(2, 3, 9)
    want = ref_pool(x[:, :, None], 3, 2, 1)[:, :, 0]
    want = np.stack([np.max(np.pad(x, ((0, 0), (0, 0), (1, 1)), constant_values=-np.inf)
                            [:, :, i * 2:i * 2 + 3], axis=2) for i in range(5)], axis=2)
    assert_close(nn.MaxPool1d(3, 2, 1)(vt.tensor(x)), want)
    check_grad(lambda x: F.max_pool1d(x, 2), rand(1, 2, 6))


@pytest.mark.parametrize("k,s,p,include", [(2, 2, 0, True), (3, 2, 1, True), (3, 2, 1, False)])
def test_avg_pool2d(k, s, p, include):
    x = rand(2, 2, 7, 6)
    if include:
        want = ref_pool(x, k, s, p, fn=np.mean, fill=0.0)
    else:
        ones = ref_pool(np.ones_like(x), k, s, p, fn=np.sum, fill=0.0)
        want = ref_pool(x, k, s, p, fn=np.sum, fill=0.0) / ones
    got = F.avg_pool2d(vt.tensor(x), k, s, p, count_include_pad=include)
    assert_close(got, want, rtol=1e-10, atol=1e-12)
    check_grad(lambda x: F.avg_pool2d(x, k, s, p, count_include_pad=include),
               rand(1, 1, 5, 5))
    assert_close(nn.AvgPool2d(2, divisor_override=1)(vt.tensor(x)),
                 ref_pool(x, 2, 2, 0, fn=np.sum, fill=0.0), rtol=1e-10)


@pytest.mark.parametrize("out", [(2, 3), 1, (3, 3), (None, 2)])
def test_adaptive_avg_pool2d(out):
    x = rand(2, 3, 6, 7)
    oh, ow = (out, out) if isinstance(out, int) else (out[0] or 6, out[1])
    want = np.zeros((2, 3, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, h1 = (i * 6) // oh, -(-((i + 1) * 6) // oh)
            w0, w1 = (j * 7) // ow, -(-((j + 1) * 7) // ow)
            want[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    assert_close(nn.AdaptiveAvgPool2d(out)(vt.tensor(x)), want, rtol=1e-10, atol=1e-12)
    check_grad(lambda x: F.adaptive_avg_pool2d(x, out), rand(1, 1, 6, 7))


def test_pool_errors():
    with pytest.raises(vt.ShapeError, match="max_pool2d: expected a 3-D or 4-D"):
        F.max_pool2d(vt.randn(4, 4), 2)
    with pytest.raises(ValueError, match="at most half"):
        F.max_pool2d(vt.randn(1, 1, 4, 4), 2, padding=2)
    with pytest.raises(vt.ShapeError, match="smaller than the pooling window"):
        nn.MaxPool2d(5)(vt.randn(1, 1, 3, 3))
    with pytest.raises(vt.DTypeError, match="avg_pool2d"):
        F.avg_pool2d(vt.ones(1, 1, 4, 4, dtype="int64"), 2)
