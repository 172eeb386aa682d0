"""Two-rank jobs under mpirun with the MPI engine: collectives, DDP, failure teardown."""

from __future__ import annotations

import pytest
from dist_helpers import job_env, mpi_skip_reason, run_mpi

pytestmark = pytest.mark.skipif(mpi_skip_reason() is not None,
                                reason=mpi_skip_reason() or "")


def test_collectives_values_on_two_ranks():
    out = run_mpi("collectives.py", "mpi")
    assert out.returncode == 0, out.stdout + out.stderr
    for rank in (0, 1):
        assert f"rank {rank}: collectives OK" in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("n,extra", [(2, ()), (4, ()), (4, ("deferred",))])
def test_ddp_matches_single_process_on_concatenated_batch(n, extra):
    out = run_mpi("ddp_mlp.py", "mpi", *extra, n=n, timeout=90)
    assert out.returncode == 0, out.stdout + out.stderr
    for rank in range(n):
        assert f"rank {rank}: DDP matches single process" in out.stdout, out.stdout + out.stderr


def test_a_failing_rank_brings_the_job_down_instead_of_hanging():
    out = run_mpi("crash.py", "mpi", timeout=45)
    assert out.returncode != 0
    assert "deliberate failure on the last rank" in out.stderr
    assert "unreachable" not in out.stdout


def test_mpi_engine_is_discovered_and_nccl_reports_why(monkeypatch):
    import subprocess
    import sys

    code = ("import volta_core.distributed as d\n"
            "for e in d.engines(): print(e)\n")
    env = job_env()
    env["VOLTA_COMM_PLUGINS"] += ",volta_cupy.nccl"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=60)
    assert "mpi (cpu): available" in out.stdout, out.stdout + out.stderr
    assert "nccl (cuda):" in out.stdout, out.stdout + out.stderr
