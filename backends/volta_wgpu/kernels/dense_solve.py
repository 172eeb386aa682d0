"""Small dense factorizations on the device, one thread per matrix of a batch.

``eliminate``: Gaussian elimination with partial pivoting. It gives each matrix's
determinant, its sign and the log of its absolute value, and, in Gauss-Jordan form,
overwrites right-hand sides with the solution (``solve``; ``inv`` solves against the
identity). ``cholesky``: the lower factor, with a flag for matrices that are not
positive definite. ``householder_qr``: Q and R by Householder reflections. ``jacobi_eigh``:
eigenvalues and eigenvectors of a symmetric matrix by cyclic Jacobi rotations. O(n^3)
work per thread: meant for the small matrices the Array-API ``linalg`` functions are used
on, not for large systems.
"""

from __future__ import annotations

import struct

from .. import codegen as cg
from .. import dtypes as D
from ..array import Array, new_array
from ..dtypes import DType
from ..engine import groups_for
from .f64_math import F64_NAMES, F64_SRC

_ELIM = """
  let bi = gi;
  if (bi >= W0) { return; }
  let n = W1; let k = W2;
  let A0 = bi * n * n; let B0 = bi * n * k;
  var sgn = T(1); var logd = T(0); var det = T(1); var sing = false;
  for (var c = 0u; c < n; c = c + 1u) {
    var p = c; var best = abs(a[A0 + c * n + c]);
    for (var r = c + 1u; r < n; r = r + 1u) {
      let v = abs(a[A0 + r * n + c]);
      if (v > best) { best = v; p = r; }
    }
    if (p != c) {
      for (var j = 0u; j < n; j = j + 1u) {
        let t = a[A0 + c * n + j]; a[A0 + c * n + j] = a[A0 + p * n + j]; a[A0 + p * n + j] = t;
      }
      for (var j = 0u; j < k; j = j + 1u) {
        let t = b[B0 + c * k + j]; b[B0 + c * k + j] = b[B0 + p * k + j]; b[B0 + p * k + j] = t;
      }
      sgn = -sgn; det = -det;
    }
    let piv = a[A0 + c * n + c];
    det = det * piv;
    if (piv == T(0)) {
      sing = true;
    } else {
      logd = logd + LOG(abs(piv));
      if (piv < T(0)) { sgn = -sgn; }
      if (GJ) {
        let s = T(1) / piv;
        for (var j = 0u; j < n; j = j + 1u) { a[A0 + c * n + j] = a[A0 + c * n + j] * s; }
        for (var j = 0u; j < k; j = j + 1u) { b[B0 + c * k + j] = b[B0 + c * k + j] * s; }
        for (var r = 0u; r < n; r = r + 1u) {
          let f = a[A0 + r * n + c];
          if (r != c && f != T(0)) {
            for (var j = 0u; j < n; j = j + 1u) {
              a[A0 + r * n + j] = a[A0 + r * n + j] - f * a[A0 + c * n + j];
            }
            for (var j = 0u; j < k; j = j + 1u) {
              b[B0 + r * k + j] = b[B0 + r * k + j] - f * b[B0 + c * k + j];
            }
          }
        }
      } else {
        for (var r = c + 1u; r < n; r = r + 1u) {
          let f = a[A0 + r * n + c] / piv;
          for (var j = c; j < n; j = j + 1u) {
            a[A0 + r * n + j] = a[A0 + r * n + j] - f * a[A0 + c * n + j];
          }
        }
      }
    }
  }
  if (sing) { sgn = T(0); logd = -INF; }
  d[bi * 4u] = det; d[bi * 4u + 1u] = sgn; d[bi * 4u + 2u] = logd;
  d[bi * 4u + 3u] = select(T(0), T(1), sing);
"""

_CHOL = """
  let bi = gi;
  if (bi >= W0) { return; }
  let n = W1; let A0 = bi * n * n;
  var bad = false;
  for (var i = 0u; i < n * n; i = i + 1u) { l[A0 + i] = T(0); }
  for (var j = 0u; j < n; j = j + 1u) {
    var s = a[A0 + j * n + j];
    for (var q = 0u; q < j; q = q + 1u) { s = s - l[A0 + j * n + q] * l[A0 + j * n + q]; }
    if (!(s > T(0))) { bad = true; s = T(1); }
    let dj = sqrt(s);
    l[A0 + j * n + j] = dj;
    for (var i = j + 1u; i < n; i = i + 1u) {
      var v = a[A0 + i * n + j];
      for (var q = 0u; q < j; q = q + 1u) { v = v - l[A0 + i * n + q] * l[A0 + j * n + q]; }
      l[A0 + i * n + j] = v / dj;
    }
  }
  d[bi] = select(T(0), T(1), bad);
"""


def _fill(body: str, t: DType) -> str:
    body = body.replace("W0", cg.word(0)).replace("W1", cg.word(1)).replace("W2", cg.word(2))
    body = body.replace("INF", cg.const(t, float("inf"))).replace("T(", f"{t.wgsl}(")
    log = F64_NAMES.get("log", "log") if t is D.float64 else "log"
    return body.replace("LOG(", f"{log}(")


