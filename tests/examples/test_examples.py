"""Run every example in ``--smoke`` mode in a subprocess: exit code 0 and its ``PASS:`` line.

Each example checks its own (looser, in smoke mode) success criterion and prints one line
starting ``PASS:`` when it holds, so an example whose results drift gets caught here.
Outputs go to a temporary folder; the device is the CPU unless ``VOLTA_DEVICE`` says
otherwise.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

SMOKE_RUNS = [
    ["xor_mlp.py"],
    ["lenet_cnn.py"],
    ["showcase.py"],
    ["polynomial_regression.py"],
    ["lstm_timeseries.py"],
    ["char_lm.py", "--model", "lstm"],
    ["char_lm.py", "--model", "transformer"],
    ["vae_digits.py"],
    ["dcgan_digits.py"],
    ["super_resolution.py"],
    ["load_pytorch_weights.py"],
    ["gpu_training.py", "--device", "cpu"],
    ["train_digits.py"],
    ["export_onnx.py"],
]


def test_every_example_is_covered() -> None:
    scripts = {p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")}
    covered = {run[0] for run in SMOKE_RUNS}
    assert scripts == covered, f"examples without a smoke test: {sorted(scripts - covered)}"


@pytest.mark.parametrize("argv", SMOKE_RUNS, ids=[" ".join(r) for r in SMOKE_RUNS])
def test_example_smoke(argv: list[str], tmp_path: Path) -> None:
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    cmd = [sys.executable, str(EXAMPLES / argv[0]), *argv[1:], "--smoke",
           "--out", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env,
                          cwd=tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{' '.join(argv)} failed ({proc.returncode}):\n{output}"
    assert any(line.startswith("PASS:") for line in proc.stdout.splitlines()), output


def test_train_digits_runs(tmp_path: Path) -> None:
    """The README's main job, shortened to two epochs with an explicit target."""
    env = dict(os.environ, MPLBACKEND="Agg")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    cmd = [sys.executable, str(EXAMPLES / "train_digits.py"), "--epochs", "2",
           "--target", "0.5", "--out", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test accuracy" in proc.stdout
    assert (tmp_path / "training_curves.png").exists()
