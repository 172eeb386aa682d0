"""Lost ranks end a job with DistributedError within the timeout, however they end (#19).

The MPI cases run 2 ranks under mpirun with ``timeout=2 s`` (see workers/faults.py).
The watchdog's logic is also tested in one process, with two watchdogs on threads.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
from dist_helpers import WORKERS, job_env, mpi_skip_reason, run_mpi

from volta_core.distributed import DistributedError
from volta_core.distributed.watchdog import Watchdog

TIMEOUT = 2.0  # as in workers/faults.py
SLACK = 1.5  # scheduling on a loaded CI machine
needs_mpi = pytest.mark.skipif(mpi_skip_reason() is not None, reason=mpi_skip_reason() or "")
RECOVERY = ("--enable-recovery",)  # let a SIGKILLed rank's peer see it (mpirun would kill it)


def _check_survivor(out: subprocess.CompletedProcess, match: str) -> None:
    text = out.stdout + out.stderr
    assert out.returncode != 0, text
    assert "unreachable" not in out.stdout, text
    fail = re.search(r"rank 1: t_fail=([\d.]+)", out.stdout)
    error = re.search(r"rank 0: t_error=([\d.]+) DistributedError: (.*)", out.stdout)
    assert fail and error, text
    assert re.search(match, error.group(2)), error.group(2)
    delay = float(error.group(1)) - float(fail.group(1))
    assert delay < TIMEOUT + SLACK, f"rank 0 raised {delay:.2f} s after the failure"


@needs_mpi
@pytest.mark.parametrize("mode, match, options", [
    ("exit0", r"rank 1 left the process group .* never join", ()),
    ("exit1", r"rank 1 left the process group .* never join", ()),
    ("finally", r"rank 1 left the process group .* never join", ()),
    ("kill", r"rank 1 was lost: its process ended", RECOVERY),
    ("skip", r"all_reduce: did not complete within the timeout of 2 s", ()),
])
def test_lost_rank_makes_the_others_raise_within_the_timeout(mode, match, options):
    _check_survivor(run_mpi("faults.py", mode, "3", timeout=60, mpi_options=options), match)


@needs_mpi
@pytest.mark.parametrize("mode, shown", [("size", r"float32\[4\].*float32\[5\]"),
                                         ("dtype", r"float32\[4\].*float64\[4\]")])
def test_debug_detail_finds_mismatched_collectives(mode, shown):
    out = run_mpi("faults.py", mode, "2", timeout=60,
                  env={"VOLTA_DISTRIBUTED_DEBUG": "DETAIL"})
    assert out.returncode != 0
    for rank in (0, 1):
        line = re.search(rf"rank {rank}: t_error=\S+ DistributedError: (.*)", out.stdout)
        assert line and "do not make the same collective call" in line.group(1), out.stdout
        assert re.search(shown, line.group(1))


@needs_mpi
@pytest.mark.fault_injection
@pytest.mark.parametrize("mode, match, options", [
    ("kill", r"rank 1 was lost", RECOVERY),
    ("finally", r"rank 1 left the process group", ()),
])
def test_fault_injection_20_trials(mode, match, options):
    """A rank SIGKILLed, or raising inside try/finally destroy_process_group, at a random
    step of a DDP training run: the survivor raises every time, within the timeout."""
    rnd = random.Random(f"19-{mode}")
    for _ in range(20):
        step = rnd.randint(0, 12)
        out = run_mpi("faults.py", mode, str(step), timeout=60, mpi_options=options)
        _check_survivor(out, match)


# -- volta-run dies: its ranks die with it ----------------------------------------------------

def test_ranks_die_with_a_killed_launcher(tmp_path):
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux-only")
    launcher = subprocess.Popen(
        [sys.executable, "-m", "volta_core.distributed.launch", "--nproc", "2",
         str(WORKERS / "launched.py"), "pids"], env=job_env(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    pids = []
    try:
        for line in launcher.stdout:
            if "pid=" in line:
                pids.append(int(line.split("pid=")[1]))
            if len(pids) == 2:
                break
        launcher.send_signal(signal.SIGKILL)
        launcher.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(p) for p in pids):
            time.sleep(0.05)
        assert len(pids) == 2 and not any(_alive(p) for p in pids), pids
    finally:
        launcher.kill()
        for p in pids:
            if _alive(p):
                os.kill(p, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


# -- the watchdog's logic, in one process ---------------------------------------------------

def _pair(timeout: float = 2.0) -> tuple[Watchdog, Watchdog]:
    """Two connected watchdogs (ranks 0 and 1), started on threads."""
    dogs = [Watchdog(0, 2, timeout), Watchdog(1, 2, timeout)]
    shared: list[bytes] = []
    ready = threading.Event()

    def share(value):
        if value is not None:
            shared.append(value)
            ready.set()
            return value
        ready.wait(5)
        return shared[0]

    threads = [threading.Thread(target=d.start, args=(share,)) for d in dogs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    return dogs[0], dogs[1]


def test_watchdog_clean_leave_fails_only_collectives_the_leaver_skips():
    a, b = _pair()
    a.done = b.done = 3
    b.leave()
    time.sleep(0.3)
    assert a.left == {1: 3}
    with pytest.raises(DistributedError, match="rank 1 left .* after 3 collectives; this rank "
                                               "is in collective number 4"):
        a.wait(lambda: False, "all_reduce")
    a.leave()


def test_watchdog_crash_is_seen_at_once_and_relayed():
    a, b = _pair()
    b._stop.set()  # rank 1's process "dies": its connection closes without a goodbye
    b._conns[0].close()
    start = time.monotonic()
    with pytest.raises(DistributedError, match="rank 1 was lost: its process ended"):
        a.wait(lambda: False, "broadcast")
    assert time.monotonic() - start < 1.0 and a.raised
    a.leave()


def test_watchdog_collective_timeout_and_silent_peer():
    a, b = _pair(timeout=0.5)
    with pytest.raises(DistributedError, match="did not complete within the timeout of 0.5 s"):
        a.wait(lambda: False, "barrier")
    b._stop.set()  # rank 1 hangs: alive (socket open) but silent
    time.sleep(1.2)
    with pytest.raises(DistributedError, match="rank 1 was lost: sent no heartbeat"):
        a.check("all_reduce")
    a.leave()
    b._conns[0].close()


def test_watchdog_tears_down_engines_that_cannot_be_interrupted():
    """NCCL's collectives cannot be polled: on_lost fires once an issued one can't finish."""
    a, b = _pair()
    reasons = []
    a.on_lost = reasons.append
    a.done, b.done = 5, 4  # rank 0 issued a 5th collective; rank 1 leaves after 4
    b.leave()
    deadline = time.monotonic() + 3
    while not reasons and time.monotonic() < deadline:
        time.sleep(0.05)
    assert reasons and "rank 1 left" in reasons[0] and "collective number 5" in reasons[0]
    a.on_lost = None
    a.leave()


def test_watchdog_rank_zero_loss_is_seen_by_the_others():
    a, b = _pair()
    a._stop.set()
    a._conns[1].close()
    with pytest.raises(DistributedError, match="rank 0 was lost"):
        b.wait(lambda: False, "all_reduce")
    b.leave()


def test_forked_children_do_not_keep_a_dead_ranks_connection_open():
    """A DataLoader worker forked from rank 1 must not hold rank 1's socket: when rank 1
    dies, rank 0 still sees the connection close at once."""
    import os as _os

    a, b = _pair()
    pid = _os.fork()
    if pid == 0:  # a long-lived child (a worker) of rank 1's process
        time.sleep(3)
        _os._exit(0)
    try:
        b._stop.set()
        b._conns[0].close()  # rank 1's own process closes its end (it dies)
        with pytest.raises(DistributedError, match="rank 1 was lost: its process ended"):
            a.wait(lambda: False, "all_reduce")
    finally:
        _os.kill(pid, signal.SIGKILL)
        _os.waitpid(pid, 0)
        a.leave()
