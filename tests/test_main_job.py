"""The README's main job runs end to end (one epoch, as a smoke test)."""

import subprocess
import sys
from pathlib import Path

import volta_core as vt

ROOT = Path(__file__).resolve().parents[1]


def test_main_job_one_epoch_saves_checkpoint_and_plot(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "train_digits.py"), "--epochs", "1",
         "--device", "cpu", "--out", str(tmp_path), "--target", "0.7"],
        capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "test accuracy" in out.stdout
    ckpt, plot = tmp_path / "checkpoint.safetensors", tmp_path / "training_curves.png"
    assert f"checkpoint: {ckpt}" in out.stdout and f"plot:       {plot}" in out.stdout
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    state = vt.load(ckpt)
    assert state["epoch"] == 1 and "0.weight" in state["model"]
    assert len(state["history"]["test_acc"]) == 1