def _elim_src(t: DType, gj: bool) -> tuple[str, int, int, int]:
    body = _fill(_ELIM, t).replace("GJ", "true" if gj else "false")
    src = cg.header([t], 3, [("a", t), ("b", t), ("d", t)], [])
    return src + (F64_SRC if t is D.float64 else "") + cg.main_1d(body), 3, 3, 0


def _chol_src(t: DType) -> tuple[str, int, int, int]:
    src = cg.header([t], 2, [("l", t), ("d", t)], [("a", t)])
    return src + cg.main_1d(_fill(_CHOL, t)), 2, 2, 1


def eliminate(a: Array, b: Array | None, gauss_jordan: bool) -> Array:
    """Eliminate on fresh contiguous ``a`` (batch, n, n) and ``b`` (batch, n, k), in place;
    returns (batch, 4): determinant, sign, log|det|, singular flag (1 or 0)."""
    t, eng = a.dtype, a.engine
    batch, n = a.shape[0], a.shape[-1]
    k = 0 if b is None else b.shape[-1]
    d = new_array((batch, 4), t, eng)
    if batch == 0:
        return d
    bb = b if b is not None else new_array((1,), t, eng)
    kern = eng.kernel(("linalg_elim", t, gauss_jordan), lambda: _elim_src(t, gauss_jordan))
    eng.dispatch(kern, struct.pack("<3I", batch, n, k),
                 [a._st.buffer, bb._st.buffer, d._st.buffer], groups_for(batch))
    return d


def cholesky(a: Array) -> tuple[Array, Array]:
    """Lower Cholesky factors of contiguous ``a`` (batch, n, n), and per matrix a flag
    (1 where it is not positive definite)."""
    t, eng = a.dtype, a.engine
    batch, n = a.shape[0], a.shape[-1]
    low = new_array(a.shape, t, eng)
    d = new_array((max(batch, 1),), t, eng)
    if batch == 0 or n == 0:  # nothing to factor, nothing to flag
        return low, d[:0]
    kern = eng.kernel(("linalg_chol", t), lambda: _chol_src(t))
    eng.dispatch(kern, struct.pack("<2I", batch, n),
                 [low._st.buffer, d._st.buffer, a._st.buffer], groups_for(batch))
    return low, d


_QR = """
  let bi = gi;
  if (bi >= W0) { return; }
  let M = W1; let n = W2; let k = min(M, n);
  let R0 = bi * M * n; let Q0 = bi * M * M; let V0 = bi * M;
  for (var ri = 0u; ri < M; ri = ri + 1u) {
    for (var c = 0u; c < M; c = c + 1u) { q[Q0 + ri * M + c] = select(T(0), T(1), ri == c); }
  }
  for (var j = 0u; j < k; j = j + 1u) {
    var nrm = T(0);
    for (var i = j; i < M; i = i + 1u) { nrm = nrm + r[R0 + i * n + j] * r[R0 + i * n + j]; }
    nrm = sqrt(nrm);
    let d = r[R0 + j * n + j];
    let alpha = select(-nrm, nrm, d < T(0));
    var vv = T(0);
    for (var i = j; i < M; i = i + 1u) {
      var vi = r[R0 + i * n + j];
      if (i == j) { vi = vi - alpha; }
      v[V0 + i] = vi; vv = vv + vi * vi;
    }
    if (vv > T(0)) {
      for (var c = j; c < n; c = c + 1u) {
        var t = T(0);
        for (var i = j; i < M; i = i + 1u) { t = t + v[V0 + i] * r[R0 + i * n + c]; }
        t = T(2) * t / vv;
        for (var i = j; i < M; i = i + 1u) {
          r[R0 + i * n + c] = r[R0 + i * n + c] - t * v[V0 + i];
        }
      }
      for (var rr = 0u; rr < M; rr = rr + 1u) {
        var t = T(0);
        for (var i = j; i < M; i = i + 1u) { t = t + q[Q0 + rr * M + i] * v[V0 + i]; }
        t = T(2) * t / vv;
        for (var i = j; i < M; i = i + 1u) {
          q[Q0 + rr * M + i] = q[Q0 + rr * M + i] - t * v[V0 + i];
        }
      }
    }
    for (var i = j + 1u; i < M; i = i + 1u) { r[R0 + i * n + j] = T(0); }  // exactly upper
  }
"""

