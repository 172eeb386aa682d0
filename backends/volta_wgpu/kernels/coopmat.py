"""float32 matmul on cooperative matrices (tensor cores), where the adapter has them.

wgpu-native's ``cooperative-matrix`` feature (WGSL ``enable wgpu_cooperative_matrix;``)
offers 8x8 float32 matrices that a subgroup loads, multiplies and stores together. A
workgroup of :data:`WG` threads (one subgroup on NVIDIA) computes a 32x32 tile of the
output as 4x4 accumulators: each K step stages a 32x16 slice of A and a 16x32 slice of B
in workgroup memory (read with the operands' own strides, zero outside them), then runs
two 8-deep rounds of 16 multiply-adds. Outputs are stored 8x8 at a time straight into
the (contiguous) result, so M and N must be multiples of 8; K is free.

The feature is experimental and what its float32 computes with differs by driver (true
float32, or TF32 on tensor cores), so the kernel is used only after it ran once on a test
product (:func:`check`, when the engine is made) and matched float64 math: float32-level
accuracy serves every matmul, TF32-level accuracy only while
``vt.set_float32_matmul_precision`` allows it (``"high"`` or ``"medium"``, as
PyTorch's TF32 matmuls do); a failed build or a wrong result turns it off for the
process. It is opt-in for now (``VOLTA_WGPU_COOPMAT=1`` in the environment: the engine
then asks the adapter for the feature), until a GPU run has confirmed it. The plain
kernels stay the fallback.

No GPU has run it yet: an NVIDIA H200 on Vulkan lists the feature, but wgpu-native (that
of wgpu-py 0.32) refuses to create a device with it ("experimental features are not
enabled"), and its C API has no switch that enables them; the engine then warns and goes
on without it. wgpu-native also offers only 8x8 float32 matrices, which NVIDIA's Vulkan
driver may not list at all (its tensor cores take float16 at 16x16).
"""

from __future__ import annotations

import struct
from typing import Any

from .. import codegen as cg
from .. import dtypes as D
from ..array import Array

WG = 32  # threads per workgroup: one NVIDIA subgroup
TILE = 32  # output tile edge per workgroup
KC = 16  # K depth staged per step
FEATURE = "cooperative-matrix"

# engine index -> "fp32" (exact enough for float32), "tf32" (TF32-level), "off"
_verdict: dict[int, str] = {}


def _src(rb: int) -> tuple[str, int, int, int]:
    # meta: M, N, K, z0, a_off, a_rs, a_cs, b_off, b_rs, b_cs, bshape[rb], a_b[rb], b_b[rb]
    at_bs = 10
    at_a = at_bs + rb
    at_b = at_a + 1 + rb
    words = at_b + 1 + rb
    decomp = cg.strided_offsets(rb, at_bs, [("oa", at_a), ("ob", at_b)], index="bz")
    decomp = decomp.replace("var oa = ", "var oa = a_off + ")
    decomp = decomp.replace("var ob = ", "var ob = b_off + ")
    w = cg.word
    head = cg.header([D.float32], words, [("out", D.float32)],
                     [("a", D.float32), ("b", D.float32)])
    lines = ["enable wgpu_cooperative_matrix;", head,
             f"var<workgroup> ta: array<f32, {TILE * KC}>;",
             f"var<workgroup> tb: array<f32, {KC * TILE}>;",
             "var<workgroup> zt: array<f32, 64>;",
             f"@compute @workgroup_size({WG})",
             "fn main(@builtin(workgroup_id) wid: vec3<u32>,",
             "        @builtin(local_invocation_index) lid: u32) {",
             f"  let M = {w(0)}; let N = {w(1)}; let K = {w(2)};",
             f"  let bz = wid.z + {w(3)};",
             f"  let a_off = {cg.iword(4)}; let a_rs = {cg.iword(5)}; let a_cs = {cg.iword(6)};",
             f"  let b_off = {cg.iword(7)}; let b_rs = {cg.iword(8)}; let b_cs = {cg.iword(9)};",
             decomp,
             f"  let row0 = wid.y * {TILE}u; let col0 = wid.x * {TILE}u;"]
    tiles = [(i, j) for i in range(4) for j in range(4)]
    # zt is workgroup memory, zero at the start: the accumulators start from it
    lines += [f"  var c{i}{j} = coopLoad<coop_mat8x8<f32, C>>(&zt[0], 8u);" for i, j in tiles]
    lines += [f"  for (var k0 = 0u; k0 < K; k0 = k0 + {KC}u) {{",
              "    workgroupBarrier();",
              f"    for (var e = lid; e < {TILE * KC}u; e = e + {WG}u) {{",
              f"      let r = e / {KC}u; let k = e % {KC}u;",
              "      var va = 0.0;",
              "      if (row0 + r < M && k0 + k < K) {",
              "        va = a[u32(oa + i32(row0 + r) * a_rs + i32(k0 + k) * a_cs)]; }",
              "      ta[e] = va;",
              f"      let k2 = e / {TILE}u; let c = e % {TILE}u;",
              "      var vb = 0.0;",
              "      if (col0 + c < N && k0 + k2 < K) {",
              "        vb = b[u32(ob + i32(k0 + k2) * b_rs + i32(col0 + c) * b_cs)]; }",
              "      tb[e] = vb;",
              "    }",
              "    workgroupBarrier();"]
    for kk in range(0, KC, 8):
        lines += [f"    let a{i}_{kk} = coopLoad<coop_mat8x8<f32, A>>(&ta[{8 * i * KC + kk}], "
                  f"{KC}u);" for i in range(4)]
        lines += [f"    let b{j}_{kk} = coopLoad<coop_mat8x8<f32, B>>(&tb[{kk * TILE + 8 * j}], "
                  f"{TILE}u);" for j in range(4)]
        lines += [f"    c{i}{j} = coopMultiplyAdd(a{i}_{kk}, b{j}_{kk}, c{i}{j});"
                  for i, j in tiles]
    lines += ["  }", "  let base = bz * M * N;"]
    lines += [f"  if (row0 + {8 * i}u < M && col0 + {8 * j}u < N) {{ coopStore(c{i}{j}, "
              f"&out[base + (row0 + {8 * i}u) * N + col0 + {8 * j}u], N); }}"
              for i, j in tiles]
    lines.append("}")
    return "\n".join(lines) + "\n", words, 1, 2


