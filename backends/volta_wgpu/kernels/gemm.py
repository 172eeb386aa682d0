"""A register-blocked tiled GEMM template: matmul and the implicit-GEMM convolutions.

``C[z][m, n] = sum_k A(z, m, k) * B(z, k, n)``. A workgroup of 256 threads computes a
``TM x TN`` tile of ``C``; each thread keeps ``RM x RN`` accumulators in registers
(``RN / 4`` vec4 per row, ``TN / RN`` threads apart along n so that a subgroup's reads
of the B slice are consecutive). Every step of the K loop stages a ``TM x BK`` slice of A
and a ``BK x TN`` slice of B in workgroup memory (k-major, so each thread reads its RM
values of A and RN values of B as vec4s), then runs a fully unrolled ``BK``-deep FMA
block; with ``prefetch`` the next slices are read into registers meanwhile.

The caller supplies WGSL functions ``zoff(z, s) -> vec4<i32>`` (per-batch data, computed
once per thread from the batch ``z`` and the K split ``s``), ``load_a(zo, m, k)``,
``load_b(zo, k, n)`` (called only in range, returning the accumulator type) and
``store_c(zo, m, n, v)``: that is how a convolution reads input patches in place of a
materialised column matrix. The K range may be split over ``S`` workgroups along z.

Metadata words 0..5 are ``M, N, K, k_chunk, S, z0``; the caller's words follow.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import codegen as cg
from .. import dtypes as D
from ..dtypes import DType

HEAD_WORDS = 6


@dataclass(frozen=True)
class Tile:
    """A tiling: the output tile, the K depth per step and the per-thread block."""

    tm: int
    tn: int
    bk: int
    rm: int
    rn: int
    prefetch: bool = False  # load the next K slice into registers during the FMAs

    @property
    def threads(self) -> tuple[int, int]:
        """Threads along n and along m (their product is the workgroup size)."""
        return self.tn // self.rn, self.tm // self.rm


# prefetching the next slice: 4096^3 float32 on an H100 26.8 -> 29.6 TFLOP/s (with the
# interleaved B reads 28.6 -> 31.5); at BK 16 the extra registers cost more than it gains
BIG = Tile(128, 128, 8, 8, 8, prefetch=True)
# twice as wide, 8x16 outputs per thread: each staged B value feeds twice the FMAs
# (4096^3 float32 on an H200 32.8 -> 37.4 TFLOP/s; a K depth of 16 at this width,
# or 256 rows instead of columns, ran slower), for products with enough tiles whose A
# and B rows are both read as vec4s
WIDE = Tile(128, 256, 8, 8, 16, prefetch=True)
MID = Tile(64, 64, 16, 4, 4)
# 64 rows by 128 columns and 128 by 64 (16 deep: its 64-wide B slices then stage whole
# vec4s), for products with one side of 64-127, where a 128x128 tile computes half
# padding. On an H200: a 3x3 32->64 convolution at 32x32, batch 128, 401 -> 269 us on
# NARROW; 256 batches of (256, 256) @ (256, 64) (an attention's ``p @ v``), which took
# the 128x256 tiles, 249 -> 120 us on TALL (MID: 117-125)
NARROW = Tile(64, 128, 8, 4, 8, prefetch=True)
TALL = Tile(128, 64, 16, 8, 4, prefetch=True)
# BIG with twice the K depth, for float32 products whose B is read along K (``x @ W.T``,
# a linear layer's forward): on an H200, 8 of 8 such shapes ran faster (8192x512x1536
# 16.4-18.6 -> 18.7-22.3 TFLOP/s, 4096^3 31 -> 33), in the other layouts it lost as often
# as it won; the encoder's compiled step moved within its noise (37.9 -> 37.1 ms)
DEEP = Tile(128, 128, 16, 8, 8, prefetch=True)


def _staged(which: str, count: int, nthreads: int, coords: str, zero: str, cond: str,
            call: str, store: str, phase: str) -> str:
    """WGSL staging ``count`` values per thread of A's or B's slice (``which``): each is
    read with ``call`` where ``cond`` holds (else ``zero``), then written by ``store``
    (its ``@V@`` standing for the value). ``K0`` in ``cond``/``call`` is the slice's
    first k. ``phase``: "both", or "load" (the next slice, at ``k1``, into registers
    ``pa0``, ...) and "store" (those registers to workgroup memory)."""
    lines = []
    for it in range(count):
        reg = f"p{which}{it}"
        head = f"    {{ let e = tid + {it * nthreads}u; {coords}"
        if phase == "load":
            lines.append(f"{head} {reg} = {zero}; if ({cond.replace('K0', 'k1')}) {{ "
                         f"{reg} = {call.replace('K0', 'k1')}; }} }}")
        elif phase == "store":
            lines.append(f"{head}{store.replace('@V@', reg)} }}")
        else:
            lines.append(f"{head} var v = {zero}; if ({cond.replace('K0', 'k0')}) {{ "
                         f"v = {call.replace('K0', 'k0')}; }}{store.replace('@V@', 'v')} }}")
    return "\n".join(lines)


def _scalar_loads(tile: Tile, which: str, acc: str, phase: str = "both") -> str:
    """Stage one slice of A (``TM x BK``) or B (``BK x TN``) in workgroup memory, one
    element at a time (see :func:`_staged` for ``phase``)."""
    nthreads = tile.threads[0] * tile.threads[1]
    if which == "a":  # consecutive threads along k where A's rows are contiguous (AK)
        total, inner = tile.tm * tile.bk, tile.bk
        coords = (f"let r = select(e % {tile.tm}u, e / {inner}u, AK); "
                  f"let kk = select(e / {tile.tm}u, e % {inner}u, AK);")
        cond = "row0 + r < M && K0 + kk < kend"
        call = "load_a(zo, row0 + r, K0 + kk)"
        dst = f"sa[kk * {tile.tm // 4}u + r / 4u][r % 4u]"
    else:
        total, inner = tile.bk * tile.tn, tile.tn  # along n, unless B's columns are (!BN)
        coords = (f"let kk = select(e % {tile.bk}u, e / {inner}u, BN); "
                  f"let r = select(e / {tile.bk}u, e % {inner}u, BN);")
        cond = "col0 + r < N && K0 + kk < kend"
        call = "load_b(zo, K0 + kk, col0 + r)"
        dst = f"sb[kk * {tile.tn // 4}u + r / 4u][r % 4u]"
    return _staged(which, total // nthreads, nthreads, coords, f"{acc}(0)", cond, call,
                   f" {dst} = @V@;", phase)


def _vec_loads(tile: Tile, which: str, along: str, phase: str = "both") -> str:
    """:func:`_scalar_loads` of operands read four at a time (``load_a4(zo, m, k)`` /
    ``load_b4(zo, k, n)`` return the vec4 starting there, as float32) along ``along``: "k" or
    "m" for A, "n" or "k" for B (the caller checks those runs are contiguous and
    aligned)."""
    nthreads = tile.threads[0] * tile.threads[1]
    if which == "a":
        edge, fn, limit, base = tile.tm, "load_a4", "M", "row0"
    else:
        edge, fn, limit, base = tile.tn, "load_b4", "N", "col0"
    if along == "k":  # a vec4 is 4 k's of one row (column): stored component by component
        coords = f"let x = e / {tile.bk // 4}u; let kk = (e % {tile.bk // 4}u) * 4u;"
        store = "".join(f" s{which}[(kk + {q}u) * {edge // 4}u + x / 4u][x % 4u] = @V@[{q}];"
                        for q in range(4))
    else:  # a vec4 is 4 rows (columns) at one k: one vec4 store
        coords = f"let kk = e / {edge // 4}u; let x = (e % {edge // 4}u) * 4u;"
        store = f" s{which}[kk * {edge // 4}u + x / 4u] = @V@;"
    args = f"zo, {base} + x, K0 + kk" if which == "a" else f"zo, K0 + kk, {base} + x"
    return _staged(which, edge * tile.bk // 4 // nthreads, nthreads, coords, "vec4<f32>(0)",
                   f"{base} + x < {limit} && K0 + kk < kend", f"{fn}({args})", store, phase)


def _fma_block(tile: Tile, acc: str) -> str:
    """The unrolled ``BK``-deep multiply-accumulate over the staged slices."""
    qa, qb = tile.rm // 4, tile.rn // 4
    lines = []
    for k in range(tile.bk):
        lines.append("   {")
        for i in range(qa):
            lines.append(f"    let a{i} = sa[{k * tile.tm // 4}u + ty * {qa}u + {i}u];")
        for j in range(qb):  # interleaved: a warp's vec4 reads are consecutive
            lines.append(f"    let b{j} = sb[{k * tile.tn // 4}u + {j * tile.threads[0]}u + tx];")
        for i in range(tile.rm):
            for j in range(qb):
                lines.append(f"    c{i}_{j} = fma(vec4<{acc}>(a{i // 4}[{i % 4}]), b{j}, "
                             f"c{i}_{j});")
        lines.append("   }")
    return "\n".join(lines)


def gemm_source(t: DType, tile: Tile, words: int, writes: list, reads: list,
                funcs: str, a_along_k: str = "true", b_along_n: str = "true",
                vec: tuple = (None, None)) -> str:
    """WGSL of a tiled GEMM; ``funcs`` defines ``load_a``, ``load_b`` and ``store_c``.

    Args:
        t: the storage dtype (float16 and float32 accumulate in float32).
        tile: the tiling.
        words: total metadata words (``HEAD_WORDS`` + the caller's).
        writes, reads: storage bindings as for :func:`codegen.header`.
        funcs: WGSL of the four callbacks (they may read metadata through ``m``).
        a_along_k, b_along_n: WGSL booleans: whether consecutive threads stage A along k
            (else along m) and B along n (else along k); reading memory in order (a
            transposed operand the other way round) keeps the loads coalesced.
        vec: the dims along which A and B are read four at a time ("k" or
            "m" for A, "n" or "k" for B; None: one at a time), through ``load_a4`` and
            ``load_b4`` in ``funcs``.
    """
    acc = (D.float32 if t in (D.float16, D.float32) else t).wgsl
    nx, ny = tile.threads
    qb = tile.rn // 4
    w = cg.word
    decl = "\n".join(f"  var c{i}_{j} = vec4<{acc}>(0);"
                     for i in range(tile.rm) for j in range(qb))
    stores = []
    for i in range(tile.rm):
        for j in range(qb):
            for q in range(4):
                stores.append(f"  {{ let gm = row0 + ty * {tile.rm}u + {i}u; "
                              f"let gn = col0 + tx * 4u + {j * nx * 4 + q}u;\n"
                              f"    if (gm < M && gn < N) {{ store_c(zo, gm, gn, "
                              f"c{i}_{j}[{q}]); }} }}")
    nthreads = nx * ny

    def _loads(tile: Tile, which: str, acc: str, phase: str = "both") -> str:
        along = vec[0] if which == "a" else vec[1]
        if along is None:
            return _scalar_loads(tile, which, acc, phase)
        return _vec_loads(tile, which, along, phase)

    if tile.prefetch:  # registers for the next slice: its global reads overlap the FMAs
        regs = "\n".join(
            f"  var p{w_}{i} = " + ("vec4<f32>(0);" if v else f"{acc}(0);")
            for w_, n, v in (("a", tile.tm * tile.bk, vec[0]), ("b", tile.tn * tile.bk, vec[1]))
            for i in range(n // nthreads // (4 if v else 1)))
        loop = (f"{regs}\n  var k1 = kbeg;\n"
                f"{_loads(tile, 'a', acc, 'load')}\n{_loads(tile, 'b', acc, 'load')}\n"
                f"  for (var k0 = kbeg; k0 < kend; k0 = k0 + {tile.bk}u) {{\n"
                f"{_loads(tile, 'a', acc, 'store')}\n{_loads(tile, 'b', acc, 'store')}\n"
                "    workgroupBarrier();\n"
                f"    k1 = k0 + {tile.bk}u;\n"
                f"    if (k1 < kend) {{\n{_loads(tile, 'a', acc, 'load')}\n"
                f"{_loads(tile, 'b', acc, 'load')}\n    }}\n"
                f"{_fma_block(tile, acc)}\n"
                "    workgroupBarrier();\n"
                "  }\n")
    else:
        loop = (f"  for (var k0 = kbeg; k0 < kend; k0 = k0 + {tile.bk}u) {{\n"
                f"{_loads(tile, 'a', acc)}\n{_loads(tile, 'b', acc)}\n"
                "    workgroupBarrier();\n"
                f"{_fma_block(tile, acc)}\n"
                "    workgroupBarrier();\n"
                "  }\n")
    return (cg.header([t, D.float32], words, writes, reads) + funcs + "\n"
            f"var<workgroup> sa: array<vec4<{acc}>, {tile.tm * tile.bk // 4}>;\n"
            f"var<workgroup> sb: array<vec4<{acc}>, {tile.tn * tile.bk // 4}>;\n"
            f"@compute @workgroup_size({nx * ny})\n"
            "fn main(@builtin(workgroup_id) wid: vec3<u32>,\n"
            "        @builtin(local_invocation_index) tid: u32) {\n"
            f"  let M = {w(0)}; let N = {w(1)}; let K = {w(2)};\n"
            f"  let S = {w(4)}; let zz = wid.z + {w(5)};\n"
            "  let zo = zoff(zz / S, zz % S);\n"
            f"  let AK = {a_along_k}; let BN = {b_along_n};\n"
            f"  let kbeg = (zz % S) * {w(3)}; let kend = min(K, kbeg + {w(3)});\n"
            f"  let row0 = wid.y * {tile.tm}u; let col0 = wid.x * {tile.tn}u;\n"
            f"  let tx = tid % {nx}u; let ty = tid / {nx}u;\n"
            f"{decl}\n{loop}"
            + "\n".join(stores) + "\n}\n")


def grid(tile: Tile, m: int, n: int) -> tuple[int, int]:
    """Workgroups along x (n) and y (m)."""
    return -(-n // tile.tn), -(-m // tile.tm)


def head(m: int, n: int, k: int, splits: int = 1, z0: int = 0) -> list[int]:
    """The template's metadata words (the K chunk of a split is a multiple of 64)."""
    chunk = max(64, -(-k // splits // 64) * 64) if splits > 1 else max(k, 1)
    return [m, n, k, chunk, splits, z0]
