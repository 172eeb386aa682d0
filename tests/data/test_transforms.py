"""Transforms against NumPy, for arrays and tensors, and their seeding."""

from __future__ import annotations

import numpy as np
import pytest
from vt_helpers import assert_close, to_np

import volta_core as vt
from volta_core.data.transforms import (
    Compose,
    Lambda,
    Normalize,
    RandomCrop,
    RandomHorizontalFlip,
    ToTensor,
)


def _img(h: int = 4, w: int = 5, c: int = 3) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 256, size=(h, w, c), dtype=np.uint8)


def test_to_tensor_hwc_uint8_to_chw_float():
    img = _img()
    out = ToTensor()(img)
    assert isinstance(out, vt.Tensor) and out.device == "cpu"
    assert_close(out, img.transpose(2, 0, 1).astype(np.float32) / 255, dtype="float32")
    gray = ToTensor()(img[:, :, 0])
    assert gray.shape == (1, 4, 5)
    f = ToTensor()(np.ones((2, 2, 1), np.float64) * 7)
    assert_close(f, np.full((1, 2, 2), 7.0), dtype="float64")  # not scaled
    with pytest.raises(TypeError, match="NumPy array"):
        ToTensor()(vt.zeros(2, 2, 3))


@pytest.mark.parametrize("as_tensor", [False, True])
def test_normalize_matches_numpy(as_tensor):
    x = np.random.default_rng(1).random((3, 4, 5), dtype=np.float32)
    mean, std = (0.1, 0.2, 0.3), (0.5, 1.0, 2.0)
    ref = (x - np.array(mean, np.float32)[:, None, None]) / np.array(std, np.float32)[:, None,
                                                                                      None]
    out = Normalize(mean, std)(vt.from_numpy(x) if as_tensor else x)
    if as_tensor:
        assert_close(out, ref, rtol=1e-6)
    else:
        np.testing.assert_allclose(out, ref, rtol=1e-6)
    with pytest.raises(ValueError, match="zero"):
        Normalize((0.0,), (0.0,))
    with pytest.raises(ValueError, match="channels"):
        Normalize((0.0, 1.0), (1.0, 1.0))(x)


def test_horizontal_flip_p1_p0_and_seeding():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(RandomHorizontalFlip(1.0)(x), x[..., ::-1])
    assert RandomHorizontalFlip(0.0)(x) is x
    t = RandomHorizontalFlip(1.0)(vt.from_numpy(x))
    assert_close(t, x[..., ::-1])

    def draws():
        vt.manual_seed(123)
        return [bool((RandomHorizontalFlip(0.5)(x) != x).any()) for _ in range(20)]

    a, b = draws(), draws()
    assert a == b and 3 < sum(a) < 17
    vt.manual_seed(0)


def test_random_crop_with_padding_matches_a_numpy_window():
    x = np.arange(2 * 5 * 6, dtype=np.float32).reshape(2, 5, 6)
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1)))
    vt.manual_seed(7)
    outs = [RandomCrop(4, padding=1)(x) for _ in range(10)]
    for out in outs:
        assert out.shape == (2, 4, 4)
        found = any(np.array_equal(out, padded[:, i:i + 4, j:j + 4])
                    for i in range(4) for j in range(5))
        assert found
    vt.manual_seed(7)
    again = [RandomCrop(4, padding=1)(x) for _ in range(10)]
    assert all(np.array_equal(a, b) for a, b in zip(outs, again))
    t = RandomCrop((5, 6))(vt.from_numpy(x))
    assert_close(t, x)
    with pytest.raises(ValueError, match="larger"):
        RandomCrop(9)(x)
    assert RandomCrop(7, pad_if_needed=True)(x).shape == (2, 7, 7)
    vt.manual_seed(0)


def test_compose_and_lambda():
    img = _img(2, 2, 1)
    t = Compose([ToTensor(), Normalize((0.5,), (0.5,)), Lambda(lambda z: z * 2)])
    ref = (img.transpose(2, 0, 1) / 255.0 - 0.5) / 0.5 * 2
    np.testing.assert_allclose(to_np(t(img)), ref, rtol=1e-5, atol=1e-6)
    assert "Normalize" in repr(t)
