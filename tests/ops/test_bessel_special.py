"""``vt.special``'s Bessel and Airy functions without gradients (``bessel_j0``/``j1``,
``bessel_y0``/``y1``, ``modified_bessel_i0``/``i1``/``k0``/``k1``,
``scaled_modified_bessel_k0``/``k1``, ``airy_ai``) against mpmath (the truth: float64 on
every method's range, the switches between them, the zeros, tiny and huge arguments) and
PyTorch (values, dtypes, edge values, no gradient), on every device.

PyTorch's own values are off in places, where Volta is closer to mpmath (tested):
its ``J0``/``J1``/``Y0``/``Y1`` by up to ~2e-6 between 2 and 25 and, from ~1e15, in the
phase (``J0(1e300)`` is -4.6e-151, not -7.9e-151), ``airy_ai`` by up to ~4e-6 between -5
and -2 and in the phase for large negative ``x``, and 0 from 103.9 where ``Ai`` is
subnormal; ``K0(5e-324)`` is inf (744.4) and ``K1`` NaN (inf: ``1/x`` overflows); its
float32 kernels lose the phase of large arguments (compared with its float64 ones); at the
infinities its ``J``, ``Y``, ``I`` and ``Ai`` are NaN where Volta gives the limits (0, or
+-inf for ``I``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vt_helpers import available_devices, device_has

import volta_core as vt

torch = pytest.importorskip("torch")
mpmath = pytest.importorskip("mpmath")
# NumPy's warnings where IEEE arithmetic gives inf or NaN (log(0), overflow to inf in the
# casts): those edges are what these tests are about
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DEVICES = available_devices()
OSCILLATING = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"]
NAMES = OSCILLATING + ["modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
                       "modified_bessel_k1", "scaled_modified_bessel_k0",
                       "scaled_modified_bessel_k1", "airy_ai"]
POSITIVE_ONLY = {"bessel_y0", "bessel_y1", "modified_bessel_k0", "modified_bessel_k1",
                 "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"}


def _mp_value(name: str, x: float) -> float:
    """mpmath's value (40 digits) rounded to float64; NaN outside the domain."""
    if math.isnan(x) or (name in POSITIVE_ONLY and x < 0):
        return math.nan
    mpmath.mp.dps = 40
    v = mpmath.mpf(x)
    if name == "airy_ai":
        out = mpmath.airyai(v)
    elif name.startswith("bessel_"):
        out = (mpmath.besselj if name[7] == "j" else mpmath.bessely)(int(name[8]), v)
    elif name.startswith("modified_bessel_i"):
        out = mpmath.besseli(int(name[-1]), v)
    else:
        out = mpmath.besselk(int(name[-1]), v)
        if name.startswith("scaled"):
            out = out * mpmath.exp(v)
    return float(out)


def _scale(name: str, x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """What an error is measured against: the value, or for the oscillating functions the
    envelope where it is larger (near a zero only absolute accuracy is meaningful)."""
    scale = np.abs(ref)
    with np.errstate(divide="ignore", invalid="ignore"):
        if name in OSCILLATING:
            scale = np.maximum(scale, np.minimum(1.0, np.abs(x) ** -0.5))
        elif name == "airy_ai":
            scale = np.maximum(scale, np.where(x < 0, np.minimum(1.0, np.abs(x) ** -0.25), 0))
    return scale


def _assert_close(name: str, x: np.ndarray, got: np.ndarray, ref: np.ndarray, tol: float,
                  device: str) -> None:
    """``got`` (of ``x``'s dtype) against a float64 reference: NaN where it is NaN, the
    same infinities and zeros where it overflows or is 0 in the dtype, else within ``tol``
    of :func:`_scale` (at least the dtype's smallest normal: subnormal results are 1 ulp
    of it). On a GPU results below the smallest normal are flushed to zero, and in float32
    alone ``I0 = exp(x) i0e(x)`` overflows with ``exp(x)`` from 88.7, where ``I0`` is
    1/24 of float32's largest (as PyTorch's float32): neither compared."""
    dt = x.dtype
    tiny, big = np.finfo(dt).tiny, np.finfo(dt).max
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref), err_msg=name)
    keep = ~np.isnan(ref)
    if device != "cpu":
        keep &= np.abs(ref) >= tiny
        if dt == np.float32:
            keep &= np.abs(ref) < big / 100
    exact = keep & (~np.isfinite(ref.astype(dt)) | (ref.astype(dt) == 0))
    np.testing.assert_array_equal(got[exact], ref[exact].astype(dt), err_msg=name)
    keep &= ~exact
    err = np.abs(got[keep] - ref[keep]) / np.maximum(_scale(name, x[keep].astype(float),
                                                             ref[keep]), tiny)
    assert err.size == 0 or err.max() <= tol, (name, err.max(), x[keep][np.argmax(err)])


