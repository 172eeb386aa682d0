"""Dtypes: PyTorch's promotion table, tensor-scalar promotion, conversions, default dtype."""

import numpy as np
import pytest
from vt_helpers import assert_close, to_np

import volta_core as vt

T = vt.tensor
b, u8, i8, i16, i32, i64 = vt.bool, vt.uint8, vt.int8, vt.int16, vt.int32, vt.int64
f16, bf16, f32, f64, u32 = vt.float16, vt.bfloat16, vt.float32, vt.float64, vt.uint32

# torch.promote_types(a, b), written out from PyTorch's table
PROMOTE = [
    (b, b, b), (b, u8, u8), (b, i8, i8), (b, i16, i16), (b, i32, i32), (b, i64, i64),
    (b, f16, f16), (b, bf16, bf16), (b, f32, f32), (b, f64, f64),
    (u8, u8, u8), (u8, i8, i16), (u8, i16, i16), (u8, i32, i32), (u8, i64, i64),
    (u8, f16, f16), (u8, bf16, bf16), (u8, f32, f32), (u8, f64, f64),
    (i8, i8, i8), (i8, i16, i16), (i8, i32, i32), (i8, i64, i64), (i8, f16, f16),
    (i8, bf16, bf16), (i8, f32, f32), (i8, f64, f64),
    (i16, i16, i16), (i16, i32, i32), (i16, i64, i64), (i16, f16, f16), (i16, bf16, bf16),
    (i16, f32, f32), (i16, f64, f64),
    (i32, i32, i32), (i32, i64, i64), (i32, f16, f16), (i32, bf16, bf16), (i32, f32, f32),
    (i32, f64, f64),
    (i64, i64, i64), (i64, f16, f16), (i64, bf16, bf16), (i64, f32, f32), (i64, f64, f64),
    (f16, f16, f16), (f16, bf16, f32), (f16, f32, f32), (f16, f64, f64),
    (bf16, bf16, bf16), (bf16, f32, f32), (bf16, f64, f64),
    (f32, f32, f32), (f32, f64, f64), (f64, f64, f64),
    (u32, u8, u32), (u32, b, u32), (u32, i8, i64), (u32, i16, i64), (u32, i32, i64),
    (u32, i64, i64), (u32, f16, f16), (u32, f32, f32),
]


@pytest.mark.parametrize("a,bb,expected", PROMOTE,
                         ids=[f"{p[0].name}-{p[1].name}" for p in PROMOTE])
def test_promote_types_table(a, bb, expected):
    assert vt.promote_types(a, bb) is expected
    assert vt.promote_types(bb, a) is expected


@pytest.mark.parametrize("a,bb,expected", [p for p in PROMOTE if u32 not in p[:2]],
                         ids=[f"{p[0].name}-{p[1].name}" for p in PROMOTE if u32 not in p[:2]])
def test_tensor_tensor_ops_use_the_table(a, bb, expected):
    x, y = vt.ones(2, dtype=a), vt.ones(2, dtype=bb)
    assert (x * y).dtype is expected
    assert (y + x).dtype is expected


# (tensor dtype, other operand, result of ``tensor + other``) as in PyTorch
SCALAR_CASES = [
    (i32, 2, i32), (i32, 2.5, f32), (u8, 200, u8), (i8, True, i8), (b, 1, i64), (b, True, b),
    (b, 1.5, f32), (f16, 2.5, f16), (bf16, 2, bf16), (f64, 1, f64), (i64, 0.5, f32),
]


@pytest.mark.parametrize("dt,scalar,expected", SCALAR_CASES)
def test_tensor_scalar_promotion(dt, scalar, expected):
    x = vt.ones(3, dtype=dt)
    assert (x + scalar).dtype is expected
    assert (scalar * x).dtype is expected


# (dimensioned dtype, 0-d dtype, result): a 0-d tensor only wins with a higher category
ZERO_DIM_CASES = [
    (i32, f64, f64), (f32, f64, f32), (i8, i64, i8), (u8, i8, u8), (b, f64, f64),
    (i32, b, i32), (f16, f64, f16), (b, i32, i32), (i64, f16, f16),
]


