"""Run Volta's benchmarks, print one table against PyTorch, write JSON and Markdown.

Each benchmark is its own program in this folder (``op_overhead.py``, ``train_step.py``,
``dataloader.py`` and, when present, ``wgpu_kernels.py``). The runner launches each in
a fresh Python process (so one benchmark's thread settings cannot skew another), asks it
for JSON, and turns the results into rows of one table: Volta's figure, PyTorch's figure
measured in the same run, and their ratio. The options a program accepts are read from
its ``--help``, so a benchmark that gains or renames a flag keeps working here.

Usage::

    python benchmarks/run.py [op|train|dataloader|wgpu|all ...] [--device cpu] [--quick]
                             [--json PATH] [--markdown docs/benchmarks.md]

(also ``volta bench ...``). ``--quick`` passes small sizes and few repeats: a smoke test,
not a measurement. The exit status is 1 when a benchmark failed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


@dataclass(frozen=True)
class Benchmark:
    """One benchmark program and how the runner drives it.

    Attributes:
        name: the name on the command line (``op``, ``train``, ...).
        file: the program, relative to ``benchmarks/``.
        title: what it measures, for the table and the docs.
        quick: options for ``--quick`` (only those the program accepts are passed).
        device: the only device type the program measures (None: any); ``--device``
            is passed to it only when it names that type.
    """

    name: str
    file: str
    title: str
    quick: tuple[str, ...] = ()
    device: str | None = None


BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in (
    Benchmark("op", "op_overhead.py",
              "per-op overhead: a chain of 100 elementwise ops on a 16-element tensor, "
              "forward + backward, microseconds per op (PyTorch pinned to one thread)",
              ("--ops", "20", "--repeat", "5")),
    Benchmark("train", "train_step.py",
              "one training step (zero_grad, forward, cross-entropy, backward, optimizer "
              "step): an MLP 784-512-512-10 with Adam at batch 256 and LeNet-5 with SGD + "
              "momentum at batch 64, the two frameworks timed alternately",
              ("--steps", "3", "--warmup", "1", "--models", "mlp")),
    Benchmark("dataloader", "dataloader.py",
              "DataLoader batches per second over a shuffled epoch of 60,000 x 784 float32 "
              "samples, batch 256, with each framework's TensorDataset and with a "
              "per-sample Python dataset, 0 and 2 worker processes",
              ("--n", "2048", "--dim", "32", "--repeats", "1", "--workers", "0")),
    Benchmark("wgpu", "wgpu_kernels.py",
              "wgpu kernels: float32 matmul TFLOP/s, elementwise add GB/s and a 1,000-op "
              "chain of small ops, against PyTorch CUDA when a GPU is there (on a software "
              "adapter the runner uses the program's quick sizes)",
              ("--quick",), device="wgpu"),
)}

_TIME_UNITS = {"ns": "ns", "us": "us", "ms": "ms", "s": "s", "us_per_op": "us/op",
               "ms_per_step": "ms/step"}


# -- launching ------------------------------------------------------------------------------

def program_options(path: Path, timeout: float = 120) -> dict[str, bool]:
    """The long options of a program, from its ``--help``: name -> takes a value.

    Example: ``{"--json": True, "--quick": False}`` for ``--json PATH`` and ``--quick``.
    """
    out = subprocess.run([sys.executable, str(path), "--help"], capture_output=True,
                         text=True, timeout=timeout, cwd=ROOT, env=_env())
    options: dict[str, bool] = {}
    for line in out.stdout.splitlines():
        stripped = line.strip()
        if not stripped.startswith("-"):
            continue
        for flag in stripped.split("  ")[0].split(", "):
            m = re.match(r"(--[\w-]+)(?:[ =](\S+))?", flag.strip())
            if m:
                options[m.group(1)] = m.group(2) is not None
    return options


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def _pairs(args: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Split ``["--a", "1", "2", "--b"]`` into ``[("--a", ["1", "2"]), ("--b", [])]``."""
    pairs: list[tuple[str, list[str]]] = []
    for a in args:
        if a.startswith("--"):
            pairs.append((a, []))
        elif pairs:
            pairs[-1][1].append(a)
    return pairs


