"""The process group's watchdog: finds lost ranks however they end, within the timeout.

A rank can leave a job in ways no exception hook sees: ``sys.exit`` in an ``except``, a
clean early exit, an exception inside ``try: ... finally: destroy_process_group()``, a
SIGKILL. Its peers would then wait in their next collective forever. The watchdog
keeps a side channel next to the engine's communicator, a star of TCP connections
around rank 0, over which every rank sends

- a heartbeat every ``interval`` seconds (a hung or unreachable host goes quiet),
- ``bye N`` when it leaves (``destroy_process_group`` or interpreter exit) after
  completing N collectives; a connection closed without ``bye`` is a crash.

Rank 0 relays what it learns to the others. Collectives consult :meth:`Watchdog.check`
before they start and, for engines with non-blocking requests, poll
:meth:`Watchdog.wait`, which raises :class:`DistributedError` naming the lost rank, or
the collective that ran past the timeout (as PyTorch's ``timeout=`` does).
"""

from __future__ import annotations

import logging
import os
import selectors
import socket
import threading
import time
import weakref
from collections.abc import Callable

from .engine import DistributedError

log = logging.getLogger("volta.distributed")


class Watchdog:
    """Heartbeats and leave notices between the ranks of one process group.

    Args:
        rank: this process's rank.
        world_size: the number of ranks.
        timeout: seconds a collective may take, and a rank may stay silent, before it
            counts as lost.
    """

    def __init__(self, rank: int, world_size: int, timeout: float) -> None:
        self.rank, self.world_size, self.timeout = rank, world_size, float(timeout)
        self.interval = min(1.0, self.timeout / 5)
        self.done = 0  # collectives this rank completed
        self.failure: str | None = None  # a lost rank: every later collective fails
        self.left: dict[int, int] = {}  # rank -> collectives it completed before leaving
        self.raised = False  # this rank raised a lost-rank error (the job is broken)
        self._conns: dict[int, socket.socket] = {}
        self._buffers: dict[int, bytes] = {}
        self._seen: dict[int, float] = {}
        self._send_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._listener: socket.socket | None = None
        # called (from the watchdog's thread) with the reason when an issued collective
        # can never complete; set for engines whose collectives cannot be interrupted
        self.on_lost: Callable[[str], None] | None = None

    # -- start-up ------------------------------------------------------------------------

    def start(self, share: Callable[[bytes | None], bytes]) -> None:
        """Connect the ranks; ``share(value)`` broadcasts rank 0's ``value`` to all ranks."""
        if self.world_size == 1:
            return
        deadline = time.monotonic() + self.timeout
        if self.rank == 0:
            self._listener = socket.create_server(("", 0), backlog=self.world_size)
            port = self._listener.getsockname()[1]
            try:
                share(f"{socket.gethostname()} {_host_ip()} {port}".encode())
            except NotImplementedError as exc:  # an engine with no way to share it
                self._listener.close()
                log.warning("watchdog off: %s; lost ranks are found by timeouts only", exc)
                return
            self._listener.settimeout(max(0.1, deadline - time.monotonic()))
            while len(self._conns) < self.world_size - 1:
                try:
                    conn, _ = self._listener.accept()
                    conn.settimeout(max(0.1, deadline - time.monotonic()))
                    peer = int(_read_line(conn).split()[1])
                except (OSError, ValueError, IndexError) as exc:
                    raise DistributedError(f"watchdog: ranks did not all connect to rank 0 "
                                           f"within {self.timeout:g} s ({exc!r})") from None
                self._conns[peer] = conn
            self._listener.close()
        else:
            try:
                host, ip, port = share(None).decode().split()
            except NotImplementedError:
                return
            addr = "127.0.0.1" if host == socket.gethostname() else ip
            try:
                conn = socket.create_connection((addr, int(port)), timeout=self.timeout)
                conn.sendall(f"hello {self.rank}\n".encode())
            except OSError as exc:
                raise DistributedError(f"watchdog: rank {self.rank} could not reach rank 0 at "
                                       f"{addr}:{port} ({exc!r})") from None
            self._conns[0] = conn
        now = time.monotonic()
        for peer, conn in self._conns.items():
            conn.setblocking(False)
            self._buffers[peer] = b""
            self._seen[peer] = now
        self._thread = threading.Thread(target=self._run, name="volta-watchdog", daemon=True)
        self._thread.start()
        _live.add(self)

    # -- what collectives ask ----------------------------------------------------------------

    def check(self, op: str) -> None:
        """Raise if collective ``op`` (this rank's next one) cannot complete any more."""
        why = self._why_stuck()
        if why is not None:
            self.raised = True
            raise DistributedError(f"{op}: {why}")

    def wait(self, test: Callable[[], bool], op: str) -> None:
        """Poll ``test()`` until it is true; raise if a rank is lost or the timeout passes."""
        start = time.monotonic()
        pause = 1e-5
        while not test():
            why = self._why_stuck()
            if why is None and time.monotonic() - start > self.timeout:
                why = (f"did not complete within the timeout of {self.timeout:g} s; a rank "
                       "may have skipped it or be stuck (set timeout= in "
                       "init_process_group)")
            if why is not None:
                self.raised = True
                raise DistributedError(f"{op}: {why}")
            time.sleep(pause)
            pause = min(pause * 2, 1e-3)

    def _why_stuck(self, issued: bool = False) -> str | None:
        """Why this rank's next collective (``issued``: its last one) cannot complete."""
        if self.failure is not None:
            return self.failure
        current = self.done + (not issued)  # 1-based number of the collective in question
        for peer, count in sorted(self.left.items()):
            if count < current:
                return (f"rank {peer} left the process group (destroy_process_group or exit) "
                        f"after {count} collectives; this rank is in collective number "
                        f"{current}, which rank {peer} will never join")
        return None

    # -- leaving -------------------------------------------------------------------------

    def leave(self) -> None:
        """Tell the other ranks this one leaves after ``done`` collectives; stop."""
        if self._stop.is_set():
            return
        self._stop.set()
        for peer in list(self._conns):
            self._send(peer, f"bye {self.done}")
        if self._thread is not None:
            self._thread.join(timeout=2 * self.interval + 1)
        # close only after the peers have read the goodbye and closed their ends: closing
        # with their heartbeats unread sends a TCP reset, which can discard the goodbye
        # before they read it (they would report this rank as crashed)
        deadline = time.monotonic() + min(self.interval, 1.0)
        for conn in self._conns.values():
            try:
                conn.shutdown(socket.SHUT_WR)
                while (left := deadline - time.monotonic()) > 0:
                    conn.settimeout(left)
                    if not conn.recv(4096):
                        break
            except OSError:
                pass
            try:
                conn.close()
            except OSError:
                pass
        self._conns.clear()

    # -- the thread ----------------------------------------------------------------------

    def _send(self, peer: int, line: str) -> None:
        conn = self._conns.get(peer)
        if conn is None:
            return
        with self._send_lock:
            try:
                conn.setblocking(True)
                conn.settimeout(self.interval)
                conn.sendall((line + "\n").encode())
            except OSError:
                pass  # the reader notices the closed connection
            finally:
                try:
                    conn.setblocking(False)
                except OSError:
                    pass

    def _run(self) -> None:
        sel = selectors.DefaultSelector()
        for peer, conn in list(self._conns.items()):
            try:
                sel.register(conn, selectors.EVENT_READ, peer)
            except (OSError, ValueError):  # closed already
                self._lost(peer, "its connection closed during start-up", sel)
        last_beat = 0.0
        while not self._stop.is_set() and self._conns:
            now = time.monotonic()
            if now - last_beat >= self.interval:
                for peer in list(self._conns):
                    self._send(peer, "hb")
                last_beat = now
            for key, _ in sel.select(timeout=self.interval / 2):
                if self._stop.is_set():
                    break
                self._receive(key.data, key.fileobj, sel)
            if self.on_lost is not None and self.done > 0:
                why = self._why_stuck(issued=True)
                if why is not None:
                    self.on_lost(why)
            now = time.monotonic()
            for peer, seen in list(self._seen.items()):
                if peer in self._conns and now - seen > self.timeout:
                    self._lost(peer, f"sent no heartbeat for {now - seen:.1f} s (timeout "
                                     f"{self.timeout:g} s): it hangs or its host is unreachable",
                               sel)
        sel.close()

    def _receive(self, peer: int, conn: socket.socket, sel: selectors.BaseSelector) -> None:
        try:
            data = conn.recv(4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._lost(peer, "its process ended without leaving the process group (killed, "
                             "crashed or exited abruptly)", sel)
            return
        self._seen[peer] = time.monotonic()
        self._buffers[peer] += data
        *lines, self._buffers[peer] = self._buffers[peer].split(b"\n")
        for line in lines:
            self._message(peer, line.decode(errors="replace").split(), sel)

    def _message(self, peer: int, words: list[str], sel: selectors.BaseSelector) -> None:
        if not words or words[0] == "hb":
            return
        if words[0] == "bye":  # a clean leave by the sender itself
            self._left(peer, int(words[1]))
            self._drop(peer, sel)
        elif words[0] == "left":  # relayed by rank 0
            self._left(int(words[1]), int(words[2]))
        elif words[0] == "lost":
            self._fail(int(words[1]), " ".join(words[2:]))

    def _left(self, peer: int, count: int) -> None:
        self.left[peer] = count
        log.info("watchdog: rank %d left after %d collectives", peer, count)
        if self.rank == 0:
            for other in list(self._conns):
                if other != peer:
                    self._send(other, f"left {peer} {count}")

    def _lost(self, peer: int, why: str, sel: selectors.BaseSelector) -> None:
        self._drop(peer, sel)
        self._fail(peer, why)

    def _fail(self, peer: int, why: str) -> None:
        if self.failure is None:
            self.failure = f"rank {peer} was lost: {why}"
            log.error("watchdog: %s", self.failure)
        if self.rank == 0:
            for other in list(self._conns):
                if other != peer:
                    self._send(other, f"lost {peer} {why}")

    def _drop(self, peer: int, sel: selectors.BaseSelector) -> None:
        conn = self._conns.pop(peer, None)
        if conn is not None:
            try:
                sel.unregister(conn)
            except (KeyError, ValueError):
                pass
            conn.close()


_live: weakref.WeakSet[Watchdog] = weakref.WeakSet()


def _close_in_child() -> None:
    """In a forked child (a DataLoader worker), drop the inherited watchdog sockets so
    that the rank's death still closes its connections at once."""
    for wd in list(_live):
        wd._stop.set()
        for conn in wd._conns.values():
            try:
                conn.close()  # this process's fd only: the parent's connection stays up
            except OSError:
                pass
        wd._conns.clear()
    _live.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_in_child)


def _read_line(conn: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(256)
        if not chunk:
            raise ConnectionError("connection closed during the handshake")
        data += chunk
    return data.decode()


def _host_ip() -> str:
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"
