"""The suite fails exactly the broken cases of a deliberately broken backend."""

from __future__ import annotations

from volta_conformance import run_suite
from volta_conformance.cli import main


def _by_status(results):
    out = {"pass": set(), "fail": set(), "unsupported": set()}
    for r in results:
        out[r.status].add(r.id)
    return out


def test_wrong_gradient_fails_exactly_the_embedding_cases(broken_backends):
    pattern = "nn.Embedding/ or functional.embedding/ or linear or relu/basic or Cosine"
    reference = _by_status(run_suite("numpy", pattern=pattern))
    broken = run_suite("broken_grad", pattern=pattern)
    got = _by_status(broken)
    expected = {i for i in reference["pass"]
                if i.startswith(("nn.Embedding/", "nn.functional.embedding/"))}
    assert len(expected) >= 8
    assert got["fail"] == expected
    assert got["pass"] == reference["pass"] - expected
    for r in broken:
        if r.status == "fail":  # forward outputs pass, only gradients differ
            assert "grad" in r.detail and "out0" not in r.detail, r.detail


def test_wrong_dtype_fails_exactly_the_log2_cases(broken_backends):
    pattern = "log or exp2/basic"
    reference = _by_status(run_suite("numpy", pattern=pattern))
    broken = run_suite("broken_dtype", pattern=pattern)
    got = _by_status(broken)
    expected = {i for i in reference["pass"] if i.startswith("log2/")}
    # vt.log2_ runs log2: it fails too where the wrong dtype reaches its result (float64;
    # a float32 self keeps its dtype)
    inplace = {i for i in got["fail"] if i.startswith("log2_/")}
    assert len(expected) >= 10
    assert got["fail"] - inplace == expected
    assert got["pass"] == reference["pass"] - expected - inplace
    assert any("dtype float64, expected float32" in r.detail for r in broken)


def test_cli_exit_code_reflects_failures(broken_backends, tmp_path, capsys):
    report = tmp_path / "r.md"
    assert main(["--backend", "broken_dtype", "-k", "log2/basic", "--report",
                 str(report)]) == 1
    assert main(["--backend", "broken_dtype", "-k", "exp/basic"]) == 0
    text = report.read_text()
    assert "**fail**" in text and "log2/basic" in text
    assert text.rstrip().splitlines()[-1] == "0 passed, 2 failed, 0 unsupported"
    assert "FAIL log2/basic[float32]" in capsys.readouterr().out


def test_template_backend_works_out_of_the_box():
    import importlib.util
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "plugins" / "template"
    if importlib.util.find_spec("array_api_strict") is None:
        import pytest

        pytest.skip("array-api-strict is not installed")
    sys.path.insert(0, str(root))
    try:
        import volta_mybackend.plugin as plugin

        from volta_core.backend import register_plugin, unregister_plugin

        register_plugin(plugin, name="volta-template-test")
        try:
            results = run_suite("mybackend", pattern="add/ or matmul or nn.Linear or mlp_sgd")
        finally:
            unregister_plugin("volta-template-test")
    finally:
        sys.path.remove(str(root))
    assert results and not [r.id for r in results if r.status == "fail"]
    assert sum(r.status == "pass" for r in results) > 50
