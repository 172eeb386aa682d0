"""The LU family against PyTorch CPU on every device: ``linalg.lu_factor``/
``lu_factor_ex``/``lu``/``lu_solve``/``solve_ex``/``vander``, ``lu_unpack`` and the older
``lu``/``lu_solve`` (and ``Tensor.lu``/``Tensor.lu_solve``). Values, int32 1-based pivots
(LAPACK's choice on ties), info, result types and field names, shapes (square, tall, wide,
batched, empty), gradients (and a float64 gradcheck) and errors; hypothesis draws batches,
shapes and solve modes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vt_helpers import available_devices, device_has

import volta_core as vt

torch = pytest.importorskip("torch")

DEVICES = available_devices()
pytestmark = [pytest.mark.filterwarnings("ignore:torch.lu is deprecated"),
              pytest.mark.filterwarnings("ignore:torch.lu_solve is deprecated")]
ONES = np.ones((3, 2))


def _dtypes(device: str) -> list[str]:
    return ["float32"] + (["float64"] if device_has(device, "float64") else [])


def _tol(dtype: str) -> float:
    return 1e-10 if dtype == "float64" else 2e-4


def _host(t) -> np.ndarray:
    t = t.detach()
    return t.cpu().numpy() if isinstance(t, vt.Tensor) else t.numpy()


def _same(got, want, tol: float) -> None:
    """Shape, dtype and values (integers exactly, NaN matching NaN)."""
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    assert got.dtype.name == str(want.dtype).removeprefix("torch."), (got.dtype, want.dtype)
    g, w = _host(got), _host(want)
    if w.dtype.kind in "biu":
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True)


def _same_tuple(got, want, fields: tuple[str, ...], tol: float) -> None:
    """A result namedtuple: PyTorch's type name and fields, each field as PyTorch's."""
    assert type(got).__name__ == type(want).__name__
    assert got._fields == fields
    for name in fields:
        _same(getattr(got, name), getattr(want, name), tol)


def _pair(a: np.ndarray, device: str, dtype: str, grad: bool = False):
    v = vt.tensor(a.astype(dtype), device=device).requires_grad_(grad)
    t = torch.tensor(a.astype(dtype)).requires_grad_(grad)
    return v, t


SHAPES = [(3, 3), (5, 3), (3, 5), (2, 4, 4), (2, 1, 3, 2), (0, 3, 3), (1, 1), (3, 0), (0, 3),
          (0, 0), (1, 4), (4, 1), (36, 36)]
# past one panel of columns (ops.lu._PANEL), and more: on the devices other than wgpu,
# whose software adapter in CI takes ~20 s a matrix (the (36, 36) case covers it)
BIG = [(d, s) for d in DEVICES if not d.startswith("wgpu")
       for s in [(70, 70), (2, 40, 75), (75, 40)]]


@pytest.mark.parametrize("device,shape",
                         [(d, s) for d in DEVICES for s in SHAPES] + BIG, ids=str)
def test_factor_and_unpack_match_torch(device, shape):
    rng = np.random.default_rng(sum(shape) + 7)
    a = rng.standard_normal(shape)
    for dtype in _dtypes(device):
        (va, ta), tol = _pair(a, device, dtype), _tol(dtype)
        _same_tuple(vt.linalg.lu_factor_ex(va), torch.linalg.lu_factor_ex(ta),
                    ("LU", "pivots", "info"), tol)
        _same_tuple(vt.linalg.lu_factor(va), torch.linalg.lu_factor(ta), ("LU", "pivots"), tol)
        _same_tuple(vt.linalg.lu(va), torch.linalg.lu(ta), ("P", "L", "U"), tol)
        _same_tuple(vt.lu_unpack(*vt.linalg.lu_factor(va)),
                    torch.lu_unpack(*torch.linalg.lu_factor(ta)), ("P", "L", "U"), tol)
        got, want = vt.lu(va), torch.lu(ta)  # the older form: a plain (LU, pivots)
        assert type(got) is tuple and len(got) == 2
        for g, w in zip(got, want):
            _same(g, w, tol)
        _same_tuple(vt.lu(va, get_infos=True), torch.lu(ta, get_infos=True),
                    ("LU", "pivots", "info"), tol)
        for g, w in zip(va.lu(get_infos=True), ta.lu(get_infos=True)):
            _same(g, w, tol)
        p, low, up = vt.linalg.lu(va)  # and A = P L U
        if va.numel():
            np.testing.assert_allclose(_host(p @ low @ up), a, atol=50 * tol)


TIES = [  # equal magnitudes in a pivot column: LAPACK (idamax) takes the first
    [[1.0, 2.0], [-1.0, 3.0]],
    [[-2.0, 1.0, 0.0], [2.0, 3.0, 1.0], [2.0, 0.0, 5.0]],
    [[0.0, 1.0, 2.0], [0.0, 1.0, 3.0], [0.0, 1.0, 4.0]],  # zero first column
    [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0], [2.0, 2.0, 2.0]],  # all equal, singular
    [[1.0, 2.0], [2.0, 4.0]],
    [[0.0, 0.0], [0.0, 0.0]],
    [[3.0, 1.0, 4.0, 1.0], [-3.0, 5.0, 9.0, 2.0], [6.0, 5.0, 3.0, 5.0]],  # wide
    [[1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [-1.0, -1.0]],  # tall
]


def _late_zero_column() -> np.ndarray:
    """A 70x70 matrix whose column 40 (in the second panel) is zero."""
    a = np.random.default_rng(2).integers(-3, 4, (70, 70)).astype(float)
    a[:, 40] = 0.0
    return a


@pytest.mark.parametrize("device,case", [(d, c) for d in DEVICES for c in range(len(TIES))]
                         + [(d, len(TIES)) for d, _ in BIG[:1]])
def test_ties_and_singular_matrices_give_torchs_pivots_and_info(device, case):
    a = np.array(TIES[case]) if case < len(TIES) else _late_zero_column()
    for dtype in _dtypes(device):
        va, ta = _pair(a, device, dtype)
        # the pivots and info exactly, the factors within rounding
        _same_tuple(vt.linalg.lu_factor_ex(va), torch.linalg.lu_factor_ex(ta),
                    ("LU", "pivots", "info"), _tol(dtype))
        _same_tuple(vt.linalg.lu(va), torch.linalg.lu(ta), ("P", "L", "U"), _tol(dtype))


def test_singular_matrices_report_info_or_raise_as_torch():
    """``lu_factor`` (and ``lu_factor_ex(check_errors=True)``) raise for a zero pivot,
    naming it and the batch element, as PyTorch; ``lu_factor_ex``, ``linalg.lu`` and the
    older ``lu`` report it in ``info``."""
    a = np.array([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]]])
    va, ta = vt.tensor(a), torch.tensor(a)
    assert vt.linalg.lu_factor_ex(va).info.tolist() == [0, 2, 1]
    assert vt.lu(va, get_infos=True).info.tolist() == [0, 2, 1]
    vt.linalg.lu(va)
    for fn in (lambda m, x: m.linalg.lu_factor(x),
               lambda m, x: m.linalg.lu_factor_ex(x, check_errors=True)):
        with pytest.raises(RuntimeError, match="U\\[2,2\\] is zero"):
            fn(torch, ta)
        with pytest.raises(vt.LinAlgError, match=r"U\[2,2\] is zero \(batch element 1\)"):
            fn(vt, va)
    with pytest.raises(vt.LinAlgError, match=r"U\[1,1\] is zero: the matrix is singular"):
        vt.linalg.lu_factor(va[2])
    # solve_ex: info, and getrs's inf/NaN for the singular systems
    b = np.ones((3, 2))
    got, want = vt.linalg.solve_ex(va, vt.tensor(b)), torch.linalg.solve_ex(ta, torch.tensor(b))
    _same_tuple(got, want, ("result", "info"), 1e-12)
    with pytest.raises(RuntimeError, match="singular"):
        torch.linalg.solve_ex(ta, torch.tensor(b), check_errors=True)
    with pytest.raises(vt.LinAlgError, match=r"singular \(batch element 1\)"):
        vt.linalg.solve_ex(va, vt.tensor(b), check_errors=True)
    lu_v, lu_t = vt.linalg.lu_factor_ex(va), torch.linalg.lu_factor_ex(ta)  # no error
    _same(vt.linalg.lu_solve(lu_v.LU, lu_v.pivots, vt.tensor(b[..., None])),
          torch.linalg.lu_solve(lu_t.LU, lu_t.pivots, torch.tensor(b[..., None])), 1e-12)


def _grads(lib, fn, arrays, device, dtype, up_seed=3):
    """The outputs of ``fn(lib, *leaves)`` and the leaves' gradients of a random sum."""
    mk = (lambda a: vt.tensor(a.astype(dtype), device=device)) if lib is vt else \
        (lambda a: torch.tensor(a.astype(dtype)))
    leaves = [mk(a).requires_grad_() for a in arrays]
    out = fn(lib, *leaves)
    out = list(out) if isinstance(out, tuple) else [out]
    rng = np.random.default_rng(up_seed)
    total = 0
    for o in out:
        if o.requires_grad:
            total = total + (o * mk(rng.standard_normal(tuple(o.shape)))).sum()
    if not isinstance(total, int):
        total.backward()
    return out + [x.grad if x.grad is not None else mk(np.zeros(x.shape)) for x in leaves]


