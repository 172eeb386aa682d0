"""PyTorch's other spellings (``ops/aliases.py``), the ``new_*`` constructors' keywords and
the signal windows (``ops/windows.py``), against PyTorch on every device."""

from __future__ import annotations

import numpy as np
import pytest
from vt_helpers import assert_matches_torch, available_devices

import volta_core as vt

torch = pytest.importorskip("torch")

DEVICES = available_devices()
X = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], dtype=np.float32)


def _same(want, got, tol=1e-5):
    assert_matches_torch(want, got, rtol=tol, atol=tol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("call", [
    lambda x: x.greater(0), lambda x: x.greater_equal(1), lambda x: x.less(0),
    lambda x: x.less_equal(1), lambda x: x.not_equal(3), lambda x: x.multiply(2),
    lambda x: x.negative(), lambda x: x.dist(x * 0 + 1), lambda x: x.dist(x * 0, 1),
    lambda x: x.hardshrink(2.5), lambda x: x.sum_to_size(1, 3), lambda x: x.sum_to_size((2, 1)),
    lambda x: x[:, :2].det(), lambda x: x[:, :2].inverse(), lambda x: x[:, :2].slogdet()[1],
    lambda x: x[0].vdot(x[1]), lambda x: x.conj(), lambda x: x.resolve_conj(),
    lambda x: x.isreal(), lambda x: x.angle(), lambda x: x.narrow_copy(1, 1, 2),
])
def test_method_spellings_match_pytorch(device, call):
    _same(call(torch.tensor(X)), call(vt.tensor(X, device=device)))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,args", [
    ("gt_", (0.5,)), ("lt_", (0.5,)), ("ge_", (1.0,)), ("le_", (1.0,)), ("eq_", (3.0,)),
    ("ne_", (3.0,)), ("greater_", (0,)), ("tril_", ()), ("triu_", (1,)), ("cumsum_", (1,)),
    ("cumprod_", (0,)), ("nan_to_num_", ()), ("copysign_", (-1.0,)), ("true_divide_", (4.0,)),
    ("hypot_", (np.float32([2.0]),)), ("atan2_", (np.float32([2.0]),)), ("sgn_", ()),
    ("sinc_", ()), ("lgamma_", ()),
    ("xlogy_", (3.0,)), ("logical_and_", (np.float32([1.0, 0.0, 2.0]),)),
    ("logical_xor_", (np.float32([1.0, 0.0, 2.0]),)),
])
def test_in_place_spellings_write_through_views_as_pytorch(device, name, args):
    t, v = torch.tensor(X), vt.tensor(X, device=device)
    getattr(t[1:], name)(*(torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args))
    getattr(v[1:], name)(*(vt.tensor(a, device=device) if isinstance(a, np.ndarray) else a
                           for a in args))
    _same(t, v)


def test_in_place_special_functions_and_float_power():
    a = np.array([0.5, 2.0, 3.5], np.float32)
    for name, args in [("digamma_", ()), ("erfinv_", ()), ("polygamma_", (1,)),
                       ("mvlgamma_", (1,)), ("logit_", (0.1,)), ("ldexp_", (2,))]:
        t, v = torch.tensor(a / 4 if name == "erfinv_" else a), vt.tensor(
            a / 4 if name == "erfinv_" else a)
        targs = tuple(torch.tensor([k]) if name == "ldexp_" else k for k in args)
        vargs = tuple(vt.tensor([k]) if name == "ldexp_" else k for k in args)
        getattr(t, name)(*targs)
        getattr(v, name)(*vargs)
        _same(t, v)
    d = vt.tensor(a.astype(np.float64))
    d.float_power_(2)
    np.testing.assert_allclose(d.numpy(), a.astype(np.float64) ** 2)
    with pytest.raises(vt.VoltaError, match="float64"):
        vt.tensor(a).float_power_(2)


def test_angle_of_reals_and_its_zero_gradient():
    x = np.array([-1.0, 0.0, -0.0, 2.0, np.nan, np.inf, -np.inf], np.float32)
    _same(torch.angle(torch.tensor(x)), vt.angle(vt.tensor(x)))
    _same(torch.angle(torch.tensor([-3, 2])), vt.angle(vt.tensor([-3, 2])))
    d = x.astype(np.float64)
    _same(torch.angle(torch.tensor(d)), vt.angle(vt.tensor(d)), tol=0)
    t, v = torch.tensor(x[:4], requires_grad=True), vt.tensor(x[:4], requires_grad=True)
    torch.angle(t).sum().backward()
    vt.angle(v).sum().backward()
    _same(t.grad, v.grad)


def test_deprecated_spellings_cholesky_qr_range():
    a = np.array([[4.0, 2.0], [2.0, 3.0]], np.float32)
    for upper in (False, True):
        _same(torch.cholesky(torch.tensor(a), upper=upper), vt.cholesky(vt.tensor(a), upper=upper))
    for some in (True, False):
        b = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
        q, r = torch.tensor(b).qr(some=some)
        vq, vr = vt.tensor(b).qr(some=some)
        assert tuple(vq.shape) == tuple(q.shape) and tuple(vr.shape) == tuple(r.shape)
        np.testing.assert_allclose((vq @ vr).numpy(), b, atol=1e-5)
    for args in [(1, 4), (0, 1, 0.25), (-1.5, 2.5, 0.5), (5, 1, -1)]:
        _same(torch.range(*args), vt.range(*args))


@pytest.mark.parametrize("device", DEVICES)
def test_new_constructors_take_device_and_requires_grad(device):
    x = vt.tensor(X)
    for t in (x.new_zeros(2, 3, device=device), x.new_ones((2,), device=device),
              x.new_empty([3], device=device), x.new_full((2,), 7.0, device=device),
              x.new_tensor([1.0, 2.0], device=device)):
        assert t.device == vt.device(device) and t.dtype == vt.float32
    assert x.new_zeros(2, requires_grad=True).requires_grad
    assert x.new_tensor([1], dtype=vt.int64).dtype == vt.int64
    assert x.ndimension() == 2 and x.nelement() == 6 and x.element_size() == 4
    assert x.get_device() == -1 and not x.is_complex()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window",
                                  "bartlett_window"])
def test_windows_match_pytorch(device, name):
    for n in (0, 1, 2, 5, 8):
        for periodic in (True, False):
            _same(getattr(torch, name)(n, periodic=periodic),
                  getattr(vt, name)(n, periodic=periodic, device=device))
    _same(getattr(torch, name)(7, dtype=torch.float64), getattr(vt, name)(7, dtype=vt.float64))
    _same(torch.hamming_window(9, True, 0.5, 0.3), vt.hamming_window(9, True, 0.5, 0.3))
