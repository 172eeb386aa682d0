"""``volta-run``: start N training processes on this machine, like ``torchrun``.

Usage::

    volta-run --nproc 2 train.py --epochs 3
    python -m volta_core.distributed.launch --nproc 2 -m my_pkg.train
    volta-run --nnodes 2 --node-rank 0 --nproc 8 --master-addr node0 train.py

Each process gets ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``,
``MASTER_ADDR`` and ``MASTER_PORT``; ``init_process_group()`` reads them. Output lines
are prefixed with ``[rank N]``. If any process fails, the launcher terminates the
others (SIGTERM, then SIGKILL after ``--kill-timeout`` seconds) and exits with the
failed process's code, so a crash never leaves peers hanging in a collective. On
Linux each rank also dies with the launcher (``PR_SET_PDEATHSIG``), so killing
``volta-run`` itself, even with SIGKILL, never leaves ranks running.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import IO


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host if host not in ("localhost",) else "127.0.0.1", 0))
        return s.getsockname()[1]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="volta-run", description="Launch a Volta data-parallel job on this machine.")
    p.add_argument("--nproc", "--nproc-per-node", "--nproc_per_node", dest="nproc", type=int,
                   default=1, help="processes to start on this machine (one per GPU)")
    p.add_argument("--nnodes", type=int, default=1, help="machines in the job")
    p.add_argument("--node-rank", "--node_rank", dest="node_rank", type=int, default=0,
                   help="this machine's index among --nnodes")
    p.add_argument("--master-addr", "--master_addr", dest="master_addr", default="127.0.0.1",
                   help="address of the rank-0 machine (rendezvous store)")
    p.add_argument("--master-port", "--master_port", dest="master_port", type=int,
                   default=None, help="rendezvous port (default: a free port on one "
                   "machine, 29500 across machines)")
    p.add_argument("--kill-timeout", type=float, default=10.0,
                   help="seconds between SIGTERM and SIGKILL when tearing the job down")
    p.add_argument("--timeout", type=float, default=None,
                   help="kill the job if it runs longer than this many seconds")
    p.add_argument("--no-prefix", action="store_true", help="do not prefix output lines")
    p.add_argument("-m", "--module", action="store_true",
                   help="run the script argument as a module (python -m)")
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments of the script")
    return p


def _die_with_parent(parent: int):
    """A ``preexec_fn`` asking Linux to SIGKILL the child when the launcher dies (or None)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    pr_set_pdeathsig = 1

    def arm() -> None:
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the launcher died before prctl took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return arm


def _pump(stream: IO[bytes], out: IO[str], prefix: str, lock: threading.Lock) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode(errors="replace")
        with lock:
            out.write(prefix + line if line.endswith("\n") else prefix + line + "\n")
            out.flush()
    stream.close()


def _terminate(procs: list[subprocess.Popen], grace: float) -> None:
    """SIGTERM every live process group, then SIGKILL whatever survives ``grace`` s."""
    live = [p for p in procs if p.poll() is None]
    for p in live:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    for p in live:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def run(args: argparse.Namespace) -> int:
    """Start the processes and supervise them; return the job's exit code."""
    if args.nproc < 1 or args.nnodes < 1 or not 0 <= args.node_rank < args.nnodes:
        raise SystemExit(f"volta-run: invalid --nproc {args.nproc} / --nnodes {args.nnodes} /"
                         f" --node-rank {args.node_rank}")
    port = args.master_port
    if port is None:
        port = _free_port(args.master_addr) if args.nnodes == 1 else 29500
    world = args.nnodes * args.nproc
    target = ["-m", args.script] if args.module else [args.script]
    procs: list[subprocess.Popen] = []
    threads = []
    lock = threading.Lock()
    for local in range(args.nproc):
        rank = args.node_rank * args.nproc + local
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(local), WORLD_SIZE=str(world),
                   LOCAL_WORLD_SIZE=str(args.nproc), GROUP_RANK=str(args.node_rank),
                   MASTER_ADDR=args.master_addr, MASTER_PORT=str(port), PYTHONUNBUFFERED="1")
        proc = subprocess.Popen([sys.executable, "-u", *target, *args.script_args], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, start_new_session=True,
                                preexec_fn=_die_with_parent(os.getpid()))
        procs.append(proc)
        prefix = "" if args.no_prefix else f"[rank {rank}] "
        for stream, out in ((proc.stdout, sys.stdout), (proc.stderr, sys.stderr)):
            t = threading.Thread(target=_pump, args=(stream, out, prefix, lock), daemon=True)
            t.start()
            threads.append(t)

    def on_signal(signum, frame):
        _terminate(procs, args.kill_timeout)
        raise SystemExit(128 + signum)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    code = 0
    start = time.monotonic()
    try:
        while True:
            codes = [p.poll() for p in procs]
            failed = [(i, c) for i, c in enumerate(codes) if c not in (None, 0)]
            if failed:
                i, code = failed[0]
                rank = args.node_rank * args.nproc + i
                sys.stderr.write(f"volta-run: rank {rank} exited with code {code}; "
                                 "terminating the other ranks\n")
                _terminate(procs, args.kill_timeout)
                code = code if code > 0 else 128 - code  # killed by a signal
                break
            if all(c == 0 for c in codes):
                break
            if args.timeout is not None and time.monotonic() - start > args.timeout:
                sys.stderr.write(f"volta-run: the job exceeded --timeout {args.timeout} s; "
                                 "terminating it\n")
                _terminate(procs, args.kill_timeout)
                code = 124
                break
            time.sleep(0.05)
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    for t in threads:
        t.join(timeout=5)
    sys.stderr.flush()
    return code


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``volta-run`` console script."""
    args = _parser().parse_args(argv)
    sys.exit(run(args))


if __name__ == "__main__":
    main()