def _zeros() -> list[float]:
    """The first zeros of J0, J1, Y0, Y1 and Ai, some far ones, and their neighbours."""
    mpmath.mp.dps = 30
    out = []
    for k in (1, 2, 3, 5, 8, 20, 100, 1000):
        for z in (mpmath.besseljzero(0, k), mpmath.besseljzero(1, k),
                  mpmath.besselyzero(0, k), mpmath.besselyzero(1, k)):
            out += [float(z), float(np.nextafter(float(z), np.inf))]
    for k in (1, 2, 4, 9, 20, 60):
        z = float(mpmath.airyaizero(k))
        out += [z, float(np.nextafter(z, -np.inf))]
    return out


def _points() -> np.ndarray:
    rng = np.random.default_rng(5)
    # the switches: series / Taylor / asymptotic at 3.5 and 25 (J, Y), 1 and 25 (K),
    # 12 (Ai), the Taylor nodes' boundaries, and the existing i0/i1 switch at 25
    switches = [1.0, 3.5, 4.5, 12.0, 24.5, 25.0, 11.75, 0.25, 0.75]
    near = [s * f for s in switches for f in (1 - 2e-16, 1.0, 1 + 2e-16, -1.0)]
    return np.concatenate([
        rng.uniform(-30, 30, 240), 10 ** rng.uniform(-8, 2, 60), -(10 ** rng.uniform(-8, 2, 60)),
        10 ** rng.uniform(2, 8, 40), -(10 ** rng.uniform(2, 6, 20)),
        near, _zeros(), [1e-300, 5e-324, -1e-300, 1e12, 1e15, 1e100, 1.7e308, 700.0, 740.0,
                          104.0, 0.5]])


POINTS = _points()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_float64_matches_mpmath(device, name):
    """About 1e-15 relative (or of the envelope near the zeros) on every range; the
    Airy function's results below 2e-308 (from x = 104) are subnormal, so relative to
    the smallest normal. A device without float64 is checked in float32 (a GPU's own
    exp/sin/cos: ~5e-6)."""
    f64 = device_has(device, "float64")
    dt = "float64" if f64 else "float32"
    x = POINTS.astype(dt)
    if not f64:
        x = x[np.abs(x) < 1e4]  # a GPU's float32 sin/cos: phases of |x| up to 1e4
    ref = np.array([_mp_value(name, float(v)) for v in x])
    got = getattr(vt.special, name)(vt.tensor(x, device=device)).cpu().numpy()
    _assert_close(name, x, got, ref, 2e-15 if f64 else 5e-6, device)


@pytest.mark.parametrize("device", DEVICES)
def test_float32_is_the_float64_value_rounded(device):
    """Where the device has float64, float32 computes in it and rounds once (the CPU bit
    for bit; a GPU converts float64 to float32 flushing subnormals, so there 1 ulp)."""
    if not device_has(device, "float64"):
        pytest.skip(f"{device} has no float64")
    x = POINTS.astype(np.float32)
    for name in NAMES:
        want = getattr(vt.special, name)(vt.tensor(x.astype(np.float64), device=device))
        got = getattr(vt.special, name)(vt.tensor(x, device=device))
        assert got.dtype == vt.float32
        w = want.cpu().numpy().astype(np.float32)
        g = got.cpu().numpy()
        if device == "cpu":
            np.testing.assert_array_equal(g, w, err_msg=name)
        else:
            normal = np.abs(w) >= np.finfo(np.float32).tiny
            np.testing.assert_array_max_ulp(g[normal], w[normal], maxulp=1)