def _compare(fn, arrays, device, dtype, tol=None):
    got = _grads(vt, fn, arrays, device, dtype)
    want = _grads(torch, fn, arrays, "cpu", dtype)
    for g, w in zip(got, want):
        _same(g, w, tol if tol is not None else _tol(dtype))


SOLVES = {  # name: fn(lib, A, B) with B (..., n, k), or its transpose for left=False
    "left": lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b),
    "adjoint": lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b, adjoint=True),
    "right": lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b.mT, left=False),
    "right_adjoint": lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b.mT,
                                                       left=False, adjoint=True),
    "legacy": lambda m, a, b: m.lu_solve(b, *m.lu(a)),
    "method": lambda m, a, b: b.lu_solve(*a.lu()),
    "solve_ex": lambda m, a, b: tuple(m.linalg.solve_ex(a, b)),
    "solve_ex_right": lambda m, a, b: tuple(m.linalg.solve_ex(a, b.mT, left=False)),
    "solve_ex_vector": lambda m, a, b: tuple(m.linalg.solve_ex(a, b[..., 0])),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(SOLVES))
def test_solves_and_their_gradients_match_torch(device, name):
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2, 4, 4)) + 2 * np.eye(4)
    b = rng.standard_normal((2, 4, 3))
    for dtype in _dtypes(device):
        _compare(SOLVES[name], [a, b], device, dtype, 1e-9 if dtype == "float64" else 1e-3)


