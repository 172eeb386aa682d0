"""Singular value decomposition on the device: one-sided (Hestenes) Jacobi, one workgroup
per matrix of a batch.

The kernel factors a tall matrix ``W`` (M x N, M >= N; the caller passes the transpose of a
wide one) as ``W = L diag(S) R^T``. It rotates pairs of columns of ``W`` until every pair is
orthogonal (``|w_p . w_q| <= sqrt(M) eps |w_p| |w_q|``, as LAPACK's ``gesvj``), applying the
same rotations to ``R`` (starting from the identity). Then ``S_j = |w_j|`` and
``L_j = w_j / S_j``. The threads of a workgroup rotate disjoint column pairs at once, in the
round-robin order of a tournament (N - 1 rounds of N / 2 pairs make a sweep), with a
storage barrier between rounds.

The matrix is first scaled by a power of two so that its largest entry is in [1, 2):
column norms then neither overflow nor underflow. Singular values come out descending (each
thread ranks its columns). Columns of ``L`` for a zero singular value, and with
``full_matrices`` the M - N columns past N, are completed to an orthonormal basis by
Gram-Schmidt on the unit vectors (one thread; only rank-deficient or full, tall inputs need
it). ``S`` alone (``svdvals``) skips ``R`` and ``L`` and gives bit-identical values.

Each matrix is computed the same way wherever it is in the batch, so a stack gives exactly
the results of its matrices one by one. A matrix holding a NaN or an infinity gives NaN
everywhere (NumPy raises ``LinAlgError``; raising would need a sync).
"""

from __future__ import annotations

import struct

import numpy as np

from .. import codegen as cg
from .. import dtypes as D
from ..array import Array, new_array
from ..dtypes import DType
from ..engine import groups_for

WGS = 64        # threads per matrix: each rotates one column pair of a round at a time
MAX_SIDE = 2 * WGS  # largest M (workgroup arrays are sized for it); the caller checks
SWEEPS = 30     # at most (LAPACK's gesvj too); small matrices take 5 to 10

