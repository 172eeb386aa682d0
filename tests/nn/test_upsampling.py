"""Upsample / interpolate and pixel (un)shuffle against NumPy references."""

from __future__ import annotations

import math

import numpy as np
import pytest
from vt_helpers import assert_close, check_grad, rand

import volta_core as vt
import volta_core.nn.functional as F
from volta_core import nn

# -- NumPy references ------------------------------------------------------------------------


def np_pixel_shuffle(x, r):
    n, c, h, w = x.shape
    out = np.zeros((n, c // (r * r), h * r, w * r))
    for ch in range(c // (r * r)):
        for i in range(r):
            for j in range(r):
                out[:, ch, i::r, j::r] = x[:, ch * r * r + i * r + j]
    return out


def np_nearest(x, out_hw, scales, exact=False):
    h, w = x.shape[-2:]
    off = 0.5 if exact else 0.0
    rows = [min(int(math.floor((i + off) * scales[0])), h - 1) for i in range(out_hw[0])]
    cols = [min(int(math.floor((j + off) * scales[1])), w - 1) for j in range(out_hw[1])]
    return x[..., rows, :][..., cols]


def _src(i, n_in, n_out, scale, align, cubic=False):
    if align:
        return i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    s = (i + 0.5) * scale - 0.5
    return s if cubic else max(s, 0.0)


def np_bilinear(x, out_hw, scales, align):
    h, w = x.shape[-2:]
    out = np.zeros(x.shape[:-2] + tuple(out_hw))
    for i in range(out_hw[0]):
        sy = _src(i, h, out_hw[0], scales[0], align)
        y0 = int(math.floor(sy))
        y1, ly = min(y0 + 1, h - 1), sy - y0
        for j in range(out_hw[1]):
            sx = _src(j, w, out_hw[1], scales[1], align)
            x0 = int(math.floor(sx))
            x1, lx = min(x0 + 1, w - 1), sx - x0
            out[..., i, j] = ((1 - ly) * ((1 - lx) * x[..., y0, x0] + lx * x[..., y0, x1])
                              + ly * ((1 - lx) * x[..., y1, x0] + lx * x[..., y1, x1]))
    return out


def _cubic(t, a=-0.75):
    t = abs(t)
    if t <= 1:
        return (a + 2) * t ** 3 - (a + 3) * t ** 2 + 1
    if t < 2:
        return a * t ** 3 - 5 * a * t ** 2 + 8 * a * t - 4 * a
    return 0.0


def np_bicubic(x, out_hw, scales, align):
    h, w = x.shape[-2:]
    out = np.zeros(x.shape[:-2] + tuple(out_hw))
    for i in range(out_hw[0]):
        sy = _src(i, h, out_hw[0], scales[0], align, cubic=True)
        y0 = int(math.floor(sy))
        for j in range(out_hw[1]):
            sx = _src(j, w, out_hw[1], scales[1], align, cubic=True)
            x0 = int(math.floor(sx))
            acc = 0.0
            for dy in range(-1, 3):
                for dx in range(-1, 3):
                    yy, xx = min(max(y0 + dy, 0), h - 1), min(max(x0 + dx, 0), w - 1)
                    acc = acc + _cubic(sy - (y0 + dy)) * _cubic(sx - (x0 + dx)) * x[..., yy, xx]
            out[..., i, j] = acc
    return out


# -- pixel shuffle ---------------------------------------------------------------------------


def test_pixel_shuffle_and_unshuffle():
    x = rand(2, 8, 3, 4, seed=1)
    y = nn.PixelShuffle(2)(vt.tensor(x))
    assert_close(y, np_pixel_shuffle(x, 2))
    assert_close(nn.PixelUnshuffle(2)(y), x)
    assert_close(F.pixel_shuffle(vt.tensor(x[0]), 2), np_pixel_shuffle(x[:1], 2)[0])
    z = rand(2, 1, 2, 9, 3, seed=2)  # extra leading dims
    assert F.pixel_unshuffle(vt.tensor(z), 3).shape == (2, 1, 18, 3, 1)
    assert repr(nn.PixelShuffle(3)) == "PixelShuffle(upscale_factor=3)"


def test_pixel_shuffle_gradcheck():
    check_grad(lambda x: F.pixel_shuffle(x, 2), rand(1, 4, 2, 3, seed=3))
    check_grad(lambda x: F.pixel_unshuffle(x, 2), rand(1, 2, 4, 2, seed=4))


def test_pixel_shuffle_errors():
    with pytest.raises(vt.ShapeError, match=r"pixel_shuffle.*\(1, 6, 2, 2\).*4"):
        nn.PixelShuffle(2)(vt.zeros(1, 6, 2, 2))
    with pytest.raises(vt.ShapeError, match="pixel_unshuffle.*divisible"):
        nn.PixelUnshuffle(2)(vt.zeros(1, 1, 3, 4))
    with pytest.raises(vt.ShapeError, match="pixel_shuffle.*3 dims"):
        F.pixel_shuffle(vt.zeros(4, 4), 2)


# -- interpolate -----------------------------------------------------------------------------

SIZES = [dict(size=(7, 9)), dict(size=(2, 3)), dict(scale_factor=2),
         dict(scale_factor=(1.5, 0.6)), dict(scale_factor=1.7, recompute_scale_factor=True)]


def _expected_size_and_scales(x, kw):
    h, w = x.shape[-2:]
    if "size" in kw:
        out = kw["size"]
        return out, (h / out[0], w / out[1])
    f = kw["scale_factor"]
    f = (f, f) if not isinstance(f, tuple) else f
    out = (int(math.floor(h * f[0])), int(math.floor(w * f[1])))
    if kw.get("recompute_scale_factor"):
        return out, (h / out[0], w / out[1])
    return out, (1 / f[0], 1 / f[1])


@pytest.mark.parametrize("kw", SIZES)
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_nearest(kw, mode):
    x = rand(2, 3, 4, 5, seed=5)
    out, scales = _expected_size_and_scales(x, kw)
    got = nn.Upsample(mode=mode, **kw)(vt.tensor(x))
    assert_close(got, np_nearest(x, out, scales, exact=mode == "nearest-exact"))


@pytest.mark.parametrize("kw", SIZES)
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_bilinear_and_bicubic(kw, align, mode):
    x = rand(2, 2, 4, 5, seed=6)
    out, scales = _expected_size_and_scales(x, kw)
    got = F.interpolate(vt.tensor(x), mode=mode, align_corners=align, **kw)
    ref = (np_bilinear if mode == "bilinear" else np_bicubic)(x, out, scales, align)
    assert_close(got, ref, 1e-10, 1e-10)


def test_linear_1d_and_trilinear_shape():
    x = rand(2, 3, 5, seed=7)
    got = F.interpolate(vt.tensor(x), size=8, mode="linear", align_corners=True)
    ref = np_bilinear(x[:, :, None, :], (1, 8), (1.0, 5 / 8), True)[:, :, 0]
    assert_close(got, ref, 1e-10, 1e-10)
    x3 = vt.tensor(rand(1, 2, 2, 3, 4, seed=8))
    assert F.interpolate(x3, scale_factor=2, mode="trilinear").shape == (1, 2, 4, 6, 8)
    assert F.interpolate(x3, size=(3, 3, 3)).shape == (1, 2, 3, 3, 3)


def test_area_is_adaptive_average():
    x = rand(2, 2, 7, 5, seed=11)
    got = F.interpolate(vt.tensor(x), size=(3, 4), mode="area")
    ref = np.zeros((2, 2, 3, 4))
    for i in range(3):
        r0, r1 = (i * 7) // 3, -((-(i + 1) * 7) // 3)
        for j in range(4):
            c0, c1 = (j * 5) // 4, -((-(j + 1) * 5) // 4)
            ref[:, :, i, j] = x[:, :, r0:r1, c0:c1].mean(axis=(-1, -2))
    assert_close(got, ref, 1e-10, 1e-10)
    check_grad(lambda t: F.interpolate(t, size=2, mode="area"), rand(1, 1, 3, 5, seed=12))


def test_upsampling_shorthands_and_float32():
    x = rand(1, 2, 3, 3, seed=9).astype(np.float32)
    got = nn.UpsamplingBilinear2d(scale_factor=2)(vt.tensor(x))
    assert got.dtype is vt.float32
    assert_close(got, np_bilinear(x.astype(np.float64), (6, 6), (0.5, 0.5), True), 1e-6, 1e-6)
    got = nn.UpsamplingNearest2d(size=5)(vt.tensor(x))
    assert_close(got, np_nearest(x, (5, 5), (3 / 5, 3 / 5)))


def test_nearest_keeps_infinities_local():
    x = np.array([[[[np.inf, 1.0], [2.0, 3.0]]]])
    got = F.interpolate(vt.tensor(x), scale_factor=2).numpy()
    assert np.isinf(got[0, 0, :2, :2]).all() and np.isfinite(got[0, 0, 2:]).all()


@pytest.mark.parametrize("mode,kw", [("nearest", {}), ("bilinear", {"align_corners": False}),
                                     ("bicubic", {"align_corners": True})])
def test_interpolate_gradcheck(mode, kw):
    check_grad(lambda x: F.interpolate(x, size=(3, 5), mode=mode, **kw), rand(1, 2, 2, 3, seed=10))


def test_interpolate_errors():
    x = vt.zeros(1, 2, 3, 3)
    with pytest.raises(vt.ShapeError, match=r"Upsample.*bilinear.*2 spatial.*\(1, 2, 3\)"):
        nn.Upsample(scale_factor=2, mode="bilinear")(vt.zeros(1, 2, 3))
    with pytest.raises(vt.ShapeError, match="interpolate.*3-D, 4-D or 5-D"):
        F.interpolate(vt.zeros(3, 3), size=4)
    with pytest.raises(ValueError, match="exactly one of size and scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="unknown mode"):
        F.interpolate(x, size=4, mode="area2")
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(x, size=4, align_corners=True)
    with pytest.raises(vt.ShapeError, match="size .* 3 entries .* 2 spatial"):
        F.interpolate(x, size=(4, 4, 4))
    with pytest.raises(vt.DTypeError, match="interpolate.*floating"):
        F.interpolate(vt.zeros(1, 1, 2, 2, dtype=vt.int64), size=4)
