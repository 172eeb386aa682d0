"""GPU check: lost ranks under the NCCL engine end the job with DistributedError (#19).

Run on a machine with 2 GPUs (and CuPy with NCCL)::

    python tests/distributed/nccl_faults.py [--trials 5]

Each trial starts workers/faults.py as two ranks (RANK/WORLD_SIZE/MASTER_* set by hand,
not volta-run, whose own teardown would hide the ranks' behaviour) with the NCCL engine
and ``timeout=2 s``; rank 1 is SIGKILLed, raises inside try/finally
destroy_process_group, or exits early, at a random step. Rank 0 must end non-zero
with a DistributedError naming rank 1 within the timeout (NCCL collectives cannot be
polled: either the next collective's check raises, or the watchdog ends the process).
Also checks VOLTA_DISTRIBUTED_DEBUG=DETAIL on CUDA tensors. Ends with one line
``NCCL FAULTS: PASS ...`` or ``NCCL FAULTS: FAIL ...``.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

WORKER = Path(__file__).parent / "workers" / "faults.py"
TIMEOUT, SLACK = 2.0, 2.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_pair(mode: str, step: int, extra_env: dict | None = None) -> list[tuple[int, str]]:
    port = free_port()
    procs = []
    for rank in (0, 1):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), VOLTA_FAULT_ENGINE="nccl",
                   **(extra_env or {}))
        procs.append(subprocess.Popen([sys.executable, str(WORKER), mode, str(step)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    out = []
    for p in procs:
        try:
            text, _ = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            p.kill()
            text = p.communicate()[0] + "\n<HUNG: killed after 120 s>"
        out.append((p.returncode, text))
    return out


def check_survivor(out: list[tuple[int, str]]) -> str | None:
    code, text = out[0]
    all_text = out[0][1] + out[1][1]
    fail = re.search(r"rank 1: t_fail=([\d.]+)", all_text)
    err = re.search(r"rank 0: t_error=([\d.]+) DistributedError: (.*)", text)
    torn = re.search(r"\[volta.distributed\] rank 0: DistributedError: (.*)", text)
    if code == 0:
        return f"rank 0 exited 0:\n{text[-2000:]}"
    if not fail or not (err or torn):
        return f"no DistributedError from rank 0 (exit {code}):\n{text[-2000:]}"
    message = (err or torn).group(2 if err else 1)
    if "rank 1" not in message:
        return f"the error does not name rank 1: {message}"
    if err and float(err.group(1)) - float(fail.group(1)) > TIMEOUT + SLACK:
        return f"rank 0 raised {float(err.group(1)) - float(fail.group(1)):.1f} s late"
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=5)
    args = ap.parse_args()
    rnd = random.Random(19)
    problems, runs = [], 0
    for mode in ("kill", "finally", "exit0"):
        for _ in range(args.trials):
            step = rnd.randint(0, 12)
            start = time.monotonic()
            why = check_survivor(run_pair(mode, step))
            runs += 1
            print(f"{mode} step {step}: {'ok' if why is None else 'FAIL'} "
                  f"({time.monotonic() - start:.1f} s)", flush=True)
            if why:
                problems.append(f"{mode}@{step}: {why}")
    for mode in ("size", "dtype"):
        out = run_pair(mode, 2, {"VOLTA_DISTRIBUTED_DEBUG": "DETAIL"})
        runs += 1
        ok = all("do not make the same collective call" in t for _, t in out)
        print(f"debug {mode}: {'ok' if ok else 'FAIL'}", flush=True)
        if not ok:
            problems.append(f"debug {mode}: {out[0][1][-1500:]}")
    for p in problems:
        print("PROBLEM", p)
    print(f"NCCL FAULTS: {'PASS' if not problems else 'FAIL'} {runs - len(problems)}/{runs}")


if __name__ == "__main__":
    main()