def test_node_tables_are_mpmath_values():
    """The Taylor series' starting values (computed in 70-digit decimal arithmetic at
    first use) are the correctly rounded values."""
    from volta_core.ops import bessel

    mpmath.mp.dps = 40
    j0, j1, y0, y1 = bessel._jy_table()
    for i, n in enumerate(bessel._JY_NODES):
        assert (j0[i], j1[i]) == (float(mpmath.besselj(0, n)), float(mpmath.besselj(1, n)))
        assert (y0[i], y1[i]) == (float(mpmath.bessely(0, n)), float(mpmath.bessely(1, n)))
    ai, dai = bessel._airy_table()
    for i, n in enumerate(bessel._AIRY_NODES):
        x = mpmath.mpf(n) / 2
        assert (ai[i], dai[i]) == (float(mpmath.airyai(x)), float(mpmath.airyai(x, 1)))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_values_match_torch(device, name):
    """Where PyTorch is accurate (|x| up to 1e6) within its own error: ~2e-6 of the
    envelope for J/Y between 2 and 25 and for Ai between -5 and -2, ~1e-13 elsewhere.
    float32 against PyTorch's float64 kernels on the same inputs: its float32 ones lose
    the phase of large arguments (``J0(757525)`` off by 2e-2, ``Ai(-499450)`` by 10x)."""
    f64 = device_has(device, "float64")
    dt = "float64" if f64 else "float32"
    x = np.concatenate([np.linspace(-60, 60, 2401), 10 ** np.linspace(-6, 6, 200),
                        -(10 ** np.linspace(-6, 6, 200))]).astype(dt)
    if not f64:
        x = x[np.abs(x) < 1e4]  # a GPU's float32 sin/cos: phases of |x| up to 1e4
    want = getattr(torch.special, name)(torch.tensor(x.astype(np.float64))).numpy()
    got = getattr(vt.special, name)(vt.tensor(x, device=device)).cpu().numpy()
    assert got.dtype == x.dtype
    if name == "airy_ai":  # PyTorch's is 0 from 103.9, where Ai is subnormal (Volta's)
        keep = ~((want == 0) & (np.abs(got) < np.finfo(dt).tiny))
        x, got, want = x[keep], got[keep], want[keep]
    tol = 5e-6 if (name in OSCILLATING or name == "airy_ai") else (1e-13 if f64 else 5e-6)
    _assert_close(name, x, got, want, tol, device)


@pytest.mark.parametrize("name", OSCILLATING + ["airy_ai"])
def test_closer_to_mpmath_than_torch_where_torch_is_off(name):
    """PyTorch's J/Y lose up to ~2e-6 between 2 and 25 and its Ai up to ~4e-6 between -5
    and -2 (and both their phase for large |x|); Volta stays at ~1e-15 there."""
    lo, hi = (-5.0, -2.0) if name == "airy_ai" else (2.0, 25.0)
    x = np.concatenate([np.linspace(lo, hi, 301), [-800.0 if name == "airy_ai" else 1e300]])
    ref = np.array([_mp_value(name, float(v)) for v in x])
    scale = _scale(name, x, ref)
    theirs = np.abs(getattr(torch.special, name)(torch.tensor(x)).numpy() - ref) / scale
    ours = np.abs(getattr(vt.special, name)(vt.tensor(x)).numpy() - ref) / scale
    assert theirs[:-1].max() > 1e-7  # PyTorch's error, as measured (torch 2.x, CPU)
    assert theirs[-1] > 1e-13 and ours[-1] < 1e-15  # the phase at 1e300 (J, Y), -800 (Ai)
    assert ours.max() < 2e-15


EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -3.0, 30.0, -30.0, 1e-300, -1e-300, 1e-310, 5e-324,
         800.0, -800.0, 1e5, math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_edge_values_match_torch_but_the_limits(device, name):
    """Zeros (with their sign), negative numbers (NaN for Y and K, as PyTorch), NaN, the
    infinities; where PyTorch is NaN at an infinity or off at the smallest subnormal, the
    limit or mpmath's value (deliberate, see the module docstring)."""
    dt = "float64" if device_has(device, "float64") else "float32"
    x = np.array(EDGES, dtype=dt)
    want = getattr(torch.special, name)(torch.tensor(x.astype(np.float64))).numpy()
    got = getattr(vt.special, name)(vt.tensor(x, device=device)).cpu().numpy()
    inf = np.isinf(x)
    if name.startswith("modified_bessel_i"):
        limits = np.abs(x[inf]) if name.endswith("0") else x[inf]  # +-inf, as vt.special.i0
    elif name in ("bessel_y0", "bessel_y1"):
        limits = np.where(x[inf] > 0, 0.0, np.nan)
    elif name.startswith(("modified_bessel_k", "scaled_modified_bessel_k")):
        limits = want[inf]  # PyTorch's are the limits here
    else:
        limits = np.zeros(2)
    np.testing.assert_array_equal(got[inf], limits, err_msg=name)
    keep = ~inf
    if device != "cpu":
        keep &= (np.abs(x) >= np.finfo(dt).tiny) | (x == 0)  # a GPU flushes subnormals
    if name.startswith(("modified_bessel_k", "scaled_modified_bessel_k")) and dt == "float64":
        # PyTorch's K0(5e-324) is inf, K1 NaN: mpmath's are 744.4 and 2e323 (inf)
        sub = x == 5e-324
        np.testing.assert_array_equal(got[sub], [_mp_value(name, 5e-324)])
        keep &= ~sub
    if name == "modified_bessel_i1":
        keep &= x != 5e-324  # x/2 rounds to 0 (I1 is a hair above it: PyTorch's 5e-324)
    np.testing.assert_array_equal(np.isnan(got[keep]), np.isnan(want[keep]), err_msg=name)
    # PyTorch's J, Y (at -3, 1e5) and Ai (at -3, -800) are off by up to ~2e-8
    tol = 5e-8 if name in OSCILLATING or name == "airy_ai" else 1e-12
    np.testing.assert_allclose(got[keep], want[keep].astype(dt),
                               rtol=tol if dt == "float64" else 5e-6, atol=0, err_msg=name)
    zero = keep & (want == 0)
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))


@pytest.mark.parametrize("name", NAMES)
def test_dtypes_follow_torch(name):
    """Integers and bool compute in the default float dtype, float32 and float64 keep
    theirs; float16/bfloat16 (PyTorch's CPU kernels refuse them) compute in float32 and
    round once."""
    f = getattr(vt.special, name)
    tf = getattr(torch.special, name)
    for dtype in ("int64", "int32", "int16", "uint8", "bool", "float32", "float64"):
        t = torch.tensor([0, 1, 2, 3]).to(getattr(torch, dtype))
        want = tf(t)
        got = f(vt.tensor([0, 1, 2, 3]).to(dtype))
        assert got.dtype.name == str(want.dtype).removeprefix("torch."), dtype
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=0)
    vt.set_default_dtype(vt.float64)
    try:
        assert f(vt.tensor([1, 2])).dtype == vt.float64
    finally:
        vt.set_default_dtype(vt.float32)
    x = np.linspace(-6, 6, 49)
    x = x[(x > 0) | (name not in POSITIVE_ONLY)]
    for dtype in ("float16", "bfloat16"):
        t = torch.tensor(x).to(getattr(torch, dtype))
        with pytest.raises(RuntimeError, match="not implemented"):
            tf(t)
        got = f(vt.tensor(t.float().numpy()).to(dtype))
        assert got.dtype.name == dtype
        wide = f(vt.tensor(t.float().numpy())).to(dtype)  # the float32 value, rounded
        np.testing.assert_array_equal(got.float().numpy(), wide.float().numpy())
        # PyTorch's float32 value rounded: the same but where its own error (Ai near
        # -2.25) crosses a rounding boundary
        want = tf(t.float()).to(getattr(torch, dtype)).float().numpy()
        ulp = np.abs(want) * (2.0 ** -10 if dtype == "float16" else 2.0 ** -7)
        assert (np.abs(got.float().numpy() - want) <= ulp).all()