def dispatch(out: Array, a: Array, b: Array, M: int, N: int, K: int, nb: int, cs: tuple,
             sa: tuple, sb: tuple) -> None:
    """``out = a @ b`` (the arguments as ``matmul.matmul_nd`` computed them)."""
    from .matmul import MAX_Z
    eng = a.engine
    rb = len(cs)
    kern = eng.kernel(("matmul_coop", rb), lambda: _src(rb))
    gx, gy = -(-N // TILE), -(-M // TILE)
    for z0 in range(0, nb, MAX_Z):
        words = [M, N, K, z0, a.offset, a.strides[-2], a.strides[-1], b.offset,
                 b.strides[-2], b.strides[-1], *cs, 0, *sa, 0, *sb]
        meta = struct.pack(f"<{len(words)}I", *[x & 0xFFFFFFFF for x in words])
        eng.dispatch(kern, meta, [out._st.buffer, a._st.buffer, b._st.buffer],
                     (gx, gy, min(MAX_Z, nb - z0)))


def check(eng: Any) -> None:
    """Run the test product on a new engine that offers the feature (``get_engine``), so
    that the verdict exists before any call is recorded."""
    if eng.index not in _verdict:
        _verdict[eng.index] = _self_test(eng)


def usable(eng: Any, m: int, n: int) -> bool:
    """Whether a float32 ``(m, k) @ (k, n)`` product on ``eng`` should use this kernel."""
    if m % 8 or n % 8 or m < 64 or n < 64 or FEATURE not in eng.features:
        return False
    verdict = _verdict.get(eng.index)
    if verdict is None:
        if eng._tape is not None or eng._lazy_pending:
            return False  # no test run inside a recording or with work pending
        verdict = _verdict[eng.index] = _self_test(eng)
    if verdict == "fp32":
        return True
    if verdict == "tf32":
        from volta_core import get_float32_matmul_precision
        return get_float32_matmul_precision() != "highest"
    return False


def _self_test(eng: Any) -> str:
    """Run a 96x80x200 product with a transposed operand and two batches through the
    kernel and through the plain one; the verdict from their largest difference."""
    import numpy as np

    from ..array import to_numpy
    from ..namespace.creation import asarray
    from ..namespace.manipulation import permute_dims
    from . import matmul
    rng = np.random.default_rng(0)
    ah = rng.standard_normal((2, 96, 200)).astype(np.float32)
    bh = rng.standard_normal((2, 80, 200)).astype(np.float32)
    try:
        a = asarray(ah, device=eng.index)
        b = permute_dims(asarray(bh, device=eng.index), (0, 2, 1))  # (2, 200, 80), strided
        out = matmul.new_array((2, 96, 80), D.float32, eng)
        dispatch(out, a, b, 96, 80, 200, 2, (2,), (a.strides[0],), (b.strides[0],))
        got = to_numpy(out).astype(np.float64)
    except Exception:  # no such WGSL on this driver, a validation error, ...
        return "off"
    want = ah.astype(np.float64) @ bh.astype(np.float64).transpose(0, 2, 1)
    scale = np.abs(ah).astype(np.float64) @ np.abs(bh).astype(np.float64).transpose(0, 2, 1)
    err = float(np.max(np.abs(got - want) / scale))
    if err < 1e-5:  # float32 products and sums (2**-24 each) stay far below
        return "fp32"
    if err < 2e-3:  # TF32 inputs (10-bit mantissa)
        return "tf32"
    return "off"