def command_for(bench: Benchmark, options: dict[str, bool], device: str | None,
                quick: bool, json_path: Path) -> tuple[list[str], str]:
    """The command line running ``bench``, and where its JSON goes (``file``/``stdout``)."""
    cmd = [sys.executable, str(HERE / bench.file)]
    if bench.device and (device is None or device.split(":")[0] != bench.device):
        device = bench.device  # a device-specific program keeps its own device type
    if device and "--device" in options:
        cmd += ["--device", device]
    if quick:
        for opt, values in _pairs(bench.quick):
            if opt in options:
                cmd += [opt, *values]
    if "--json" not in options:
        return cmd, "none"
    if options["--json"]:
        return cmd + ["--json", str(json_path)], "file"
    return cmd + ["--json"], "stdout"


def run_benchmark(bench: Benchmark, device: str | None, quick: bool, timeout: float,
                  verbose: bool = False) -> dict[str, Any]:
    """Launch one benchmark; return its record (command, status, seconds, raw JSON)."""
    path = HERE / bench.file
    record: dict[str, Any] = {"name": bench.name, "file": bench.file, "title": bench.title}
    if not path.is_file():
        record.update(status="missing", error=f"{bench.file} is not in {HERE}")
        return record
    with tempfile.TemporaryDirectory(prefix="volta-bench-") as tmp:
        json_path = Path(tmp) / f"{bench.name}.json"
        start = time.perf_counter()
        try:
            cmd, mode = command_for(bench, program_options(path), device, quick, json_path)
            record["command"] = " ".join([Path(cmd[0]).name, *cmd[1:]]).replace(
                str(json_path), "PATH").replace(str(HERE), "benchmarks")
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                 cwd=ROOT, env=_env())
        except subprocess.TimeoutExpired:
            record.update(status="failed", error=f"timed out after {timeout:.0f} s")
            return record
        record["seconds"] = round(time.perf_counter() - start, 2)
        if verbose:
            print(out.stdout + out.stderr, end="", flush=True)
        if out.returncode != 0:
            tail = (out.stderr or out.stdout).strip().splitlines()[-15:]
            record.update(status="failed", returncode=out.returncode, error="\n".join(tail))
            return record
        try:
            if mode == "none":
                raise ValueError(f"{bench.file} has no --json option")
            record["raw"] = _json_in(json_path.read_text() if mode == "file" else out.stdout)
        except (ValueError, OSError) as exc:
            record.update(status="failed", error=f"could not read its JSON: {exc}")
            return record
    record["status"] = "ok"
    return record


def _json_in(text: str) -> Any:
    """The JSON document in ``text``, which may follow lines of other output."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(("{", "[")):
            return json.loads("\n".join(lines[i:]))
    raise ValueError("no JSON in the output")


# -- turning results into rows --------------------------------------------------------------

def _records(raw: Any) -> list[dict[str, Any]]:
    """The result dicts of a benchmark's JSON (a dict, a list, or ``{"results": [...]}``)."""
    if isinstance(raw, list):
        return [r for r in raw if isinstance(r, dict)]
    if isinstance(raw, dict):
        rows = raw.get("results")
        return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else [raw]
    return []


def _label(bench: str, rec: dict[str, Any]) -> str:
    if bench == "op":
        return "elementwise chain, fwd + bwd"
    if bench == "train":
        return f"train step: {rec.get('model', '?')}"
    if bench == "dataloader":
        return f"DataLoader: {rec.get('dataset', '?')}, {rec.get('num_workers', 0)} workers"
    skip = {"device", "machine", "unit"}
    parts = [f"{v}" for k, v in rec.items()
             if isinstance(v, (str, int)) and not isinstance(v, bool) and k not in skip
             and not k.startswith(("volta_", "torch_"))]
    return f"{bench}: " + (", ".join(parts[:3]) or "?")


def rows_for(record: dict[str, Any], device: str) -> list[dict[str, Any]]:
    """Table rows of one benchmark record: Volta's figure, the peer's, and the ratio.

    ``time_ratio`` is Volta's time over the peer's for every kind of figure (for a
    rate such as batches/s it is the peer's rate over Volta's): below 1, Volta is faster.
    """
    raw = record.get("raw")
    if isinstance(raw, dict) and isinstance(raw.get("volta"), dict):
        return _side_by_side_rows(record, raw, device)
    rows = []
    for rec in _records(raw):
        for key, value in rec.items():
            if not key.startswith("volta_") or not isinstance(value, (int, float)):
                continue
            suffix = key[len("volta_"):]
            peer_key = next((k for k in rec if k.endswith("_" + suffix) and k != key
                             and k.startswith("torch_")), None) or next(
                (k for k in rec if k.endswith("_" + suffix) and k != key), None)
            dev = str(rec.get("device") or device or "cpu")
            rows.append(_row(record["name"], _label(record["name"], rec), dev, suffix, value,
                             rec.get(peer_key) if peer_key else None))
    return rows


