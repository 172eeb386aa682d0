"""On-device random numbers: Philox4x32-10, a counter-based generator.

Thread ``i`` of a call turns the 64-bit counter ``offset + i`` and the 64-bit key
``seed`` into four independent 32-bit words, so a stream is reproducible for a seed
and independent of how the work is split. The generator's whole state is
``(seed, offset)``; each call advances ``offset`` by the counters it used.
"""

from __future__ import annotations

import struct
import threading
import weakref
from typing import Any

from . import codegen as cg
from . import dtypes as D
from .array import Array, as_device, new_array
from .engine import groups_for
from .kernels.mapkernel import launch_map
from .layout import prod

# Philox-4x32-10 in WGSL (u32 arithmetic only), shared with the fused attention's dropout
PHILOX_WGSL = """
fn mulhilo(a: u32, b: u32) -> vec2<u32> {
  let al = a & 0xffffu; let ah = a >> 16u; let bl = b & 0xffffu; let bh = b >> 16u;
  let ll = al * bl; let hl = ah * bl; let lh = al * bh; let hh = ah * bh;
  let cross = (ll >> 16u) + (hl & 0xffffu) + (lh & 0xffffu);
  let hi = hh + (hl >> 16u) + (lh >> 16u) + (cross >> 16u);
  return vec2<u32>(hi, a * b);
}
fn philox(c_in: vec4<u32>, k_in: vec2<u32>) -> vec4<u32> {
  var c = c_in; var k = k_in;
  for (var r = 0; r < 10; r = r + 1) {
    let p0 = mulhilo(0xD2511F53u, c.x);
    let p1 = mulhilo(0xCD9E8D57u, c.z);
    c = vec4<u32>(p1.x ^ c.y ^ k.x, p1.y, p0.x ^ c.w ^ k.y, p0.y);
    k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}
"""


def _raw_src() -> tuple[str, int, int, int]:
    from . import codegen as cg
    body = (f"  if (gi >= {cg.word(0)}) {{ return; }}\n"
            f"  let lo = {cg.word(3)} + gi;\n"
            f"  let hi = {cg.word(4)} + select(0u, 1u, lo < gi);\n"
            f"  let r = philox(vec4<u32>(lo, hi, 0u, 0u), vec2<u32>({cg.word(1)}, {cg.word(2)}));\n"
            "  out[4u * gi] = r.x; out[4u * gi + 1u] = r.y;\n"
            "  out[4u * gi + 2u] = r.z; out[4u * gi + 3u] = r.w;")
    src = cg.header([], 5, [("out", D.uint32)], []) + PHILOX_WGSL + cg.main_1d(body)
    return src, 5, 1, 0


def _live_src() -> tuple[str, int, int, int]:
    """:func:`_raw_src` with the key and counter read from a small buffer ``st`` (seed lo,
    seed hi, offset lo, offset hi) instead of the metadata: a recorded call's draw, whose
    buffer each replay fills from the generator's state (see :meth:`Generator.bits`)."""
    body = (f"  if (gi >= {cg.word(0)}) {{ return; }}\n"
            "  let lo = st[2] + gi;\n"
            "  let hi = st[3] + select(0u, 1u, lo < gi);\n"
            "  let r = philox(vec4<u32>(lo, hi, 0u, 0u), vec2<u32>(st[0], st[1]));\n"
            "  out[4u * gi] = r.x; out[4u * gi + 1u] = r.y;\n"
            "  out[4u * gi + 2u] = r.z; out[4u * gi + 3u] = r.w;")
    src = cg.header([], 1, [("out", D.uint32)], [("st", D.uint32)]) + PHILOX_WGSL + \
        cg.main_1d(body)
    return src, 1, 1, 1


def _state_words(seed: int, offset: int) -> bytes:
    return struct.pack("<4I", seed & 0xFFFFFFFF, seed >> 32, offset & 0xFFFFFFFF,
                       (offset >> 32) & 0xFFFFFFFF)


