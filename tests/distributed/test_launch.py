"""volta-run: environment, output prefixes, rendezvous, and teardown when a rank fails."""

from __future__ import annotations

import time

from dist_helpers import WORKERS, run_launcher


def test_volta_run_starts_ranks_that_meet_through_the_store():
    out = run_launcher("--nproc", "2", str(WORKERS / "launched.py"), "ok", "--lr", "0.1")
    assert out.returncode == 0, out.stdout + out.stderr
    for rank in (0, 1):
        assert f"[rank {rank}] saw ['from 0', 'from 1'] args=['--lr', '0.1']" in out.stdout, (
            out.stdout + out.stderr)


def test_volta_run_kills_the_other_ranks_when_one_fails():
    start = time.monotonic()
    out = run_launcher("--nproc", "2", "--kill-timeout", "3", str(WORKERS / "launched.py"),
                       "crash", timeout=60)
    elapsed = time.monotonic() - start
    assert out.returncode != 0
    assert "[rank 1] rank 1 fails on purpose" in out.stderr, out.stderr
    assert "volta-run: rank 1 exited with code 1" in out.stderr, out.stderr
    assert elapsed < 30, f"teardown took {elapsed:.1f} s"


def test_volta_run_timeout_ends_a_stuck_job():
    out = run_launcher("--nproc", "1", "--timeout", "2", "--kill-timeout", "1",
                       str(WORKERS / "launched.py"), "hang", timeout=30)
    assert out.returncode == 124, out.stdout + out.stderr
    assert "exceeded --timeout" in out.stderr
