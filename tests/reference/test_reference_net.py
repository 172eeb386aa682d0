"""The reference net in CI: seeded random programs on PyTorch CPU and on Volta.

Fixed budget, reproducible: programs ``0..N-1`` drawn from ``random.Random(seed)``
(3,000 on cpu, 300 on wgpu; wgpu is skipped with the reason when it is not usable).
A disagreement fails the test unless its signature is a deliberate difference or a
known-open bug (``reference/known.py``); the failure message shows each new signature
with its program shrunk to a few lines of Volta code. A small Hypothesis run explores
beyond the seeds (derandomized, so CI stays reproducible) and shrinks by itself.

Reproduce or explore from ``tests/``: ``python -m reference.campaign --device cpu
--programs 30000``; ``--replay SEED`` shrinks one program.
"""

from __future__ import annotations

import collections
import os
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import volta_core as vt
from reference.campaign import device_dtypes, run_isolated, run_one, shrink_isolated, shrunk
from reference.choices import Choices
from reference.compare import check, repro
from reference.known import classify
from reference.program import generate

BUDGET = {"cpu": int(os.environ.get("VOLTA_REFNET_CPU", "3000")),
          "wgpu": int(os.environ.get("VOLTA_REFNET_WGPU", "300"))}


def _unusable(device: str) -> str | None:
    try:
        vt.zeros(2, device=device).sum().item()
    except Exception as exc:
        return f"device {device!r} is not usable here: {type(exc).__name__}: {exc}"
    return None


def _run(device: str, n: int) -> str:
    """Report of the new (not deliberate, not known) disagreements of programs 0..n-1.

    wgpu programs run in child processes: a driver abort is reported, not fatal.
    """
    dtypes = device_dtypes(device)
    isolate = device != "cpu"
    new: collections.Counter[str] = collections.Counter()
    first = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if isolate:
            results = run_isolated(0, n, device)
        else:
            results = ((seed, run_one(seed, device, dtypes)) for seed in range(n))
        for seed, result in results:
            if isinstance(result, tuple):
                _, m, record = result
                sig = None if m is None else m.signature
            else:
                sig, record = result, None
            if sig is not None and classify(sig)[0] == "new":
                new[sig] += 1
                first.setdefault(sig, (seed, record))
        lines = []
        for i, (sig, count) in enumerate(new.most_common()):
            seed, record = first[sig]
            if i >= 3:  # shrinking costs time: show the first few in full
                body = (f"(shrink with: python -m reference.campaign --device {device} "
                        f"--replay {seed})")
            elif isolate:
                body = shrink_isolated(seed, device, 60)
            else:
                prog, m = shrunk(record, sig, device, dtypes, max_tries=60)
                body = repro(prog, m, device) if m is not None else "(did not recur)"
            lines.append(f"--- {sig}: {count} of {n} programs (seed {seed})\n{body}")
    return "\n".join(lines)


@pytest.mark.parametrize("device", ["cpu", "wgpu"])
def test_programs_agree_with_pytorch(device):
    reason = _unusable(device)
    if reason:
        pytest.skip(reason)
    report = _run(device, BUDGET[device])
    assert not report, (
        "Volta disagrees with PyTorch where no deliberate difference or known-open bug "
        "says so (tests/reference/known.py):\n" + report)


@settings(max_examples=40, derandomize=True, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.integers(0, (1 << 16) - 1), max_size=300))
def test_hypothesis_explores_programs(record):
    # Hypothesis draws (and, on failure, shrinks) the choice sequence itself.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prog = generate(Choices(record=record))
        m = check(prog, "cpu")
    if m is not None and classify(m.signature)[0] == "new":
        pytest.fail(repro(prog, m))


def test_shrinking_keeps_the_signature():
    # The shrinker must hand back a program with the same failure, and no longer.
    dtypes = device_dtypes("cpu")
    for seed in range(200):
        prog, m, record = run_one(seed, "cpu", dtypes)
        if m is not None:
            small, m2 = shrunk(record, m.signature, "cpu", dtypes, max_tries=40)
            assert m2 is not None and m2.signature == m.signature
            assert len(small.stmts) <= len(prog.stmts)
            return
    pytest.skip("no disagreement left in the first 200 programs to shrink")


def test_agreeing_program_agrees():
    # A sanity check of the harness itself: the simplest program agrees.
    prog = generate(Choices(record=[]))
    assert check(prog, "cpu") is None, prog.source()
