"""Run the reference net from the command line: many seeded programs, one report.

From ``tests/``::

    python -m reference.campaign --device cpu --programs 30000 --seed 0
    python -m reference.campaign --device wgpu --programs 3000 --seed 0 --show 20

Prints the agreement rate, the distinct failure signatures (``kind: op[form] dtype``)
with their counts, whether each is a deliberate difference or a known-open bug, and,
for each one, the program shrunk to a few lines of runnable Volta code with PyTorch's
answer. ``--replay SEED`` shrinks and prints one program.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .choices import Choices, shrink
from .compare import Mismatch, check, repro
from .known import classify
from .ops import missing_in_volta
from .program import DTYPES, Program, generate


def device_dtypes(device: str) -> tuple[str, ...]:
    """The dtypes of DTYPES that ``device`` can hold."""
    import volta_core as vt

    out = []
    for name in DTYPES:
        try:
            vt.zeros(1, dtype=getattr(vt, name), device=device)
        except Exception:
            continue
        out.append(name)
    return tuple(out)


def run_one(seed: int, device: str, dtypes: tuple[str, ...]) -> tuple[Program, Mismatch | None,
                                                                        list[int]]:
    """Generate program ``seed`` and check it; also returns its choice record."""
    c = Choices(seed)
    prog = generate(c, dtypes)
    try:
        m = check(prog, device)
    except Exception as exc:  # a crash of the harness itself is reported, not hidden
        m = Mismatch("harness", "-", f"harness error {type(exc).__name__}", "", -1, str(exc))
    return prog, m, c.record


def shrunk(record: list[int], signature: str, device: str, dtypes: tuple[str, ...],
           max_tries: int = 300) -> tuple[Program, Mismatch]:
    """The smallest program found with the same failure signature."""
    def still_fails(candidate: list[int]) -> bool:
        prog = generate(Choices(record=candidate), dtypes)
        try:
            m = check(prog, device)
        except Exception:
            return False
        return m is not None and m.signature == signature

    best = shrink(record, still_fails, max_tries=max_tries)
    prog = generate(Choices(record=best), dtypes)
    return drop_lines(prog, signature, device)


def drop_lines(prog: Program, signature: str, device: str) -> tuple[Program, Mismatch | None]:
    """Delete statements and inputs the failure does not need (source-level shrinking)."""
    def same(candidate: Program) -> bool:
        try:
            m = check(candidate, device)
        except Exception:
            return False
        return m is not None and m.signature == signature

    i = len(prog.stmts) - 1
    while i >= 0:
        keep = [j for j in range(len(prog.stmts)) if j != i]
        candidate = prog.select(keep)
        if same(candidate):
            prog = candidate
        i -= 1
    for line in list(prog.inputs):
        candidate = prog.without_input(line)
        if candidate is not None and same(candidate):
            prog = candidate
    for i in range(len(prog.inputs)):
        cut = True
        while cut:  # keep cutting while some cut keeps the failure
            cut = False
            for smaller in _smaller_literals(prog.inputs[i]):
                candidate = prog.with_input(i, smaller)
                if same(candidate):
                    prog, cut = candidate, True
                    break
    return prog, check(prog, device)


def _smaller_literals(line: str) -> Iterator[str]:
    """``line`` with its tensor literal cut to 1 or 2 entries along one dim."""
    head, sep, rest = line.partition("vt.tensor(")
    literal, sep2, tail = rest.partition(", dtype=")
    if not sep or not sep2 or not literal.startswith("["):
        return
    try:
        arr = np.array(eval(literal, {"nan": math.nan, "inf": math.inf}), dtype=object)
    except Exception:
        return
    for axis in range(arr.ndim):
        for keep in (1, 2):
            if arr.shape[axis] > keep:
                cut = arr.take(range(keep), axis=axis)
                text = repr(cut.tolist())
                yield f"{head}vt.tensor({text}, dtype={tail}"


def run_isolated(start: int, n: int, device: str) -> Iterator[tuple[int, str | None]]:
    """(seed, signature or None) for programs start..start+n-1, run in child processes.

    A device whose driver can abort the process (wgpu panics) must not take the
    campaign down with it: a child that dies is restarted after the program it was
    running, which is reported with the signature ``crash: process died``.
    """
    end = start + n
    seed = start
    while seed < end:
        proc = subprocess.Popen(
            [sys.executable, "-m", "reference.campaign", "--worker", "--device", device,
             "--seed", str(seed), "--programs", str(end - seed)],
            cwd=Path(__file__).resolve().parents[1], stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, env=os.environ.copy())
        last = seed - 1
        for line in proc.stdout:
            rec = json.loads(line)
            last = rec["seed"]
            yield last, rec["sig"]
        proc.wait()
        if last + 1 < end:
            yield last + 1, f"crash: process died (exit status {proc.returncode})"
        seed = last + 2


def _worker(args, dtypes) -> int:
    for seed in range(args.seed, args.seed + args.programs):
        _, m, _ = run_one(seed, args.device, dtypes)
        print(json.dumps({"seed": seed, "sig": None if m is None else m.signature}),
              flush=True)
    return 0


def shrink_isolated(seed: int, device: str, tries: int) -> str:
    """The shrunk repro of ``seed``, made in a child process (it may crash)."""
    proc = subprocess.run(
        [sys.executable, "-m", "reference.campaign", "--device", device, "--replay",
         str(seed), "--shrink-tries", str(tries)],
        cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True,
        env=os.environ.copy())
    out = proc.stdout
    if "====" not in out:
        return f"(the process died while shrinking: exit status {proc.returncode})"
    return out[out.index("\n", out.index("====")) + 1:].strip()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m reference.campaign", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cpu", help="cpu, wgpu, cuda (default cpu)")
    p.add_argument("--programs", type=int, default=3000)
    p.add_argument("--seed", type=int, default=0, help="first seed; program i uses seed+i")
    p.add_argument("--show", type=int, default=1000,
                   help="shrink and print at most this many signatures (default all)")
    p.add_argument("--shrink-tries", type=int, default=300)
    p.add_argument("--per-op", action="store_true",
                   help="one shrunk example per kind and op instead of per signature")
    p.add_argument("--replay", type=int, default=None, help="check and shrink one seed")
    p.add_argument("--isolate", action="store_true",
                   help="run programs in child processes (default on for wgpu)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    dtypes = device_dtypes(args.device)
    if args.worker:
        return _worker(args, dtypes)
    isolate = (args.isolate or args.device.startswith("wgpu")) and args.replay is None
    print(f"device {args.device}; dtypes {', '.join(dtypes)}")
    missing = missing_in_volta()
    if missing:
        print(f"table ops Volta lacks (not generated): {', '.join(missing)}")
    seeds = [args.replay] if args.replay is not None else range(args.seed,
                                                                args.seed + args.programs)
    counts: collections.Counter[str] = collections.Counter()
    first: dict[str, tuple[int, list[int]]] = {}
    start = time.time()
    if isolate:
        results = run_isolated(args.seed, args.programs, args.device)
    else:
        results = ((seed, run_one(seed, args.device, dtypes)) for seed in seeds)
    for n, (seed, result) in enumerate(results, 1):
        if isinstance(result, tuple):
            _, m, record = result
            sig = None if m is None else m.signature
        else:
            sig, record = result, []
        if sig is not None:
            counts[sig] += 1
            first.setdefault(sig, (seed, record))
        if n % 500 == 0:
            print(f"  {n} programs, {sum(counts.values())} disagreements, "
                  f"{time.time() - start:.0f} s", file=sys.stderr)
    total = len(seeds)
    bad = sum(counts.values())
    classes = {s: classify(s) for s in counts}
    deliberate = sum(c for s, c in counts.items() if classes[s][0] == "deliberate")
    print(f"\n{total} programs in {time.time() - start:.0f} s on {args.device}: "
          f"agreement {100 * (total - bad) / total:.2f}% ({bad} disagreements; "
          f"{deliberate} of them deliberate differences)")
    by_kind: collections.Counter[str] = collections.Counter()
    for s, c in counts.items():
        by_kind[s.split(":")[0]] += c
    print("by kind: " + ", ".join(f"{k} {c}" for k, c in by_kind.most_common()))
    print(f"\n{len(counts)} distinct signatures:")
    for s, c in counts.most_common():
        status, why = classes[s]
        print(f"  {c:5d}  {s}   [{status}{': ' + why if why else ''}]")
    print()
    shown = set()
    for s, _ in counts.most_common():
        if len(shown) >= args.show:
            break
        group = s.split("[")[0] if args.per_op else s
        if group in shown:
            continue
        shown.add(group)
        seed, record = first[s]
        print(f"==== {s}  (seed {seed}, {counts[s]}x, {classes[s][0]})")
        if isolate:
            print(shrink_isolated(seed, args.device, args.shrink_tries))
        else:
            prog, m = shrunk(record, s, args.device, dtypes, args.shrink_tries)
            print(repro(prog, m, args.device) if m is not None else "(did not recur)")
        print()
    return 0 if all(classes[s][0] != "new" for s in counts) else 1


if __name__ == "__main__":
    sys.exit(main())