class Generator:
    """A seedable Philox generator on one wgpu device."""

    def __init__(self, device: Any = None, seed: int = 0) -> None:
        self.device = as_device(device)
        self.seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        self.offset = 0
        self._lock = threading.Lock()  # two threads drawing at once get disjoint streams
        _live.add(self)

    def manual_seed(self, seed: int) -> None:
        """Restart the stream of ``seed``."""
        self.seed = int(seed) & 0xFFFFFFFFFFFFFFFF
        self.offset = 0

    def get_state(self) -> dict:
        """The state as JSON-serialisable data."""
        return {"algorithm": "philox4x32-10", "seed": self.seed, "offset": self.offset}

    def set_state(self, state: dict) -> None:
        """Restore a state from :meth:`get_state`."""
        self.seed = int(state["seed"])
        self.offset = int(state["offset"])

    def state_buffer(self, n: int) -> Any:
        """Reserve ``n`` counters: a new 16-byte storage holding the key and the first
        counter (seed lo, seed hi, offset lo, offset hi), for a kernel that draws its own
        numbers (Philox of counter ``offset + i``, ``i < n``). While a call is recorded
        (``vt.compile(mode="reduce-overhead")``) each replay fills it from the generator's
        state as it advances (see ``replay.Recorder.on_random``)."""
        eng = self.device.engine
        with self._lock:
            seed, offset = self.seed, self.offset
            self.offset += n
        rec = eng._tape
        live = rec.on_random(eng, self, offset, n) if rec is not None else None
        return eng.upload(_state_words(seed, offset), live=live)

    def bits(self, n: int) -> Array:
        """``n`` (rounded up to a multiple of 4) random ``uint32`` words, 1-d."""
        eng = self.device.engine
        threads = max(1, -(-n // 4))
        out = new_array((threads * 4,), D.uint32, eng)
        if eng._tape is not None:
            # recorded for vt.compile(mode="reduce-overhead"): the key and counter go in
            # a buffer that each replay fills from the generator's state as it advances
            # (dropout in a replayed training step draws new masks, eager's)
            st = self.state_buffer(threads)
            kern = eng.kernel(("philox_live",), _live_src)
            eng.dispatch(kern, struct.pack("<I", threads), [out._st.buffer, st.buffer],
                         groups_for(threads))
            return out
        with self._lock:
            seed, offset = self.seed, self.offset
            self.offset += threads
        kern = eng.kernel(("philox",), _raw_src)
        meta = struct.pack("<5I", threads, seed & 0xFFFFFFFF, seed >> 32,
                           offset & 0xFFFFFFFF, (offset >> 32) & 0xFFFFFFFF)
        eng.dispatch(kern, meta, [out._st.buffer], groups_for(threads))
        return out

    def _words(self, shape: tuple, k: int) -> list[Array]:
        from .namespace.manipulation import reshape
        n = prod(shape)
        raw = self.bits(max(n * k, 1))
        return [reshape(raw[i * n:(i + 1) * n], shape) for i in range(k)]

    def uniform(self, shape: tuple, dtype: Any = None, low: float = 0.0,
                high: float = 1.0) -> Array:
        """Samples from U[low, high)."""
        t = D.as_dtype(dtype) if dtype is not None else D.float32
        shape = tuple(shape)
        if t is D.float64:
            w = self._words(shape, 2)
            expr = ("({2} + ({3} - {2}) * ((f64({0} >> 5u) * 67108864.0 + f64({1} >> 6u)) "
                    "* (1.0 / 9007199254740992.0)))")
            return launch_map(expr, [w[0], w[1], low, high], [D.uint32, D.uint32, t, t], t,
                              op="uniform")
        (w,) = self._words(shape, 1)
        out = launch_map("({1} + ({2} - {1}) * f32({0} >> 8u) * (1.0 / 16777216.0))",
                         [w, float(low), float(high)], [D.uint32, D.float32, D.float32],
                         D.float32, op="uniform")
        return out if t is D.float32 else launch_map("{0}", [out], [t], t, op="uniform")

    def normal(self, shape: tuple, dtype: Any = None, mean: float = 0.0,
               std: float = 1.0) -> Array:
        """Samples from N(mean, std^2) (Box-Muller)."""
        t = D.as_dtype(dtype) if dtype is not None else D.float32
        shape = tuple(shape)
        w = self._words(shape, 2)
        ct = D.float64 if t is D.float64 else D.float32
        from .namespace.elementwise import _fn
        # the angle is in [0, 2pi): the built-in cos needs no large-argument reduction
        log, cos = _fn("log", ct), ("cos" if ct is not D.float64 else _fn("cos", ct))
        T = ct.wgsl
        expr = (f"({{2}} + {{3}} * sqrt({T}(-2) * {log}(({T}({{0}} >> 8u) + {T}(1)) * "
                f"{T}(1.0 / 16777216.0))) * {cos}({T}(6.283185307179586) * {T}({{1}} >> 8u) "
                f"* {T}(1.0 / 16777216.0)))")
        out = launch_map(expr, [w[0], w[1], mean, std], [D.uint32, D.uint32, ct, ct], ct,
                         op="normal")
        return out if t is ct else launch_map("{0}", [out], [t], t, op="normal")

    def integers(self, low: int, high: int, shape: tuple, dtype: Any = None) -> Array:
        """Integers drawn uniformly from [low, high) (range at most 2**32)."""
        t = D.as_dtype(dtype) if dtype is not None else D.default_int()
        if high <= low:
            raise ValueError(f"integers: empty range [{low}, {high})")
        rng = high - low
        if rng > 1 << 32:
            raise ValueError("integers: the range may span at most 2**32 values")
        (w,) = self._words(tuple(shape), 1)
        if t.emu:  # int64 as a (lo, hi) pair: add with carry
            draw = "{0}" if rng == 1 << 32 else "({0} % {1})"
            return launch_map(f"i64e_add(vec2<u32>({draw}, 0u), {{2}})",
                              [w, rng & 0xFFFFFFFF, low], [D.uint32, D.uint32, t], t,
                              op="integers")
        # the draw converts as an unsigned value (i64(u32) sign-extends on some drivers)
        if rng == 1 << 32:
            return launch_map(f"({cg.cast('{0}', D.uint32, t)} + {{1}})", [w, low],
                              [D.uint32, t], t, op="integers")
        return launch_map(f"({cg.cast('({0} % {1})', D.uint32, t)} + {{2}})", [w, rng, low],
                          [D.uint32, D.uint32, t], t, op="integers")

    def permutation(self, n: int, dtype: Any = None) -> Array:
        """A random permutation of ``range(n)``."""
        from .namespace.elementwise import astype
        from .namespace.sorting import argsort
        t = D.as_dtype(dtype) if dtype is not None else D.default_int()
        (w,) = self._words((n,), 1)
        return astype(argsort(w), t)

    def bernoulli(self, p: Any, shape: tuple | None = None) -> Array:
        """Bool samples that are true with probability ``p`` (a float or an array)."""
        shp = tuple(shape) if shape is not None else tuple(getattr(p, "shape", ()))
        u = self.uniform(shp, D.float32)
        return launch_map("({0} < {1})", [u, p], [D.float32, D.float32], D.bool,
                          op="bernoulli")


_generators: dict[int, Generator] = {}
# every generator alive: a recorded call notes their states (a reseed inside the call is
# host work a replay would not do)
_live: weakref.WeakSet = weakref.WeakSet()


def default_generator(index: int = 0) -> Generator:
    """The generator of device ``index`` (one per device, created once)."""
    g = _generators.get(index)
    if g is None:
        g = _generators[index] = Generator(index)
    return g