@pytest.mark.parametrize("device", DEVICES)
def test_lu_solve_broadcasts_batches_as_torch(device):
    rng = np.random.default_rng(12)
    a, b = rng.standard_normal((3, 3)) + 2 * np.eye(3), rng.standard_normal((2, 3, 2))
    for dtype in _dtypes(device):
        tol = 1e-9 if dtype == "float64" else 1e-3
        _compare(SOLVES["left"], [a, b], device, dtype, tol)  # LU (3, 3), B (2, 3, 2)
        _compare(SOLVES["left"], [np.stack([a, a.T]), b[0]], device, dtype, tol)
        _compare(SOLVES["left"], [a, b[:, :, :0]], device, dtype, tol)  # no right-hand side


@pytest.mark.parametrize("device,shape",
                         [(d, s) for d in DEVICES for s in [(3, 3), (5, 3), (3, 5), (2, 4, 4),
                                                            (1, 1), (36, 36)]]
                         + [(d, s) for d, s in BIG if s != (2, 40, 75)], ids=str)
def test_factor_gradients_match_torch(device, shape):
    rng = np.random.default_rng(len(shape) * 10 + shape[-1])
    a = rng.standard_normal(shape)
    for dtype in _dtypes(device):
        tol = 1e-9 if dtype == "float64" else 2e-3
        _compare(lambda m, x: tuple(m.linalg.lu_factor(x)), [a], device, dtype, tol)
        _compare(lambda m, x: tuple(m.linalg.lu(x)), [a], device, dtype, tol)
        # lu_unpack of a leaf: the gradients of its two triangles
        _compare(lambda m, x: tuple(m.lu_unpack(x, m.linalg.lu_factor(x.detach()).pivots)),
                 [a], device, dtype, tol)


