"""The whole default suite: NumPy against itself, the strict backend, the pytest plugin."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from volta_conformance import run_suite

ROOT = Path(__file__).resolve().parents[2]


def _failures(results):
    return [f"{r.id}: {r.detail}" for r in results if r.status == "fail"]


def test_numpy_reference_passes_against_itself():
    results = run_suite("numpy")
    assert len(results) > 1000
    assert not _failures(results), "\n".join(_failures(results))
    unsupported = [r for r in results if r.status == "unsupported"]
    assert all("not implemented in volta_core yet" in r.detail for r in unsupported)


def test_strict_backend_passes():
    from volta_core.backend import get_backend

    try:
        backend = get_backend("strict")
    except Exception:
        pytest.skip("volta-strict is not installed (pip install -e ./plugins/volta-strict)")
    if backend.unavailable_reason():
        pytest.skip(backend.unavailable_reason())
    results = run_suite("strict")
    assert not _failures(results), "\n".join(_failures(results))
    assert any(r.dtype == "float64" and r.status == "pass" for r in results)


def test_pytest_plugin_generates_one_item_per_case_and_dtype(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT / "conformance"), os.environ.get("PYTHONPATH", "")]))
    from importlib.metadata import entry_points

    installed = any(ep.value == "volta_conformance.plugin"
                    for ep in entry_points(group="pytest11"))
    load = [] if installed else ["-p", "volta_conformance.plugin"]
    cmd = [sys.executable, "-m", "pytest", *load, "--volta-backend", "numpy",
           "-k", "matmul/mm or no_such_op", "-q", "-p", "no:cacheprovider",
           "--rootdir", str(tmp_path)]
    out = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout  # matmul/mm in float64 and float32


def test_cli_module_runs_and_writes_json(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT / "conformance"), os.environ.get("PYTHONPATH", "")]))
    report = tmp_path / "r.json"
    out = subprocess.run([sys.executable, "-m", "volta_conformance", "--backend", "numpy",
                          "-k", "add/same", "--dtypes", "float32,float64", "--report",
                          str(report)], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.rstrip().splitlines()[-1] == "2 passed, 0 failed, 0 unsupported"
    assert '"summary": "2 passed, 0 failed, 0 unsupported"' in report.read_text()