def _row(bench: str, case: str, device: str, suffix: str, value: float, peer: Any,
         peer_on: str | None = None, volta_on: str | None = None) -> dict[str, Any]:
    unit, lower_better = _unit(suffix)
    if bench == "train" and unit == "ms":
        unit = "ms/step"
    peer = peer if isinstance(peer, (int, float)) and not isinstance(peer, bool) else None
    ratio = None
    if peer and value:
        ratio = value / peer if lower_better else peer / value
    return {"benchmark": bench, "case": case, "device": device, "unit": unit,
            "lower_is_better": lower_better, "volta": value, "peer": peer,
            "peer_device": peer_device(device) if peer_on is None else peer_on,
            "volta_on": volta_on, "time_ratio": ratio}


def _side_by_side_rows(record: dict[str, Any], raw: dict[str, Any], device: str
                       ) -> list[dict[str, Any]]:
    """Rows of a ``{"volta": {metric: x}, "torch": {metric: y} | None}`` result."""
    peer = raw.get("torch") if isinstance(raw.get("torch"), dict) else {}
    peer_on = f"cuda ({peer['device']})" if peer.get("device") else None
    volta_on = raw["volta"].get("adapter")
    rows = []
    for key, value in raw["volta"].items():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        metric, _, suffix = key.partition("_")
        rows.append(_row(record["name"], f"{record['name']}: {metric}", device, suffix,
                         value, peer.get(key), peer_on or "cuda", volta_on))
    return rows


def _unit(suffix: str) -> tuple[str, bool]:
    """Display unit of a key suffix and whether lower is better (times) or not (rates)."""
    if suffix in _TIME_UNITS:
        return _TIME_UNITS[suffix], True
    rates = {"tflops": "TFLOP/s", "gflops": "GFLOP/s", "gbs": "GB/s"}
    if suffix in rates:
        return rates[suffix], False
    if suffix.endswith("_s"):  # batches_s, items_s: per second
        return suffix[:-2].replace("_", " ") + "/s", False
    if "flop" in suffix or "throughput" in suffix:
        return suffix.replace("_", "/"), False
    return suffix, True


# -- machine and devices ---------------------------------------------------------------------

def machine() -> dict[str, Any]:
    """CPU model, cores, OS, Python, NumPy, PyTorch and Volta versions, load average."""
    from volta_core.cli import machine_info

    info = machine_info(load=True)
    if info.get("torch"):
        import torch

        info["torch_threads"] = torch.get_num_threads()
    return info


def device_names(devices: set[str], cpu: str) -> dict[str, str]:
    """Hardware names of Volta devices (``cpu`` -> the CPU model, ``wgpu:0`` -> adapter)."""
    names = {}
    for d in sorted(devices):
        if d.split(":")[0] == "cpu":
            names[d] = cpu
            continue
        try:
            import volta_core as vt

            names[d] = vt.device(d).name
        except Exception as exc:
            names[d] = f"unknown ({exc})"
    return names


def peer_device(device: str) -> str:
    """Where the PyTorch side runs for a Volta device (its CPU unless Volta is on CUDA)."""
    return "cuda" if device.startswith("cuda") else "cpu"


def _shown_args(argv: list[str]) -> list[str]:
    """The command-line arguments worth printing in a report (no ``--json PATH``)."""
    return [a for i, a in enumerate(argv) if not a.startswith("--json")
            and (i == 0 or argv[i - 1] != "--json")]


def _wgpu_skip_reason() -> str | None:
    """None for a wgpu GPU adapter, ``"software"`` for llvmpipe, else why wgpu can't run."""
    try:
        import volta_core as vt
        from volta_core.backend import get_backend

        rows = {b.name: b for b in vt.backends()}
        if "wgpu" not in rows or not rows["wgpu"].available:
            reason = rows["wgpu"].reason if "wgpu" in rows else "no wgpu backend installed"
            return f"the wgpu backend is unavailable ({reason})"
        return None if get_backend("wgpu").is_gpu else "software"
    except Exception as exc:
        return f"the wgpu backend failed to start ({exc!r})"


# -- output ---------------------------------------------------------------------------------

def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


