"""TCPStore and FileStore, in one process (threads stand in for ranks)."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from volta_core.distributed import DistributedError, FileStore, TCPStore


def test_tcp_store_set_get_add_and_waiting_get():
    server = TCPStore("127.0.0.1", 0, 2, is_master=True, timeout=timedelta(seconds=10))
    client = TCPStore("127.0.0.1", server.port, 2, timeout=timedelta(seconds=10))
    got = {}
    waiter = threading.Thread(target=lambda: got.update(v=client.get("late")))
    waiter.start()
    server.set("late", b"value")
    waiter.join(5)
    assert got["v"] == b"value"
    assert server.add("n", 2) == 2 and client.add("n", 3) == 5
    assert client.check("n") and not client.check("missing")
    barrier = threading.Thread(target=client.barrier, args=("b", 2))
    barrier.start()
    server.barrier("b", 2)
    barrier.join(5)
    assert not barrier.is_alive()
    client.close()
    server.close()


def test_tcp_store_get_times_out_with_a_clear_error():
    server = TCPStore("127.0.0.1", 0, 1, is_master=True, timeout=timedelta(seconds=0.3))
    with pytest.raises(DistributedError, match="timed out .* 'never'"):
        server.get("never")
    server.close()


def test_tcp_store_client_without_server_fails_within_timeout():
    port = TCPStore("127.0.0.1", 0, 1, is_master=True)
    free = port.port
    port.close()
    with pytest.raises(DistributedError, match="cannot reach"):
        TCPStore("127.0.0.1", free, 2, timeout=timedelta(seconds=0.5))


def test_file_store(tmp_path):
    a = FileStore(tmp_path / "s", timeout=timedelta(seconds=0.3))
    b = FileStore(tmp_path / "s", timeout=timedelta(seconds=0.3))
    a.set("k/1", "v")
    assert b.get("k/1") == b"v"
    assert a.add("n", 1) == 1 and b.add("n", 4) == 5
    with pytest.raises(DistributedError, match="timed out"):
        b.get("missing")
