"""Worker: a 2-rank MPI training run where the last rank fails in a chosen way.

Usage: faults.py MODE STEP. The last rank fails at step STEP; every rank prints
``rank R: t_fail=...`` / ``rank R: t_error=...`` (wall clock) so the test can check the
survivors raise within the timeout. Modes:

- kill: the rank SIGKILLs itself;
- finally: it raises inside ``try: ... finally: destroy_process_group()``;
- exit0 / exit1: ``sys.exit(0)`` early, ``sys.exit(1)`` in an ``except``;
- skip: it skips one all_reduce but stays alive (the others time out);
- size / dtype: (with VOLTA_DISTRIBUTED_DEBUG=DETAIL) it passes another shape / dtype.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from datetime import timedelta

import volta_core as vt
import volta_core.distributed as dist
from volta_core import nn
from volta_core.nn.parallel import DistributedDataParallel

TIMEOUT = 2.0
ENGINE = os.environ.get("VOLTA_FAULT_ENGINE", "mpi")  # nccl: see nccl_faults.py
mode, fail_step = sys.argv[1], int(sys.argv[2])
dist.init_process_group(ENGINE, timeout=timedelta(seconds=TIMEOUT))
rank, world = dist.get_rank(), dist.get_world_size()
failing = rank == world - 1
dev = "cpu" if ENGINE == "mpi" else f"cuda:{dist.get_local_rank()}"


def fail_now() -> None:
    print(f"rank {rank}: t_fail={time.time():.3f}", flush=True)


try:
    vt.manual_seed(0)
    model = DistributedDataParallel(nn.Linear(4, 2).to(dev))
    opt = vt.optim.SGD(model.parameters(), lr=0.1)
    for step in range(1000):
        if failing and step == fail_step:
            fail_now()
            if mode == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if mode == "finally":
                raise RuntimeError(f"rank {rank} fails on purpose at step {step}")
            if mode == "exit0":
                sys.exit(0)
            if mode == "exit1":
                try:
                    raise ValueError("bad batch")
                except ValueError:
                    sys.exit(1)
            if mode == "skip":
                time.sleep(4 * TIMEOUT)
                continue
        if mode in ("size", "dtype") and step == fail_step:
            t = vt.ones(5 if failing and mode == "size" else 4, device=dev,
                        dtype="float64" if failing and mode == "dtype" else "float32")
            dist.all_reduce(t)
        x = vt.randn(8, 4, device=dev)
        loss = model(x).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        float(loss)  # a sync point each step, as logging makes
        if step > fail_step + 200:
            print(f"rank {rank}: unreachable, the job went on at step {step}", flush=True)
            break
except dist.DistributedError as exc:
    print(f"rank {rank}: t_error={time.time():.3f} {type(exc).__name__}: {exc}", flush=True)
    raise
finally:
    dist.destroy_process_group()
