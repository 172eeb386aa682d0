"""The ``volta`` command line: ``volta info``, ``volta conformance``, ``volta bench``.

Usage::

    volta info [--json]                      # version, Python, backends, devices
    volta conformance --backend numpy ...    # the conformance suite (volta_conformance)
    volta bench [op|train|dataloader|wgpu|all] [--device cpu] [--json PATH] [--quick]

Also runnable as ``python -m volta_core.cli``. Importing this module loads only the
standard library: the array libraries load when a command runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PROG = "volta"
_FORWARDED = ("conformance", "bench")


# -- machine facts (also used by benchmarks/run.py) ----------------------------------------

def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (``platform.processor()`` elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Hardware") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def machine_info(load: bool = False) -> dict[str, Any]:
    """Facts about this machine, without importing any array library.

    Args:
        load: also return the load average (1, 5, 15 min) where the OS has one.

    Returns:
        ``cpu`` (model), ``cores`` (logical), ``os``, ``python``, and the installed
        versions of ``numpy``, ``torch`` and ``volta_core`` (None when missing).
    """
    from importlib.metadata import PackageNotFoundError, version

    info: dict[str, Any] = {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "os": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "python": f"{platform.python_version()} ({platform.python_implementation()})",
    }
    for key, dist in (("numpy", "numpy"), ("torch", "torch"), ("volta_core", "volta")):
        try:
            info[key] = version(dist)
        except PackageNotFoundError:
            info[key] = None
    if load and hasattr(os, "getloadavg"):
        info["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return info


# -- volta info -----------------------------------------------------------------------------

def _device_names(backend: Any, count: int) -> list[str]:
    names = []
    for i in range(count):
        try:
            name = backend.device_name(i)
        except Exception as exc:  # a listing must never fail because of one device
            name = f"name unavailable ({exc!r})"
        if backend.device_type == "cpu" and name in (platform.machine(), "cpu", "cpu:0"):
            name = cpu_model()
        names.append(name)
    return names


def _missing_library(reason: str | None) -> bool:
    """Whether an unavailability reason says a library is missing (vs. no hardware)."""
    text = (reason or "").lower()
    return any(w in text for w in ("no module", "not installed", "import", "failed to load"))


def collect_info() -> dict[str, Any]:
    """Everything ``volta info`` reports, as JSON-able data.

    Returns:
        a dict with ``volta``, ``python``, ``machine``, ``backends`` (one entry per
        discovered backend: ``name``, ``device_type``, ``available``, ``reason``,
        ``install`` hint and ``devices`` with names), ``default_device`` (or
        ``default_device_error``) and ``auto`` (what ``device="auto"`` picks).
    """
    import volta_core as vt
    from volta_core.backend import get_backend

    rows = []
    for row in vt.backends():
        backend = get_backend(row.name)
        extra = getattr(backend, "extra", None)
        names = _device_names(backend, len(row.devices)) if row.available else []
        rows.append({
            "name": row.name, "device_type": row.device_type, "available": row.available,
            "reason": row.reason,
            "install": (f"pip install 'volta[{extra}]'"
                        if extra and not row.available and _missing_library(row.reason)
                        else None),
            "devices": [{"device": d, "name": n} for d, n in zip(row.devices, names)],
        })
    info: dict[str, Any] = {"volta": vt.__version__, "python": sys.version.split()[0],
                            "executable": sys.executable, "machine": machine_info(),
                            "backends": rows}
    env = os.environ.get("VOLTA_DEVICE")
    info["default_device_source"] = f"VOLTA_DEVICE={env}" if env else "built-in default"
    try:
        info["default_device"] = str(vt.get_default_device())
    except Exception as exc:
        info["default_device"] = None
        info["default_device_error"] = str(exc)
    try:
        info["auto"] = str(vt.device("auto"))
    except Exception as exc:
        info["auto"] = None
        info["auto_error"] = str(exc)
    return info


def format_info(info: dict[str, Any]) -> str:
    """Render :func:`collect_info`'s data as the text ``volta info`` prints."""
    m = info["machine"]
    lines = [f"Volta {info['volta']}",
             f"Python {m['python']} at {info['executable']}",
             f"Machine: {m['os']}, {m['cpu']}, {m['cores']} logical cores",
             f"NumPy {m['numpy'] or 'not installed'}, "
             f"PyTorch {m['torch'] or 'not installed'} (for benchmarks and comparisons)",
             "", "Backends:"]
    width = max((len(b["name"]) for b in info["backends"]), default=4)
    for b in info["backends"]:
        head = f"  {b['name']:<{width}}  {b['device_type']:<6}"
        if b["available"]:
            lines.append(f"{head}  available")
            lines += [f"      {d['device']:<10} {d['name']}" for d in b["devices"]]
        else:
            lines.append(f"{head}  unavailable: {b['reason']}")
            if b["install"]:
                lines.append(f"      install: {b['install']}")
    lines.append("")
    if info["default_device"] is not None:
        lines.append(f"Default device: {info['default_device']} "
                     f"({info['default_device_source']})")
    else:
        lines.append(f"Default device: error: {info['default_device_error']}")
    auto = info["auto"] if info["auto"] is not None else f"error: {info['auto_error']}"
    lines.append(f"device='auto' picks: {auto} (CUDA, else a wgpu GPU adapter, else the CPU)")
    return "\n".join(lines)