_JACOBI = """
  let bi = gi;
  if (bi >= W0) { return; }
  let n = W1; let A0 = bi * n * n;
  for (var i = 0u; i < n; i = i + 1u) {
    for (var j = 0u; j < n; j = j + 1u) {
      v[A0 + i * n + j] = select(T(0), T(1), i == j);
      if (j > i) { a[A0 + i * n + j] = a[A0 + j * n + i]; }  // the lower triangle, as LAPACK's 'L'
    }
  }
  for (var sweep = 0; sweep < 40; sweep = sweep + 1) {
    for (var p = 0u; p < n; p = p + 1u) {
      for (var q2 = p + 1u; q2 < n; q2 = q2 + 1u) {
        let apq = a[A0 + p * n + q2];
        if (apq != T(0)) {
          let app = a[A0 + p * n + p]; let aqq = a[A0 + q2 * n + q2];
          let th = (aqq - app) / (T(2) * apq);
          var t = T(1) / (abs(th) + sqrt(th * th + T(1)));
          if (abs(th) > T(1e15)) { t = T(0.5) / abs(th); }
          if (th < T(0)) { t = -t; }
          let c = T(1) / sqrt(t * t + T(1)); let s = t * c;
          for (var r = 0u; r < n; r = r + 1u) {
            let arp = a[A0 + r * n + p]; let arq = a[A0 + r * n + q2];
            a[A0 + r * n + p] = c * arp - s * arq; a[A0 + r * n + q2] = s * arp + c * arq;
          }
          for (var r = 0u; r < n; r = r + 1u) {
            let apr = a[A0 + p * n + r]; let aqr = a[A0 + q2 * n + r];
            a[A0 + p * n + r] = c * apr - s * aqr; a[A0 + q2 * n + r] = s * apr + c * aqr;
          }
          a[A0 + p * n + q2] = T(0); a[A0 + q2 * n + p] = T(0);
          for (var r = 0u; r < n; r = r + 1u) {
            let vrp = v[A0 + r * n + p]; let vrq = v[A0 + r * n + q2];
            v[A0 + r * n + p] = c * vrp - s * vrq; v[A0 + r * n + q2] = s * vrp + c * vrq;
          }
        }
      }
    }
  }
"""


def _qr_src(t: DType) -> tuple[str, int, int, int]:
    src = cg.header([t], 3, [("r", t), ("q", t), ("v", t)], [])
    return src + cg.main_1d(_fill(_QR, t)), 3, 3, 0


def _jacobi_src(t: DType) -> tuple[str, int, int, int]:
    src = cg.header([t], 2, [("a", t), ("v", t)], [])
    return src + cg.main_1d(_fill(_JACOBI, t)), 2, 2, 0


def householder_qr(r: Array) -> Array:
    """Factor fresh contiguous ``r`` (batch, m, n) in place into R (upper triangular);
    returns Q (batch, m, m)."""
    t, eng = r.dtype, r.engine
    batch, m, n = r.shape
    q = new_array((batch, m, m), t, eng)
    if batch == 0 or m == 0:
        return q
    v = new_array((batch, m), t, eng)
    kern = eng.kernel(("linalg_qr", t), lambda: _qr_src(t))
    eng.dispatch(kern, struct.pack("<3I", batch, m, n),
                 [r._st.buffer, q._st.buffer, v._st.buffer], groups_for(batch))
    return q


def jacobi_eigh(a: Array) -> Array:
    """Diagonalize fresh contiguous symmetric ``a`` (batch, n, n) in place (its diagonal
    becomes the eigenvalues, unsorted); returns the eigenvectors as columns."""
    t, eng = a.dtype, a.engine
    batch, n = a.shape[0], a.shape[-1]
    v = new_array(a.shape, t, eng)
    if batch == 0 or n == 0:
        return v
    kern = eng.kernel(("linalg_jacobi", t), lambda: _jacobi_src(t))
    eng.dispatch(kern, struct.pack("<2I", batch, n), [a._st.buffer, v._st.buffer],
                 groups_for(batch))
    return v


# -- loop iterations per thread (worst case), for drivers that cap them ---------------------
# Mesa's llvmpipe (lavapipe, and OpenGL on llvmpipe) ends a shader invocation's loops after
# 65535 iterations in all, silently: the caller sends larger matrices to the host there.
def elim_loops(n: int, k: int, gauss_jordan: bool) -> int:
    """Loop iterations of :func:`eliminate` on one (n, n) matrix with k right-hand sides."""
    total = 0
    for c in range(n):
        total += 1 + (n - c - 1) + n + k
        total += n + k + n * (1 + n + k) if gauss_jordan else (n - c - 1) * (1 + n - c)
    return total


def cholesky_loops(n: int) -> int:
    """Loop iterations of :func:`cholesky` on one (n, n) matrix."""
    return n * n + sum(1 + j + (n - j - 1) * (1 + j) for j in range(n))


def qr_loops(m: int, n: int) -> int:
    """Loop iterations of :func:`householder_qr` on one (m, n) matrix."""
    total = m + m * m
    for j in range(min(m, n)):
        total += 1 + 3 * (m - j) + (n - j) * (1 + 2 * (m - j)) + m * (1 + 2 * (m - j))
    return total


def jacobi_loops(n: int) -> int:
    """Loop iterations of :func:`jacobi_eigh` on one (n, n) matrix (every sweep run)."""
    return n + n * n + 40 * (1 + n + n * (n - 1) // 2 * (1 + 3 * n))
