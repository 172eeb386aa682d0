"""Unit tests of the harness, tolerances and reports."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
from volta_conformance import Arg, OpCase, Result, run_case
from volta_conformance.harness import compare, matches, select
from volta_conformance.report import summary_line, to_json, to_markdown
from volta_conformance.tolerances import DEFAULTS, GRAD_FACTOR, tolerance


def _r(a, dtype=None):
    a = np.asarray(a, dtype=dtype)
    return (a, str(a.dtype), "cpu")


def test_compare_checks_dtype_shape_and_values():
    ok, _ = compare("out0", _r([1.0, 2.0], "float32"), _r([1.0, 2.0], "float32"), None, 1, "cpu")
    assert ok is None
    bad, _ = compare("out0", _r([1.0], "float32"), _r([1.0], "float64"), None, 1, "cpu")
    assert "dtype float64, expected float32" in bad
    bad, _ = compare("out0", _r([1.0, 2.0]), _r([[1.0, 2.0]]), None, 1, "cpu")
    assert "shape" in bad
    bad, err = compare("out0", _r([1.0, 2.0]), _r([1.0, 2.5]), None, 1, "cpu")
    assert "max error 0.5" in bad and err == pytest.approx(0.5)
    bad, _ = compare("out0", _r([1, 2]), _r([1, 3]), None, 1, "cpu")
    assert "1 of 2 values differ" in bad
    bad, _ = compare("out0", _r([np.nan, 1.0]), _r([0.0, 1.0]), None, 1, "cpu")
    assert "NaN" in bad
    assert compare("out0", _r([np.inf]), _r([np.inf]), None, 1, "cpu")[0] is None
    bad, _ = compare("out0", _r([1.0]), (np.ones(1), "float64", "strict:0"), None, 1, "cpu")
    assert "on device strict:0" in bad


def test_tolerances_default_override_and_grad_factor():
    assert DEFAULTS["float64"][0] < DEFAULTS["float32"][0] < DEFAULTS["float16"][0]
    assert 1e-5 <= DEFAULTS["float32"][0] <= 1e-4
    assert tolerance("int32") == (0.0, 0.0)
    backend = SimpleNamespace(tolerances={"float32": (1e-3, 1e-4)})
    assert tolerance("float32", backend) == (1e-3, 1e-4)
    r, a = tolerance("float32", backend, scale=2.0, grad=True)
    assert r == pytest.approx(2e-3 * GRAD_FACTOR) and a == pytest.approx(2e-4 * GRAD_FACTOR)
    near = (_r([1.0], "float32"), _r([1.0005], "float32"))
    assert compare("out0", *near, None, 1, "cpu")[0] is not None
    assert compare("out0", *near, backend, 1, "cpu")[0] is None


def test_select_and_k_patterns():
    assert matches("add/basic[float32]", "add")
    assert matches("add/basic[float32]", "mul or add")
    assert not matches("add/basic[float32]", "add and nothing")
    assert matches("add/basic[float32]", "add and float32")
    assert matches("add/basic[float32]", "mul, add")
    assert not matches("add/large[float32]", "not large")
    assert matches("add/basic[float32]", "not large")
    cases = [OpCase("x/a", "add", ("float32", "float16", "int64")),
             OpCase("x/large", "add", ("float32",), large=True),
             OpCase("x/large_default", "add", ("float32",), large=True, default=True)]
    ids = {f"{c.name}[{d}]" for c, d in select(cases)}
    assert ids == {"x/a[float32]", "x/a[int64]", "x/large_default[float32]"}
    ids = {f"{c.name}[{d}]" for c, d in select(cases, ["float16"], large=True)}
    assert ids == {"x/a[float16]"}
    assert len(select(cases, large=True)) == 4


def test_unsupported_is_never_a_pass():
    missing = OpCase("nope/basic", "no_such_op_anywhere", ("float32",), args=(Arg((2,)),))
    r = run_case(missing, "float32", "cpu")
    assert r.status == "unsupported" and "not implemented in volta_core yet" in r.detail

    def raises(x):
        raise NotImplementedError("no kernel for this")

    r = run_case(OpCase("ni/basic", "add", ("float32",), args=(Arg((2,)),), fn=raises),
                 "float32", "cpu")
    assert r.status == "unsupported" and "NotImplementedError" in r.detail
    r = run_case(OpCase("u/basic", "add", ("uint32",), args=(Arg((2,)), Arg((2,)))),
                 "complex64", "cpu")
    assert r.status == "unsupported" and "complex64" in r.detail


def test_declared_unsupported_pattern(monkeypatch):
    from volta_core import Device

    backend = Device("cpu").backend
    monkeypatch.setattr(backend, "unsupported", {"add/*[float64]": "no float64 adds"},
                        raising=False)
    case = OpCase("add/x", "add", ("float32", "float64"), args=(Arg((2,)), Arg((2,))))
    assert run_case(case, "float32", "cpu").status == "pass"
    r = run_case(case, "float64", "cpu")
    assert r.status == "unsupported" and "no float64 adds" in r.detail


def test_reference_against_itself_takes_the_transfer_path(monkeypatch):
    from volta_core import Device

    backend = Device("cpu").backend
    calls = {"from_host": 0, "to_host": 0}
    for name in calls:
        original = getattr(backend, name)

        def counted(*a, _name=name, _f=original, **k):
            calls[_name] += 1
            return _f(*a, **k)

        monkeypatch.setattr(backend, name, counted)
    r = run_case(OpCase("add/t", "add", ("float32",), args=(Arg((2,)), Arg((2,)))),
                 "float32", "cpu")
    assert r.status == "pass"
    assert calls["from_host"] >= 2 * 3 and calls["to_host"] >= 2 * 3  # 2 runs x (in, out)


def test_failing_case_reports_the_error():
    wrong = OpCase("add/wrong", "add", ("float32",), args=(Arg((3,)),),
                   fn=lambda x: x + _device_bias(x))
    r = run_case(wrong, "float32", "cpu")
    assert r.status == "pass"  # same on both sides: cpu is the reference
    crash = OpCase("add/crash", "add", ("float32",), args=(Arg((3,)),),
                   fn=lambda x: x.reshape(7))
    r = run_case(crash, "float32", "cpu")
    assert r.status == "fail" and "reference run failed" in r.detail


def _device_bias(x):
    return 0.0


def test_report_formats_end_with_the_summary_line():
    results = [Result("add/a", "add", "float32", "pass"),
               Result("add/a", "add", "float64", "fail", "out0: max error 1", 1.0),
               Result("mul/a", "mul", "float32", "unsupported", "dtype lacking")]
    assert summary_line(results) == "1 passed, 1 failed, 1 unsupported"
    md = to_markdown(results, {"backend": "x"})
    assert md.rstrip().splitlines()[-1] == "1 passed, 1 failed, 1 unsupported"
    assert "**fail** (1)" in md and "dtype lacking" in md
    by_op = to_markdown(results, {"backend": "x"}, by_op=True)
    assert "| `add` |" in by_op
    data = json.loads(to_json(results, {"backend": "x"}))
    assert data["summary"] == "1 passed, 1 failed, 1 unsupported"
    assert {r["status"] for r in data["results"]} == {"pass", "fail", "unsupported"}
