"""Worker: the last rank raises while the others wait in a collective."""

from __future__ import annotations

import sys

import volta_core as vt
import volta_core.distributed as dist

dist.init_process_group(sys.argv[1] if len(sys.argv) > 1 else "mpi")
if dist.get_rank() == dist.get_world_size() - 1:
    raise RuntimeError("deliberate failure on the last rank")
t = vt.ones(4)
dist.all_reduce(t)  # never completes: the failed rank must bring the job down
print("unreachable: the all_reduce returned", flush=True)
