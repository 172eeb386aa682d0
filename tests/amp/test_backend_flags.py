"""vt.backends: still callable (lists backends), PyTorch's TF32 and cuDNN flags."""

from __future__ import annotations

import importlib

import pytest

import volta_core as vt


def test_backends_is_callable_and_a_package():
    rows = vt.backends()
    assert any(r.name == "numpy" and r.available for r in rows)
    assert "numpy" in repr(rows)
    cudnn = importlib.import_module("volta_core.backends.cudnn")
    assert cudnn is vt.backends.cudnn


def test_defaults_match_pytorch():
    assert vt.backends.cuda.matmul.allow_tf32 is False
    assert vt.get_float32_matmul_precision() == "highest"
    assert vt.backends.cudnn.allow_tf32 is True
    assert vt.backends.cudnn.enabled is True
    assert vt.backends.cudnn.benchmark is False
    assert vt.backends.cudnn.deterministic is False


def test_tf32_flag_and_matmul_precision_are_one_setting():
    try:
        vt.backends.cuda.matmul.allow_tf32 = True
        assert vt.get_float32_matmul_precision() == "high"
        vt.set_float32_matmul_precision("highest")
        assert vt.backends.cuda.matmul.allow_tf32 is False
        vt.set_float32_matmul_precision("medium")
        assert vt.backends.cuda.matmul.allow_tf32 is True
        with pytest.raises(ValueError, match="highest"):
            vt.set_float32_matmul_precision("low")
    finally:
        vt.set_float32_matmul_precision("highest")


def test_cudnn_flags_are_settable():
    try:
        vt.backends.cudnn.allow_tf32 = False
        vt.backends.cudnn.benchmark = True
        assert vt.backends.cudnn.allow_tf32 is False and vt.backends.cudnn.benchmark is True
    finally:
        vt.backends.cudnn.allow_tf32 = True
        vt.backends.cudnn.benchmark = False


def test_cudnn_availability_without_a_gpu():
    if vt.cuda.is_available():
        pytest.skip("a CUDA device is present (tests/amp/test_cuda_amp.py covers it)")
    assert vt.backends.cudnn.is_available() is False
    assert vt.backends.cudnn.version() is None