@pytest.mark.parametrize("dim_dt,zero_dt,expected", ZERO_DIM_CASES)
def test_zero_dim_tensor_promotion(dim_dt, zero_dt, expected):
    x, s = vt.ones(3, dtype=dim_dt), vt.ones((), dtype=zero_dt)
    assert (x + s).dtype is expected
    assert (s * x).dtype is expected
    assert (vt.ones((), dtype=dim_dt) + s).dtype is vt.promote_types(dim_dt, zero_dt)


def test_division_of_integers_is_true_division():
    assert_close(T([1, 2, 3]) / 2, [0.5, 1.0, 1.5], dtype="float32")
    assert_close(T([1, 2]) / T([4, 8]), [0.25, 0.25], dtype="float32")


def test_mixed_half_precision_arithmetic():
    x = T([1.5, 2.0], dtype=f16) + T([0.5, 1.0], dtype=bf16)
    assert_close(x, [2.0, 3.0], dtype="float32")
    y = T([1.0, 2.0], dtype=bf16) * 3
    assert_close(y.float(), [3.0, 6.0], dtype="float32")


CONVERSIONS = [("float", "float32"), ("double", "float64"), ("half", "float16"),
               ("bfloat16", "bfloat16"), ("long", "int64"), ("int", "int32"),
               ("short", "int16"), ("char", "int8"), ("byte", "uint8"), ("bool", "bool")]


@pytest.mark.parametrize("method,name", CONVERSIONS)
def test_conversion_methods(method, name):
    x = T([0.0, 1.7, -2.5, 3.0])
    y = getattr(x, method)()
    assert y.dtype.name == name
    ref = np.array([0.0, 1.7, -2.5, 3.0], dtype=np.float32)
    if name == "uint8":
        ref = np.abs(ref)
        y = getattr(T(ref), method)()
    expected = ref.astype(name if name != "bfloat16" else np.float32)
    if name == "bfloat16" or name == "float16":
        np.testing.assert_allclose(to_np(y.float()), expected, rtol=1e-2)
    else:
        np.testing.assert_array_equal(to_np(y), expected)
    assert getattr(y, method)() is y  # already that dtype: no copy


def test_to_dtype_forms():
    x = T([1.5, -2.5])
    assert x.to(vt.float64).dtype is f64
    assert x.to("int32").dtype is i32
    assert x.to(dtype=bf16).dtype is bf16
    assert x.to(int).dtype is i64
    assert x.to(float).dtype is f32
    assert x.to(T([1], dtype=i8)).dtype is i8
    assert x.to(f32) is x
    assert_close(x.to(i64), [1, -2], dtype="int64")  # truncation toward zero
    with pytest.raises((vt.DTypeError, vt.DeviceError), match="float128"):
        x.to("float128")


def test_gradient_flows_through_float_casts():
    x = T([1.0, 2.0], dtype=f64, requires_grad=True)
    y = (x.float() * x.half().float()).sum()
    y.backward()
    assert x.grad.dtype is f64
    assert_close(x.grad, [2.0, 4.0])
    z = T([1.0, 2.0], requires_grad=True)
    (z.bfloat16().double() * 3).sum().backward()
    assert_close(z.grad, [3.0, 3.0], dtype="float32")


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(vt.AutogradError, match="floating-point.*int64"):
        T([1, 2], requires_grad=True)
    with pytest.raises(vt.AutogradError, match="floating-point"):
        vt.zeros(2, dtype=i32, requires_grad=True)
    with pytest.raises(vt.AutogradError, match=r"\.float\(\)"):
        T([1, 2]).requires_grad_()


