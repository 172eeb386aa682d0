"""One wgpu device used by several threads, and tensors freed by the cyclic garbage collector.

The crash-prone cases run in a subprocess, so a crash inside wgpu-native (SIGSEGV,
SIGABRT) fails the test instead of killing the test run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
from vt_helpers import run_threads

import volta_core as vt


def _chain(a0: np.ndarray, iters: int) -> np.ndarray:
    a = vt.tensor(a0, device="wgpu")
    for _ in range(iters):
        a = (a @ a).tanh()
    return a.cpu().numpy()


def test_two_threads_matmul_tanh_equal_single_thread():
    rng = np.random.default_rng(0)
    starts = [rng.normal(scale=0.3, size=(24, 24)).astype(np.float32) for _ in range(2)]
    iters = 300
    alone = [_chain(a0, iters) for a0 in starts]
    got: dict[int, np.ndarray] = {}
    go = threading.Barrier(2)

    def run(i: int) -> None:
        go.wait()
        got[i] = _chain(starts[i], iters)

    run_threads(run, [(0,), (1,)])
    for i in range(2):
        np.testing.assert_array_equal(got[i], alone[i])
    # the device is still usable afterwards
    np.testing.assert_array_equal((vt.ones(3, device="wgpu") * 2).cpu().numpy(), [2, 2, 2])


def _run_script(src: str, timeout: float = 120) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(src)], capture_output=True,
                          text=True, timeout=timeout, env=dict(os.environ))
    assert proc.returncode == 0, (
        f"subprocess exited with {proc.returncode}\n--- stdout\n{proc.stdout[-3000:]}"
        f"\n--- stderr\n{proc.stderr[-3000:]}")
    return proc.stdout


def test_exception_kept_in_a_local_then_gc_collect():
    # the frame, the exception and its traceback form a cycle that holds wgpu tensors:
    # only the cyclic GC frees them, finalising the tensors and their buffers together
    out = _run_script("""
        import gc
        import numpy as np
        import volta_core as vt

        gc.disable()

        def f(n):
            a = vt.tensor(np.ones(n, dtype=np.float32), device="wgpu")
            b = a * 2
            try:
                raise ValueError("kept")
            except ValueError as e:
                err = e  # noqa: F841

        for i in range(20):
            f(1000 + 300 * i)
            gc.collect()
            x = vt.tensor(np.ones(1000 + 300 * i, dtype=np.float32), device="wgpu") * 3
            assert float((x * 3 + 1).sum()) == 10.0 * (1000 + 300 * i)
        print("ok")
    """)
    assert out.strip().endswith("ok")


def test_random_gc_interleavings_never_crash():
    # 1,000 gc.collect() calls (every generation) at random points of two threads' wgpu
    # work, over tensors held in reference cycles, plus gen-0 collections at arbitrary
    # allocations (threshold 50): finalisers then run inside the engine's critical sections
    out = _run_script("""
        import gc
        import random
        import threading
        import numpy as np
        import volta_core as vt

        N = 1000
        collected = [0]
        lock = threading.Lock()
        errors = []

        def maybe_collect(rng):
            if rng.random() < 0.5:
                with lock:
                    if collected[0] >= N:
                        return
                    collected[0] += 1
                # mostly young generations (where these cycles live): a full
                # collection of the whole heap takes ~15 ms on a slow machine
                gc.collect(rng.choice((0, 0, 1, 1, 1, 2)))

        def worker(seed):
            rng = random.Random(seed)
            host = np.random.default_rng(seed)
            try:
                while True:
                    with lock:
                        if collected[0] >= N:
                            return
                    n = rng.choice([7, 64, 300, 1000])
                    a_np = host.normal(size=n).astype(np.float32)
                    a = vt.tensor(a_np, device="wgpu")
                    maybe_collect(rng)
                    # a cycle holding tensors, one only uploaded (its buffer is in no
                    # cached bind group: the cycle holds the last reference to it)
                    node = {"t": a * 2, "u": vt.tensor(a_np[: rng.randint(1, n)],
                                                      device="wgpu")}
                    node["self"] = node
                    maybe_collect(rng)
                    try:
                        raise KeyError(n)
                    except KeyError as e:
                        kept = (e, a + 1)  # frame <-> traceback cycle
                    maybe_collect(rng)
                    m = (a.reshape(1, n) @ a.reshape(n, 1)).tanh()
                    del node, kept
                    maybe_collect(rng)
                    got = float(m.sum())
                    want = float(np.tanh(np.dot(a_np.astype(np.float64), a_np)))
                    assert abs(got - want) < 1e-3, (got, want)
            except BaseException as exc:
                errors.append(exc)

        gc.set_threshold(50, 5, 5)
        threads = [threading.Thread(target=worker, args=(s,)) for s in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert collected[0] == N, collected
        gc.collect()
        assert float((vt.ones(5, device="wgpu") + 1).sum()) == 10.0
        print("ok", collected[0])
    """)
    assert out.strip().endswith("ok 1000")
