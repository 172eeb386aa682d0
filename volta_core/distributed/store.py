"""Key-value stores for rendezvous: a tiny TCP store and a shared-file store.

Ranks use a store to find each other before the engine's own communicator exists
(NCCL's unique id travels through it) and for the barriers of init and teardown.
Values are bytes; every blocking call honours the store's ``timeout``.
"""

from __future__ import annotations

import os
import socket
import struct
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

from .engine import DistributedError

_LEN = struct.Struct("!I")


class Store:
    """Base class of rendezvous stores (``set``/``get``/``add``/``wait``), keys are str."""

    def __init__(self, timeout: timedelta) -> None:
        self.timeout = timeout

    def set(self, key: str, value: bytes | str) -> None:
        raise NotImplementedError

    def get(self, key: str) -> bytes:
        """Return the value of ``key``, waiting up to ``timeout`` for it to be set."""
        raise NotImplementedError

    def add(self, key: str, amount: int) -> int:
        """Atomically add ``amount`` to the integer at ``key`` (0 if unset); return it."""
        raise NotImplementedError

    def check(self, key: str) -> bool:
        """Whether ``key`` is set (never waits)."""
        raise NotImplementedError

    def wait(self, keys: list[str]) -> None:
        """Wait until every key in ``keys`` is set."""
        for key in keys:
            self.get(key)

    def barrier(self, name: str, world_size: int) -> None:
        """Return once ``world_size`` processes have entered the barrier ``name``."""
        if self.add(f"barrier/{name}/in", 1) == world_size:
            self.set(f"barrier/{name}/done", b"1")
        self.get(f"barrier/{name}/done")

    def close(self) -> None:
        """Release sockets and threads."""

    def _timeout_error(self, key: str) -> DistributedError:
        return DistributedError(
            f"store: timed out after {self.timeout.total_seconds():.0f} s waiting for key "
            f"{key!r}; a rank is missing or crashed (check every rank started, and that "
            "RANK/WORLD_SIZE agree)")


# -- wire format: each message is a list of length-prefixed byte frames ------------------

def _send(sock: socket.socket, *frames: bytes) -> None:
    parts = [_LEN.pack(len(frames))]
    for f in frames:
        parts += [_LEN.pack(len(f)), f]
    sock.sendall(b"".join(parts))


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("store connection closed by peer")
        buf += chunk
    return bytes(buf)


def _recv(sock: socket.socket) -> list[bytes]:
    (count,) = _LEN.unpack(_recv_exact(sock, 4))
    frames = []
    for _ in range(count):
        (n,) = _LEN.unpack(_recv_exact(sock, 4))
        frames.append(_recv_exact(sock, n))
    return frames