def test_grad_through_integer_ops_raises():
    x = T([1.5, 2.5], requires_grad=True)
    y = x.long() * 2
    assert not y.requires_grad
    with pytest.raises(vt.AutogradError, match="does not require grad"):
        y.sum().backward()
    for out in (x.argmax(), x > 1, vt.isnan(x), x.round().long()):
        assert not out.requires_grad
        with pytest.raises(vt.AutogradError, match="does not require grad"):
            out.backward()


def test_set_default_dtype_affects_creation():
    assert vt.get_default_dtype() is f32
    vt.set_default_dtype(vt.float64)
    try:
        assert vt.get_default_dtype() is f64
        assert T([1.0, 2.0]).dtype is f64
        assert T(1.5).dtype is f64
        assert T([1, 2]).dtype is i64
        assert T([True]).dtype is b
        for t in (vt.zeros(2), vt.ones(2), vt.empty(2), vt.full((2,), 1.5), vt.rand(2),
                  vt.randn(2), vt.eye(2), vt.linspace(0, 1, 3), vt.arange(0.0, 1.0, 0.5)):
            assert t.dtype is f64
        assert vt.arange(3).dtype is i64
        assert vt.full((2,), 3).dtype is i64
        assert (T([1, 2]) * 0.5).dtype is f64
        assert T([1, 2]).float().dtype is f32  # .float() is always float32
        assert vt.sqrt(T([4])).dtype is f64
    finally:
        vt.set_default_dtype(vt.float32)
    assert T([1.0]).dtype is f32


def test_set_default_dtype_errors():
    with pytest.raises(vt.DTypeError, match="floating"):
        vt.set_default_dtype(vt.int32)
    with pytest.raises(vt.DTypeError, match="unknown dtype"):
        vt.set_default_dtype("float8")
    assert vt.get_default_dtype() is f32


def test_dtype_properties():
    assert f16.is_floating_point and bf16.is_floating_point and not i8.is_floating_point
    assert i8.is_signed and not u8.is_signed and f32.is_signed
    assert (f16.itemsize, bf16.itemsize, i64.itemsize, b.itemsize) == (2, 2, 8, 1)
    assert repr(f32) == "volta.float32"
    import pickle

    assert pickle.loads(pickle.dumps(bf16)) is bf16


HALF_OPS = [
    ("mul_scalar", lambda t: t * 0.5 + 1.0), ("rdiv", lambda t: 1.0 / (t + 3.0)),
    ("gelu", vt.gelu), ("erf", vt.erf), ("silu", vt.silu), ("softplus", vt.softplus),
    ("elu", vt.elu), ("leaky_relu", vt.leaky_relu), ("hardtanh", vt.hardtanh),
    ("softmax", lambda t: vt.softmax(t, -1)), ("log_softmax", lambda t: vt.log_softmax(t, 0)),
    ("logsumexp", lambda t: vt.logsumexp(t, 1)), ("var", lambda t: t.var(1)),
    ("norm3", lambda t: vt.norm(t, 3)), ("clamp", lambda t: t.clamp(-0.3, 0.3)),
    ("matmul", lambda t: t @ t.mT), ("einsum", lambda t: vt.einsum("ij,kj->ik", t, t)),
    ("rsqrt", lambda t: (t.abs() + 1).rsqrt()), ("round", lambda t: t.round(decimals=1)),
    ("prod", lambda t: t.prod(1)), ("nan_to_num", lambda t: vt.nan_to_num(t)),
]


@pytest.mark.parametrize("dt", [f16, bf16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("name,fn", HALF_OPS, ids=[h[0] for h in HALF_OPS])
def test_half_precision_ops_keep_their_dtype(dt, name, fn):
    x = np.array([[0.5, -1.0, 2.0], [0.25, 1.5, -0.75]])
    t = vt.tensor(x, dtype=dt, requires_grad=True)
    out = fn(t)
    assert out.dtype is dt
    out.sum().backward()
    assert t.grad.dtype is dt
    ref = fn(vt.tensor(x, dtype=f32))
    np.testing.assert_allclose(to_np(out.float()), to_np(ref), rtol=3e-2, atol=3e-2)
