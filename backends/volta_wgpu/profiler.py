"""GPU time per kernel on wgpu, from timestamps the GPU writes around each dispatch.

``with profile() as prof: step()`` records, for every dispatch of the block, a timestamp
query before and after it inside the compute pass (the adapter's
``timestamp-query-inside-passes`` feature); each submission resolves its queries into a
buffer of its own, read back when the block ends. ``prof.table()`` then lists the kernels
by total GPU time. A kernel's time includes the wait at the barrier before it, so a chain
of tiny dependent kernels shows each one's launch cost too.

Timing by synchronizing around each dispatch instead lets the GPU idle between kernels,
and an idle GPU lowers its clocks: an H200 ran kernels 2-4x slower that way than inside
a training step.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

FEATURES = ("timestamp-query", "timestamp-query-inside-passes")


def label(key: Any) -> str:
    """A short name for a kernel cache key: its kind and first parts; a fused lazy
    kernel's, the expressions it chains."""
    if not isinstance(key, tuple):
        return str(key)[:80]
    head = key[0] if key and isinstance(key[0], tuple) else key
    if head and head[0] == "lazy":
        exprs: list[str] = []

        def walk(k: Any) -> None:
            if isinstance(k, str) and "{" in k:
                exprs.append(k)
            elif isinstance(k, tuple):
                for p in k:
                    walk(p)
        walk(key)
        return ("lazy: " + " ; ".join(exprs))[:80]
    return "/".join(str(p) for p in key[:3])[:80]


@dataclass
class Profile:
    """The kernels one ``with profile()`` block ran: ``times`` holds (label, seconds)
    per dispatch, in order, once the block has ended."""

    eng: Any
    times: list[tuple[str, float]] = field(default_factory=list)
    _pending: list[tuple[Any, list[str]]] = field(default_factory=list)
    _labels: list[str] = field(default_factory=list)
    _queries: Any = None

    # -- engine hooks (the engine holds its lock) -----------------------------------------
    def before(self, pass_: Any, kernel: Any) -> None:
        """Write the timestamp before a dispatch of ``kernel``."""
        if self._queries is None:
            from .engine import SUBMIT_MAX
            self._queries = self.eng.device.create_query_set(type="timestamp",
                                                             count=2 * SUBMIT_MAX)
        self._labels.append(label(kernel.key))
        pass_._write_timestamp(self._queries, 2 * len(self._labels) - 2)

    def after(self, pass_: Any) -> None:
        pass_._write_timestamp(self._queries, 2 * len(self._labels) - 1)

    def resolve(self, encoder: Any) -> None:
        """Before a submission (its pass ended): copy its timestamps to a readable
        buffer."""
        n = 2 * len(self._labels)
        if not n:
            return
        U = self.eng.wgpu.BufferUsage
        dst = self.eng.device.create_buffer(size=8 * n, usage=U.QUERY_RESOLVE | U.COPY_SRC)
        host = self.eng.device.create_buffer(size=8 * n, usage=U.MAP_READ | U.COPY_DST)
        encoder.resolve_query_set(self._queries, 0, n, dst, 0)
        encoder.copy_buffer_to_buffer(dst, 0, host, 0, 8 * n)
        self._pending.append((host, self._labels))
        self._labels = []
        self._queries = None  # the next submission writes into a set of its own

    def finish(self) -> None:
        """Read every submission's timestamps back (after a synchronize)."""
        from . import engine
        period = 1.0  # nanoseconds per tick
        if engine._lib is not None:
            period = float(engine._lib.wgpuQueueGetTimestampPeriod(self.eng.queue._internal))
        for host, labels in self._pending:
            host.map_sync(self.eng.wgpu.MapMode.READ)
            ticks = struct.unpack(f"<{2 * len(labels)}Q", host.read_mapped())
            host.unmap()
            host.destroy()
            for i, name in enumerate(labels):
                self.times.append((name, max(0, ticks[2 * i + 1] - ticks[2 * i]) * period
                                   * 1e-9))
        self._pending = []

    # -- results --------------------------------------------------------------------------
    def totals(self) -> dict[str, tuple[int, float]]:
        """(dispatches, seconds) per kernel label, largest total first."""
        out: dict[str, list] = {}
        for name, t in self.times:
            row = out.setdefault(name, [0, 0.0])
            row[0] += 1
            row[1] += t
        return {k: (n, t) for k, (n, t) in sorted(out.items(), key=lambda kv: -kv[1][1])}

    def total(self) -> float:
        """Seconds of GPU time of all dispatches."""
        return sum(t for _, t in self.times)

    def table(self, rows: int = 25) -> str:
        """The kernels by total GPU time: microseconds, dispatches, share."""
        whole = self.total() or 1.0
        lines = [f"{'GPU us':>10} {'calls':>6} {'share':>6}  kernel"]
        for name, (n, t) in list(self.totals().items())[:rows]:
            lines.append(f"{t * 1e6:10.1f} {n:6d} {t / whole:6.1%}  {name}")
        lines.append(f"{whole * 1e6:10.1f} {len(self.times):6d} {'':6}  all kernels")
        return "\n".join(lines)


def available(eng: Any) -> bool:
    """Whether the engine's device can write timestamps inside compute passes."""
    return all(f in eng.features for f in FEATURES)


@contextmanager
def profile(index: int = 0) -> Iterator[Profile]:
    """Time every GPU kernel that work in the block dispatches on device ``index``.

    Raises RuntimeError where the adapter lacks timestamp queries inside passes (a
    software adapter may: lavapipe has them).
    """
    from .engine import get_engine
    eng = get_engine(index)
    if not available(eng):
        raise RuntimeError(f"wgpu: {eng.name} cannot write timestamps inside compute "
                           f"passes (needs {', '.join(FEATURES)})")
    prof = Profile(eng)
    eng.flush()  # earlier work is not timed
    with eng._lock:
        eng._profile = prof
    try:
        yield prof
        eng.flush()
    finally:
        with eng._lock:
            eng._profile = None
        eng.synchronize()
        prof.finish()