class _StoreServer:
    """The TCP store's server: one thread per client, values in a dict."""

    def __init__(self, host: str, port: int) -> None:
        self._data: dict[str, bytes] = {}
        self._cond = threading.Condition()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind((host, port))
        except OSError as exc:
            self._sock.close()
            raise DistributedError(
                f"TCPStore: rank 0 cannot listen on {host}:{port} ({exc}); pick a free port "
                "with MASTER_PORT or volta-run --master-port") from exc
        self._sock.listen(128)
        self.port = self._sock.getsockname()[1]
        self._closed = False
        self._clients = 0
        threading.Thread(target=self._accept, name="volta-store", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._cond:
                self._clients += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            with conn:
                while True:
                    try:
                        cmd, *args = _recv(conn)
                    except (ConnectionError, OSError, struct.error):
                        return
                    _send(conn, *self._handle(cmd, args))
        finally:
            with self._cond:
                self._clients -= 1
                self._cond.notify_all()

    def wait_idle(self, timeout: float) -> None:
        """Wait until every client has disconnected (so none loses a pending reply)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._clients > 0 and time.monotonic() < deadline:
                self._cond.wait(max(0.0, deadline - time.monotonic()))

    def _handle(self, cmd: bytes, args: list[bytes]) -> list[bytes]:
        key = args[0].decode()
        with self._cond:
            if cmd == b"set":
                self._data[key] = args[1]
                self._cond.notify_all()
                return [b"ok"]
            if cmd == b"get":
                deadline = time.monotonic() + float(args[1])
                while key not in self._data:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return [b"timeout"]
                    self._cond.wait(left)
                return [b"ok", self._data[key]]
            if cmd == b"add":
                value = int(self._data.get(key, b"0")) + int(args[1])
                self._data[key] = str(value).encode()
                self._cond.notify_all()
                return [b"ok", self._data[key]]
            if cmd == b"check":
                return [b"ok", b"1" if key in self._data else b"0"]
        return [b"error", b"unknown command " + cmd]

    def close(self) -> None:
        self._closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
        except OSError:
            pass
        try:
            self._sock.close()
        except OSError:
            pass


class TCPStore(Store):
    """A key-value store served by one process over TCP, as ``torch.distributed.TCPStore``.

    Args:
        host_name: the address of the server (``MASTER_ADDR``).
        port: its port (``MASTER_PORT``); 0 with ``is_master`` picks a free one.
        world_size: the number of processes (informational).
        is_master: whether this process runs the server (rank 0).
        timeout: how long connecting and ``get`` may wait.

    Example:
        >>> store = TCPStore("127.0.0.1", 29500, 2, is_master=(rank == 0))
        >>> store.set("hello", b"world"); store.get("hello")
    """

    def __init__(self, host_name: str, port: int, world_size: int | None = None,
                 is_master: bool = False, timeout: timedelta = timedelta(seconds=300)) -> None:
        super().__init__(timeout)
        self.host = host_name
        self.world_size = world_size
        self._server = _StoreServer(host_name, port) if is_master else None
        self.port = self._server.port if self._server else port
        self._lock = threading.Lock()
        self._sock = self._connect()

    def _connect(self) -> socket.socket:
        deadline = time.monotonic() + self.timeout.total_seconds()
        delay = 0.01
        while True:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=5)
                if sock.getsockname() == sock.getpeername():  # TCP self-connect, no server
                    sock.close()
                    raise ConnectionRefusedError("no store server listening")
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.settimeout(None)
                return sock
            except OSError as exc:
                if time.monotonic() > deadline:
                    raise DistributedError(
                        f"TCPStore: cannot reach rank 0's store at {self.host}:{self.port} "
                        f"after {self.timeout.total_seconds():.0f} s ({exc}); check "
                        "MASTER_ADDR/MASTER_PORT and that rank 0 is running") from exc
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    def _request(self, *frames: bytes) -> list[bytes]:
        with self._lock:
            try:
                _send(self._sock, *frames)
                reply = _recv(self._sock)
            except (OSError, ConnectionError) as exc:
                raise DistributedError(
                    f"TCPStore: lost the connection to {self.host}:{self.port} ({exc}); "
                    "rank 0 probably exited or crashed") from exc
        if reply[0] == b"error":
            raise DistributedError(f"TCPStore: {reply[1].decode()}")
        return reply

    def set(self, key: str, value: bytes | str) -> None:
        value = value.encode() if isinstance(value, str) else bytes(value)
        self._request(b"set", key.encode(), value)

    def get(self, key: str) -> bytes:
        reply = self._request(b"get", key.encode(), str(self.timeout.total_seconds()).encode())
        if reply[0] == b"timeout":
            raise self._timeout_error(key)
        return reply[1]

    def add(self, key: str, amount: int) -> int:
        return int(self._request(b"add", key.encode(), str(int(amount)).encode())[1])

    def check(self, key: str) -> bool:
        return self._request(b"check", key.encode())[1] == b"1"

    def close(self) -> None:
        """Disconnect; the server (rank 0) first waits for the other ranks to disconnect."""
        try:
            self._sock.close()
        finally:
            if self._server is not None:
                self._server.wait_idle(min(self.timeout.total_seconds(), 30.0))
                self._server.close()


class FileStore(Store):
    """A store in a directory on a file system every rank sees (``file://`` init).

    Each key is a file written atomically (temp file + rename); ``add`` holds a lock
    file. The directory is not removed: use a fresh path per job.

    Args:
        path: the directory (created if missing).
        timeout: how long ``get`` waits.
    """

    def __init__(self, path: str | os.PathLike, timeout: timedelta = timedelta(seconds=300)
                 ) -> None:
        super().__init__(timeout)
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)

    def _file(self, key: str) -> Path:
        return self.path / key.replace("/", "%2F")

    def set(self, key: str, value: bytes | str) -> None:
        value = value.encode() if isinstance(value, str) else bytes(value)
        fd, tmp = tempfile.mkstemp(dir=self.path, prefix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(value)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self._file(key))

    def get(self, key: str) -> bytes:
        deadline = time.monotonic() + self.timeout.total_seconds()
        delay = 0.001
        while True:
            try:
                return self._file(key).read_bytes()
            except FileNotFoundError:
                if time.monotonic() > deadline:
                    raise self._timeout_error(key) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.1)

    def add(self, key: str, amount: int) -> int:
        import fcntl

        with open(self.path / ".lock", "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                f = self._file(key)
                value = int(f.read_bytes()) + int(amount) if f.exists() else int(amount)
                self.set(key, str(value))
                return value
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def check(self, key: str) -> bool:
        return self._file(key).exists()
