"""Worker (4 ranks): new_group subgroups, send/recv, isend/irecv, object collectives,
bfloat16 collectives on the MPI engine."""

from __future__ import annotations

import numpy as np

import volta_core as vt
import volta_core.distributed as dist


def main() -> None:
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    assert world == 4, world

    evens = dist.new_group([0, 2])
    odds = dist.new_group([3, 1])  # order does not matter: group ranks follow global order
    mine = evens if rank % 2 == 0 else odds
    other = odds if rank % 2 == 0 else evens
    assert other is dist.GroupMember.NON_GROUP_MEMBER
    assert dist.get_world_size(mine) == 2 and dist.get_rank(mine) == rank // 2
    assert dist.get_process_group_ranks(mine) == ([0, 2] if rank % 2 == 0 else [1, 3])
    t = vt.full((3,), float(rank))
    dist.all_reduce(t, group=mine)
    assert t.tolist() == [2.0 * (rank % 2) + 2.0] * 3, t.tolist()  # 0+2 or 1+3
    t = vt.full((2,), float(rank))
    dist.broadcast(t, src=2 if rank % 2 == 0 else 3, group=mine)  # src: a global rank
    assert t.tolist() == [2.0 if rank % 2 == 0 else 3.0] * 2, t.tolist()
    try:
        dist.all_reduce(t, group=other)
    except dist.DistributedError as exc:
        assert "not a member" in str(exc)
    else:
        raise AssertionError("a collective on a group this rank is not in must raise")

    nxt, prv = (rank + 1) % world, (rank - 1) % world
    got = vt.zeros(4)
    if rank % 2 == 0:
        dist.send(vt.full((4,), float(rank)), nxt)
        dist.recv(got, prv)
    else:
        dist.recv(got, prv)
        dist.send(vt.full((4,), float(rank)), nxt)
    assert got.tolist() == [float(prv)] * 4, got.tolist()
    big = vt.arange(100_000, dtype=vt.float32) + rank  # large enough to need a rendezvous
    into = vt.zeros(100_000)
    works = [dist.isend(big, nxt), dist.irecv(into, prv)]
    for w in works:
        w.wait()
    np.testing.assert_array_equal(into.numpy(), np.arange(100_000, dtype=np.float32) + prv)

    objs = [None] * world
    dist.all_gather_object(objs, {"rank": rank, "name": "x" * rank})
    assert objs == [{"rank": r, "name": "x" * r} for r in range(world)], objs
    lst = [rank, "mine"] if rank == 1 else [None, None]
    dist.broadcast_object_list(lst, src=1)
    assert lst == [1, "mine"], lst

    bf = vt.full((8,), float(rank + 1), dtype=vt.bfloat16)
    dist.all_reduce(bf)
    assert bf.dtype == vt.bfloat16 and bf.float().tolist() == [10.0] * 8
    out = vt.zeros(8, dtype=vt.bfloat16)
    dist.all_gather_into_tensor(out, vt.full((2,), float(rank), dtype=vt.bfloat16))
    assert out.float().tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    rs = vt.zeros(2, dtype=vt.bfloat16)
    dist.reduce_scatter_tensor(rs, vt.ones(8, dtype=vt.bfloat16))
    assert rs.float().tolist() == [4.0, 4.0]

    dist.destroy_process_group()
    print(f"rank {rank}: p2p and groups OK", flush=True)


if __name__ == "__main__":
    main()
