"""volta_wgpu.profiler: GPU time per kernel from timestamps written around each dispatch."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def profile(xp):
    from volta_wgpu import profiler
    from volta_wgpu.engine import get_engine
    if not profiler.available(get_engine(0)):
        pytest.skip("the adapter cannot write timestamps inside compute passes")
    return profiler.profile


def test_every_dispatch_is_timed_and_named(xp, eager, profile):
    """Each dispatch of the block gets a time, over several submissions (300 small ops
    go out in batches of at most 64), named by its kernel; results stay right."""
    from volta_wgpu.engine import get_engine
    eng = get_engine(0)
    x = xp.asarray(np.ones((64, 64), np.float32))
    d0, s0 = eng.dispatch_count, eng.submit_count
    with profile() as prof:
        y = xp.matmul(x, x)
        for _ in range(300):
            y = xp.add(y, 1.0)
        z = xp.sum(y, axis=0)
    assert eng.submit_count - s0 > 3
    assert len(prof.times) == eng.dispatch_count - d0
    assert all(t >= 0 for _, t in prof.times) and prof.total() > 0
    names = list(prof.totals())
    assert any(n.startswith("matmul") for n in names)
    assert any(n.startswith("reduce/sum") for n in names)
    assert sum(n for n, _ in prof.totals().values()) == len(prof.times)
    assert "all kernels" in prof.table()
    np.testing.assert_array_equal(xp.to_numpy(z), np.full(64, 64 * 364, np.float32))


def test_fused_kernels_are_named_by_their_expressions(xp, profile):
    if not xp.is_lazy():
        pytest.skip("lazy mode is off")
    x = xp.asarray(np.ones(1000, np.float32))
    with profile() as prof:
        y = xp.multiply(xp.add(x, 2.0), 3.0)
        xp.to_numpy(y)
    assert any(n.startswith("lazy: ") and "*" in n and "+" in n for n in prof.totals())


def test_nothing_is_timed_outside_the_block(xp, profile):
    from volta_wgpu.engine import get_engine
    x = xp.asarray(np.ones(8, np.float32))
    with profile() as prof:
        pass
    xp.to_numpy(xp.add(x, 1.0))
    assert prof.times == [] and get_engine(0)._profile is None


def test_the_profile_benchmark_runs(xp, profile, capsys):
    """``benchmarks/wgpu_profile.py`` on a tiny MLP: the kernel table and its total."""
    import importlib.util
    import pathlib
    import sys

    bench = pathlib.Path(__file__).resolve().parents[2] / "benchmarks"
    sys.path.insert(0, str(bench))
    try:
        spec = importlib.util.spec_from_file_location("wgpu_profile", bench / "wgpu_profile.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        assert mod.main(["--smoke", "--models", "mlp", "--rows", "3"]) == 0
    finally:
        sys.path.remove(str(bench))
    out = capsys.readouterr().out
    assert "== mlp on" in out and "all kernels" in out
