"""Worker for volta-run: check the environment, meet through a TCPStore, maybe fail."""

from __future__ import annotations

import os
import sys
import time
from datetime import timedelta

from volta_core.distributed import TCPStore

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
assert os.environ["LOCAL_RANK"] == str(rank), os.environ["LOCAL_RANK"]
mode = sys.argv[1]
if mode == "hang":
    time.sleep(120)
if mode == "pids":  # for the test that kills volta-run itself
    print(f"pid={os.getpid()}", flush=True)
    time.sleep(120)
if mode == "crash":
    if rank == world - 1:
        raise SystemExit(f"rank {rank} fails on purpose")
    time.sleep(120)  # a peer stuck forever: volta-run must terminate it
store = TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world,
                 is_master=rank == 0, timeout=timedelta(seconds=30))
store.set(f"hello/{rank}", f"from {rank}")
others = [store.get(f"hello/{r}").decode() for r in range(world)]
assert store.add("count", 1) <= world
store.barrier("end", world)
print(f"saw {others} args={sys.argv[2:]}", flush=True)
store.close()  # rank 0 serves the store: its close waits until the others disconnect
