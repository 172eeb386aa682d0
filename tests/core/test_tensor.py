"""Tensor creation, properties, conversion and repr."""

import warnings

import numpy as np
import pytest
from vt_helpers import assert_close

import volta_core as vt
from volta_core.errors import AutogradError, DTypeError


def test_tensor_infers_dtypes_like_pytorch():
    assert vt.tensor([1.0, 2.0]).dtype is vt.float32
    assert vt.tensor([1, 2]).dtype is vt.int64
    assert vt.tensor([True, False]).dtype is vt.bool
    assert vt.tensor([[1, 2.5]]).dtype is vt.float32
    assert vt.tensor(3.0).shape == () and vt.tensor(3.0).ndim == 0
    assert vt.tensor([]).shape == (0,) and vt.tensor([]).dtype is vt.float32
    assert vt.tensor(np.ones(3, dtype=np.float64)).dtype is vt.float64
    assert vt.tensor([1, 2], dtype=vt.float64).dtype is vt.float64
    assert vt.tensor([1, 2], dtype="int32").dtype is vt.int32


@pytest.mark.parametrize("make", [
    lambda: np.float64(1.7), lambda: [np.float64(1.7), 2.0], lambda: [np.float32(1.5)],
    lambda: [np.int32(3)], lambda: [1, np.float32(2.0)], lambda: [[np.float64(1.0)], [2.0]],
    lambda: [np.float16(1.5), 2.0], lambda: [np.int32(1), 2], lambda: [np.uint8(1), np.int8(2)],
    lambda: [np.uint8(3), True], lambda: [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
    lambda: [np.array([1.0], dtype=np.float32), [3.0]], lambda: [[], []],
])
def test_tensor_infers_numpy_scalars_and_mixed_sequences_like_pytorch(make):
    """NumPy scalars keep their dtype (np.float64 is a Python float, yet float64, as in
    PyTorch) and a sequence takes the promotion of its elements' dtypes."""
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():  # PyTorch: a list of arrays is slow
        warnings.simplefilter("ignore", UserWarning)
        got, want = vt.tensor(make()), torch.tensor(make())
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
    t64 = vt.tensor([vt.tensor(1.0, dtype=vt.float64), 2.0])  # a tensor element's dtype
    assert t64.dtype is vt.float64 and t64.tolist() == [1.0, 2.0]


def test_tensor_copies_but_from_numpy_and_as_tensor_share():
    a = np.arange(4.0)
    t, s, u = vt.tensor(a), vt.from_numpy(a), vt.as_tensor(a)
    a[0] = 100.0
    assert t.tolist()[0] == 0.0
    assert s.tolist()[0] == 100.0 and u.tolist()[0] == 100.0
    assert s.numpy() is a or np.shares_memory(s.numpy(), a)


@pytest.mark.parametrize("fn,ref", [(vt.zeros, np.zeros), (vt.ones, np.ones)])
def test_zeros_ones(fn, ref):
    assert_close(fn(2, 3), ref((2, 3), dtype=np.float32), dtype="float32")
    assert_close(fn((2, 3), dtype=vt.int64), ref((2, 3), dtype=np.int64), dtype="int64")
    assert fn(0).shape == (0,) and fn().shape == ()


def test_full_empty_arange_linspace_eye():
    assert_close(vt.full((2, 2), 7), np.full((2, 2), 7), dtype="int64")
    assert_close(vt.full((2,), 0.5), np.full(2, 0.5, dtype=np.float32), dtype="float32")
    assert vt.empty(3, 4).shape == (3, 4)
    assert_close(vt.arange(5), np.arange(5), dtype="int64")
    assert_close(vt.arange(1, 2, 0.25), np.arange(1, 2, 0.25, dtype=np.float32))
    assert_close(vt.linspace(0, 1, 5), np.linspace(0, 1, 5, dtype=np.float32))
    assert_close(vt.eye(3), np.eye(3, dtype=np.float32))
    assert_close(vt.eye(2, 3, dtype="float64"), np.eye(2, 3))


def test_like_functions_keep_shape_dtype_device():
    x = vt.ones(2, 3, dtype="float64")
    for fn in (vt.zeros_like, vt.ones_like, vt.empty_like, vt.rand_like, vt.randn_like):
        y = fn(x)
        assert (y.shape, y.dtype, y.device) == (x.shape, x.dtype, x.device)
    assert vt.full_like(x, 3.0).tolist() == [[3.0] * 3] * 2
    assert vt.zeros_like(x, dtype=vt.int32).dtype is vt.int32
    r = vt.randint_like(vt.zeros(5, dtype="int64"), 0, 3)
    assert r.dtype is vt.int64 and set(r.tolist()) <= {0, 1, 2}


def test_random_functions_are_seeded_and_distributed():
    vt.manual_seed(123)
    a = vt.rand(1000)
    b = vt.randn(1000)
    c = vt.randint(0, 10, (1000,))
    vt.manual_seed(123)
    assert vt.rand(1000).tolist() == a.tolist()
    assert vt.randn(1000).tolist() == b.tolist()
    assert vt.randint(0, 10, (1000,)).tolist() == c.tolist()
    an, bn, cn = a.numpy(), b.numpy(), c.numpy()
    assert 0 <= an.min() and an.max() < 1 and abs(an.mean() - 0.5) < 0.05
    assert abs(bn.mean()) < 0.1 and abs(bn.std() - 1) < 0.1
    assert set(cn.tolist()) == set(range(10)) and c.dtype is vt.int64
    assert vt.randint(5, size=(3,)).tolist() != [] and a.dtype is vt.float32
    assert sorted(vt.randperm(6).tolist()) == list(range(6))
    with pytest.raises(DTypeError, match="rand: expected a floating dtype"):
        vt.rand(2, dtype="int64")


def test_properties_and_conversions():
    x = vt.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.shape == (2, 3) and x.size() == (2, 3) and x.size(1) == 3
    assert x.ndim == 2 and x.dim() == 2 and x.numel() == 6 and len(x) == 2
    assert x.device == "cpu" and x.dtype is vt.float32
    assert x.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert vt.tensor([[2.5]]).item() == 2.5 and isinstance(vt.tensor(3).item(), int)
    assert float(vt.tensor(1.5)) == 1.5 and int(vt.tensor(7)) == 7
    assert isinstance(x.numpy(), np.ndarray)
    with pytest.raises(ValueError, match="item\\(\\): a tensor with 6 elements"):
        x.item()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(x)
    with pytest.raises(AutogradError, match=r"detach\(\).numpy\(\)"):
        vt.ones(2, requires_grad=True).numpy()


def test_to_dtype_and_device_and_cpu():
    x = vt.tensor([1.5, 2.5], requires_grad=True)
    y = x.to(vt.float64)
    assert y.dtype is vt.float64 and y.requires_grad
    assert x.to("float32") is x and x.to("cpu") is x and x.cpu() is x
    assert x.to("cpu", vt.float64).dtype is vt.float64
    assert x.to(dtype=vt.int64).tolist() == [1, 2]
    assert x.to(vt.zeros(1, dtype="float64")).dtype is vt.float64
    (y * 2).sum().backward()
    assert x.grad.dtype is vt.float32 and x.grad.tolist() == [2.0, 2.0]


def test_repr_is_readable():
    assert repr(vt.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(vt.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(vt.tensor([1.0], dtype="float64")) == "tensor([1.], dtype=volta.float64)"
    assert repr(vt.ones(1, requires_grad=True)) == "tensor([1.], requires_grad=True)"
    assert "grad_fn=<MulBackward>" in repr(vt.ones(1, requires_grad=True) * 2)
    r = repr(vt.zeros(2, 2))
    assert r == "tensor([[0., 0.],\n        [0., 0.]])", r
    assert repr(vt.float32) == "volta.float32"


def test_default_dtype_is_settable():
    vt.set_default_dtype(vt.float64)
    try:
        assert vt.tensor([1.0]).dtype is vt.float64 and vt.zeros(1).dtype is vt.float64
        assert vt.get_default_dtype() is vt.float64
    finally:
        vt.set_default_dtype(vt.float32)
    with pytest.raises(DTypeError, match="floating"):
        vt.set_default_dtype(vt.int32)


def test_creation_errors():
    with pytest.raises(TypeError, match="cannot make a tensor from object"):
        vt.tensor(object())
    with pytest.raises(ValueError, match="sizes must be non-negative"):
        vt.zeros(-1)
    with pytest.raises(DTypeError, match="unknown dtype"):
        vt.zeros(1, dtype="complex512")


def test_multinomial_frequencies_and_without_replacement():
    vt.manual_seed(0)
    p = vt.tensor([0.1, 0.0, 0.6, 0.3])
    draws = vt.multinomial(p, 20000, replacement=True)
    assert draws.dtype is vt.int64 and draws.shape == (20000,)
    freq = np.bincount(draws.numpy(), minlength=4) / 20000
    np.testing.assert_allclose(freq, [0.1, 0.0, 0.6, 0.3], atol=0.02)
    rows = vt.multinomial(vt.ones(3, 5), 5)
    assert sorted(rows[1].tolist()) == [0, 1, 2, 3, 4]  # a permutation per row
    assert set(vt.multinomial(p, 3).tolist()) == {0, 2, 3}  # never the zero-weight class
    with pytest.raises(ValueError, match="without replacement"):
        vt.multinomial(p, 5)


def test_bool_and_integer_operators_and_hook_handles():
    a, b = vt.tensor([True, False]), vt.tensor([True, True])
    assert (a & b).tolist() == [True, False] and (a | b).tolist() == [True, True]
    assert (a ^ b).tolist() == [False, True] and (~a).tolist() == [False, True]
    assert (vt.tensor([6, 3]) & 5).tolist() == [4, 1] and (~vt.tensor([1])).tolist() == [-2]
    with pytest.raises(TypeError, match="bool and integer"):
        vt.ones(2) & vt.ones(2)
    x = vt.ones(2, requires_grad=True)
    handle = x.register_hook(lambda g: g * 10)
    handle.remove()
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_to_with_an_unknown_dtype_name_is_a_dtype_error():
    with pytest.raises(DTypeError, match="unknown dtype 'float128'"):
        vt.ones(2).to("float128")


def test_data_has_its_own_version_counter_but_detach_shares():
    x = vt.ones(2, requires_grad=True)
    y = x * 1
    assert x.data._version is not x._version
    assert y.detach()._version is y._version
    assert np.shares_memory(x.data.numpy(), x.detach().numpy())
