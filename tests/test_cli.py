"""The ``volta`` command line and the benchmark runner behind ``volta bench``."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import volta_core as vt
from volta_core import cli
from volta_core.backend import Backend, hookimpl, register_plugin, unregister_plugin

ROOT = Path(__file__).resolve().parents[1]


def volta(*args: str, env: dict | None = None, timeout: float = 300
          ) -> subprocess.CompletedProcess:
    """Run ``python -m volta_core.cli ARGS`` from the repository root."""
    full_env = {k: v for k, v in os.environ.items() if k != "VOLTA_DEVICE"}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "volta_core.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, env=full_env, timeout=timeout)


def load_runner():
    spec = importlib.util.spec_from_file_location("volta_bench_run_test",
                                                  ROOT / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# -- volta info -----------------------------------------------------------------------------

def test_info_lists_backends_devices_default_and_auto():
    out = volta("info", env={"VOLTA_DEVICE": "cpu"})
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert f"Volta {vt.__version__}" in text and "Python 3." in text
    assert "Backends:" in text
    assert any(line.split()[:3] == ["numpy", "cpu", "available"]
               for line in text.splitlines()), text
    assert "cpu:0" in text
    assert "Default device: cpu (VOLTA_DEVICE=cpu)" in text
    assert "device='auto' picks: " in text
    for row in vt.backends():  # every unavailable backend is shown with its reason
        if not row.available:
            assert f"unavailable: {row.reason}" in text


class _NoHardware(Backend):
    name, device_type, extra = "clitest", "clitestdev", "clitest"

    def unavailable_reason(self) -> str:
        return "No module named 'clitestlib'"


class _Plugin:
    @hookimpl
    def volta_backends(self):
        return [_NoHardware()]


def test_info_shows_reason_and_install_hint_of_unavailable_backend(capsys):
    register_plugin(_Plugin(), name="clitest-plugin")
    try:
        assert cli.main(["info"]) == 0
        text = capsys.readouterr().out
        assert "clitest  clitestdev  unavailable: No module named 'clitestlib'" in text
        assert "install: pip install 'volta[clitest]'" in text
        assert cli.main(["info", "--json"]) == 0
        info = json.loads(capsys.readouterr().out)
    finally:
        unregister_plugin("clitest-plugin")
    rows = {b["name"]: b for b in info["backends"]}
    assert rows["clitest"]["available"] is False
    assert rows["clitest"]["reason"] == "No module named 'clitestlib'"
    assert rows["numpy"]["devices"][0]["device"] == "cpu:0"
    assert rows["numpy"]["devices"][0]["name"]
    assert info["default_device"] == str(vt.get_default_device())


def test_info_reports_a_bad_volta_device_instead_of_crashing():
    out = volta("info", env={"VOLTA_DEVICE": "nosuch:x"})
    assert out.returncode == 0, out.stderr
    assert "Default device: error: the default device comes from the environment variable " \
           "VOLTA_DEVICE='nosuch:x', which cannot be used: invalid device string" in out.stdout


def test_importing_the_cli_loads_no_array_library():
    code = ("import sys, volta_core.cli; print([m for m in ('numpy', 'cupy', 'wgpu', "
            "'torch', 'array_api_compat') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_no_command_prints_help_and_unknown_command_fails():
    out = volta()
    assert out.returncode == 0 and "info" in out.stdout and "bench" in out.stdout
    assert volta("nosuch").returncode == 2


# -- volta conformance ------------------------------------------------------------------------

def test_conformance_help_is_forwarded():
    out = volta("conformance", "--help")
    assert out.returncode == 0, out.stderr
    assert "--backend" in out.stdout and "--report" in out.stdout


def test_conformance_without_its_package_says_so(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "volta_conformance", None)
    assert cli.main(["conformance", "--backend", "numpy"]) == 2
    err = capsys.readouterr().err
    assert "'volta_conformance' is not importable" in err and "pip install -e ." in err


# -- volta bench ------------------------------------------------------------------------------

def test_bench_op_quick_writes_combined_json(tmp_path):
    path = tmp_path / "bench.json"
    out = volta("bench", "op", "--quick", "--json", str(path))
    assert out.returncode == 0, out.stdout + out.stderr
    result = json.loads(path.read_text())
    assert result["quick"] is True
    assert result["machine"]["cpu"] and result["machine"]["cores"]
    assert [b["name"] for b in result["benchmarks"]] == ["op"]
    assert result["benchmarks"][0]["status"] == "ok"
    assert "--ops 20" in result["benchmarks"][0]["command"]
    (row,) = result["rows"]
    assert row["benchmark"] == "op" and row["unit"] == "us/op" and row["volta"] > 0
    assert "cpu" in result["device_names"]
    if importlib.util.find_spec("torch") is not None:
        assert row["peer"] > 0 and row["time_ratio"] > 0
    assert "time ratio" in out.stdout and "elementwise chain" in out.stdout


def test_bench_rejects_unknown_benchmark():
    out = volta("bench", "nosuch")
    assert out.returncode == 2 and "unknown benchmark" in out.stderr


def test_bench_without_runner_says_where_it_lives(monkeypatch, capsys):
    monkeypatch.setattr(cli, "find_benchmarks", lambda: None)
    assert cli.main(["bench", "op"]) == 2
    assert "source repository" in capsys.readouterr().err


def test_runner_reads_options_from_help(tmp_path):
    run = load_runner()
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent("""
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("--json", metavar="PATH")
        p.add_argument("--quick", action="store_true")
        p.add_argument("--workers", type=int, nargs="+")
        p.parse_args()
    """))
    options = run.program_options(prog)
    assert options == {"--help": False, "--json": True, "--quick": False, "--workers": True}
    bench = run.Benchmark("x", "prog.py", "x", ("--quick", "--workers", "0", "--nope", "1"))
    cmd, mode = run.command_for(bench, run.program_options(prog), "cpu", True,
                                tmp_path / "o.json")
    assert cmd[2:] == ["--quick", "--workers", "0", "--json", str(tmp_path / "o.json")]
    assert mode == "file"
    _, mode = run.command_for(bench, {"--json": False}, None, False, tmp_path / "o.json")
    assert mode == "stdout"


def test_runner_rows_ratios_and_markdown():
    run = load_runner()
    records = [
        {"name": "op", "file": "op_overhead.py", "title": "op", "status": "ok",
         "raw": {"device": "cpu", "volta_us_per_op": 20.0, "torch_us_per_op": 10.0}},
        {"name": "train", "file": "train_step.py", "title": "train", "status": "ok",
         "raw": [{"model": "mlp", "device": "cpu", "volta_ms": 3.0, "torch_ms": 4.0}]},
        {"name": "dataloader", "file": "dataloader.py", "title": "dl", "status": "ok",
         "raw": {"results": [{"dataset": "tensor", "num_workers": 0,
                              "volta_batches_s": 200.0, "torch_batches_s": 100.0}]}},
        {"name": "wgpu", "file": "wgpu_kernels.py", "title": "wgpu", "status": "ok",
         "raw": {"volta": {"adapter": "GPU X", "matmul_tflops": 5.0},
                 "torch": {"device": "H100", "matmul_tflops": 50.0}}},
    ]
    rows = [r for rec in records for r in run.rows_for(rec, "cpu")]
    ratios = {r["case"]: round(r["time_ratio"], 3) for r in rows}
    assert ratios == {"elementwise chain, fwd + bwd": 2.0, "train step: mlp": 0.75,
                      "DataLoader: tensor, 0 workers": 0.5, "wgpu: matmul": 10.0}
    units = [r["unit"] for r in rows]
    assert units == ["us/op", "ms/step", "batches/s", "TFLOP/s"]
    result = {"date": "2025-01-01", "command": "python benchmarks/run.py", "quick": False,
              "machine": {"cpu": "Test CPU", "cores": 2, "os": "Linux", "python": "3.11",
                          "numpy": "2.0", "torch": None, "volta_core": "0.1.0",
                          "load_average": [1.0, 2.0, 3.0]},
              "device_names": {"cpu": "Test CPU"}, "rows": rows, "benchmarks": records}
    page = run.markdown(result)
    assert "| CPU | Test CPU |" in page and "| PyTorch | not installed" in page
    assert "| elementwise chain, fwd + bwd | cpu (Test CPU) | 20 |" in page
    assert "cuda (H100)" in page and "2.00x" in page and "shared" in page
