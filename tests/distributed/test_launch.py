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


def test_two_nodes_of_two_ranks_on_one_host():
    """Two volta-run launchers (--nnodes 2, --node-rank 0/1) form one 4-rank job."""
    import socket
    import subprocess
    import sys

    from dist_helpers import ROOT, job_env

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    cmd = [sys.executable, "-m", "volta_core.distributed.launch", "--nnodes", "2", "--nproc",
           "2", "--master-addr", "127.0.0.1", "--master-port", port, "--timeout", "80"]
    nodes = [subprocess.Popen([*cmd, "--node-rank", str(n), str(WORKERS / "multinode.py"),
                               "--x", str(n)], env=job_env(), cwd=ROOT, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for n in (1, 0)]  # node 1 first: its ranks wait for node 0's store
    outs = []
    for p in nodes:
        try:
            outs.append(p.communicate(timeout=90))
        except subprocess.TimeoutExpired:
            for q in nodes:
                q.kill()
            raise AssertionError("the 2-node job hung") from None
    text = "\n".join(o + e for o, e in outs)
    assert all(p.returncode == 0 for p in nodes), text
    for node, local in [(0, 0), (0, 1), (1, 0), (1, 1)]:
        rank = 2 * node + local
        assert f"[rank {rank}] node {node} local {local}: rank {rank} of 4 OK " \
               f"args=['--x', '{node}']" in text, text
