"""Backend discovery, devices, the default device and extension-kernel dispatch."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from vt_helpers import assert_close

import volta_core as vt
from volta_core.backend import (
    Device,
    fallback,
    get_kernel,
    hookimpl,
    register_plugin,
    unregister_plugin,
)
from volta_core.errors import BackendUnavailableError, DeviceError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_device_strings_parse_and_intern():
    assert Device("cpu") is Device("cpu:0") is vt.device("cpu")
    assert str(Device("cpu")) == "cpu" and Device("cpu").type == "cpu"
    assert Device("cpu").index == 0
    assert Device("cpu") == "cpu"
    for bad in ["", "cpu:x", ":1", 3]:
        with pytest.raises(DeviceError, match="device"):
            Device(bad)


def test_unknown_device_type_lists_the_known_ones():
    with pytest.raises(DeviceError, match=r"unknown device type 'tpu'.*'cpu'"):
        Device("tpu")


def test_device_index_out_of_range():
    with pytest.raises(DeviceError, match="cpu:3 does not exist"):
        Device("cpu:3")


def test_backends_lists_numpy_available_and_cupy_with_reason():
    rows = {b.name: b for b in vt.backends()}
    assert rows["numpy"].available and rows["numpy"].device_type == "cpu"
    assert rows["numpy"].devices == ("cpu:0",)
    for row in rows.values():
        assert row.available or row.reason  # an unavailable backend always says why
    if not rows["cupy"].available:
        assert "cupy" in rows["cupy"].reason or "CUDA" in rows["cupy"].reason


def test_unavailable_backend_error_says_why_and_which_extra():
    rows = {b.name: b for b in vt.backends()}
    if rows["cupy"].available:
        pytest.skip("CUDA is available here")
    with pytest.raises(BackendUnavailableError, match=r"volta\[cupy\]"):
        vt.zeros(2, device="cuda")


def test_mixing_devices_names_both_and_the_fix():
    class Cpu2Backend(vt.backend.get_backend("numpy").__class__):
        name = "numpy2"
        device_type = "cpu2"

    class Plugin:
        @hookimpl
        def volta_backends(self):
            return [Cpu2Backend()]

    register_plugin(Plugin(), name="cpu2-plugin")
    try:
        a, b = vt.ones(2), vt.ones(2, device="cpu2")
        assert b.device.type == "cpu2"
        with pytest.raises(DeviceError, match=r"cpu and cpu2:0.*\.to\('cpu'\)"):
            a + b
        assert_close(a + b.to("cpu"), [2.0, 2.0])
        c = vt.ones(2, device="cpu2", requires_grad=True)
        c.to("cpu").sum().backward()
        assert c.grad.device.type == "cpu2" and c.grad.tolist() == [1.0, 1.0]
    finally:
        unregister_plugin("cpu2-plugin")


def test_default_device_from_set_default_device():
    assert vt.get_default_device() is Device("cpu")
    vt.set_default_device("cpu")
    assert vt.zeros(1).device is Device("cpu")


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=120)


def test_default_device_from_environment_and_bad_value():
    ok = run_python("import volta_core as vt; print(vt.zeros(1).device)", VOLTA_DEVICE="cpu")
    assert ok.stdout.strip() == "cpu", ok.stderr
    bad = run_python("import volta_core as vt; vt.zeros(1)", VOLTA_DEVICE="quantum")
    assert "unknown device type 'quantum'" in bad.stderr


def test_auto_device_picks_and_logs():
    out = run_python("""
        import logging, volta_core as vt
        logging.basicConfig(level=logging.INFO)
        print(vt.device('auto'))
    """)
    assert out.returncode == 0, out.stderr
    picked = out.stdout.strip()
    assert picked in ("cpu", "cuda:0", "wgpu:0")
    assert f"device 'auto' picked {picked.split(':')[0]}" in out.stderr


def test_import_is_cheap_and_loads_no_array_library():
    out = run_python("""
        import sys, volta_core
        heavy = [m for m in ("numpy", "cupy", "wgpu", "array_api_compat", "array_api_strict")
                 if m in sys.modules]
        print(heavy)
    """)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_core_source_imports_no_array_library():
    import ast

    root = Path(vt.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        if path.relative_to(root).parts[0] == "io":
            continue  # io may use NumPy for host-side byte buffers (ARCHITECTURE rule 1)
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in ("numpy", "cupy", "wgpu", "torch"):
                    offenders.append(f"{path.relative_to(root)}:{node.lineno} imports {name}")
    assert not offenders, offenders


# -- kernels ------------------------------------------------------------------------------

@fallback("test_scale")
def _scale_fallback(xp, x, factor=1.0):
    return x * factor


def test_kernel_dispatch_fallback_backend_and_override_hook():
    numpy_cls = type(vt.backend.get_backend("numpy"))

    class WithKernel(numpy_cls):
        name, device_type = "kern", "kern"
        kernels = {"test_scale": lambda xp, x, factor=1.0: x}

    class Plain(numpy_cls):
        name, device_type = "plain", "plain"
        kernels = {}

    class Plugin:
        @hookimpl
        def volta_backends(self):
            return [WithKernel(), Plain()]

    class Faster:
        @hookimpl
        def volta_kernel(self, backend, name):
            if backend.name == "kern" and name == "test_scale":
                return lambda xp, x, factor=1.0: x * factor * 10

    register_plugin(Plugin(), name="kernel-backends")
    try:
        kern, plain = vt.backend.get_backend("kern"), vt.backend.get_backend("plain")
        x = Device("cpu").xp.asarray([1.0, 2.0])
        assert get_kernel(plain, "test_scale") is _scale_fallback  # the generic fallback
        assert get_kernel(kern, "test_scale")(None, x, factor=3.0) is x  # the backend's own
        register_plugin(Faster(), name="faster-kernels")  # a third party overrides it
        try:
            assert get_kernel(kern, "test_scale")(None, x, factor=2.0).tolist() == [20.0, 40.0]
            assert get_kernel(plain, "test_scale") is _scale_fallback
        finally:
            unregister_plugin("faster-kernels")
        assert get_kernel(kern, "test_scale")(None, x) is x
    finally:
        unregister_plugin("kernel-backends")
    with pytest.raises(KeyError, match="no kernel named 'nope'"):
        get_kernel(vt.backend.get_backend("numpy"), "nope")


def test_third_party_backend_installed_with_pip_is_discovered(tmp_path):
    target = tmp_path / "site"
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
         "--target", str(target), str(FIXTURES / "tiny_backend")],
        capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr
    out = run_python("""
        import volta_core as vt
        rows = {b.name: b for b in vt.backends()}
        print(rows["tiny"].available, rows["tiny"].devices)
        print(rows["nolib"].available, rows["nolib"].reason)
        x = vt.tensor([1.0, 2.0], device="tiny", requires_grad=True)
        y = (x * x).sum()
        y.backward()
        print(x.device, y.item(), x.grad.tolist(), x.grad.device)
        try:
            vt.zeros(1, device="nolib")
        except vt.BackendUnavailableError as e:
            print("error:", e)
    """, PYTHONPATH=os.pathsep.join([str(target), os.environ.get("PYTHONPATH", "")]))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "True ('tiny:0',)"
    assert lines[1].startswith("False its array library is not installed")
    assert lines[2] == "tiny:0 5.0 [2.0, 4.0] tiny:0"
    assert "volta[nolib]" in lines[3] and "not installed" in lines[3]


def test_broken_plugin_is_reported_not_raised(tmp_path):
    dist = tmp_path / "broken-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[volta.backends]\nbroken = volta_broken_nope\n")
    out = run_python("""
        import volta_core as vt
        row = [b for b in vt.backends() if b.name == "broken"][0]
        print(row.available, row.reason)
        print(vt.ones(2).sum().item())
    """, PYTHONPATH=str(tmp_path))
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()
    assert first.startswith("False plugin 'volta_broken_nope' failed to load")
    assert second == "2.0"


def test_blocked_backend_is_not_loaded():
    out = run_python("import volta_core as vt; print(sorted(b.name for b in vt.backends()))",
                     VOLTA_BLOCK_BACKENDS="cupy")
    assert "cupy" not in out.stdout and "numpy" in out.stdout