@pytest.mark.parametrize("name", NAMES)
def test_no_gradient_as_torch(name):
    """PyTorch's results don't require grad even for an input that does, and backward
    through them raises; Volta's alike (in every dtype, under no_grad too)."""
    t = torch.tensor([0.5, 1.5], requires_grad=True)
    want = getattr(torch.special, name)(t)
    assert not want.requires_grad and want.grad_fn is None
    with pytest.raises(RuntimeError, match="does not require grad"):
        want.sum().backward()
    for dtype in ("float32", "float64", "bfloat16"):
        x = vt.tensor([0.5, 1.5], dtype=dtype, requires_grad=True)
        got = getattr(vt.special, name)(x)
        assert not got.requires_grad and got.grad_fn is None
        with pytest.raises(RuntimeError, match="does not require grad"):
            got.sum().backward()
        assert x.grad is None
    # in a graph, the result is a constant: the other branch's gradient flows alone
    x = vt.tensor([0.5, 1.5], requires_grad=True)
    (x * 2 + getattr(vt.special, name)(x)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_out_argument():
    x = vt.tensor([0.5, 2.0, 30.0])
    out = vt.empty(3)
    assert vt.special.bessel_j0(x, out=out) is out
    np.testing.assert_array_equal(out.numpy(), vt.special.bessel_j0(x).numpy())


def _values(width: int):
    return st.one_of(st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 3.5, 25.0,
                                      12.0, -12.0, 1.0]),
                     st.floats(-1e6, 1e6, width=width))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), name=st.sampled_from(NAMES), dtype=st.sampled_from(["float32",
                                                                           "float64"]))
def test_property_matches_torch(data, name, dtype):
    """Drawn arrays (either float dtype, the special values, |x| up to 1e6): the NaN and
    infinity patterns are PyTorch's but at the infinities (the limits), and the values
    within PyTorch's own error (a few 1e-6 of the envelope)."""
    values = data.draw(st.lists(_values(32 if dtype == "float32" else 64), min_size=1,
                                max_size=12))
    x = np.array(values, dtype=dtype)
    # PyTorch's float32 kernels lose the phase of large arguments: its float64 ones
    want = getattr(torch.special, name)(torch.tensor(x.astype(np.float64))).numpy()
    want = want.astype(dtype)
    got = getattr(vt.special, name)(vt.tensor(x)).numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    keep = ~np.isinf(x) & ~((np.abs(x) < np.finfo(dtype).tiny) & (x != 0))
    np.testing.assert_array_equal(np.isnan(got[keep]), np.isnan(want[keep]))
    w, g = want[keep].astype(np.float64), got[keep].astype(np.float64)
    both = np.isfinite(w)
    np.testing.assert_array_equal(g[~both], w[~both])
    both &= ~((w == 0) & (np.abs(g) < np.finfo(dtype).tiny))  # Ai from 103.9: subnormal
    err = np.abs(g - w)[both] / np.maximum(_scale(name, x[keep].astype(np.float64), w)[both],
                                           np.finfo(dtype).tiny)
    assert (err <= 6e-6).all(), (x[keep][both][err > 6e-6], err.max())
    # the float32 results are the float64 ones rounded (the CPU computes them so)
    if dtype == "float32":
        wide = getattr(vt.special, name)(vt.tensor(x.astype(np.float64))).numpy()
        np.testing.assert_array_equal(got, wide.astype(np.float32))
