"""Index writes and layout ops added for PyTorch parity, compared with PyTorch CPU.

``take``, ``put``, ``index_copy``, ``index_fill``, ``index_put``, ``scatter_reduce`` (and
their in-place forms), ``hstack``/``vstack``/``dstack``/``column_stack``, ``tensor_split``,
``rot90`` and ``repeat_interleave``: values, dtypes, shapes, gradients, edge shapes,
float64 gradchecks and errors.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_ref import compare, raises_like_torch
from vt_helpers import check_grad, rand

import volta_core as vt


def ix(m, values):
    return m.tensor(values, dtype=m.int64)


# -- take / put ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "int64"])
def test_take(dtype):
    x = rand(3, 4) * 5
    # bfloat16 gradients need the index kernels' bfloat16 fix (issue 14): values only
    kw = {"dtype": dtype, "grad": dtype != "bfloat16"}
    compare(lambda m, t: m.take(t, ix(m, [[-1, 0], [5, 5]])), x, **kw)
    compare(lambda m, t: t.take(ix(m, 3)), x, **kw)
    compare(lambda m, t: m.take(t, ix(m, [])), x, **kw)
    compare(lambda m, t: m.take(t, ix(m, [0, 0])), rand(), **kw)


@pytest.mark.parametrize("accumulate", [False, True])
def test_put(accumulate):
    compare(lambda m, t, s: m.put(t, ix(m, [1, -1, 4]), s, accumulate=accumulate),
            rand(2, 3), rand(3, seed=1))
    # duplicates: accumulate sums them; every duplicate gets the gradient, as in PyTorch
    compare(lambda m, t, s: t.put(ix(m, [[0, 0], [2, 0]]), s, accumulate=accumulate),
            rand(4), rand(2, 2, seed=1), skip_outputs=() if accumulate else (0,))
    compare(lambda m, t, s: m.put(t, ix(m, [0]), s, accumulate=accumulate), rand(),
            rand(1, seed=1))
    compare(lambda m, t, s: t.clone().put_(ix(m, [1, 2]), s, accumulate), rand(2, 2),
            rand(2, seed=1))


def test_take_put_errors():
    raises_like_torch(lambda m, t: m.take(t, ix(m, [6])), rand(2, 3))
    raises_like_torch(lambda m, t: m.take(t, m.tensor([0.0])), rand(2, 3))
    raises_like_torch(lambda m, t, s: m.put(t, ix(m, [0, 1]), s), rand(3), rand(1))
    raises_like_torch(lambda m, t, s: m.put(t, ix(m, [3]), s), rand(3), rand(1))


# -- index_copy / index_fill / index_put ------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_index_copy(dtype):
    compare(lambda m, t, s: m.index_copy(t, 1, ix(m, [2, 0]), s), rand(4, 3) * 5,
            rand(4, 2, seed=1) * 5, dtype=dtype)
    compare(lambda m, t, s: t.index_copy(0, ix(m, [1]), s), rand(3), rand(1, seed=1),
            dtype=dtype)
    compare(lambda m, t, s: m.index_copy(t, 0, ix(m, []), s), rand(3, 2), rand(0, 2),
            dtype=dtype)
    compare(lambda m, t, s: m.index_copy(t, 0, ix(m, [0]), s), rand(), rand(seed=1),
            dtype=dtype)
    compare(lambda m, t, s: t.clone().index_copy_(-1, ix(m, [1]), s), rand(2, 2),
            rand(2, 1, seed=1), dtype=dtype)


def test_index_fill():
    compare(lambda m, t: m.index_fill(t, 1, ix(m, [2, 0, 2]), -1.5), rand(4, 3))
    compare(lambda m, t, v: t.index_fill(0, ix(m, [1]), v), rand(3, 2), np.array(7.0))
    compare(lambda m, t: m.index_fill(t, 0, ix(m, [-1]), 2.7), np.array([1, 2, 3]))
    compare(lambda m, t: m.index_fill(t, 0, ix(m, [0]), 1.0), rand())
    compare(lambda m, t: m.index_fill(t, 0, ix(m, []), 1.0), rand(2, 0))
    compare(lambda m, t: t.clone().index_fill_(1, ix(m, [0]), np.nan), rand(2, 2))
    raises_like_torch(lambda m, t, v: m.index_fill(t, 0, ix(m, [0]), v), rand(3),
                      np.array([1.0]))


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(accumulate):
    compare(lambda m, t, v: m.index_put(t, (ix(m, [0, 3]), ix(m, [1, 2])), v, accumulate),
            rand(4, 3), rand(2, seed=1))
    compare(lambda m, t, v: t.index_put((ix(m, [0, 0, 3]),), v, accumulate=accumulate),
            rand(4, 3), rand(3, 3, seed=1), skip_outputs=() if accumulate else (0,))
    compare(lambda m, t, v: m.index_put(t, (m.tensor([True, False, True]),), v, accumulate),
            rand(3, 2), rand(2, seed=1))
    compare(lambda m, t, v: t.clone().index_put_((ix(m, [1]),), v, accumulate), rand(3),
            np.array(5.0))
    compare(lambda m, t, v: m.index_put_(t.clone(), (ix(m, [1]),), v, accumulate), rand(3),
            np.array(5.0))


def test_index_write_errors():
    raises_like_torch(lambda m, t, s: m.index_copy(t, 0, ix(m, [3]), s), rand(3), rand(1))
    raises_like_torch(lambda m, t, s: m.index_copy(t, 0, ix(m, [0, 1]), s), rand(3), rand(1))
    raises_like_torch(lambda m, t, s: m.index_copy(t, 0, ix(m, [0]), s), rand(3),
                      np.array([1]))
    raises_like_torch(lambda m, t, v: m.index_put(t, (ix(m, [0, 1]),), v), rand(3), rand(3))
    raises_like_torch(lambda m, t: m.index_fill(t, 2, ix(m, [0]), 1.0), rand(3, 2))


# -- scatter_reduce -----------------------------------------------------------------------------

REDUCES = ["sum", "prod", "mean", "amax", "amin"]
INDEX = [[2, 0, 1], [2, 1, 1], [0, 0, 3], [2, 0, 0]]


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_values_and_grads(reduce, include_self):
    x, src = rand(4, 3), rand(4, 3, seed=1)
    x[2, 0], src[1, 0], src[3, 1], src[2, 0] = 0.0, 0.0, src[0, 1], x[0, 0]  # zeros, ties
    compare(lambda m, t, s: m.scatter_reduce(t, 0, ix(m, INDEX), s, reduce,
                                             include_self=include_self), x, src)
    compare(lambda m, t, s: t.scatter_reduce(1, ix(m, [[0, 0], [1, 0]]), s, reduce,
                                             include_self=include_self), rand(2, 3),
            rand(2, 2, seed=2))


@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_integers_nan_and_edge_shapes(reduce):
    compare(lambda m, t, s: m.scatter_reduce(t, 0, ix(m, [0, 0, 2]), s, reduce),
            np.array([10, 20, 30]), np.array([-1, -2, 4]))
    compare(lambda m, t, s: m.scatter_reduce(t, 0, ix(m, [0, 0, 2]), s, reduce,
                                             include_self=False),
            np.array([10, 20, 30]), np.array([-1, -2, 4]))
    compare(lambda m, t, s: m.scatter_reduce(t, 0, ix(m, [0, 0, 2]), s, reduce),
            np.array([1.0, np.nan, 3.0]), np.array([np.nan, 2.0, 4.0]), grad=False)
    compare(lambda m, t, s: m.scatter_reduce(t, 0, ix(m, [0]), s, reduce), rand(),
            rand(seed=1))
    compare(lambda m, t, s: m.scatter_reduce(t, 0, m.zeros(0, 2, dtype=m.int64), s, reduce),
            rand(3, 2), rand(0, 2, seed=1))
    compare(lambda m, t, s: t.clone().scatter_reduce_(0, ix(m, [1, 1]), s, reduce),
            rand(3), rand(2, seed=1))


def test_scatter_reduce_zero_products_gradients():
    compare(lambda m, t, s: m.scatter_reduce(t, 0, ix(m, [0, 0, 2]), s, "prod"),
            np.array([1.0, 2.0, 3.0]), np.array([0.0, 0.0, 4.0]))
    compare(lambda m, t, s: m.scatter_reduce(t, 0, ix(m, [0, 0, 2]), s, "prod"),
            np.array([0.0, 2.0, 3.0]), np.array([1.0, 0.0, 4.0]))


def test_scatter_reduce_errors():
    raises_like_torch(lambda m, t, s: m.scatter_reduce(t, 0, ix(m, [0]), s, "max2"), rand(3),
                      rand(1))
    raises_like_torch(lambda m, t, s: m.scatter_reduce(t, 0, ix(m, [3]), s, "sum"), rand(3),
                      rand(1))
    raises_like_torch(lambda m, t, s: m.scatter_reduce(t, 0, ix(m, [0]), s, "sum"), rand(3),
                      np.array([1]))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 5), k=st.integers(0, 8), seed=st.integers(0, 99),
       reduce=st.sampled_from(REDUCES), include_self=st.booleans())
def test_scatter_reduce_random_duplicates(n, k, seed, reduce, include_self):
    rng = np.random.default_rng(seed)
    index = rng.integers(0, n, size=(k, 2))
    x = np.round(rng.uniform(-2, 2, (n, 2)), 1)  # rounding makes ties
    src = np.round(rng.uniform(-2, 2, (k, 2)), 1)
    compare(lambda m, t, s: m.scatter_reduce(t, 0, ix(m, index.tolist()) if k else m.zeros(
        0, 2, dtype=m.int64), s, reduce, include_self=include_self), x, src,
        tol=(1e-9, 1e-12))


# -- stacking and splitting ------------------------------------------------------------------

@pytest.mark.parametrize("op", ["hstack", "vstack", "dstack", "column_stack", "row_stack"])
def test_stacks(op):
    for shapes in ([(), ()], [(3,), (3,)], [(2, 3), (2, 3)], [(1, 2, 3), (1, 2, 3)],
                   [(2, 0), (2, 0)]):
        arrays = [rand(*s, seed=i) for i, s in enumerate(shapes)]
        compare(lambda m, a, b: getattr(m, op)([a, b]), *arrays)
    compare(lambda m, a, b: getattr(m, op)((a, b)), rand(2), np.array([1, 2]))


def test_stack_mixed_ranks():
    compare(lambda m, a, b: m.hstack([a, b]), rand(2, 3), rand(2, 1, seed=1))
    compare(lambda m, a, b: m.vstack([a, b]), rand(3), rand(2, 3, seed=1))
    compare(lambda m, a, b: m.column_stack([a, b]), rand(2), rand(2, 2, seed=1))
    raises_like_torch(lambda m, a, b: m.vstack([a, b]), rand(3), rand(2))
    raises_like_torch(lambda m, a: m.hstack([]), rand(1))


@pytest.mark.parametrize("spec", [3, 1, 7, 9, [2, 5], [-2, 3], [5, 2, 9], [], [0, 0]])
def test_tensor_split(spec):
    compare(lambda m, t: m.tensor_split(t, spec), rand(7))
    compare(lambda m, t: t.tensor_split(spec, dim=1), rand(2, 7))
    compare(lambda m, t: m.tensor_split(t, spec, -1), rand(2, 0))


def test_tensor_split_tensor_spec_and_errors():
    compare(lambda m, t: m.tensor_split(t, ix(m, 2)), rand(5))
    compare(lambda m, t: m.tensor_split(t, ix(m, [1, 3])), rand(5))
    raises_like_torch(lambda m, t: m.tensor_split(t, 0), rand(3))
    raises_like_torch(lambda m, t: m.tensor_split(t, 2), rand())


@pytest.mark.parametrize("k", [-5, -1, 0, 1, 2, 3, 4])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (-1, 0), (2, 0)])
def test_rot90(k, dims):
    compare(lambda m, t: m.rot90(t, k, dims), rand(2, 3, 4))
    compare(lambda m, t: t.rot90(k, dims[:2] if max(dims) < 2 else (0, 1)), rand(1, 0))


def test_rot90_errors():
    raises_like_torch(lambda m, t: m.rot90(t), rand(3))
    raises_like_torch(lambda m, t: m.rot90(t, 1, (0, 0)), rand(2, 2))
    raises_like_torch(lambda m, t: m.rot90(t, 1, (0, 1, 2)), rand(2, 2, 2))


def test_repeat_interleave():
    compare(lambda m, t: m.repeat_interleave(t, 2), rand(2, 3))
    compare(lambda m, t: t.repeat_interleave(ix(m, [1, 0, 3]), dim=1), rand(2, 3))
    compare(lambda m, t: t.repeat_interleave(ix(m, [2]), dim=0), rand(2, 3))
    compare(lambda m, t: m.repeat_interleave(t, 3), rand())
    compare(lambda m, t: m.repeat_interleave(t, 2, dim=0), rand(0, 2))
    compare(lambda m, t: m.repeat_interleave(t, 2, dim=-1, output_size=6), np.array([1, 2, 3]))
    compare(lambda m, r: m.repeat_interleave(r), np.array([2, 0, 1]))
    raises_like_torch(lambda m, t: m.repeat_interleave(t, -1), rand(2))
    raises_like_torch(lambda m, t: m.repeat_interleave(t, ix(m, [1, 2]), dim=0), rand(3))


# -- float64 gradchecks ---------------------------------------------------------------------

def _i(values):
    return vt.tensor(values, dtype=vt.int64)


GRADCHECKS = {
    "take": (lambda x: vt.take(x, _i([[0, 5], [5, -1]])), [rand(2, 3)]),
    "put": (lambda x, s: vt.put(x, _i([1, 4]), s), [rand(2, 3), rand(2, seed=1)]),
    "put_acc": (lambda x, s: vt.put(x, _i([1, 1]), s, accumulate=True),
                [rand(2, 3), rand(2, seed=1)]),
    "index_copy": (lambda x, s: vt.index_copy(x, 1, _i([2, 0]), s),
                   [rand(2, 3), rand(2, 2, seed=1)]),
    "index_fill": (lambda x, v: vt.index_fill(x, 0, _i([1]), v), [rand(3, 2), rand()]),
    "index_put": (lambda x, v: vt.index_put(x, (_i([0, 2]),), v), [rand(3, 2), rand(2, seed=1)]),
    "index_put_acc": (lambda x, v: vt.index_put(x, (_i([0, 0]),), v, accumulate=True),
                      [rand(3, 2), rand(2, seed=1)]),
    "hstack": (lambda a, b: vt.hstack([a, b]), [rand(2, 1), rand(2, 2, seed=1)]),
    "vstack": (lambda a, b: vt.vstack([a, b]), [rand(2), rand(1, 2, seed=1)]),
    "dstack": (lambda a, b: vt.dstack([a, b]), [rand(2), rand(2, seed=1)]),
    "column_stack": (lambda a, b: vt.column_stack([a, b]), [rand(2), rand(2, 2, seed=1)]),
    "tensor_split": (lambda x: vt.tensor_split(x, [1, 3], dim=1), [rand(2, 4)]),
    "rot90": (lambda x: vt.rot90(x, 3, (1, 0)), [rand(2, 3)]),
    "repeat_interleave": (lambda x: vt.repeat_interleave(x, _i([2, 0, 1]), dim=0), [rand(3, 2)]),
}
for _r in REDUCES:
    for _inc in (True, False):
        GRADCHECKS[f"scatter_reduce_{_r}_{_inc}"] = (
            lambda x, s, r=_r, inc=_inc: vt.scatter_reduce(
                x, 0, _i([[0, 1], [0, 0], [2, 1]]), s, r, include_self=inc),
            [rand(3, 2, low=0.5, high=2), rand(3, 2, seed=1, low=0.5, high=2)])


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck(name):
    fn, arrays = GRADCHECKS[name]
    check_grad(fn, *arrays)