def test_gradcheck_float64():
    rng = np.random.default_rng(13)
    a = vt.tensor(rng.standard_normal((2, 3, 3)) + np.eye(3), requires_grad=True)
    w = vt.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    b = vt.tensor(rng.standard_normal((2, 3, 2)), requires_grad=True)
    x = vt.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    gc = vt.autograd.gradcheck
    assert gc(lambda t: vt.linalg.lu_factor(t).LU, [a])
    assert gc(lambda t: tuple(vt.linalg.lu(t))[1:], [w])
    assert gc(lambda t: tuple(vt.linalg.lu(t))[1:], [w.mT.detach().requires_grad_()])
    for left in (True, False):
        for adjoint in (False, True):
            assert gc(lambda t, r, lf=left, ad=adjoint: vt.linalg.lu_solve(
                *vt.linalg.lu_factor(t), r if lf else r.mT, left=lf, adjoint=ad), [a, b])
    assert gc(lambda t, r: vt.linalg.solve_ex(t, r).result, [a, b])
    assert gc(lambda t: vt.linalg.vander(t, N=4), [x])
    assert vt.autograd.gradgradcheck(lambda t: vt.linalg.lu_factor(t).LU, [a])


@pytest.mark.parametrize("device", DEVICES)
def test_lu_unpack_flags_and_dtypes(device):
    rng = np.random.default_rng(14)
    a = rng.standard_normal((2, 3, 4))
    va, ta = _pair(a, device, "float32")
    (lv, pv), (lt, pt) = vt.linalg.lu_factor(va), torch.linalg.lu_factor(ta)
    for data in (True, False):
        for pivots in (True, False):
            _same_tuple(vt.lu_unpack(lv, pv, unpack_data=data, unpack_pivots=pivots),
                        torch.lu_unpack(lt, pt, unpack_data=data, unpack_pivots=pivots),
                        ("P", "L", "U"), 1e-5)
    # any dtype of LU_data unpacks (an integer one too, as PyTorch's)
    ints = np.array([[3, 1, 2], [4, 5, 6], [7, 8, 9]], dtype=np.int32)
    piv = np.array([3, 3, 3], dtype=np.int32)
    _same_tuple(vt.lu_unpack(vt.tensor(ints, device=device), vt.tensor(piv, device=device)),
                torch.lu_unpack(torch.tensor(ints), torch.tensor(piv)), ("P", "L", "U"), 0)
    # the pivots are not read (nor checked) when they are not unpacked
    _same_tuple(vt.lu_unpack(lv, pv.to(vt.int64) + 9, unpack_pivots=False),
                torch.lu_unpack(lt, pt.long() + 9, unpack_pivots=False), ("P", "L", "U"), 1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_vander_matches_torch(device):
    x = np.array([[0.0, 1.5, -2.0], [3.0, -0.5, 1.0]])
    for dtype in _dtypes(device):
        tol = _tol(dtype)
        _compare(lambda m, t: m.linalg.vander(t), [x], device, dtype, tol)
        _compare(lambda m, t: m.linalg.vander(t, N=5), [x[0]], device, dtype, tol)
        _compare(lambda m, t: m.linalg.vander(t[0, 0], N=3), [x[:, 1:]], device, dtype, tol)
    ints = np.array([1, -2, 3, 4], dtype=np.int32)  # integers give int64, as PyTorch
    _same(vt.linalg.vander(vt.tensor(ints, device=device), N=6),
          torch.linalg.vander(torch.tensor(ints), N=6), 0)
    assert vt.vander is not vt.linalg.vander  # torch.vander: decreasing powers
    _same(vt.vander(vt.tensor([1.0, 2.0, 3.0], device=device)),  # (its pow is inexact
          torch.vander(torch.tensor([1.0, 2.0, 3.0])), 1e-6)  # on wgpu: 3 ** 1 = 3.0000002)


def _both_raise(fn, vt_error, torch_error=RuntimeError, match=None):
    """PyTorch raises ``torch_error`` and Volta ``vt_error`` (matching ``match``)."""
    with pytest.raises(torch_error):
        fn(torch)
    with pytest.raises(vt_error, match=match):
        fn(vt)


def test_errors_as_torch():
    f32, i32 = "float32", "int32"

    def t(m, a, dtype=f32):
        return m.tensor(np.asarray(a)).to(getattr(m, dtype))

    sq = np.eye(3) + 1
    for fn in (lambda m: m.linalg.lu_factor(t(m, sq), pivot=False),
               lambda m: m.linalg.lu_factor_ex(t(m, sq), pivot=False),
               lambda m: m.linalg.lu(t(m, sq), pivot=False),
               lambda m: m.lu(t(m, sq), pivot=False)):
        _both_raise(fn, vt.LinAlgError, match="without pivoting")
    for dtype in ("int64", "int32", "float16", "bfloat16", "bool"):
        _both_raise(lambda m, d=dtype: m.linalg.lu_factor(t(m, sq, d)), vt.DTypeError,
                    (RuntimeError, NotImplementedError), match=dtype)
        _both_raise(lambda m, d=dtype: m.linalg.lu(t(m, sq, d)), vt.DTypeError,
                    (RuntimeError, NotImplementedError), match=dtype)
    _both_raise(lambda m: m.linalg.lu_factor(t(m, [1.0, 2.0])), vt.ShapeError,
                match="2 or more dimensions")
    _both_raise(lambda m: m.lu_unpack(t(m, [1.0, 2.0]), t(m, [1], i32)), vt.ShapeError)
    _both_raise(lambda m: m.lu_unpack(t(m, sq), t(m, [1, 2, 3], "int64")), vt.DTypeError,
                match="int32")
    _both_raise(lambda m: m.lu_unpack(t(m, sq), t(m, [1, 4, 3], i32)),
                vt.IndexOutOfRangeError, match="between 1 and")
    _both_raise(lambda m: m.lu_unpack(t(m, sq), t(m, [0, 2, 3], i32)),
                vt.IndexOutOfRangeError, match="between 1 and")

    def solve(m, lu=sq, piv=(1, 2, 3), b=ONES, pdt=i32, bdt=f32, **kw):
        return m.linalg.lu_solve(t(m, lu), t(m, piv, pdt), t(m, b, bdt), **kw)

    _both_raise(lambda m: solve(m, piv=(1, 2, 3), pdt="int64"), vt.DTypeError, match="int32")
    _both_raise(lambda m: solve(m, piv=(1, 2)), vt.ShapeError, match="pivots of shape")
    _both_raise(lambda m: solve(m, piv=[(1, 2, 3)] * 2), vt.ShapeError)
    _both_raise(lambda m: solve(m, b=np.ones(3)), vt.ShapeError, match="2 dimensions")
    _both_raise(lambda m: solve(m, b=np.ones((2, 2))), vt.ShapeError, match="AX = B")
    _both_raise(lambda m: solve(m, left=False), vt.ShapeError, match="XA = B")
    _both_raise(lambda m: solve(m, bdt="float64"), vt.DTypeError, match="same dtype")
    _both_raise(lambda m: solve(m, lu=sq[:, :2], piv=(1, 2)), vt.ShapeError, match="square")
    _both_raise(lambda m: solve(m, lu=sq.astype(int), b=np.ones((3, 2), int), bdt=i32),
                vt.DTypeError, match="int32")
    _both_raise(lambda m: solve(m, piv=(1, 2, 4)), vt.IndexOutOfRangeError,
                match="between 1 and")
    _both_raise(lambda m: solve(m, piv=(0, 2, 3)), vt.IndexOutOfRangeError,
                match="between 1 and")
    _both_raise(lambda m: m.linalg.lu_solve(t(m, np.stack([sq] * 3)), t(m, [(1, 2, 3)] * 3,
                                            i32), t(m, np.ones((2, 3, 1)))), vt.ShapeError,
                match="broadcast")

    def solve_ex(m, a=sq, b=ONES, adt=f32, bdt=f32, **kw):
        return m.linalg.solve_ex(t(m, a, adt), t(m, b, bdt), **kw)

    _both_raise(lambda m: solve_ex(m, a=np.ones((2, 3))), vt.ShapeError, match="square")
    _both_raise(lambda m: solve_ex(m, b=np.ones((2, 2))), vt.ShapeError, match="AX = B")
    _both_raise(lambda m: solve_ex(m, b=np.ones(3), left=False), vt.ShapeError,
                match="XA = B")
    _both_raise(lambda m: solve_ex(m, bdt="float64"), vt.DTypeError, match="same dtype")
    _both_raise(lambda m: solve_ex(m, adt="int64", bdt="int64"), vt.DTypeError,
                match="int64")
    _both_raise(lambda m: m.linalg.vander(t(m, [1.0, 2.0]), N=1), ValueError,
                match="greater than 1")
    _both_raise(lambda m: m.linalg.vander(t(m, [2.0], "float64")), ValueError,
                match="greater than 1")
    for dtype in ("float16", "bfloat16", "bool"):
        _both_raise(lambda m, d=dtype: m.linalg.vander(t(m, [1.0, 2.0], d)), vt.DTypeError,
                    match=dtype)


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=12, deadline=None)
@given(batch=st.lists(st.integers(0, 2), max_size=2), m=st.integers(1, 5),
       n=st.integers(1, 5), seed=st.integers(0, 2**16), mode=st.sampled_from(sorted(SOLVES)),
       singular=st.booleans(), float64=st.booleans())
def test_lu_family_property(device, batch, m, n, seed, mode, singular, float64):
    """Random batches and shapes: the factors, pivots and info equal PyTorch's (a zeroed
    column makes some matrices singular, exactly, on every backend), and so do the
    factors' gradients and a random solve with its gradients."""
    dtype = "float64" if float64 and device_has(device, "float64") else "float32"
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, m, n))
    if singular and n > 1:
        a[..., rng.integers(n)] = 0.0
    va, ta = _pair(a, device, dtype)
    tol = 1e-9 if dtype == "float64" else 2e-3
    _same_tuple(vt.linalg.lu_factor_ex(va), torch.linalg.lu_factor_ex(ta),
                ("LU", "pivots", "info"), tol)
    if not singular:  # a zero pivot's gradients are inf/NaN in both, not comparable
        _compare(lambda lib, x: tuple(lib.linalg.lu(x)), [a], device, dtype, tol)
        sq = rng.standard_normal((*batch, n, n)) + 2 * np.eye(n)
        b = rng.standard_normal((*batch, n, rng.integers(1, 3)))
        _compare(SOLVES[mode], [sq, b], device, dtype, tol)
