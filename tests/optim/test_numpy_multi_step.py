"""The NumPy backend's multi-tensor Adam/SGD steps (in place, in pieces over threads) give
the bits of the per-parameter steps, on any thread count and piece size."""

from __future__ import annotations

import numpy as np
import pytest

import volta_core as vt
from volta_core.backend import kernels as kernel_registry
from volta_core.optim import SGD, Adam, AdamW

optim_kernels = pytest.importorskip("volta_numpy.optim")

SHAPES = [(37, 19), (19,), (5, 3, 4), (), (1000,), (0, 3)]


def _params(dtype: str) -> list:
    rng = np.random.default_rng(1)
    return [vt.nn.Parameter(vt.tensor(rng.standard_normal(s).astype(dtype)))
            for s in SHAPES]


def _train(make_opt, dtype: str, steps: int = 4, foreach: bool | None = None) -> list:
    """Parameters and state after ``steps`` steps on fixed pseudo-random gradients."""
    params = _params(dtype)
    opt = make_opt(params, foreach)
    rng = np.random.default_rng(2)
    for _ in range(steps):
        for p in params:
            p.grad = vt.tensor(rng.standard_normal(p.shape).astype(dtype))
        opt.step()
    state = [v.numpy() for p in params for v in opt.state[p].values()
             if isinstance(v, vt.Tensor)]
    return [p.detach().numpy() for p in params] + state


CASES = {
    "adam": lambda ps, fe: Adam(ps, lr=0.01, foreach=fe),
    "adam_wd_max": lambda ps, fe: Adam(ps, lr=0.01, weight_decay=0.1, maximize=True,
                                       foreach=fe),
    "adamw": lambda ps, fe: AdamW(ps, lr=0.01, weight_decay=0.05, foreach=fe),
    "sgd": lambda ps, fe: SGD(ps, lr=0.1, foreach=fe),
    "sgd_momentum": lambda ps, fe: SGD(ps, lr=0.1, momentum=0.9, dampening=0.1,
                                       weight_decay=0.01, foreach=fe),
    "sgd_nesterov": lambda ps, fe: SGD(ps, lr=0.1, momentum=0.9, nesterov=True,
                                       maximize=True, foreach=fe),
}


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch):
    """Tiny groups still take the multi-tensor path (by default a group under two pieces'
    worth of elements is left to the per-parameter kernels)."""
    monkeypatch.setattr(optim_kernels, "MIN_PIECE", 1)


@pytest.fixture
def threads():
    before = vt.get_num_threads()
    yield vt.set_num_threads
    vt.set_num_threads(before)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n_threads,piece", [(1, 1), (2, 1), (2, 7), (1, 7), (2, 500)])
def test_multi_step_matches_per_parameter(case, dtype, n_threads, piece, threads,
                                          monkeypatch):
    threads(n_threads)
    monkeypatch.setattr(optim_kernels, "MIN_PIECE", piece)
    calls = []
    for name in ("adam_step_multi", "sgd_step_multi"):
        real = getattr(optim_kernels, name)
        monkeypatch.setitem(kernel_registry._cache, ("numpy", name),
                            lambda *a, _real=real, **k: calls.append(1) or _real(*a, **k))
    want = _train(CASES[case], dtype, foreach=False)
    assert not calls
    got = _train(CASES[case], dtype)
    assert calls  # the multi-tensor kernel ran (from the second step on)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


def test_updates_in_place_and_bumps_versions():
    p = vt.nn.Parameter(vt.ones(4, 3))
    view = p[1]
    opt = SGD([p], lr=0.5, momentum=0.9)
    for _ in range(2):
        p.grad = vt.ones(4, 3)
        data, version = p.array, p._version[0]
        opt.step()
    assert p.array is data  # the second step (buffers made) ran in place
    assert p._version[0] == version + 1
    np.testing.assert_array_equal(view.detach().numpy(), p.detach().numpy()[1])


def test_overlapping_arrays_take_the_per_parameter_path():
    base = np.zeros(8, np.float32)
    a, b = base[:6], base[4:]
    assert optim_kernels._overlap([a], [b])
    assert optim_kernels._overlap([a, b], [])
    assert not optim_kernels._overlap([base[:4]], [base[4:]])
    assert not optim_kernels._overlap([], [a, b])  # reads may overlap each other
    p, g = np.ones(4, np.float32), np.ones(4, np.float32)
    assert not optim_kernels.sgd_step_multi(
        np, [p], [p], [None], lr=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0,
        nesterov=False, maximize=False)
    assert optim_kernels.sgd_step_multi(
        np, [p], [g[::1]], [None], lr=0.5, momentum=0.0, dampening=0.0, weight_decay=0.0,
        nesterov=False, maximize=False)
    np.testing.assert_array_equal(p, np.full(4, 0.5, np.float32))


def test_non_contiguous_gradient():
    p = np.ones((3, 4), np.float32)
    g = np.arange(12, dtype=np.float32).reshape(4, 3).T  # a transposed view
    assert optim_kernels.sgd_step_multi(
        np, [p], [g], [None], lr=0.5, momentum=0.0, dampening=0.0, weight_decay=0.0,
        nesterov=False, maximize=False)
    np.testing.assert_array_equal(p, 1 - 0.5 * g)


def test_non_contiguous_parameter_and_buffer():
    """A Fortran-ordered parameter (a conv weight's gradient layout) is one whole piece."""
    p = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    buf = np.asfortranarray(np.ones((3, 4), np.float32))
    g = np.full((3, 4), 2, np.float32)
    want_buf = buf * 0.9 + g
    want_p = p - 0.5 * want_buf
    assert optim_kernels.sgd_step_multi(
        np, [p], [g], [buf], lr=0.5, momentum=0.9, dampening=0.0, weight_decay=0.0,
        nesterov=False, maximize=False)
    np.testing.assert_array_equal(buf, want_buf)
    np.testing.assert_array_equal(p, want_p)
    assert optim_kernels._overlap([p], [p.T])  # byte ranges of strided arrays