def table(rows: list[dict[str, Any]], names: dict[str, str]) -> list[list[str]]:
    """Rows of the combined table as strings (header first)."""
    out = [["case", "Volta on", "Volta", "PyTorch on", "PyTorch", "unit", "time ratio"]]
    for r in rows:
        peer_dev = r["peer_device"]
        peer_on = "-" if r["peer"] is None else (
            peer_dev if "(" in peer_dev else f"{peer_dev} ({names.get(peer_dev, peer_dev)})")
        volta_on = f"{r['device']} ({r.get('volta_on') or names.get(r['device'], '?')})"
        ratio = "-" if r["time_ratio"] is None else f"{r['time_ratio']:.2f}x"
        out.append([r["case"], volta_on, _fmt(r["volta"]), peer_on, _fmt(r["peer"]),
                    r["unit"], ratio])
    return out


def print_table(cells: list[list[str]], width: int = 34) -> None:
    """Print a plain-text table; long cells are cut to ``width`` characters."""
    cells = [[c if len(c) <= width else c[:width - 1] + "~" for c in row] for row in cells]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    for n, row in enumerate(cells):
        print("  ".join(c.ljust(w) if i < 2 or i in (3, 5) else c.rjust(w)
                        for i, (c, w) in enumerate(zip(row, widths))).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


def markdown(result: dict[str, Any]) -> str:
    """The ``docs/benchmarks.md`` page for a combined result."""
    m = result["machine"]
    load = m.get("load_average")
    cells = table(result["rows"], result["device_names"])
    lines = [
        "# Benchmarks", "",
        "<!-- generated by `python benchmarks/run.py --markdown docs/benchmarks.md`; "
        "edit benchmarks/run.py, not this page -->", "",
        f"Measured on {result['date']} with `{result['command']}`. Every PyTorch figure "
        "comes from the same run, on the same machine, as the Volta figure next to it.", "",
        "**time ratio** is Volta's time over PyTorch's (for a rate such as batches/s, "
        "PyTorch's rate over Volta's): below 1.00x Volta is faster, 2.00x means Volta "
        "takes twice as long.", "",
        "## Machine", "",
        "| | |", "| --- | --- |",
        f"| CPU | {m['cpu']} |", f"| logical cores | {m['cores']} |", f"| OS | {m['os']} |",
        f"| Python | {m['python']} |", f"| NumPy | {m.get('numpy') or 'not installed'} |",
        f"| PyTorch | {m.get('torch') or 'not installed'} "
        f"({m.get('torch_threads', '?')} threads by default) |",
        f"| Volta | {m.get('volta_core')} |",
    ]
    for d, name in result["device_names"].items():
        lines.append(f"| device `{d}` | {name} |")
    if load:
        lines.append(f"| load average at start (1, 5, 15 min) | {', '.join(map(str, load))} |")
    if m.get("load_average_end"):
        lines.append("| load average at end (1, 5, 15 min) | "
                     f"{', '.join(map(str, m['load_average_end']))} |")
    lines += ["", "> **Note.** This machine is shared: other engineers' builds and tests ran "
              "during the measurement (see the load averages), so the figures are noisy. "
              "Each benchmark times Volta and PyTorch in the same process, alternately or "
              "back to back, so both sides see the same load, but on a loaded machine even "
              "the ratios move between runs. Quote figures from a quiet machine.", "",
              "## Results", "",
              "| " + " | ".join(cells[0]) + " |",
              "| " + " | ".join(["---"] * 2 + ["---:"] + ["---", "---:", "---", "---:"]) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in cells[1:]]
    lines += ["", "## What each benchmark measures", ""]
    for rec in result["benchmarks"]:
        state = "" if rec["status"] == "ok" else f" **({rec['status']}: " \
            f"{rec.get('error', '').splitlines()[-1] if rec.get('error') else ''})**"
        cmd = f" `{rec['command']}`" if rec.get("command") else ""
        secs = f", {rec['seconds']} s" if rec.get("seconds") is not None else ""
        lines.append(f"- **{rec['name']}** (`benchmarks/{rec['file']}`{secs}): "
                     f"{rec['title']}.{cmd}{state}")
    lines += ["", "Reproduce with `volta bench all --markdown docs/benchmarks.md` (or "
              "`python benchmarks/run.py ...`); see [Performance](performance.md) for "
              "how to read and extend these figures.", ""]
    return "\n".join(lines)


# -- entry point ------------------------------------------------------------------------------

def parse_args(argv: Sequence[str] | None, prog: str | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    p.add_argument("which", nargs="*", metavar="{" + ",".join(BENCHMARKS) + ",all}",
                   help="benchmarks to run (default: all, where wgpu runs only if "
                        "wgpu_kernels.py exists and the wgpu backend is available, with "
                        "quick sizes on a software adapter)")
    p.add_argument("--device", help="Volta device for the benchmarks that take one "
                                    "(default: each program's own, cpu for most)")
    p.add_argument("--quick", action="store_true",
                   help="small sizes and few repeats: checks the plumbing, measures nothing")
    p.add_argument("--json", metavar="PATH", help="write the combined results as JSON")
    p.add_argument("--markdown", metavar="PATH",
                   help="write a Markdown page (e.g. docs/benchmarks.md)")
    p.add_argument("--from-json", metavar="PATH",
                   help="run nothing: re-render the table/--markdown of an earlier --json")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per benchmark")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also print each benchmark's own output")
    args = p.parse_args(argv)
    unknown = [w for w in args.which if w not in (*BENCHMARKS, "all")]
    if unknown:
        p.error(f"unknown benchmark(s) {unknown}; choose from {[*BENCHMARKS, 'all']}")
    args.which = args.which or ["all"]
    return args


def collect(args: argparse.Namespace, argv: Sequence[str]) -> dict[str, Any]:
    """Run the benchmarks ``args`` selects; return the combined result."""
    from volta_core.cli import machine_info

    names = list(BENCHMARKS) if "all" in args.which else list(dict.fromkeys(args.which))
    info = machine()
    date = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    records, rows = [], []
    for name in names:
        bench = BENCHMARKS[name]
        if "all" in args.which and not (HERE / bench.file).is_file():
            continue  # optional programs (wgpu_kernels.py) only when present
        quick = args.quick
        if name == "wgpu" and "all" in args.which:
            why = _wgpu_skip_reason()
            if why == "software":
                quick = True  # full sizes take many minutes on llvmpipe and mean little
                print("wgpu: software adapter, running wgpu_kernels.py with quick sizes")
            elif why:
                print(f"skipping wgpu_kernels.py: {why}")
                continue
        print(f"running {bench.file} ...", flush=True)
        rec = run_benchmark(bench, args.device, quick, args.timeout, args.verbose)
        rec["quick"] = quick
        records.append(rec)
        if rec["status"] != "ok":
            print(f"  {rec['status']}: {rec.get('error')}", file=sys.stderr)
            continue
        print(f"  done in {rec['seconds']:.1f} s", flush=True)
        dev = bench.device if bench.device and not (args.device or "").startswith(
            bench.device) else args.device
        new = rows_for(rec, dev or "cpu")
        if quick and not args.quick:  # only this one ran small: say so in its rows
            for r in new:
                r["case"] += " (quick sizes)"
        rows += new
    devices = {r["device"] for r in rows} | {r["peer_device"] for r in rows
                                             if r["peer"] is not None
                                             and "(" not in r["peer_device"]}
    info["load_average_end"] = machine_info(load=True).get("load_average")
    return {"date": date, "command": " ".join(["python benchmarks/run.py",
                                               *_shown_args(list(argv))]),
            "quick": args.quick, "machine": info,
            "device_names": device_names(devices, info["cpu"]), "rows": rows,
            "benchmarks": records}


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Run the selected benchmarks; return 0, or 1 when one of them failed."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv, prog)
    if args.from_json:
        result = json.loads(Path(args.from_json).read_text())
    else:
        result = collect(args, argv)
    info = result["machine"]
    print(f"\n{info['cpu']}, {info['cores']} cores, Python {info['python']}, "
          f"NumPy {info['numpy']}, PyTorch {info['torch'] or 'not installed'}"
          + (" (quick mode: not a measurement)" if result["quick"] else ""))
    if result["rows"]:
        print_table(table(result["rows"], result["device_names"]))
        print("time ratio = Volta time / PyTorch time (rates inverted): < 1 means Volta "
              "is faster")
    if args.json and not args.from_json:
        Path(args.json).write_text(json.dumps(result, indent=2))
        print(f"JSON written to {args.json}")
    if args.markdown:
        Path(args.markdown).write_text(markdown(result))
        print(f"Markdown written to {args.markdown}")
    return 1 if any(r["status"] != "ok" for r in result["benchmarks"]) else 0


if __name__ == "__main__":
    sys.exit(main())