_BODY = """
var<workgroup> red: array<T, WGS>;
var<workgroup> flag: array<u32, WGS>;
var<workgroup> go: u32;
var<workgroup> sv: array<T, MAXS>;   // column norms, then sort keys
var<workgroup> ok: array<u32, MAXS>; // output column of L already orthonormal
var<private> poison: bool;           // a NaN or inf in the matrix: every output is NaN

fn pos(i: u32, r: u32, npos: u32) -> u32 {
  // the column at place i in round r of the tournament: place 0 stays, the rest rotate
  if (i == 0u) { return 0u; }
  return (i - 1u + r) % (npos - 1u) + 1u;
}

// L (M x LC) and R (N x N) go straight to U and Vh: W = A gives U = L, Vh = R^T;
// W = A^T (a wide A) gives U = R, Vh = L^T
fn put_l(bi: u32, r: u32, c: u32, val: T) {
  let M = W1; let LC = W3;
  let x = select(val, NAN, poison);
  if (W4 == 1u) { vh[bi * LC * M + c * M + r] = x; } else { u[bi * M * LC + r * LC + c] = x; }
}

fn get_l(bi: u32, r: u32, c: u32) -> T {
  let M = W1; let LC = W3;
  if (W4 == 1u) { return vh[bi * LC * M + c * M + r]; }
  return u[bi * M * LC + r * LC + c];
}

fn put_r(bi: u32, r: u32, c: u32, val: T) {
  let N = W2;
  let x = select(val, NAN, poison);
  if (W4 == 1u) { u[bi * N * N + r * N + c] = x; } else { vh[bi * N * N + c * N + r] = x; }
}

@compute @workgroup_size(WGS)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(local_invocation_index) tid: u32,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let bi = wid.x + wid.y * nwg.x;
  if (bi >= W0) { return; }
  let M = W1; let N = W2; let LC = W3;
  let A0 = bi * M * N; let V0 = bi * N * N;

  // scale by a power of two: the largest entry in [1, 2) (a NaN or inf sticks; max() may
  // drop a NaN, and llvmpipe folds x != x to false)
  var mx = T(0);
  for (var i = tid; i < M * N; i = i + WGSu) {
    let e = abs(w[A0 + i]);
    if (mx <= MAXF && !(e <= mx)) { mx = e; }
  }
  red[tid] = mx;
  workgroupBarrier();
  for (var k = WGSu / 2u; k > 0u; k = k >> 1u) {
    if (tid < k) {
      let e = red[tid + k];
      if (red[tid] <= MAXF && !(e <= red[tid])) { red[tid] = e; }
    }
    workgroupBarrier();
  }
  let amax = red[0];
  poison = !(amax <= MAXF);
  var sc = T(exp2(floor(log2(f32(amax)))));
  if (!(sc > T(0) && sc <= MAXF)) { sc = amax; }  // float64 past float32's range
  if (!(sc > T(0) && sc <= MAXF)) { sc = T(1); }  // zero, inf or NaN: as it is
  for (var i = tid; i < M * N; i = i + WGSu) { w[A0 + i] = w[A0 + i] / sc; }
  if (UV) {
    for (var i = tid; i < N * N; i = i + WGSu) {
      v[V0 + i] = select(T(0), T(1), i / N == i % N);
    }
  }
  storageBarrier();

  let npos = N + (N & 1u);  // an odd N plays against a dummy column N
  let npairs = npos / 2u;
  let tol = sqrt(T(M)) * EPS;
  for (var sweep = 0u; sweep < SWEEPS; sweep = sweep + 1u) {
    var rot = 0u;
    for (var r = 0u; r + 1u < npos; r = r + 1u) {
      // one pair a thread (N <= 2 WGS)
      let k = tid;
      if (k < npairs) {
        let i0 = pos(k, r, npos); let i1 = pos(npos - 1u - k, r, npos);
        let p = min(i0, i1); let q = max(i0, i1);
        if (q < N) {
          var al = T(0); var be = T(0); var ga = T(0);
          for (var i = 0u; i < M; i = i + 1u) {
            let x = w[A0 + i * N + p]; let y = w[A0 + i * N + q];
            al = al + x * x; be = be + y * y; ga = ga + x * y;
          }
          if (abs(ga) > tol * sqrt(al) * sqrt(be)) {
            rot = 1u;
            let z = (be - al) / (T(2) * ga);
            var t = T(1) / (abs(z) + sqrt(T(1) + z * z));
            if (abs(z) > T(1e15)) { t = T(0.5) / abs(z); }
            if (z < T(0)) { t = -t; }
            let c = T(1) / sqrt(T(1) + t * t); let s = c * t;
            for (var i = 0u; i < M; i = i + 1u) {
              let x = w[A0 + i * N + p]; let y = w[A0 + i * N + q];
              w[A0 + i * N + p] = c * x - s * y; w[A0 + i * N + q] = s * x + c * y;
            }
            if (UV) {
              for (var i = 0u; i < N; i = i + 1u) {
                let x = v[V0 + i * N + p]; let y = v[V0 + i * N + q];
                v[V0 + i * N + p] = c * x - s * y; v[V0 + i * N + q] = s * x + c * y;
              }
            }
          }
        }
      }
      storageBarrier();  // the next round pairs these columns with others
    }
    flag[tid] = rot;
    workgroupBarrier();
    if (tid == 0u) {
      var any = 0u;
      for (var i = 0u; i < WGSu; i = i + 1u) { any = any | flag[i]; }
      go = any;
    }
    if (workgroupUniformLoad(&go) == 0u) { break; }
  }

  // singular values: column norms, ranked descending (NaN first, ties by column)
  for (var j = tid; j < N; j = j + WGSu) {
    var nn = T(0);
    for (var i = 0u; i < M; i = i + 1u) { nn = nn + w[A0 + i * N + j] * w[A0 + i * N + j]; }
    let sj = sqrt(nn);
    sv[j] = select(INF, sj, sj <= MAXF);
  }
  for (var j = tid; j < LC; j = j + WGSu) { ok[j] = 0u; }
  workgroupBarrier();
  var smax = T(0);
  for (var j = 0u; j < N; j = j + 1u) { smax = max(smax, sv[j]); }
  for (var j = tid; j < N; j = j + WGSu) {
    let sj = sv[j];
    var rk = 0u;
    for (var i = 0u; i < N; i = i + 1u) {
      if (sv[i] > sj || (sv[i] == sj && i < j)) { rk = rk + 1u; }
    }
    var nn = T(0);
    for (var i = 0u; i < M; i = i + 1u) { nn = nn + w[A0 + i * N + j] * w[A0 + i * N + j]; }
    let sj0 = sqrt(nn);
    s[bi * N + rk] = select(sj0 * sc, NAN, poison);
    if (UV) {
      for (var i = 0u; i < N; i = i + 1u) { put_r(bi, i, rk, v[V0 + i * N + j]); }
      // a column far below the largest has lost its direction: completed below
      if (sj0 > smax * EPS * EPS) {
        for (var i = 0u; i < M; i = i + 1u) { put_l(bi, i, rk, w[A0 + i * N + j] / sj0); }
        ok[rk] = 1u;
      }
    }
  }
  if (UV) {
    storageBarrier();
    workgroupBarrier();
    if (tid == 0u) {
      for (var c = 0u; c < LC; c = c + 1u) {
        if (ok[c] == 0u) {
          // the unit vector least covered by the columns so far, made orthogonal to them
          var best = 0u; var bres = T(-1);
          for (var k = 0u; k < M; k = k + 1u) {
            var res = T(1);
            for (var j = 0u; j < LC; j = j + 1u) {
              if (ok[j] == 1u) { let e = get_l(bi, k, j); res = res - e * e; }
            }
            if (res > bres) { bres = res; best = k; }
          }
          for (var i = 0u; i < M; i = i + 1u) { put_l(bi, i, c, select(T(0), T(1), i == best)); }
          for (var twice = 0; twice < 2; twice = twice + 1) {
            for (var j = 0u; j < LC; j = j + 1u) {
              if (ok[j] == 1u) {
                var d = T(0);
                for (var i = 0u; i < M; i = i + 1u) { d = d + get_l(bi, i, j) * get_l(bi, i, c); }
                for (var i = 0u; i < M; i = i + 1u) {
                  put_l(bi, i, c, get_l(bi, i, c) - d * get_l(bi, i, j));
                }
              }
            }
          }
          var nn = T(0);
          for (var i = 0u; i < M; i = i + 1u) { nn = nn + get_l(bi, i, c) * get_l(bi, i, c); }
          let inv = T(1) / sqrt(nn);
          for (var i = 0u; i < M; i = i + 1u) { put_l(bi, i, c, get_l(bi, i, c) * inv); }
          ok[c] = 1u;
        }
      }
    }
  }
}
"""


