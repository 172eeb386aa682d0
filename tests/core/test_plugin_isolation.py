"""One bad backend plugin never breaks Volta: failures stay with the plugin (issue 19)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from contextlib import contextmanager

import pytest

import volta_core as vt
from volta_core.backend import get_backend, hookimpl, register_plugin, unregister_plugin
from volta_core.cli import collect_info, format_info
from volta_core.errors import BackendUnavailableError, DeviceError

NumpyBackend = type(get_backend("numpy"))


def _backend(name: str, device_type: str, **methods):
    return type(name, (NumpyBackend,), {"name": name, "device_type": device_type,
                                        **methods})()


@contextmanager
def plugin(name: str, hook):
    class Plugin:
        @hookimpl
        def volta_backends(self):
            return hook()

    register_plugin(Plugin(), name=name)
    try:
        yield
    finally:
        unregister_plugin(name)


def _row(name: str):
    return {b.name: b for b in vt.backends()}[name]


def _cpu_still_works():
    assert vt.ones(2).sum().item() == 2.0
    assert vt.device("cpu").backend is get_backend("numpy")


def _raise(exc):
    raise exc


@pytest.mark.parametrize("exc", [RuntimeError("boom"), SystemExit(3), ImportError("lib")])
def test_hook_that_raises_is_contained(exc):
    with plugin("raiser", lambda: _raise(exc)):
        row = _row("raiser")
        assert not row.available and "its hook volta_backends raised" in row.reason
        assert type(exc).__name__ in row.reason
        _cpu_still_works()
        assert "raiser" in format_info(collect_info())
    _cpu_still_works()


@pytest.mark.parametrize("garbage", ["abc", 42, [object()], [None]])
def test_hook_that_returns_nonsense_is_contained(garbage):
    with plugin("garbage", lambda: garbage):
        row = _row("garbage")
        assert not row.available and "is broken: its hook volta_backends returned" in row.reason
        _cpu_still_works()


def test_a_plugin_cannot_take_over_cpu():
    with plugin("usurper", lambda: [_backend("usurper", "cpu")]):
        for _ in range(2):  # not after the first error either
            _cpu_still_works()
        row = _row("usurper")
        assert not row.available and "built-in backend 'numpy' serves" in row.reason
        assert _row("numpy").available


def test_two_plugins_claiming_one_type_name_both_and_the_fix():
    with plugin("one", lambda: [_backend("one", "twin")]), \
            plugin("two", lambda: [_backend("two", "twin")]):
        with pytest.raises(DeviceError, match=r"\['one', 'two'\] all claim device type 'twin'"
                                              r".*VOLTA_BLOCK_BACKENDS"):
            vt.zeros(1, device="twin")
        assert not _row("one").available and not _row("two").available
        _cpu_still_works()


def test_device_count_that_raises():
    def bad_count(self):
        raise OSError("driver gone")

    with plugin("counter", lambda: [_backend("counter", "cnt", device_count=bad_count)]):
        row = _row("counter")
        assert not row.available and "could not count its cnt devices" in row.reason
        assert "driver gone" in row.reason
        with pytest.raises(BackendUnavailableError, match="'counter' could not count"):
            vt.zeros(1, device="cnt")
        info = collect_info()
        assert any(b["name"] == "counter" and not b["available"] for b in info["backends"])


@pytest.mark.parametrize("reason, match", [
    (lambda self: _raise(OSError("no /dev/foo")), "unavailable_reason\\(\\) raised OSError"),
    (lambda self: 7, "returned 7, not a str or None"),
])
def test_unavailable_reason_that_misbehaves(reason, match):
    with plugin("flaky", lambda: [_backend("flaky", "flk", unavailable_reason=reason)]):
        assert not _row("flaky").available
        with pytest.raises(BackendUnavailableError, match=match):
            vt.zeros(1, device="flk")
        _cpu_still_works()


def _run(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=120)


def _dist(tmp_path, module: str, source: str, entry: str) -> str:
    dist = tmp_path / f"{entry}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {entry}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[volta.backends]\n{entry} = {module}\n")
    (tmp_path / f"{module}.py").write_text(source)
    return os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])


@pytest.mark.parametrize("source, shown", [
    ("import sys\nsys.exit(3)\n", "SystemExit(3)"),
    ("raise BaseException('odd')\n", "BaseException('odd')"),
    ("def f(:\n", "SyntaxError"),
])
def test_plugin_failing_at_import_is_reported_and_named_for_its_device(tmp_path, source, shown):
    out = _run("""
        import volta_core as vt
        row = [b for b in vt.backends() if b.name == "quux"][0]
        print(row.available, row.reason)
        print(vt.ones(2).sum().item())
        try:
            vt.zeros(1, device="quux")
        except vt.DeviceError as e:
            print("error:", e)
    """, PYTHONPATH=(path := _dist(tmp_path, "volta_quux", source, "quux")))
    assert out.returncode == 0, out.stderr
    first, second, third = out.stdout.splitlines()
    assert first.startswith("False plugin 'volta_quux' failed to load") and shown in first
    assert second == "2.0"
    assert "unknown device type 'quux'" in third and "plugins that failed" in third
    assert shown in third
    cli = subprocess.run([sys.executable, "-m", "volta_core.cli", "info"], capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHONPATH": path})
    assert cli.returncode == 0 and "quux" in cli.stdout and shown in cli.stdout, cli.stderr


def test_errors_caused_by_environment_variables_name_them():
    bad = _run("import volta_core as vt; vt.zeros(1)", VOLTA_DEVICE="quantum")
    assert "VOLTA_DEVICE='quantum'" in bad.stderr and "unknown device type" in bad.stderr
    blocked = _run("import volta_core as vt; vt.zeros(1, device='cpu')",
                   VOLTA_BLOCK_BACKENDS="numpy")
    assert "its backend 'numpy' is blocked by VOLTA_BLOCK_BACKENDS=numpy" in blocked.stderr
