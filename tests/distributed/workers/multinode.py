"""Worker for a 2-"node" volta-run job on one host (two launchers, --nnodes 2).

Checks the variables volta-run sets on each node, joins the default process group through
``init_process_group()``'s env:// rendezvous (MASTER_ADDR/MASTER_PORT, rank 0 on node 0
serves the store) with a small test engine that moves arrays through that store, and
trains a tiny model with FullyShardedDataParallel across the 4 ranks of the 2 nodes.
"""

from __future__ import annotations

import os
import pickle
import sys

import numpy as np

import volta_core as vt
import volta_core.distributed as dist
from volta_core import nn
from volta_core.distributed import CommEngine, ProcessGroup, ReduceOp
from volta_core.distributed.fsdp import FullyShardedDataParallel


class StoreGroup(ProcessGroup):
    """Collectives through the rendezvous store (slow, but needs nothing but TCP)."""

    def __init__(self, rank, world_size, store):
        super().__init__(rank, world_size, "store")
        self.store, self.n = store, 0

    def _exchange(self, array):
        self.n += 1
        self.store.set(f"x/{self.n}/{self.rank}", pickle.dumps(np.asarray(array)))
        return [pickle.loads(self.store.get(f"x/{self.n}/{r}")) for r in range(self.world_size)]

    def all_reduce(self, array, op):
        parts = self._exchange(array)
        fn = {ReduceOp.SUM: np.sum, ReduceOp.MAX: np.max, ReduceOp.MIN: np.min,
              ReduceOp.PRODUCT: np.prod}[op]
        array[...] = fn(np.stack(parts), axis=0)

    def broadcast(self, array, src):
        array[...] = self._exchange(array)[src]

    def all_gather(self, out, array):
        out[...] = np.concatenate([p.reshape(-1) for p in self._exchange(array)])

    def reduce_scatter(self, out, array, op):
        total = np.sum(np.stack(self._exchange(array)), axis=0)
        n = out.shape[0]
        out[...] = total[self.rank * n:(self.rank + 1) * n]

    def barrier(self):
        self._exchange(np.zeros(1))


class StoreEngine(CommEngine):
    name, device_types, needs_store = "store", ("cpu",), True

    def new_group(self, rank, world_size, store, device_index, timeout):
        return StoreGroup(rank, world_size, store)


class Plugin:
    @dist.hookimpl
    def volta_comm_engines(self):
        return [StoreEngine()]


def main() -> None:
    env = {k: int(os.environ[k]) for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE",
                                           "LOCAL_WORLD_SIZE", "GROUP_RANK")}
    assert env["WORLD_SIZE"] == 4 and env["LOCAL_WORLD_SIZE"] == 2, env
    assert env["RANK"] == env["GROUP_RANK"] * 2 + env["LOCAL_RANK"], env
    dist.register_engine_plugin(Plugin(), name="store-engine")
    dist.init_process_group("store")
    rank = dist.get_rank()
    assert rank == env["RANK"] and dist.get_local_rank() == env["LOCAL_RANK"]
    t = vt.full((2,), float(rank))
    dist.all_reduce(t)
    assert t.tolist() == [6.0, 6.0], t.tolist()

    vt.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    vt.manual_seed(0)
    ref = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    fsdp = FullyShardedDataParallel(model)
    opt = vt.optim.SGD(fsdp.parameters(), lr=0.1)
    ref_opt = vt.optim.SGD(ref.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = vt.tensor(rng.standard_normal((8, 3)).astype(np.float32))
        opt.zero_grad()
        fsdp(x[2 * rank:2 * rank + 2]).square().mean().backward()
        opt.step()
        ref_opt.zero_grad()
        ref(x).square().mean().backward()
        ref_opt.step()
    got, want = fsdp.state_dict(), ref.state_dict()
    for k in want:
        np.testing.assert_allclose(got[k].numpy(), want[k].numpy(), rtol=1e-5, atol=1e-6)
    dist.destroy_process_group()
    print(f"node {env['GROUP_RANK']} local {env['LOCAL_RANK']}: rank {rank} of 4 OK "
          f"args={sys.argv[1:]}", flush=True)


if __name__ == "__main__":
    main()