def _src(t: DType, uv: bool) -> tuple[str, int, int, int]:
    eps = {D.float32: 2.0 ** -23, D.float64: 2.0 ** -52}[t]
    body = _BODY.replace("WGSu", f"{WGS}u").replace("WGS", str(WGS))
    body = body.replace("MAXS", str(MAX_SIDE)).replace("SWEEPS", f"{SWEEPS}u")
    body = body.replace("UV", "true" if uv else "false")
    body = body.replace("EPS", cg.const(t, eps)).replace("INF", cg.const(t, float("inf")))
    body = body.replace("NAN", cg.const(t, float("nan")))
    body = body.replace("MAXF", cg.const(t, float(np.finfo(t.np).max)))
    for k in range(5):
        body = body.replace(f"W{k}", cg.word(k))
    body = body.replace("T(", f"{t.wgsl}(").replace(": T", f": {t.wgsl}")
    body = body.replace("-> T", f"-> {t.wgsl}").replace("<T,", f"<{t.wgsl},")
    src = cg.header([t], 5, [("w", t), ("v", t), ("s", t), ("u", t), ("vh", t)], [])
    return src + body, 5, 5, 0


def jacobi_svd(w: Array, full: bool, uv: bool,
               wide: bool) -> tuple[Array | None, Array, Array | None]:
    """Factor fresh contiguous ``w`` (batch, M, N), M >= N, in place (float32 or float64).

    Returns ``(U, S, Vh)`` of the matrix ``w`` stands for: ``w`` itself, or with ``wide``
    its transpose (then ``w`` holds ``A^T`` for a wide ``A``). ``S`` is (batch, N),
    descending; ``U`` and ``Vh`` are None without ``uv``; ``full`` gives the L factor
    M columns instead of N.
    """
    t, eng = w.dtype, w.engine
    batch, m, n = w.shape
    lc = m if full else n
    s = new_array((batch, n), t, eng)
    if uv:
        v = new_array((batch, n, n), t, eng)
        u = new_array((batch, n, n) if wide else (batch, m, lc), t, eng)
        vh = new_array((batch, lc, m) if wide else (batch, n, n), t, eng)
    else:
        v = u = vh = new_array((1,), t, eng)
    if batch and n:
        kern = eng.kernel(("linalg_svd", t, uv, SWEEPS), lambda: _src(t, uv))
        bufs = [w._st.buffer, v._st.buffer, s._st.buffer, u._st.buffer, vh._st.buffer]
        eng.dispatch(kern, struct.pack("<5I", batch, m, n, lc, int(wide)), bufs,
                     groups_for(batch, 1))
    return (u, s, vh) if uv else (None, s, None)


def svd_loops(m: int, n: int, full: bool, uv: bool) -> int:
    """Loop iterations of one thread of :func:`jacobi_svd` on one (m, n) matrix, m >= n,
    in the worst case (every sweep run, every column of L completed). Mesa's llvmpipe ends
    an invocation's loops after 65535 iterations in all, silently: the caller sends larger
    matrices to the host there."""
    lc = m if full else n
    per = -(-m * n // WGS)
    total = 2 * per + 6 + (-(-n * n // WGS) if uv else 0)
    npos = n + (n & 1)
    total += SWEEPS * (1 + (npos - 1) * (1 + 2 * m + (n if uv else 0)) + WGS)
    cols = -(-n // WGS)
    total += cols * (1 + m) + -(-lc // WGS) + n + cols * (1 + n + m + (n + m if uv else 0))
    if uv:
        total += lc * (1 + m * (1 + lc) + m + 2 * (1 + lc * (1 + 2 * m)) + 3 * m)
    return total