def cmd_info(args: argparse.Namespace) -> int:
    info = collect_info()
    print(json.dumps(info, indent=2) if args.json else format_info(info))
    return 0


# -- volta conformance ------------------------------------------------------------------------

def cmd_conformance(argv: Sequence[str]) -> int:
    """Forward ``argv`` to the conformance suite's command line."""
    try:
        from volta_conformance import cli as conformance_cli
    except ImportError as exc:
        if exc.name is not None and exc.name.split(".")[0] != "volta_conformance":
            raise  # the package is there but something it needs is broken: show it
        print(f"{PROG} conformance: the package 'volta_conformance' is not importable "
              f"({exc}). It ships in the Volta source tree under conformance/; install "
              "Volta from a clone with: pip install -e .", file=sys.stderr)
        return 2
    return int(conformance_cli.main(list(argv)) or 0)


# -- volta bench ------------------------------------------------------------------------------

def find_benchmarks() -> Path | None:
    """The ``benchmarks/`` folder of the source tree Volta runs from, or None."""
    here = Path(__file__).resolve().parent.parent / "benchmarks"
    candidates = [Path(os.environ["VOLTA_BENCHMARKS"])] if "VOLTA_BENCHMARKS" in os.environ \
        else []
    candidates += [here, Path.cwd() / "benchmarks"]
    for path in candidates:
        if (path / "run.py").is_file():
            return path
    return None


def cmd_bench(argv: Sequence[str]) -> int:
    """Run ``benchmarks/run.py`` with ``argv``."""
    folder = find_benchmarks()
    if folder is None:
        print(f"{PROG} bench: benchmarks/run.py not found. The benchmarks ship with the "
              "source repository: run this from a clone of Volta (or set "
              "VOLTA_BENCHMARKS to its benchmarks/ folder).", file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location("volta_benchmarks_run", folder / "run.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return int(module.main(list(argv), prog=f"{PROG} bench") or 0)


# -- entry point ------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    """The ``volta`` argument parser (``conformance`` and ``bench`` forward their args)."""
    p = argparse.ArgumentParser(prog=PROG, description="Volta: PyTorch's ergonomics on any "
                                "accelerator. Inspect the installation, certify a backend, "
                                "run the benchmarks.")
    p.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    info = sub.add_parser("info", help="version, Python, backends (and why one is "
                          "unavailable), devices, default device, what 'auto' picks")
    info.add_argument("--json", action="store_true", help="print the facts as JSON")
    sub.add_parser("conformance", add_help=False,
                   help="run the conformance suite on a backend (volta conformance --help)")
    sub.add_parser("bench", add_help=False,
                   help="run the benchmarks against PyTorch (volta bench --help)")
    return p


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("volta")
    except Exception:
        return "unknown"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``volta`` command line; return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in _FORWARDED:
        rest = argv[1:]
        return cmd_conformance(rest) if argv[0] == "conformance" else cmd_bench(rest)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "info":
        return cmd_info(args)
    parser.print_help()
    return 0 if args.command is None else 2


if __name__ == "__main__":
    sys.exit(main())
