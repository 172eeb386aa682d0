"""Linear algebra: einsum and the matmul family against NumPy, with gradchecks."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vt_helpers import assert_close, check_grad, rand, to_np

import volta_core as vt

T = vt.tensor

EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 2), (1, 2, 2, 2)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (2,)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 2)]),
    ("...ij,...jk", [(2, 1, 2, 3), (3, 3, 2)]),
    ("ij,jk", [(2, 3), (3, 2)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ji", [(2, 3)]),
    ("ijk->kji", [(2, 3, 2)]),
    ("iij->ij", [(2, 2, 3)]),
    ("bii->b", [(2, 3, 3)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 2), (2, 2)]),
    ("ij,jk,ik->i", [(2, 3), (3, 2), (2, 2)]),
    ("i,i,i->i", [(3,), (3,), (3,)]),
    ("b i d, b j d -> b i j", [(2, 2, 3), (2, 3, 3)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("...,...->...", [(2, 3), (3,)]),
    ("i...->...", [(2, 3, 2)]),
    ("Ab,bC->AC", [(2, 3), (3, 2)]),
    ("ijk,jkl->il", [(2, 3, 2), (3, 2, 2)]),
    ("bn,anm,bm->ba", [(2, 3), (2, 3, 2), (2, 2)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum_forward_and_gradcheck(eq, shapes):
    arrays = [rand(*s, seed=i + 1) for i, s in enumerate(shapes)]
    out = vt.einsum(eq, *[T(a) for a in arrays])
    assert_close(out, np.einsum(eq.replace(" ", ""), *arrays), rtol=1e-12, atol=1e-12)
    check_grad(lambda *ts: vt.einsum(eq, *ts), *arrays)


def test_einsum_list_operands_and_dtype_promotion():
    a, b = rand(2, 3, seed=1), rand(3, 2, seed=2)
    assert_close(vt.einsum("ij,jk->ik", [T(a), T(b)]), a @ b)
    out = vt.einsum("ij,jk->ik", T(a, dtype=vt.float32), T(b))
    assert out.dtype == vt.float64
    ints = vt.einsum("i,i->", T([1, 2, 3]), T([4, 5, 6]))
    assert_close(ints, 32, dtype="int64")


def test_einsum_empty_and_size_one():
    a, b = np.zeros((2, 0)), np.zeros((0, 3))
    assert_close(vt.einsum("ij,jk->ik", T(a), T(b)), np.zeros((2, 3)))
    assert_close(vt.einsum("ij->i", T(np.zeros((0, 3)))), np.zeros(0))
    a, b = rand(1, 3, seed=3), rand(3, 1, seed=4)
    assert_close(vt.einsum("ij,jk->ik", T(a), T(b)), a @ b)
    assert_close(vt.einsum("ij,ij->ij", T(rand(2, 1)), T(rand(2, 3))),
                 rand(2, 1) * rand(2, 3))
    x = rand(2, 1, seed=5)
    check_grad(lambda s, t: vt.einsum("ij,ij->ij", s, t), x, rand(2, 3, seed=6))


def test_einsum_double_backward():
    a = vt.tensor(rand(2, 3, seed=7), requires_grad=True)
    b = vt.tensor(rand(3, 2, seed=8), requires_grad=True)
    assert vt.autograd.gradgradcheck(lambda x, y: vt.einsum("ij,jk->ik", x, y), [a, b])


def test_einsum_errors():
    a, b = T(rand(2, 3)), T(rand(4, 2))
    with pytest.raises(vt.ShapeError, match="'j' has size 3 in one operand and 4"):
        vt.einsum("ij,jk->ik", a, b)
    with pytest.raises(vt.ShapeError, match="operand 0 has 2 dims"):
        vt.einsum("ijk,kl->il", a, b)
    with pytest.raises(vt.ShapeError, match="2 operand term"):
        vt.einsum("ij,jk->ik", a)
    with pytest.raises(vt.ShapeError, match="output label 'z'"):
        vt.einsum("ij->iz", a)
    with pytest.raises(vt.ShapeError, match="repeats"):
        vt.einsum("ij->ii", a)
    with pytest.raises(vt.ShapeError, match="letters"):
        vt.einsum("i1,jk->ik", a, b)
    with pytest.raises(vt.ShapeError, match="repeated in one operand"):
        vt.einsum("ii->i", a)
    with pytest.raises(TypeError, match="Tensor"):
        vt.einsum("ij->ji", rand(2, 2))


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 2),
       st.sampled_from(["ij,jk->ik", "ij,jk->ki", "ij,jk->ijk", "ij,jk->", "ij,jk->j",
                        "ij,jk", "ij,jk->jk"]))
def test_einsum_property_matches_numpy(n, m, p, b, eq):
    x, y = rand(n, m, seed=n * 7 + m), rand(m, p, seed=p * 5 + b)
    np.testing.assert_allclose(to_np(vt.einsum(eq, T(x), T(y))), np.einsum(eq, x, y),
                               rtol=1e-12, atol=1e-12)


# -- the matmul family ------------------------------------------------------------------------

def test_mm_bmm_mv_dot_outer():
    a, b = rand(2, 3, seed=1), rand(3, 4, seed=2)
    assert_close(vt.mm(T(a), T(b)), a @ b)
    assert_close(T(a).mm(T(b)), a @ b)
    check_grad(vt.mm, a, b)
    x, y = rand(2, 2, 3, seed=3), rand(2, 3, 2, seed=4)
    assert_close(vt.bmm(T(x), T(y)), x @ y)
    check_grad(vt.bmm, x, y)
    v = rand(3, seed=5)
    assert_close(vt.mv(T(a), T(v)), a @ v)
    check_grad(vt.mv, a, v)
    w = rand(3, seed=6)
    assert_close(vt.dot(T(v), T(w)), v @ w)
    assert_close(T(v).dot(T(w)), v @ w)
    check_grad(vt.dot, v, w)
    assert_close(vt.outer(T(v), T(rand(2, seed=7))), np.outer(v, rand(2, seed=7)))
    check_grad(vt.outer, v, rand(2, seed=7))
    assert_close(vt.outer(T(np.zeros(0)), T(v)), np.zeros((0, 3)))
    assert_close(vt.dot(T([1, 2]), T([3, 4])), 11, dtype="int64")


def test_matmul_family_errors():
    with pytest.raises(vt.ShapeError, match="mm: expected tensors with \\(2, 2\\) dims"):
        vt.mm(T(rand(2, 3)), T(rand(3)))
    with pytest.raises(vt.ShapeError, match="cannot be multiplied"):
        vt.mm(T(rand(2, 3)), T(rand(2, 3)))
    with pytest.raises(vt.ShapeError, match="bmm: batch sizes differ"):
        vt.bmm(T(rand(2, 2, 3)), T(rand(3, 3, 2)))
    with pytest.raises(vt.ShapeError, match="mv"):
        vt.mv(T(rand(2, 3)), T(rand(3, 1)))
    with pytest.raises(vt.ShapeError, match="dot"):
        vt.dot(T(rand(2, 3)), T(rand(3)))
    with pytest.raises(vt.ShapeError, match="cannot be multiplied"):
        vt.dot(T(rand(2)), T(rand(3)))
    with pytest.raises(TypeError, match="outer"):
        vt.outer(T(rand(2)), rand(3))


def test_addmm_baddbmm():
    c, a, b = rand(2, 4, seed=1), rand(2, 3, seed=2), rand(3, 4, seed=3)
    assert_close(vt.addmm(T(c), T(a), T(b)), c + a @ b)
    assert_close(vt.addmm(T(c[0]), T(a), T(b), beta=0.5, alpha=2.0), 0.5 * c[0] + 2 * a @ b)
    check_grad(lambda x, y, z: vt.addmm(x, y, z, beta=0.5, alpha=2.0), c[0], a, b)
    nan = np.full((2, 4), np.nan)
    assert_close(vt.addmm(T(nan), T(a), T(b), beta=0), a @ b)
    inp, x, y = rand(2, 2, 2, seed=4), rand(2, 2, 3, seed=5), rand(2, 3, 2, seed=6)
    assert_close(vt.baddbmm(T(inp), T(x), T(y), alpha=0.5), inp + 0.5 * (x @ y))
    check_grad(lambda i, p, q: vt.baddbmm(i, p, q, beta=2.0, alpha=0.5), inp, x, y)
    assert_close(T(inp[0, 0]).baddbmm(T(x), T(y), beta=0), np.matmul(x, y))


def test_tensordot():
    a, b = rand(2, 3, 4, seed=1), rand(3, 4, 2, seed=2)
    assert_close(vt.tensordot(T(a), T(b)), np.tensordot(a, b), rtol=1e-12)
    assert_close(vt.tensordot(T(a), T(b), dims=([1, 2], [0, 1])),
                 np.tensordot(a, b, axes=([1, 2], [0, 1])), rtol=1e-12)
    assert_close(vt.tensordot(T(a), T(b), dims=([1], [0])),
                 np.tensordot(a, b, axes=([1], [0])), rtol=1e-12)
    assert_close(vt.tensordot(T(a), T(b), dims=0), np.tensordot(a, b, axes=0), rtol=1e-12)
    check_grad(lambda x, y: vt.tensordot(x, y, dims=([1, 2], [0, 1])), a[:, :2, :2],
               b[:2, :2])
    with pytest.raises(vt.ShapeError, match="tensordot: contracted dim 0"):
        vt.tensordot(T(a), T(b), dims=([0], [0]))
    with pytest.raises(vt.ShapeError, match="tensordot: dims=4"):
        vt.tensordot(T(a), T(b), dims=4)


def test_einsum_zero_dim_operands():
    assert_close(vt.einsum(",->", T(2.0), T(3.0)), 6.0)
    assert_close(vt.einsum(",i->i", T(2.0), T([1.0, 2.0])), [2.0, 4.0])
    check_grad(lambda a, b: vt.einsum(",i->i", a, b), np.array(2.0), rand(3))
