"""Worker: every collective's values on 2+ ranks (run under mpirun or volta-run)."""

from __future__ import annotations

import sys

import numpy as np

import volta_core as vt
import volta_core.distributed as dist


def check(name: str, got: vt.Tensor, want) -> None:
    np.testing.assert_allclose(got.numpy(), np.asarray(want, dtype=got.numpy().dtype),
                               rtol=1e-6, err_msg=name)


def main() -> None:
    dist.init_process_group(sys.argv[1] if len(sys.argv) > 1 else "mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    assert dist.is_initialized() and dist.get_backend() == "mpi"
    ranks = np.arange(world, dtype=np.float32)

    for op, want in [(dist.ReduceOp.SUM, ranks.sum() + world), ("avg", ranks.mean() + 1),
                     (dist.ReduceOp.MAX, world), (dist.ReduceOp.MIN, 1),
                     (dist.ReduceOp.PRODUCT, np.prod(ranks + 1))]:
        t = vt.full((2, 3), float(rank + 1))
        version = t._version[0]
        dist.all_reduce(t, op=op)
        check(f"all_reduce {op}", t, np.full((2, 3), want))
        assert t._version[0] == version + 1
    t = vt.tensor([rank, 10 * rank], dtype=vt.int64)
    dist.all_reduce(t)
    check("all_reduce int64", t, [ranks.sum(), 10 * ranks.sum()])
    t = vt.arange(12, dtype=vt.float32).reshape(3, 4).T * (rank + 1)  # non-contiguous
    dist.all_reduce(t)
    check("all_reduce non-contiguous", t, np.arange(12.).reshape(3, 4).T * (ranks + 1).sum())

    t = vt.full((4,), float(rank))
    dist.broadcast(t, src=world - 1)
    check("broadcast", t, np.full(4, world - 1))

    out = [vt.zeros(2, 2) for _ in range(world)]
    dist.all_gather(out, vt.full((2, 2), float(rank)))
    for r in range(world):
        check(f"all_gather[{r}]", out[r], np.full((2, 2), r))
    big = vt.zeros(world * 2, 3)
    dist.all_gather_into_tensor(big, vt.full((2, 3), float(rank)))
    check("all_gather_into_tensor", big, np.repeat(ranks, 6).reshape(world * 2, 3))

    out = vt.zeros(3)
    dist.reduce_scatter(out, [vt.full((3,), float(rank + 10 * r)) for r in range(world)])
    check("reduce_scatter", out, np.full(3, ranks.sum() + 10 * rank * world))
    out = vt.zeros(2)
    inp = vt.arange(2 * world, dtype=vt.float32) * (rank + 1)
    dist.reduce_scatter_tensor(out, inp, op=dist.ReduceOp.AVG)
    check("reduce_scatter_tensor avg", out,
          np.arange(2 * rank, 2 * rank + 2) * (ranks + 1).mean())

    dist.barrier()
    dist.destroy_process_group()
    assert not dist.is_initialized()
    print(f"rank {rank}: collectives OK", flush=True)


if __name__ == "__main__":
    main()
